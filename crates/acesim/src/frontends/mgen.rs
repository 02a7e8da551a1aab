//! MGEN C programs: compiled with the shipped `mgen.h` and recorder runtime, run once per
//! rank (each rank in a fresh process), recorded as a schedule and read back.

use crate::error::{Error, Location, Result};
use crate::frontends::record::{stalled_hint, text_budget, too_big, RecordOptions, MAX_RANKS};
use crate::frontends::schedule;
use crate::program::Program;
use std::path::Path;
use std::process::Command;

/// The public header users include.
pub const MGEN_H: &str = include_str!("../../../../mgen/mgen.h");
/// The recorder runtime linked with every program.
pub const MGEN_RUNTIME_C: &str = include_str!("../../../../mgen/mgen_runtime.c");

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
    let timeout = crate::frontends::record::timeout_in_force(options.timeout_s)?;
    let (budget, max_bytes) = text_budget(options)?;
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
        return Err(too_big(&src_name, stderr, budget));
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
            true => stalled_hint(),
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
