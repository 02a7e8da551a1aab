//! Splitting a schedule line into tokens.

use crate::frontends::words;

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
    if tokenize_plain(line, toks) {
        return Ok(());
    }
    tokenize_general(line, toks)
}

/// `tokenize` for any line, character by character.
fn tokenize_general<'a>(
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

/// `tokenize` for a line of ASCII without quotes before its comment (nearly every line: a
/// million-rank schedule has tens of millions), a byte's column its offset + 1; `false`
/// (tokens half made) at a quote or a non-ASCII byte, which the general reader then takes.
/// A short line without `#`, quotes or non-ASCII bytes is split from masks of its bytes
/// (`frontends::words`).
fn tokenize_plain<'a>(line: &'a str, toks: &mut Vec<Tok<'a>>) -> bool {
    // `"` and `#` (neighbours, 0x22 and 0x23) send the line to the byte loop.
    let Some(words) = words::ascii_words(line, (b'"', b'#')) else {
        return tokenize_plain_long(line, toks);
    };
    for (start, text) in words {
        toks.push(Tok {
            text: std::borrow::Cow::Borrowed(text),
            col: start + 1,
        });
    }
    true
}

/// `tokenize_plain` for a line of any length, byte by byte.
fn tokenize_plain_long<'a>(line: &'a str, toks: &mut Vec<Tok<'a>>) -> bool {
    toks.clear();
    let space = |b: u8| matches!(b, b'\t'..=b'\r' | b' ');
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if space(b) {
            i += 1;
            continue;
        }
        if b == b'#' {
            break;
        }
        let start = i;
        while i < bytes.len() && !space(bytes[i]) {
            if bytes[i] == b'"' || !bytes[i].is_ascii() {
                return false;
            }
            i += 1;
        }
        toks.push(Tok {
            text: std::borrow::Cow::Borrowed(&line[start..i]),
            col: start + 1,
        });
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Split = std::result::Result<Vec<(String, usize)>, (usize, String)>;
    type Tokenizer =
        for<'a> fn(&'a str, &mut Vec<Tok<'a>>) -> std::result::Result<(), (usize, String)>;

    fn split(line: &str, f: Tokenizer) -> Split {
        let mut toks = Vec::new();
        f(line, &mut toks).map(|()| toks.iter().map(|t| (t.text.to_string(), t.col)).collect())
    }

    proptest! {
        /// Whatever path a line takes (short or long, plain or not), its tokens and columns
        /// are the general reader's.
        #[test]
        fn every_line_splits_as_the_general_reader_does(
            parts in prop::collection::vec(
                prop_oneof![
                    Just(" "), Just("\t"), Just("\x0b"), Just("#"), Just("\""), Just("\\"),
                    Just("é"), Just("\u{a0}"), Just("put"), Just("4KB"), Just("tag=1"), Just("h0"),
                    Just("x#y"),
                ],
                0..120,
            )
        ) {
            let line = parts.concat();
            prop_assert_eq!(split(&line, tokenize), split(&line, tokenize_general));
        }

        /// Short plain lines, the masks' path, at every length up to and past its limit.
        #[test]
        fn short_plain_lines_split_as_the_general_reader_does(
            bytes in prop::collection::vec(
                prop_oneof![Just(b' '), Just(b'\t'), Just(b'\r'), Just(b'\x0c'), Just(b'a'), Just(b'='), Just(b'~'), Just(b'\x1f')],
                0..70,
            )
        ) {
            let line = String::from_utf8(bytes).expect("ASCII");
            prop_assert_eq!(split(&line, tokenize), split(&line, tokenize_general));
        }
    }

    fn texts(line: &str) -> Vec<(String, usize)> {
        let mut toks = Vec::new();
        tokenize(line, &mut toks).expect("tokenizes");
        toks.iter().map(|t| (t.text.to_string(), t.col)).collect()
    }

    #[test]
    fn plain_lines_split_as_the_general_reader_does() {
        assert_eq!(
            texts("  put 1 4KB\ttag=1 # a comment"),
            vec![
                ("put".into(), 3),
                ("1".into(), 7),
                ("4KB".into(), 9),
                ("tag=1".into(), 13)
            ]
        );
        // A vertical tab and a form feed separate, as `char::is_whitespace` says.
        assert_eq!(
            texts("a\x0bb\x0cc"),
            vec![("a".into(), 1), ("b".into(), 3), ("c".into(), 5)]
        );
        assert_eq!(texts("# only a comment"), vec![]);
        // Quotes and non-ASCII take the general path: columns count characters.
        assert_eq!(
            texts("é \"a b\" c#d"),
            vec![("é".into(), 1), ("a b".into(), 3), ("c#d".into(), 9)]
        );
        assert_eq!(texts("x\u{a0}y"), vec![("x".into(), 1), ("y".into(), 3)]);
        // Met after plain tokens, they send the whole line to the general path.
        assert_eq!(
            texts("ab \"c d\" é f"),
            vec![
                ("ab".into(), 1),
                ("c d".into(), 4),
                ("é".into(), 10),
                ("f".into(), 12)
            ]
        );
        // After a comment they change nothing.
        assert_eq!(texts("a b # \"é"), vec![("a".into(), 1), ("b".into(), 3)]);
    }
}
