//! DUMPI traces (sst-dumpi's binary MPI traces, versions 1.0 and 1.1): the `.meta` file names
//! one `.bin` file per rank, each read sequentially into that rank's operations. See
//! docs/traces.md for how each call maps.

pub mod bytes;
pub mod convert;
pub mod labels;
pub mod meta;
pub mod records;
pub mod stream;

pub use convert::{TraceOptions, TraceSummary};
pub use meta::Meta;
pub use records::MAGIC;

use crate::error::{Error, Location, Result};
use crate::program::ops::{read_text, Program};
use convert::RankConverter;
use records::RankFile;
use std::collections::HashSet;
use std::path::Path;

/// Reads the trace whose `.meta` file is `path`.
pub fn read(path: &Path, opts: &TraceOptions) -> Result<(Program, TraceSummary)> {
    read_as(path, opts, false)
}

/// Reads the trace whose `.meta` file is `path` for its skeleton, checking every record;
/// the run reads each rank's operations again as it reaches them (`stream`), so that a
/// replay holds the requests in flight, not the whole trace.
pub fn read_streamed(path: &Path, opts: &TraceOptions) -> Result<(Program, TraceSummary)> {
    read_as(path, opts, true)
}

fn read_as(path: &Path, opts: &TraceOptions, streamed: bool) -> Result<(Program, TraceSummary)> {
    let meta = Meta::parse(path, &read_text(path)?)?;
    let ignore = ignored_labels(opts)?;
    let mut prog = Program::new(meta.ranks);
    let mut summary = TraceSummary {
        ranks: meta.ranks,
        ..Default::default()
    };
    let mut first_version: Option<([u8; 3], String)> = None;
    let mut file_ids = Vec::with_capacity(meta.ranks as usize);
    for r in 0..meta.ranks {
        let (rank_file, name) = open_rank(path, &meta, r, &mut first_version)?;
        summary.version = rank_file.version;
        let file_id = prog.file_id(&name);
        file_ids.push(file_id);
        let rank_summary = if streamed {
            let sink = crate::program::sink::Skeleton(&mut prog);
            convert_rank(RankConverter::new(
                rank_file, sink, r, file_id, opts, &ignore,
            ))?
        } else {
            convert_rank(RankConverter::new(
                rank_file, &mut prog, r, file_id, opts, &ignore,
            ))?
        };
        summary.add(rank_summary);
    }
    prog.traced_windows = Some(summary.windows.clone());
    if streamed {
        prog.stream = Some(stream::streamed(meta, opts, &ignore, file_ids));
    }
    Ok((prog, summary))
}

/// Runs a rank's converter to its end: what it read.
fn convert_rank<S: crate::program::sink::Sink>(
    mut c: RankConverter<std::fs::File, S>,
) -> Result<TraceSummary> {
    c.run()?;
    Ok(c.summary)
}

/// Opens rank `r`'s file of the trace of `meta` (whose `.meta` is `path`); all ranks must
/// be of the version of the first.
fn open_rank(
    path: &Path,
    meta: &Meta,
    r: u32,
    first_version: &mut Option<([u8; 3], String)>,
) -> Result<(RankFile<std::fs::File>, String)> {
    let file = meta.rank_file(r);
    let name = file.display().to_string();
    let f = std::fs::File::open(&file).map_err(|e| {
        Error::input(
            Location::file(path.display().to_string()).with_field("fileprefix"),
            format!(
                "rank {r}'s file {name} cannot be opened ({e}): numprocs={} needs {}-0000.bin to {}-{:04}.bin beside the .meta file",
                meta.ranks, meta.prefix, meta.prefix, meta.ranks - 1
            ),
        )
    })?;
    // The reader buffers the file itself.
    let rank_file = RankFile::open(f, &name)?;
    match first_version {
        None => *first_version = Some((rank_file.version, name.clone())),
        Some((v, first)) if *v != rank_file.version => {
            return Err(rank_file.bytes.error(format!(
            "DUMPI version {} but {first} is version {}: the rank files come from different traces",
            dotted(rank_file.version),
            dotted(*v)
        )))
        }
        _ => {}
    }
    Ok((rank_file, name))
}

/// Reads one rank's file from any seekable source (the fuzz target's way in).
pub fn read_rank<R: std::io::Read + std::io::Seek>(
    inner: R,
    name: &str,
    ranks: u32,
    opts: &TraceOptions,
) -> Result<Program> {
    let ignore = ignored_labels(opts)?;
    let mut prog = Program::new(ranks.max(1));
    let file = RankFile::open(inner, name)?;
    let file_id = prog.file_id(name);
    RankConverter::new(file, &mut prog, 0, file_id, opts, &ignore).run()?;
    Ok(prog)
}

fn dotted(v: [u8; 3]) -> String {
    format!("{}.{}.{}", v[0], v[1], v[2])
}

/// The labels of the calls to ignore; an unknown name is an error.
fn ignored_labels(opts: &TraceOptions) -> Result<HashSet<u16>> {
    opts.ignore_calls
        .iter()
        .map(|n| {
            labels::label(n).ok_or_else(|| {
                Error::input(
                    Location::file("command line").with_field("--ignore-call"),
                    format!(
                        "unknown MPI call `{n}`{}",
                        crate::error::did_you_mean(n, labels::NAMES.iter().copied())
                    ),
                )
            })
        })
        .collect()
}

/// Whether `bytes` (a file's start) is one rank of a DUMPI trace.
pub fn is_dumpi(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && bytes[..8] == MAGIC
}
