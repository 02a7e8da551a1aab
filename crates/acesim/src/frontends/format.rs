//! Which front end reads a program: by its file name on the command line, by name from
//! the Python binding.

use std::path::Path;

/// The kinds of program input acesim reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// An MGEN C program, compiled and recorded rank by rank (`.c`).
    C,
    /// A Python program with a `main(ctx)`, recorded by the Python package (`.py`).
    Python,
    /// A LogGOPSim/Schedgen GOAL file (`.goal`).
    Goal,
    /// acesim's schedule text (any other name).
    Schedule,
}

impl Format {
    /// The format of a program file, by its extension.
    pub fn of_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("c") => Format::C,
            Some("py") => Format::Python,
            Some("goal") => Format::Goal,
            _ => Format::Schedule,
        }
    }

    /// The format the Python binding names (`schedule`, `goal` or `c`: Python programs are
    /// recorded in the interpreter that calls it).
    pub fn by_name(name: &str) -> Option<Format> {
        match name {
            "schedule" => Some(Format::Schedule),
            "goal" => Some(Format::Goal),
            "c" => Some(Format::C),
            _ => None,
        }
    }

    /// A program that is run to be recorded, for a number of ranks it is given (the others
    /// say how many ranks they have).
    pub fn is_recorded(self) -> bool {
        match self {
            Format::C | Format::Python => true,
            Format::Goal | Format::Schedule => false,
        }
    }

    /// How a message names the program's language.
    fn language(self) -> &'static str {
        match self {
            Format::C => "C",
            Format::Python => "Python",
            Format::Goal => "GOAL",
            Format::Schedule => "schedule",
        }
    }

    /// `the C program prog.c`.
    pub fn describe(self, name: &str) -> String {
        format!("the {} program {name}", self.language())
    }
}
