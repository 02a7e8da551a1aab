//! Splitting a schedule line into tokens.

/// A token and the 1-based column where it starts. Borrowed from the line unless it was
/// quoted with escapes (a million-rank schedule has tens of millions of tokens).
#[derive(Debug, Clone)]
pub struct Tok<'a> {
    pub text: std::borrow::Cow<'a, str>,
    pub col: usize,
}

/// Splits a line into tokens; `#` starts a comment, `"..."` quotes.
pub fn tokenize<'a>(
    line: &'a str,
    toks: &mut Vec<Tok<'a>>,
) -> std::result::Result<(), (usize, String)> {
    toks.clear();
    let mut it = line.char_indices().peekable();
    let mut col = 0;
    while let Some((start, c)) = it.next() {
        col += 1;
        // Any Unicode space separates (a non-breaking space pasted from a web page too).
        if c.is_whitespace() {
            continue;
        }
        if c == '#' {
            break;
        }
        let tok_col = col;
        if c == '"' {
            let mut text = String::new();
            let mut closed = false;
            while let Some((_, ch)) = it.next() {
                col += 1;
                match ch {
                    '"' => {
                        closed = true;
                        break;
                    }
                    '\\' => {
                        if let Some((_, esc)) = it.next() {
                            col += 1;
                            text.push(esc);
                        }
                    }
                    ch => text.push(ch),
                }
            }
            if !closed {
                return Err((
                    tok_col,
                    "unterminated quoted string: expected a closing \" on the same line".into(),
                ));
            }
            toks.push(Tok {
                text: std::borrow::Cow::Owned(text),
                col: tok_col,
            });
        } else {
            let mut end = start + c.len_utf8();
            while let Some(&(i, ch)) = it.peek() {
                if ch.is_whitespace() {
                    break;
                }
                end = i + ch.len_utf8();
                col += 1;
                it.next();
            }
            toks.push(Tok {
                text: std::borrow::Cow::Borrowed(&line[start..end]),
                col: tok_col,
            });
        }
    }
    Ok(())
}
