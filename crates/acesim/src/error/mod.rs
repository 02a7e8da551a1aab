//! Errors a user can cause, with the place (file, line, column, field) they come from.

mod deadlock;
pub use deadlock::{BlockedRank, DeadlockReport};

use std::fmt;

/// Where in the user's input an error was found.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Location {
    /// File name, `command line` or a preset name.
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Dotted field path (`router.vcs`) or operation field (`dst`).
    pub field: Option<String>,
    /// The offending line of the input, shown under the message with the span marked.
    pub source: Option<Box<SourceLine>>,
}

/// One line of a user's input and the part of it an error is about.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceLine {
    pub text: String,
    /// Byte range within `text`.
    pub start: usize,
    pub end: usize,
}

impl Location {
    pub fn file(file: impl Into<String>) -> Self {
        Location {
            file: file.into(),
            ..Default::default()
        }
    }
    pub fn at(file: impl Into<String>, line: usize, column: usize) -> Self {
        Location {
            file: file.into(),
            line: Some(line),
            column: Some(column),
            ..Default::default()
        }
    }
    /// The place `offset..offset + len` (bytes) of `text`, with its line kept for the
    /// snippet shown under the message.
    pub fn in_text(file: impl Into<String>, text: &str, offset: usize, len: usize) -> Self {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let (line, column) = line_col(text, offset);
        let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
        let line_text = text[line_start..line_end].trim_end_matches('\r');
        let start = (offset - line_start).min(line_text.len());
        let end = floor_char_boundary(line_text, (start + len).min(line_text.len()));
        Location {
            file: file.into(),
            line: Some(line),
            column: Some(column),
            field: None,
            source: Some(Box::new(SourceLine {
                text: line_text.to_string(),
                start,
                end,
            })),
        }
    }
    /// Keeps line `self.line` of `text`, whose first line is `first_line`, as the snippet
    /// (for locations found by line and column).
    pub fn with_source_line(mut self, text: &str, first_line: usize) -> Self {
        if let (Some(line), Some(col)) = (self.line, self.column) {
            if let Some(l) = line
                .checked_sub(first_line)
                .and_then(|n| text.lines().nth(n))
            {
                let start = floor_char_boundary(l, col.saturating_sub(1).min(l.len()));
                let end = l[start..]
                    .find(char::is_whitespace)
                    .map_or(l.len(), |i| start + i);
                self.source = Some(Box::new(SourceLine {
                    text: l.to_string(),
                    start,
                    end,
                }));
            }
        }
        self
    }
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        Ok(())
    }
}

/// Everything that can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: config, program, schedule, command-line value.
    #[error("{location}: {message}")]
    Input { location: Location, message: String },
    /// A C program that does not compile or crashes while being recorded.
    #[error("{message}")]
    Program { message: String },
    /// The program can never finish: some ranks wait for something that never happens.
    #[error("{0}")]
    Deadlock(Box<DeadlockReport>),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The run would need more memory than the machine has available.
    #[error("{0}")]
    TooBig(String),
    /// Stopped by a signal (Ctrl-C, SIGTERM) before there was anything to show.
    #[error("{0}")]
    Interrupted(String),
    /// A broken model invariant: a bug in acesim, not in the input.
    #[error("internal error (please report): {0}")]
    Internal(String),
}

/// Longest input-error message shown whole: a message that quotes a huge value (a 10 MB
/// line) keeps its start and end, which say what is wrong, and elides the middle.
const MAX_MESSAGE: usize = 600;

fn shorten(message: String) -> String {
    if message.len() <= MAX_MESSAGE {
        return message;
    }
    let cut = |i: usize| {
        let mut i = i;
        while !message.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let head = cut(400);
    let tail = cut(message.len() - 150);
    format!(
        "{} [... {} characters left out ...] {}",
        &message[..head],
        tail - head,
        &message[tail..]
    )
}

/// An error as sent from one process of a run to another: its kind and text.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum SentError {
    Input { location: Location, message: String },
    Program(String),
    Io { path: String, message: String },
    TooBig(String),
    Interrupted(String),
    Internal(String),
}

impl From<Error> for SentError {
    fn from(e: Error) -> SentError {
        match e {
            Error::Input { location, message } => SentError::Input { location, message },
            Error::Program { message } => SentError::Program(message),
            Error::Io { path, source } => SentError::Io {
                path,
                message: source.to_string(),
            },
            Error::TooBig(m) => SentError::TooBig(m),
            Error::Interrupted(m) => SentError::Interrupted(m),
            Error::Internal(m) => SentError::Internal(m),
            e @ Error::Deadlock(_) => SentError::Internal(e.to_string()),
        }
    }
}

impl From<SentError> for Error {
    fn from(e: SentError) -> Error {
        match e {
            SentError::Input { location, message } => Error::Input { location, message },
            SentError::Program(message) => Error::Program { message },
            SentError::Io { path, message } => Error::Io {
                path,
                source: std::io::Error::other(message),
            },
            SentError::TooBig(m) => Error::TooBig(m),
            SentError::Interrupted(m) => Error::Interrupted(m),
            SentError::Internal(m) => Error::Internal(m),
        }
    }
}

