//! One way in for every program: the command line and the Python binding both call
//! [`load`], which picks the front end by [`Format`] and checks the rank count the caller
//! gave against the program.

use crate::error::{Error, Location, Result};
use crate::frontends::format::Format;
use crate::frontends::record::RecordOptions;
use crate::frontends::{dumpi, goal, mgen, otf2, python, schedule, ti};
use crate::program::{with_text, Program};
use std::path::Path;

/// Where a program comes from: a file, or text already read (the Python binding's).
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    File(&'a Path),
    Text { name: &'a str, text: &'a str },
}

impl Source<'_> {
    fn name(&self) -> String {
        match self {
            Source::File(path) => path.display().to_string(),
            Source::Text { name, .. } => name.to_string(),
        }
    }
}

/// How the caller spells the rank count, so that its errors use the caller's words.
#[derive(Debug, Clone, Copy)]
pub struct RanksArgument {
    /// Where it was given (an error's location).
    pub source: &'static str,
    /// Its name as the user writes it (`--ranks`, `ranks`).
    pub name: &'static str,
    /// How a value of it is written (`--ranks 8`, `ranks=8`).
    pub given: fn(u32) -> String,
    /// What a program that has its own rank count is called.
    pub program: &'static str,
}

/// `acesim run ... --ranks N`.
pub const COMMAND_LINE: RanksArgument = RanksArgument {
    source: "command line",
    name: "--ranks",
    given: |r| format!("--ranks {r}"),
    program: "schedule",
};

/// `acesim.simulate(..., ranks=N)`.
pub const PYTHON_ARGUMENTS: RanksArgument = RanksArgument {
    source: "arguments",
    name: "ranks",
    given: |r| format!("ranks={r}"),
    program: "program",
};

/// Reads (or records) the program of `source` in `format`. Recorded formats (C, Python)
/// need `ranks` and get `args`; the others have their own rank count, which `ranks`, when
/// given, must match.
pub fn load(
    source: Source,
    format: Format,
    ranks: Option<u32>,
    args: &[String],
    options: &RecordOptions,
    argument: &RanksArgument,
) -> Result<Program> {
    let name = source.name();
    let at = || Location::file(argument.source).with_field("ranks");
    let program = match format {
        Format::C | Format::Python => {
            let r = ranks.ok_or_else(|| {
                Error::input(
                    at(),
                    format!(
                        "{} is needed to run {}",
                        argument.name,
                        format.describe(&name)
                    ),
                )
            })?;
            let path = match source {
                Source::File(path) => path,
                Source::Text { text, .. } => Path::new(text),
            };
            return record_and_read(path, format, r, args, options);
        }
        // A motif takes the rank count it is given (and checks its parameters against it).
        Format::Motif => return crate::frontends::motif::program(&name, ranks, args),
        Format::Goal => with_text_of(source, |text| {
            goal::parse_on(&name, text, options.read_threads)
        })?,
        Format::Schedule => with_text_of(source, |text| match &options.only_ranks {
            Some(only) => schedule::parse_only(&name, text, options.read_threads, &*only.0),
            None => schedule::parse_on(&name, text, options.read_threads),
        })?,
        Format::Dumpi => {
            let path = match source {
                Source::File(path) => path,
                Source::Text { text, .. } => Path::new(text),
            };
            if crate::frontends::format::starts_with_dumpi(path) {
                crate::frontends::binary::check_not_binary(path)?;
            }
            if options.stream_traces {
                dumpi::read_streamed(path, &options.trace)?.0
            } else {
                dumpi::read(path, &options.trace)?.0
            }
        }
        Format::Otf2 => {
            let path = match source {
                Source::File(path) => path,
                Source::Text { text, .. } => Path::new(text),
            };
            if options.stream_traces {
                otf2::read_streamed(path, &options.trace)?.0
            } else {
                otf2::read(path, &options.trace)?.0
            }
        }
        Format::Ti => match source {
            Source::File(path) if options.stream_traces => {
                ti::read_streamed(path, &options.trace)?.0
            }
            Source::File(path) => ti::read(path, &options.trace)?.0,
            Source::Text { name, text } => ti::parse(name, text, &options.trace)?.0,
        },
    };
    if let Some(r) = ranks.filter(|&r| r != program.ranks) {
        return Err(Error::input(
            at(),
            format!(
                "{} but {name} is a {} for {} ranks",
                (argument.given)(r),
                argument.program,
                program.ranks
            ),
        ));
    }
    Ok(program)
}

/// The schedule text a C or Python program records for `ranks` ranks (`acesim record`:
/// any file that is not Python is compiled as C, and the compiler says what it is not).
pub fn record(
    path: &Path,
    format: Format,
    ranks: u32,
    args: &[String],
    options: &RecordOptions,
) -> Result<String> {
    match format {
        Format::Python => python::record(path, ranks, args, options),
        Format::Motif => Err(crate::error::Error::input(
            crate::error::Location::file(path.display().to_string()),
            "a motif is generated as the run goes: there is no schedule to record (run it: acesim run motif:NAME --ranks N -- PARAM=VALUE ...)",
        )),
        Format::C | Format::Goal | Format::Schedule | Format::Dumpi | Format::Ti | Format::Otf2 => {
            mgen::record_with(path, ranks, args, options)
        }
    }
}

/// Calls `f` with the text of a program given as text or as a file.
fn with_text_of<T>(source: Source, f: impl FnOnce(&str) -> Result<T>) -> Result<T> {
    match source {
        Source::File(path) => {
            crate::frontends::binary::check_not_binary(path)?;
            with_text(path, f)
        }
        Source::Text { text, .. } => f(text),
    }
}

/// Records a C or Python program and reads the schedule it wrote.
fn record_and_read(
    path: &Path,
    format: Format,
    ranks: u32,
    args: &[String],
    options: &RecordOptions,
) -> Result<Program> {
    let text = record(path, format, ranks, args, options)?;
    let name = format!("schedule recorded from {}", path.display());
    schedule::parse_on(&name, &text, options.read_threads)
}
