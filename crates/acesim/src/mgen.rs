//! MGEN C programs: compiled with the shipped `mgen.h` and recorder runtime, run once per
//! rank (each rank in a fresh process), recorded as a schedule and read back.

use crate::error::{Error, Location, Result};
use crate::program::Program;
use crate::schedule;
use std::path::Path;
use std::process::Command;

/// The public header users include.
pub const MGEN_H: &str = include_str!("../../../mgen/mgen.h");
/// The recorder runtime linked with every program.
pub const MGEN_RUNTIME_C: &str = include_str!("../../../mgen/mgen_runtime.c");

/// Most ranks the recorder runtime accepts (`MGEN_MAX_RANKS` in mgen_runtime.c).
pub const MAX_RANKS: u32 = 1 << 24;

/// Compiles `source` and records it for `ranks` ranks; returns the schedule text.
/// `args` are passed to `MGEN_Main`. The compiler is `$CC`, else `cc`.
pub fn record(source: &Path, ranks: u32, args: &[String]) -> Result<String> {
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
    let sched = dir.path().join("recorded.sched");
    let run = Command::new(&exe)
        .arg("--acesim-ranks")
        .arg(ranks.to_string())
        .arg("--acesim-out")
        .arg(&sched)
        .arg("--")
        .args(args)
        .output()
        .map_err(|e| Error::Program {
            message: format!("{src_name}: cannot run the recorded program: {e}"),
        })?;
    if !run.status.success() {
        return Err(Error::Program {
            message: format!(
                "{src_name}: recording the program failed:\n{}",
                String::from_utf8_lossy(&run.stderr).trim_end()
            ),
        });
    }
    std::fs::read_to_string(&sched).map_err(|e| Error::io(sched.display().to_string(), e))
}

/// Compiles, records and parses an MGEN program.
pub fn load(source: &Path, ranks: u32, args: &[String]) -> Result<Program> {
    let text = record(source, ranks, args)?;
    schedule::parse(
        &format!("schedule recorded from {}", source.display()),
        &text,
    )
}
