//! Splitting a program's text into lines, fast: the readers of large text formats
//! (schedules, GOAL) go through hundreds of millions of bytes of short lines.

/// The lines of `text`, as `str::lines` gives them (`\n` or `\r\n` ends a line, the last
/// one's end optional), found by `memchr`: short lines make `str::lines` pay its search's
/// set-up on every line.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).map(Some);
    ends.chain([None]).filter_map(move |end| {
        let line = match end {
            Some(end) => {
                let line = &text[start..end];
                start = end + 1;
                line.strip_suffix('\r').unwrap_or(line)
            }
            None if start < text.len() => &text[start..],
            None => return None,
        };
        Some(line)
    })
}

/// `line` without its comment: from the first `#` or `//` on (GOAL's line comments).
pub fn before_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr::memchr2(b'#', b'/', &bytes[from..]).map(|i| from + i) {
        if bytes[i] == b'#' || bytes.get(i + 1) == Some(&b'/') {
            return &line[..i];
        }
        from = i + 1;
    }
    line
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// Line ends, `\r\n`, a lone `\r`, empty lines and a last line with or without its
        /// end: the lines `str::lines` gives.
        #[test]
        fn lines_are_those_of_str_lines(text in "[a\\r\\n ]{0,40}") {
            let ours: Vec<&str> = super::lines(&text).collect();
            let std: Vec<&str> = text.lines().collect();
            prop_assert_eq!(ours, std);
        }

        /// What the splits at `//` and then at `#` leave.
        #[test]
        fn before_comment_cuts_as_the_splits_do(line in "[a/# ]{0,30}") {
            let split = line.split("//").next().unwrap_or("");
            let split = split.split('#').next().unwrap_or("");
            prop_assert_eq!(super::before_comment(&line), split);
        }
    }
}
