//! Python programs (`prog.py` with a `main(ctx)`), recorded by the `acesim` Python package
//! in a Python process of their own (`python -m acesim record`), with the limits of a C
//! recording: the recorder notes its progress in a status file that is watched here, and
//! stops itself past its share of the memory budget. Also how the command runs the rest of
//! the Python package (the report).

use crate::error::{Error, Result};
use crate::frontends::child::{self, Finished};
use crate::frontends::record::{
    stalled_hint, text_budget, timeout_in_force, too_big, RecordOptions,
};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The Python interpreter that has the `acesim` package: $ACESIM_PYTHON; else the project
/// venv that `scripts/setup` made beside the binary's build (`target/release/acesim` finds
/// `.venv/bin/python3` two folders up), so that nobody has to activate it; else python3.
pub fn interpreter() -> String {
    if let Ok(py) = std::env::var("ACESIM_PYTHON") {
        return py;
    }
    let exe = std::env::current_exe().ok();
    let beside = exe.as_deref().and_then(|exe| {
        exe.ancestors()
            .skip(1)
            .take(4)
            .map(|dir| dir.join(".venv/bin/python3"))
            .find(|py| py.is_file())
    });
    match beside {
        Some(py) => py.display().to_string(),
        None => "python3".to_string(),
    }
}

/// How a Python process that ended early without a word is reported (then the rank it was
/// at replaces "Python").
const PY_EXITED: &str = "Python exited with code";

/// What the Python recorder notes in its status file (ACESIM_RECORD_STATUS; written by
/// `_StatusFile` in python/acesim/program.py): `RANK OPS` (RANK `-` while the program file
/// loads), its last call on the next line, then `too big` when the size limit stopped it.
/// A thread of the recorder notes them four times a second, and when a rank starts: a rank
/// stuck in a call that holds Python's interpreter lock shows what was noted last.
struct PyStatus {
    /// The first line, which changes whenever the recording moves on.
    progress: String,
    /// None while the program file loads.
    rank: Option<String>,
    ops: String,
    last: String,
    too_big: bool,
}

impl PyStatus {
    fn read(path: &Path) -> Option<PyStatus> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut lines = text.trim().lines().map(str::trim);
        let progress = lines.next()?.to_string();
        let (rank, ops) = progress.split_once(' ')?;
        Some(PyStatus {
            rank: (rank != "-").then(|| rank.to_string()),
            ops: ops.to_string(),
            last: lines.next().unwrap_or("").to_string(),
            too_big: lines.next() == Some("too big"),
            progress,
        })
    }

    /// The rank that made no progress for `seconds`, named as the Python recorder names it
    /// (`stall_detail` in python/acesim/program.py) and as a C rank is named.
    fn stalled(&self, name: &str, seconds: u64) -> String {
        let Some(r) = &self.rank else {
            return format!(
                "{name} did not finish loading in {seconds} s (before rank 0 started); it may loop forever"
            );
        };
        let at = match self.last.is_empty() {
            true => " before its first ctx call".to_string(),
            false => format!(" after its last ctx call, {}", self.last),
        };
        format!(
            "rank {r}: no ctx call for {seconds} s{at} ({} operations recorded); it may loop forever",
            self.ops
        )
    }
}

