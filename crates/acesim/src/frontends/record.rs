//! What every recording of a program (a C program's ranks as processes, a Python program
//! in a Python process) shares: its limits, the options that set them, and the messages
//! that report them.

use crate::error::{Error, Location, Result};

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Most ranks a program is recorded for (`MGEN_MAX_RANKS` in mgen_runtime.c, `MAX_RANKS`
/// in python/acesim/program.py).
pub const MAX_RANKS: u32 = 1 << 24;

/// Seconds a rank may go without an MGEN call before the recording is stopped, unless
/// `--record-timeout` or `$ACESIM_RECORD_TIMEOUT` says otherwise.
pub const DEFAULT_TIMEOUT_S: u64 = 60;

/// Share of the memory budget the recorded schedule text may take: the text, the program
/// read from it and the run each need memory of the same order.
pub const TEXT_SHARE_OF_BUDGET: u64 = 4;

/// Limits and controls of a recording.
#[derive(Debug, Clone, Default)]
pub struct RecordOptions {
    /// Stop the recording (and its rank processes) when this becomes true.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Seconds a rank may go without recording an operation (0: no limit); `None`:
    /// `$ACESIM_RECORD_TIMEOUT`, else [`DEFAULT_TIMEOUT_S`].
    pub timeout_s: Option<u64>,
    /// Refuse (exit code 5) a schedule text larger than the memory budget allows
    /// (`memory::memory_budget` / [`TEXT_SHARE_OF_BUDGET`]).
    pub memory_check: bool,
    /// How a trace (DUMPI) is replayed: calls to skip, compute between calls.
    pub trace: crate::frontends::dumpi::TraceOptions,
    /// Read a trace (DUMPI, OTF2, SimGrid's files per rank) as the run reaches its calls
    /// (`program::stream`) rather than all at once: for runs, not for tools that look at
    /// the whole program.
    pub stream_traces: bool,
    /// Threads a large schedule or GOAL file is read on (0 or 1: one; `schedule::parse_on`,
    /// `goal::parse_on`).
    pub read_threads: usize,
    /// The ranks whose operations a schedule file's reading keeps (a process of a run
    /// across processes: its own; `schedule::parse_only`); `None`: every rank's.
    pub only_ranks: Option<OnlyRanks>,
}

/// Given a schedule's rank count, the ranks whose operations are read whole (`None`: all).
#[derive(Clone)]
pub struct OnlyRanks(pub Arc<dyn Fn(u32) -> Option<Vec<bool>> + Send + Sync>);

impl std::fmt::Debug for OnlyRanks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnlyRanks")
    }
}

impl RecordOptions {
    /// The defaults of a recording made outside the CLI: memory checked, no interrupt,
    /// the default timeout.
    pub fn checked() -> Self {
        RecordOptions {
            memory_check: true,
            ..Default::default()
        }
    }

    /// The threads to read a schedule on for a run on `threads` threads: a run on threads
    /// reads on them too (0: every core), and a run that did not say (`None`, a serial
    /// run) reads on every core, since reading gives the same program on any number of
    /// threads and the cores would otherwise idle. `--threads 1` reads on one.
    pub fn read_threads_for(threads: Option<u32>) -> usize {
        match threads {
            None | Some(0) => std::thread::available_parallelism().map_or(1, |n| n.get()),
            Some(t) => t as usize,
        }
    }
}

/// Seconds in a record timeout such as `60s`, `500ms` or `0` (no limit).
pub fn parse_timeout(text: &str, source: &str, field: &str) -> Result<u64> {
    if text.trim() == "0" {
        return Ok(0);
    }
    let ps = crate::units::parse_time(text).map_err(|m| {
        Error::input(
            Location::file(source).with_field(field),
            format!("{m} (a time such as 60s; 0 waits forever)"),
        )
    })?;
    Ok(ps.div_ceil(1_000_000_000_000))
}

/// The record timeout in force: `given`, else `$ACESIM_RECORD_TIMEOUT`, else the default.
pub fn timeout_in_force(given: Option<u64>) -> Result<u64> {
    if let Some(t) = given {
        return Ok(t);
    }
    match std::env::var("ACESIM_RECORD_TIMEOUT") {
        Ok(v) => parse_timeout(&v, "environment", "ACESIM_RECORD_TIMEOUT"),
        Err(_) => Ok(DEFAULT_TIMEOUT_S),
    }
}

/// The memory budget of a recording (`None`: not checked or unknown) and the most bytes of
/// schedule text it may write (0: no limit).
pub fn text_budget(options: &RecordOptions) -> Result<(Option<u64>, u64)> {
    let budget = match options.memory_check {
        true => crate::memory::memory_budget()?,
        false => None,
    };
    Ok((
        budget,
        budget.map_or(0, |b| (b / TEXT_SHARE_OF_BUDGET).max(1)),
    ))
}

/// The error of a recording stopped by its size limit: `what` says where it stopped.
pub fn too_big(program: &str, what: &str, budget: Option<u64>) -> Error {
    let have = budget.map_or(String::new(), crate::memory::approx_size);
    Error::TooBig(format!(
        "{program}: recording stopped: {what}\n(the schedule text may take 1/{TEXT_SHARE_OF_BUDGET} of the {have} of memory available, as the program read from it and the run need the rest; record fewer ranks or operations, or use --ignore-memory-limit)"
    ))
}

/// The hint after a rank stopped for recording nothing for too long.
pub fn stalled_hint() -> &'static str {
    "\n(set --record-timeout or ACESIM_RECORD_TIMEOUT to wait longer, 0 for ever)"
}
