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
    /// A DUMPI trace: its `.meta` file (a rank's `.bin` is recognised by its magic number).
    Dumpi,
    /// A SimGrid time-independent trace (`--format ti`; recognised by content when its first
    /// line is a rank's `init`), or a list of such files.
    Ti,
    /// An OTF2 trace: its anchor file (`.otf2`), read with the OTF2 library (`otf2` feature).
    Otf2,
    /// A motif (`motif:NAME`), generated as the run goes (`frontends::motif`).
    Motif,
}

impl Format {
    /// The format of a program file, by its extension.
    pub fn of_path(path: &Path) -> Format {
        if path.to_str().is_some_and(crate::frontends::motif::is_motif) {
            return Format::Motif;
        }
        match path.extension().and_then(|e| e.to_str()) {
            Some("c") => Format::C,
            Some("py") => Format::Python,
            Some("goal") => Format::Goal,
            Some("meta") => Format::Dumpi,
            Some("otf2") => Format::Otf2,
            _ if starts_with(path, &crate::frontends::dumpi::MAGIC) => Format::Dumpi,
            _ if starts_like_ti(path) => Format::Ti,
            _ => Format::Schedule,
        }
    }

    /// The format the Python binding and `--format` name (`schedule`, `goal`, `c`, `dumpi`,
    /// `ti` or `otf2`: Python programs are recorded in the interpreter that calls it).
    pub fn by_name(name: &str) -> Option<Format> {
        match name {
            "schedule" => Some(Format::Schedule),
            "goal" => Some(Format::Goal),
            "c" => Some(Format::C),
            "dumpi" => Some(Format::Dumpi),
            "ti" => Some(Format::Ti),
            "otf2" => Some(Format::Otf2),
            _ => None,
        }
    }

    /// A program that is run to be recorded, for a number of ranks it is given (the others
    /// say how many ranks they have).
    pub fn is_recorded(self) -> bool {
        match self {
            Format::C | Format::Python => true,
            Format::Goal
            | Format::Schedule
            | Format::Dumpi
            | Format::Ti
            | Format::Otf2
            | Format::Motif => false,
        }
    }

    /// How a message names the program's language.
    fn language(self) -> &'static str {
        match self {
            Format::C => "C",
            Format::Python => "Python",
            Format::Goal => "GOAL",
            Format::Schedule => "schedule",
            Format::Dumpi => "DUMPI",
            Format::Ti => "SimGrid trace",
            Format::Otf2 => "OTF2 trace",
            Format::Motif => "motif",
        }
    }

    /// `the C program prog.c`.
    pub fn describe(self, name: &str) -> String {
        format!("the {} program {name}", self.language())
    }
}

/// Whether the file at `path` starts with `magic` (false when it cannot be read).
fn starts_with(path: &Path, magic: &[u8]) -> bool {
    use std::io::Read;
    let mut head = vec![0u8; magic.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == magic)
}

/// Whether the file at `path` starts as a SimGrid trace does (`0 init`): only its first
/// 4 KiB are read.
fn starts_like_ti(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    read.is_ok() && crate::frontends::ti::looks_like_ti(&String::from_utf8_lossy(&head))
}

/// Whether the file at `path` is one rank of a DUMPI trace (starts with DUMPI's magic).
pub fn starts_with_dumpi(path: &Path) -> bool {
    starts_with(path, &crate::frontends::dumpi::MAGIC)
}