/// Watches the Python recorder's status file until `done`: sets `stop` when `interrupt` is
/// set, or when the recording has not moved on (no new operation, no new rank) for
/// `timeout_s` seconds (0: never), and then returns the status it stalled at. The clock
/// starts when the recorder first notes something (Python's own start is not counted).
fn watch_python(
    status: &Path,
    timeout_s: u64,
    interrupt: Option<&AtomicBool>,
    stop: &AtomicBool,
    done: &AtomicBool,
) -> Option<PyStatus> {
    let mut seen = String::new();
    let mut since = Instant::now();
    while !done.load(Ordering::SeqCst) {
        if interrupt.is_some_and(|f| f.load(Ordering::SeqCst)) {
            stop.store(true, Ordering::SeqCst);
            return None;
        }
        if timeout_s > 0 {
            if let Some(s) = PyStatus::read(status) {
                if s.progress != seen {
                    seen.clone_from(&s.progress);
                    since = Instant::now();
                } else if since.elapsed() >= Duration::from_secs(timeout_s) {
                    stop.store(true, Ordering::SeqCst);
                    return Some(s);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// Runs `python -m acesim ARGS` in a process group of its own, stopped when `interrupt` is
/// set (see `frontends::child`), and waits for it.
pub fn run_module(
    args: &[String],
    what: &str,
    interrupt: Option<&AtomicBool>,
    envs: &[(&str, &OsStr)],
) -> Result<Finished> {
    let py = interpreter();
    let mut cmd = Command::new(&py);
    cmd.arg("-m").arg("acesim").args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    child::run(&mut cmd, interrupt, what).map_err(|e| match e {
        Error::Program { message } => Error::Program {
            message: format!("{message}\n({what} needs Python with the acesim package: {py}; install it with `pip install .`)"),
        },
        e => e,
    })
}

/// The error of a Python process that failed: what it wrote, or its exit code.
pub fn failure(out: &Finished, what: &str) -> Error {
    let err = String::from_utf8_lossy(&out.stderr);
    let hint = if err.contains("No module named acesim") {
        "\n(install the Python package with `pip install .` from the repository, or set ACESIM_PYTHON)"
    } else {
        ""
    };
    let why = match err.trim().is_empty() {
        true => format!("Python {}", child::describe(&out.status)),
        false => err.trim_end().to_string(),
    };
    Error::Program {
        message: format!("{what} failed:\n{why}{hint}"),
    }
}

/// Runs `python -m acesim ARGS` to its end, for what lives in the Python package (the
/// report): its output, or the error of its failure.
pub fn run_package(args: &[String], what: &str) -> Result<Finished> {
    let out = run_module(args, what, None, &[])?;
    match out.status.success() {
        true => Ok(out),
        false => Err(failure(&out, what)),
    }
}

/// Records a Python program with `python -m acesim record` (the `acesim` package) and
/// returns the schedule text, with the limits of a C recording: a rank that records no
/// operation for the record timeout is stopped and named (the recorder notes its progress
/// in a status file that this process watches); the recorder stops a schedule text past
/// a quarter of the memory budget (exit code 5).
pub fn record(path: &Path, ranks: u32, args: &[String], options: &RecordOptions) -> Result<String> {
    let name = path.display().to_string();
    let mut a = vec![
        "record".to_string(),
        name.clone(),
        "--ranks".into(),
        ranks.to_string(),
    ];
    if !args.is_empty() {
        // The program's own arguments (ctx.args) follow a `--`.
        a.push("--".into());
        a.extend(args.iter().cloned());
    }
    let timeout = timeout_in_force(options.timeout_s)?;
    let (budget, max_bytes) = text_budget(options)?;
    let max_bytes = max_bytes.to_string();
    let status = tempfile::NamedTempFile::new().map_err(|e| Error::io("temporary file", e))?;
    let what = format!("recording {name}");
    let envs = [
        ("ACESIM_RECORD_STATUS", status.path().as_os_str()),
        ("ACESIM_RECORD_MAX_BYTES", OsStr::new(&max_bytes)),
    ];
    let (stop, done) = (AtomicBool::new(false), AtomicBool::new(false));
    let interrupt = options.interrupt.as_deref();
    let (out, stalled) = std::thread::scope(|s| {
        let watcher = s.spawn(|| watch_python(status.path(), timeout, interrupt, &stop, &done));
        let out = run_module(&a, &what, Some(&stop), &envs);
        done.store(true, Ordering::SeqCst);
        (out, watcher.join().ok().flatten())
    });
    let out = match (out, stalled) {
        (Err(Error::Interrupted(_)), Some(s)) => {
            return Err(Error::Program {
                message: format!(
                    "{what} failed:\n{}{}",
                    s.stalled(&name, timeout),
                    stalled_hint()
                ),
            })
        }
        (out, _) => out?,
    };
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let status = PyStatus::read(status.path());
    // The recorder's own exit on its size limit (a rank's `os._exit(5)` is not one).
    if out.status.code() == Some(5) && status.as_ref().is_some_and(|s| s.too_big) {
        let what = String::from_utf8_lossy(&out.stderr);
        return Err(too_big(&name, what.trim_end(), budget));
    }
    Err(match (failure(&out, &what), status.and_then(|s| s.rank)) {
        (Error::Program { message }, Some(r)) if message.contains(PY_EXITED) => Error::Program {
            message: message.replace(PY_EXITED, &format!("rank {r} exited with code"))
                + " before finishing its program",
        },
        (e, _) => e,
    })
}
