//! SimGrid time-independent (TI) traces: lines `RANK action args...`, as SimGrid's SMPI
//! writes them (`smpirun -trace-ti`) and replays them (`smpirun -replay`). A trace is one
//! file for every rank, or a list of files (one for every rank, or one shared). See
//! docs/traces.md for the actions read and how sizes, datatypes and flops are counted.

pub mod actions;
pub mod convert;
pub mod files;
pub mod shared;
pub mod stream;

pub use files::looks_like_ti;
pub use stream::read_streamed;

use crate::error::{Error, Location, Result};
use crate::frontends::dumpi::{TraceOptions, TraceSummary};
use crate::program::ops::Program;
use actions::FileText;
use files::TraceFile;
use std::collections::BTreeSet;
use std::path::Path;

/// Reads the trace (or list of trace files) at `path`.
pub fn read(path: &Path, opts: &TraceOptions) -> Result<(Program, TraceSummary)> {
    convert_files(&files::trace_files(path)?, opts)
}

/// Reads a trace of every rank given as text (the fuzz target's and tests' way in).
pub fn parse(name: &str, text: &str, opts: &TraceOptions) -> Result<(Program, TraceSummary)> {
    convert_files(
        &[TraceFile {
            name: name.to_string(),
            text: text.to_string(),
            rank: None,
            path: Path::new(name).to_path_buf(),
        }],
        opts,
    )
}

/// The rank count and the program of the trace's files.
fn convert_files(trace: &[TraceFile], opts: &TraceOptions) -> Result<(Program, TraceSummary)> {
    let texts: Vec<FileText> = trace
        .iter()
        .map(|f| FileText::whole(&f.name, &f.text))
        .collect();
    let mut lines = Vec::with_capacity(texts.len());
    for t in &texts {
        lines.push(t.lines()?);
    }
    // One file per rank: as many ranks as files. One file: as many as distinct ranks, which
    // must then be 0 to N-1.
    let ranks = match trace {
        [one] if one.rank.is_none() => {
            let seen: BTreeSet<u32> = lines[0].iter().map(|l| l.rank).collect();
            let n = seen.len() as u32;
            if n == 0 {
                return Err(Error::input(
                    Location::file(&one.name),
                    "no action: a SimGrid trace has lines `RANK action args...` (e.g. `0 init`)",
                ));
            }
            if let Some(l) = lines[0].iter().find(|l| l.rank >= n) {
                let missing: Vec<String> = (0..n)
                    .filter(|r| !seen.contains(r))
                    .map(|r| r.to_string())
                    .collect();
                return Err(texts[0].error(
                    l.words[0],
                    "rank",
                    format!(
                        "rank {} is out of range: the trace has {n} distinct ranks, so they must be 0 to {} (rank {} has no line)",
                        l.rank,
                        n - 1,
                        missing.join(", ")
                    ),
                ));
            }
            n
        }
        _ => trace.len() as u32,
    };
    for (t, (f, ls)) in texts.iter().zip(trace.iter().zip(&lines)) {
        convert::only_its_rank(t, f.rank, ls)?;
    }
    let mut conv = convert::Converter::new(ranks, opts);
    for (t, ls) in texts.iter().zip(&lines) {
        for l in ls {
            let action = actions::parse(t, l, ranks)?;
            conv.line(t, l, action)?;
        }
    }
    Ok(conv.finish())
}

/// Flop/s in a host speed written as SimGrid does (`1Gf`, `100Mf`, `2.5gigaflops`), or as
/// a plain number (`1e9`); `/s` may follow.
pub fn parse_flops(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    const UNITS: [(&str, f64); 14] = [
        ("kiloflops", 1e3),
        ("megaflops", 1e6),
        ("gigaflops", 1e9),
        ("teraflops", 1e12),
        ("petaflops", 1e15),
        ("exaflops", 1e18),
        ("flops", 1.0),
        ("kf", 1e3),
        ("Mf", 1e6),
        ("Gf", 1e9),
        ("Tf", 1e12),
        ("Pf", 1e15),
        ("Ef", 1e18),
        ("f", 1.0),
    ];
    let (num, scale) = UNITS
        .iter()
        .find_map(|(u, s)| t.strip_suffix(u).map(|n| (n, *s)))
        .unwrap_or((t, 1.0));
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && (v * scale).is_finite() => Ok(v * scale),
        _ => Err(format!(
            "expected a host speed above 0 such as 1Gf, 100Mf or 1e9 (flop/s; units f, kf, Mf, Gf, Tf, Pf, Ef or flops), found `{text}`"
        )),
    }
}
