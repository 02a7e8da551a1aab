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

/// Where a text read on threads is cut after byte `from`: at lines `is_start` accepts (each
/// the first line of a stretch a reader can take alone), near equal shares of the text after
/// `from`, in order. Fewer than `parts - 1` cuts where such lines are scarce.
pub fn cuts(text: &str, from: usize, parts: usize, is_start: impl Fn(&str) -> bool) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts: Vec<usize> = Vec::new();
    for k in 1..parts {
        let target = from + (text.len() - from) * k / parts;
        let mut at = match target {
            t if t == 0 || bytes[t - 1] == b'\n' => t,
            t => match memchr::memchr(b'\n', &bytes[t..]) {
                Some(i) => t + i + 1,
                None => break,
            },
        };
        while at < text.len() {
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |i| at + i);
            let line = &text[at..end];
            if is_start(line.strip_suffix('\r').unwrap_or(line)) {
                break;
            }
            at = end + 1;
        }
        if at < text.len() && at > cuts.last().copied().unwrap_or(from) {
            cuts.push(at);
        }
    }
    cuts
}

/// The line numbers of the bytes `starts` (line starts, in order), the first being line
/// `first_line`.
pub fn line_numbers(text: &str, starts: &[usize], first_line: usize) -> Vec<usize> {
    let mut numbers = Vec::with_capacity(starts.len());
    let mut line = first_line;
    for (k, &start) in starts.iter().enumerate() {
        if k > 0 {
            line += memchr::memchr_iter(b'\n', &text.as_bytes()[starts[k - 1]..start]).count();
        }
        numbers.push(line);
    }
    numbers
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
