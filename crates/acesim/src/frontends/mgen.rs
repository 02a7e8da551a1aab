//! MGEN C programs: compiled with the shipped `mgen.h` and recorder runtime, run once per
//! rank (each rank in a fresh process), recorded as a schedule and read back.

use crate::error::{Error, Location, Result};
use crate::frontends::schedule;
use crate::program::Program;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The public header users include.
pub const MGEN_H: &str = include_str!("../../../../mgen/mgen.h");
/// The recorder runtime linked with every program.
pub const MGEN_RUNTIME_C: &str = include_str!("../../../../mgen/mgen_runtime.c");

/// Most ranks the recorder runtime accepts (`MGEN_MAX_RANKS` in mgen_runtime.c).
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
    /// Seconds a rank may go without an MGEN call (0: no limit); `None`:
    /// `$ACESIM_RECORD_TIMEOUT`, else [`DEFAULT_TIMEOUT_S`].
    pub timeout_s: Option<u64>,
    /// Refuse (exit code 5) a schedule text larger than the memory budget allows
    /// (`sim::memory_budget` / [`TEXT_SHARE_OF_BUDGET`]).
    pub memory_check: bool,
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
}

/// Seconds in a record timeout such as `60s`, `2min` or `0` (no limit).
pub fn parse_timeout(text: &str, source: &str, field: &str) -> Result<u64> {
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

/// Compiles `source` and records it for `ranks` ranks; returns the schedule text.
/// `args` are passed to `MGEN_Main`. The compiler is `$CC`, else `cc`.
pub fn record(source: &Path, ranks: u32, args: &[String]) -> Result<String> {
    record_with(source, ranks, args, &RecordOptions::checked())
}

/// `record` with limits and an interrupt flag.
pub fn record_with(
    source: &Path,
    ranks: u32,
    args: &[String],
    options: &RecordOptions,
) -> Result<String> {
    let src_name = source.display().to_string();
    if !source.exists() {
        return Err(Error::input(Location::file(&src_name), "no such file"));
    }
    if !source.is_file() {
        return Err(Error::input(
            Location::file(&src_name),
            "not a file: expected an MGEN C source file",
        ));
    }
    if ranks == 0 || ranks > MAX_RANKS {
        return Err(Error::input(
            Location::file("command line").with_field("ranks"),
            format!("--ranks {ranks}: the C recorder runs 1 to {MAX_RANKS} ranks"),
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix("acesim-mgen")
        .tempdir()
        .map_err(|e| Error::io("temporary directory", e))?;
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).map_err(|e| Error::io(p.display().to_string(), e))
    };
    write("mgen.h", MGEN_H)?;
    write("mgen_runtime.c", MGEN_RUNTIME_C)?;
    let exe = dir.path().join("program.exe");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .args(["-std=gnu11", "-O1", "-I"])
        .arg(dir.path())
        .arg(source)
        .arg(dir.path().join("mgen_runtime.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .map_err(|e| Error::Program {
            message: format!("cannot run the C compiler '{cc}' (set CC to choose another): {e}"),
        })?;
    if !out.status.success() {
        return Err(Error::Program {
            message: format!(
                "{src_name}: the C compiler ({cc}) failed:\n{}",
                String::from_utf8_lossy(&out.stderr).trim_end()
            ),
        });
    }
    if options
        .interrupt
        .as_ref()
        .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
    {
        return Err(Error::Interrupted(format!(
            "interrupted while compiling {src_name}"
        )));
    }
    let timeout = timeout_in_force(options.timeout_s)?;
    let budget = match options.memory_check {
        true => crate::memory::memory_budget()?,
        false => None,
    };
    let max_bytes = budget.map_or(0, |b| (b / TEXT_SHARE_OF_BUDGET).max(1));
    let sched = dir.path().join("recorded.sched");
    let run = crate::frontends::child::run(
        Command::new(&exe)
            .arg("--acesim-ranks")
            .arg(ranks.to_string())
            .arg("--acesim-out")
            .arg(&sched)
            .arg("--acesim-max-bytes")
            .arg(max_bytes.to_string())
            .arg("--acesim-timeout")
            .arg(timeout.to_string())
            .arg("--")
            .args(args),
        options.interrupt.as_deref(),
        &format!("recording {src_name}"),
    )?;
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stderr = stderr.trim_end();
    if run.status.code() == Some(5) {
        let have = budget.map_or(String::new(), crate::memory::approx_size);
        return Err(Error::TooBig(format!(
            "{src_name}: recording stopped: {stderr}\n(the schedule text may take 1/{TEXT_SHARE_OF_BUDGET} of the {have} of memory available, as the program read from it and the run need the rest; record fewer ranks or operations, or use --ignore-memory-limit)"
        )));
    }
    if !run.status.success() {
        let why = match stderr.is_empty() {
            true => format!(
                "the recorder {}",
                crate::frontends::child::describe(&run.status)
            ),
            false => stderr.to_string(),
        };
        let hint = match why.contains("no MGEN call for") {
            true => "\n(set --record-timeout or ACESIM_RECORD_TIMEOUT to wait longer, 0 for ever)",
            false => "",
        };
        return Err(Error::Program {
            message: format!("{src_name}: recording the program failed:\n{why}{hint}"),
        });
    }
    std::fs::read_to_string(&sched).map_err(|e| Error::io(sched.display().to_string(), e))
}

/// Compiles, records and parses an MGEN program.
pub fn load(source: &Path, ranks: u32, args: &[String]) -> Result<Program> {
    load_with(source, ranks, args, &RecordOptions::checked())
}

/// `load` with limits and an interrupt flag.
pub fn load_with(
    source: &Path,
    ranks: u32,
    args: &[String],
    options: &RecordOptions,
) -> Result<Program> {
    let text = record_with(source, ranks, args, options)?;
    schedule::parse(
        &format!("schedule recorded from {}", source.display()),
        &text,
    )
}