impl Error {
    pub fn input(location: Location, message: impl Into<String>) -> Self {
        Error::Input {
            location,
            message: shorten(message.into()),
        }
    }
    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
    /// Process exit code documented in docs/errors.md.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input { .. } | Error::Program { .. } | Error::Io { .. } => 2,
            Error::Deadlock(_) => 3,
            Error::TooBig(_) => 5,
            Error::Interrupted(_) => 130,
            Error::Internal(_) => 70,
        }
    }

    /// For an input error that names a line of a file on disk but carries no snippet, reads
    /// that line (and only up to it) so `render` can show it.
    pub fn with_source_from_file(mut self) -> Self {
        use std::io::BufRead;
        if let Error::Input { location, .. } = &mut self {
            if let (None, Some(line)) = (&location.source, location.line) {
                if let Ok(f) = std::fs::File::open(&location.file) {
                    let reader = std::io::BufReader::new(f);
                    if let Some(Ok(text)) = reader.lines().nth(line.saturating_sub(1)) {
                        let loc = std::mem::take(location);
                        *location = loc.with_source_line(&text, line);
                    }
                }
            }
        }
        self
    }

    /// A short name of the kind of error, shown as `error[KIND]`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Input { .. } => "input",
            Error::Program { .. } => "program",
            Error::Deadlock(_) => "deadlock",
            Error::Io { .. } => "io",
            Error::TooBig(_) => "memory",
            Error::Interrupted(_) => "interrupted",
            Error::Internal(_) => "internal",
        }
    }

    /// The message as shown to a user: `error[KIND]: ...` and, for input errors that know
    /// their source line, that line with the offending part marked.
    pub fn render(&self) -> String {
        use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
        let plain = format!("error[{}]: {self}", self.kind());
        let Error::Input { location, .. } = self else {
            return plain;
        };
        let (Some(src), Some(line)) = (&location.source, location.line) else {
            return plain;
        };
        // An empty span (end of line) still gets a mark.
        let (start, end) = if src.start < src.end {
            (src.start, src.end)
        } else {
            (src.start, src.start)
        };
        let title = self.to_string();
        let report = &[Level::ERROR.primary_title(title).id(self.kind()).element(
            Snippet::source(src.text.as_str())
                .line_start(line)
                .path(location.file.as_str())
                .annotation(AnnotationKind::Primary.span(start..end)),
        )];
        Renderer::plain().render(report)
    }
}

/// The closest of `candidates` to a misspelt `word`, if one is close enough to be a
/// plausible typo.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word_l = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&word_l, &c.to_lowercase()), c))
        .filter(|&(d, c)| c != word && d <= (c.len().max(word.len()) / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// `"; did you mean `x`?"` when one of `candidates` is close to `word`, else nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    suggest(word, candidates).map_or(String::new(), |c| format!("; did you mean `{c}`?"))
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

pub type Result<T> = std::result::Result<T, Error>;

/// 1-based line and column of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_names_only() {
        let fields = ["vcs", "buffer_per_vc", "routing", "switch_latency"];
        assert_eq!(suggest("vc", fields), Some("vcs"));
        assert_eq!(suggest("swich_latency", fields), Some("switch_latency"));
        assert_eq!(suggest("Routing", fields), Some("routing"));
        assert_eq!(suggest("bandwidth", fields), None);
        assert_eq!(suggest("vcs", fields), None, "an exact name is no typo");
        assert_eq!(
            did_you_mean("toru", ["torus", "mesh"]),
            "; did you mean `torus`?"
        );
        assert_eq!(did_you_mean("xyz", ["torus", "mesh"]), "");
    }

    #[test]
    fn snippets_mark_the_offending_span() {
        let text = "[router]\nvcs = \"four\"\n";
        let at = text.find("\"four\"").unwrap();
        let loc = Location::in_text("m.toml", text, at, 6);
        assert_eq!((loc.line, loc.column), (Some(2), Some(7)));
        let e = Error::input(loc.with_field("router.vcs"), "expected an integer");
        let shown = e.render();
        assert!(
            shown.starts_with("error[input]: m.toml:2:7: field `router.vcs`: expected an integer"),
            "{shown}"
        );
        assert!(shown.contains("2 | vcs = \"four\""), "{shown}");
        assert!(shown.contains("^^^^^^"), "{shown}");
        // Errors without a source line are one line.
        let e = Error::input(Location::file("command line").with_field("ranks"), "bad");
        assert_eq!(e.render(), "error[input]: command line: field `ranks`: bad");
    }

    #[test]
    fn spans_at_line_ends_and_in_multibyte_text_do_not_panic() {
        for text in ["a = 1", "é = \"ü\"\n", "\n\n", ""] {
            for offset in 0..text.len() + 3 {
                for len in 0..4 {
                    let loc = Location::in_text("x", text, offset, len);
                    let _ = Error::input(loc, "m").render();
                }
            }
        }
    }
}
