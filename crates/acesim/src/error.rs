//! Errors a user can cause, with the place (file, line, column, field) they come from.

use std::fmt;

/// Where in the user's input an error was found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// File name, `command line` or a preset name.
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Dotted field path (`router.vcs`) or operation field (`dst`).
    pub field: Option<String>,
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
            field: None,
        }
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
    Deadlock(Box<crate::runtime::DeadlockReport>),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A broken model invariant: a bug in acesim, not in the input.
    #[error("internal error (please report): {0}")]
    Internal(String),
}

impl Error {
    pub fn input(location: Location, message: impl Into<String>) -> Self {
        Error::Input {
            location,
            message: message.into(),
        }
    }
    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
    /// Process exit code documented in the README.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input { .. } | Error::Program { .. } | Error::Io { .. } => 2,
            Error::Deadlock(_) => 3,
            Error::Internal(_) => 70,
        }
    }
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
