//! The text of a GOAL file: block comments blanked out, columns of words, located errors.

use crate::error::{Error, Location, Result};
use std::borrow::Cow;

/// An input error at line `line`, column `col` of `file`.
pub fn err(
    file: &str,
    line: usize,
    col: usize,
    field: Option<&str>,
    msg: impl Into<String>,
) -> Error {
    let mut loc = Location::at(file, line, col);
    loc.field = field.map(str::to_string);
    Error::input(loc, msg)
}

/// Column (1-based) of `word`, a part of `line` (a dependency line's target: found without
/// walking the line again, as `word_col` does).
pub fn col_of(line: &str, word: &str) -> usize {
    (word.as_ptr() as usize).saturating_sub(line.as_ptr() as usize) + 1
}

/// Column (1-based) of the `n`th whitespace-separated word of a line.
pub fn word_col(line: &str, n: usize) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for (i, c) in line.char_indices() {
        if c.is_whitespace() {
            in_word = false;
        } else if !in_word {
            if count == n {
                return i + 1;
            }
            count += 1;
            in_word = true;
        }
    }
    line.len() + 1
}

/// `text` with every `/* ... */` comment turned into spaces (newlines kept, so lines and
/// columns stay where they were); `/*` inside a `//` or `#` comment starts nothing. A text
/// without `/*` (Schedgen writes none) is returned as it is, not copied.
pub fn blank_block_comments<'t>(file: &str, text: &'t str) -> Result<Cow<'t, str>> {
    if !text.contains("/*") {
        return Ok(Cow::Borrowed(text));
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let (mut line, mut col) = (1usize, 1usize);
    let mut line_comment = false;
    while let Some((_, c)) = chars.next() {
        if c == '\n' {
            line_comment = false;
            out.push(c);
            line += 1;
            col = 1;
            continue;
        }
        let next = chars.peek().map(|&(_, n)| n);
        if !line_comment && (c == '#' || (c == '/' && next == Some('/'))) {
            line_comment = true;
        }
        if line_comment || c != '/' || next != Some('*') {
            out.push(c);
            col += 1;
            continue;
        }
        // A block comment: blank it up to and including `*/`.
        let (start_line, start_col) = (line, col);
        chars.next();
        out.push_str("  ");
        col += 2;
        let mut closed = false;
        while let Some((_, c)) = chars.next() {
            if c == '\n' {
                out.push('\n');
                line += 1;
                col = 1;
            } else if c == '*' && chars.peek().map(|&(_, n)| n) == Some('/') {
                chars.next();
                out.push_str("  ");
                col += 2;
                closed = true;
                break;
            } else {
                out.push(' ');
                col += 1;
            }
        }
        if !closed {
            return Err(err(
                file,
                start_line,
                start_col,
                None,
                "comment `/*` is never closed with `*/`",
            ));
        }
    }
    Ok(Cow::Owned(out))
}
