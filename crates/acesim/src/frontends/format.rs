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
}

impl Format {
    /// The format of a program file, by its extension.
    pub fn of_path(path: &Path) -> Format {
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
            Format::Goal | Format::Schedule | Format::Dumpi | Format::Ti | Format::Otf2 => false,
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

/// What a file acesim cannot read as text looks like, said as an error: a rank of a DUMPI
/// trace, an OTF2 trace, or some other binary file. `Ok` for a file that may be text.
pub fn check_not_binary(path: &Path) -> crate::error::Result<()> {
    use crate::error::{Error, Location};
    use std::io::Read;
    let name = path.display().to_string();
    let mut head = Vec::with_capacity(4096);
    let Ok(f) = std::fs::File::open(path) else {
        return Ok(()); // Reading it says why.
    };
    if f.take(4096).read_to_end(&mut head).is_err() {
        return Ok(());
    }
    let at = || Location::file(&name);
    if crate::frontends::dumpi::is_dumpi(&head) {
        return Err(Error::input(
            at(),
            "this is one rank of a DUMPI trace; give the trace's .meta file (it names every rank's .bin file)",
        ));
    }
    if path.extension().is_some_and(|e| e == "otf2") {
        return Err(Error::input(
            at(),
            if crate::frontends::otf2::AVAILABLE {
                "this is an OTF2 trace (its anchor file): read it with --format otf2 (or give it its .otf2 name)"
            } else {
                "this is an OTF2 trace (its anchor file), but this acesim was built without OTF2 support: run scripts/setup (it installs libotf2-trace-dev and builds with the `otf2` feature)"
            },
        ));
    }
    // Text with a stray byte that is not UTF-8 is still text (reading it names the line and
    // column); NUL bytes or many control characters are not.
    let control = head
        .iter()
        .filter(|&&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c)) || b == 0x7f)
        .count();
    if head.contains(&0) || control * 10 > head.len() {
        return Err(Error::input(
            at(),
            "binary file, not a program acesim reads (it reads schedule text, GOAL, MGEN C, Python and DUMPI traces given by their .meta file)",
        ));
    }
    Ok(())
}

/// Whether the file at `path` is one rank of a DUMPI trace (starts with DUMPI's magic).
pub fn starts_with_dumpi(path: &Path) -> bool {
    starts_with(path, &crate::frontends::dumpi::MAGIC)
}
