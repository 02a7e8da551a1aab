//! Signals, stalls and limits while recording and running, with real processes: the built
//! acesim on C programs that loop, fork or grow without end.
#![cfg(unix)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A scratch folder with `files`, and a private temporary folder (TMPDIR) inside it whose
/// path marks every process acesim starts (the recorder lives in `tmp/acesim-mgen*/`).
fn scratch(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tmp")).unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn acesim(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_acesim"));
    c.args(args)
        .current_dir(dir)
        .env("TMPDIR", dir.join("tmp"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Live (not zombie) processes whose command line contains `marker`.
fn live_processes(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let p = e.path();
        let Ok(cmd) = std::fs::read(p.join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let state = std::fs::read_to_string(p.join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if cmd.contains(marker) && !zombie {
            found.push(format!("{}: {cmd}", p.display()));
        }
    }
    found
}

/// Waits (up to 60 s) until `n` live processes carry `marker` and `also`.
fn wait_for_processes(marker: &str, also: &str, n: usize) {
    let start = Instant::now();
    while live_processes(marker)
        .iter()
        .filter(|p| p.contains(also))
        .count()
        < n
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no rank process appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Asserts that no process carrying `marker` is left (they get a moment to die) and that
/// the private temporary folder is empty.
fn assert_clean(dir: &Path) {
    let marker = dir.join("tmp").display().to_string();
    let start = Instant::now();
    while !live_processes(&marker).is_empty() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        live_processes(&marker),
        Vec::<String>::new(),
        "leftover processes"
    );
    let left: Vec<_> = std::fs::read_dir(dir.join("tmp")).unwrap().collect();
    assert!(left.is_empty(), "leftover temporary files: {left:?}");
}

fn wait_with_deadline(child: Child, secs: u64) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("acesim did not finish within {secs} s");
        }
    }
}

fn kill(sig: &str, target: &str) {
    let s = Command::new("kill")
        .args([sig, "--", target])
        .status()
        .unwrap();
    assert!(s.success());
}

/// Rank 0 makes one MGEN call, then spins for ever.
const SPIN: &str = r#"#include "mgen.h"
int MGEN_Main(int argc, char **argv) {
    (void)argc; (void)argv;
    MGEN_Comp(1);
    volatile unsigned long x = 0;
    for (;;) x++;
}
"#;

fn signal_while_recording(sig: &str, to_group: bool, code: i32) {
    let dir = scratch(&[("spin.c", SPIN)]);
    let mut cmd = acesim(
        dir.path(),
        &["run", "spin.c", "--ranks", "2", "--json", "p.json"],
    );
    cmd.process_group(0); // as a terminal's foreground job
    let child = cmd.spawn().unwrap();
    let marker = dir.path().join("tmp").display().to_string();
    // The recorder and rank 0 (not the compiler, whose command line names the folder too).
    wait_for_processes(&format!("{marker}/acesim-mgen"), "program.exe --acesim", 2);
    std::thread::sleep(Duration::from_millis(200));
    let pid = child.id().to_string();
    kill(sig, &if to_group { format!("-{pid}") } else { pid });
    let o = wait_with_deadline(child, 30);
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("interrupted while recording spin.c; its processes were stopped"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("p.json").exists());
    assert_clean(dir.path());
}

#[test]
fn ctrl_c_to_the_process_group_while_recording_stops_the_ranks_and_exits_130() {
    signal_while_recording("-INT", true, 130);
}

#[test]
fn sigterm_to_acesim_while_recording_stops_the_ranks_and_exits_143() {
    signal_while_recording("-TERM", false, 143);
}

#[test]
fn ctrl_c_to_acesim_alone_while_recording_is_not_ignored() {
    signal_while_recording("-INT", false, 130);
}

#[test]
fn sigterm_during_the_simulation_writes_partial_results_and_exits_143() {
    let long: String = format!(
        "ranks 2\nrank 0\n{}rank 1\n{}",
        "put 1 64 tag=1\n".repeat(1_000_000),
        "poll 1\n".repeat(1_000_000)
    );
    let dir = scratch(&[("long.sched", &long)]);
    let child = acesim(dir.path(), &["run", "long.sched", "--json", "p.json", "-q"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    kill("-TERM", &child.id().to_string());
    let o = wait_with_deadline(child, 60);
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p.json")).unwrap()).unwrap();
    assert_eq!(p["partial"]["reason"], "interrupted");
    assert!(stderr(&o).contains("partial results"), "{}", stderr(&o));
}

#[test]
fn a_rank_that_leaves_a_background_process_does_not_hang_acesim() {
    let prog = r#"#include "mgen.h"
#include <unistd.h>
int MGEN_Main(int argc, char **argv) {
    (void)argc; (void)argv;
    MGEN_Comp(1);
    if (fork() == 0) { sleep(600); _exit(0); } /* keeps stdout and stderr open */
    return 0;
}
"#;
    let dir = scratch(&[("bg.c", prog)]);
    let start = Instant::now();
    let child = acesim(dir.path(), &["run", "bg.c", "--ranks", "2", "-q"])
        .spawn()
        .unwrap();
    let o = wait_with_deadline(child, 60);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(start.elapsed() < Duration::from_secs(30));
    assert_clean(dir.path());
}

#[test]
fn a_rank_without_mgen_calls_for_the_record_timeout_is_stopped_and_named() {
    let dir = scratch(&[("spin.c", SPIN)]);
    let start = Instant::now();
    let child = acesim(
        dir.path(),
        &["run", "spin.c", "--ranks", "2", "--record-timeout", "1s"],
    )
    .spawn()
    .unwrap();
    let o = wait_with_deadline(child, 60);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("rank 0: no MGEN call for 1 s after its last MGEN call, MGEN_Comp at spin.c:4 (1 operations recorded)"),
        "{e}"
    );
    assert!(e.contains("--record-timeout"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_clean(dir.path());
    // The environment variable sets it too; a bad value is an error naming it.
    let o = acesim(dir.path(), &["record", "spin.c", "--ranks", "1"])
        .env("ACESIM_RECORD_TIMEOUT", "1s")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no MGEN call for 1 s"),
        "{}",
        stderr(&o)
    );
    let o = acesim(dir.path(), &["record", "spin.c", "--ranks", "1"])
        .env("ACESIM_RECORD_TIMEOUT", "soon")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("ACESIM_RECORD_TIMEOUT"),
        "{}",
        stderr(&o)
    );
    assert_clean(dir.path());
}

#[test]
fn a_recording_that_outgrows_the_memory_budget_is_refused_with_exit_5() {
    let prog = r#"#include "mgen.h"
int MGEN_Main(int argc, char **argv) {
    (void)argc; (void)argv;
    int r;
    MGEN_Comm_rank(MGEN_COMM_WORLD, &r);
    if (r == 0) { MGEN_Comp(1); return 0; }
    for (;;) MGEN_Comp(1);
}
"#;
    let dir = scratch(&[("grow.c", prog)]);
    let child = acesim(dir.path(), &["run", "grow.c", "--ranks", "2"])
        .env("ACESIM_MEMORY_LIMIT", "40MB")
        .spawn()
        .unwrap();
    let o = wait_with_deadline(child, 60);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("error[memory]: grow.c: recording stopped: rank 1: the recorded schedule grew past 10000000 bytes after "), "{e}");
    assert!(e.contains("operations of this rank"), "{e}");
    assert!(e.contains("--ignore-memory-limit"), "{e}");
    assert_clean(dir.path());
}

#[test]
fn mgen_main_returning_non_zero_is_an_error_like_exit() {
    let prog = r#"#include "mgen.h"
#include <stdlib.h>
int MGEN_Main(int argc, char **argv) {
    (void)argc;
    int r;
    MGEN_Comm_rank(MGEN_COMM_WORLD, &r);
    MGEN_Comp(1);
    if (r == 1 && argv[1][0] == 'r') return 3;
    if (r == 1) exit(3);
    return 0;
}
"#;
    let dir = scratch(&[("rc.c", prog)]);
    let o = acesim(dir.path(), &["run", "rc.c", "--ranks", "2", "--", "return"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "rank 1: MGEN_Main returned 3 (not 0) after its last MGEN call, MGEN_Comp at rc.c:7"
        ),
        "{}",
        stderr(&o)
    );
    let o = acesim(dir.path(), &["run", "rc.c", "--ranks", "2", "--", "exit"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rank 1: the program exited with code 3 before MGEN_Main returned, after its last MGEN call, MGEN_Comp at rc.c:7"),
        "{}",
        stderr(&o)
    );
    assert_clean(dir.path());
}

#[test]
fn absurd_rank_counts_are_refused_at_once() {
    let dir = scratch(&[("spin.c", SPIN), ("p.py", "def main(ctx):\n    pass\n")]);
    for prog in ["spin.c", "p.py"] {
        let start = Instant::now();
        let o = acesim(dir.path(), &["run", prog, "--ranks", "100000000"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o)
                .contains("--ranks 100000000: programs are recorded for at most 16777216 ranks"),
            "{}",
            stderr(&o)
        );
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}

fn has_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `acesim` on a Python program, recorded by python3 with this checkout's package.
fn acesim_py(dir: &Path, args: &[&str]) -> Command {
    let mut c = acesim(dir, args);
    c.env(
        "PYTHONPATH",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python"),
    );
    c
}

#[test]
fn python_ranks_that_exit_early_are_reported_consistently() {
    if !has_python() {
        eprintln!("python3 not found: skipping");
        return;
    }
    let prog = r#"import os, sys

def program(ctx):
    ctx.compute("1ns")
    if ctx.rank == 1:
        how = ctx.args[0]
        if how == "exit0":
            sys.exit(0)
        if how == "exit3":
            sys.exit(3)
        if how == "_exit7":
            os._exit(7)
    ctx.compute("2ns")
"#;
    let dir = scratch(&[("p.py", prog)]);
    // sys.exit(0) ends that rank's program normally: what it recorded counts.
    let o = acesim_py(
        dir.path(),
        &[
            "run",
            "p.py",
            "--ranks",
            "2",
            "-q",
            "--schedule-out",
            "s.sched",
            "--",
            "exit0",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("s.sched")).unwrap();
    assert_eq!(text.matches("compute 1000ps").count(), 2, "{text}");
    assert_eq!(text.matches("compute 2000ps").count(), 1, "{text}");
    let o = acesim_py(dir.path(), &["run", "p.py", "--ranks", "2", "--", "exit3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rank 1: the program exited with code 3 before finishing"),
        "{}",
        stderr(&o)
    );
    let o = acesim_py(dir.path(), &["run", "p.py", "--ranks", "2", "--", "_exit7"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "recording p.py failed:\nrank 1 exited with code 7 before finishing its program"
        ),
        "{}",
        stderr(&o)
    );
    assert_clean(dir.path());
}

#[test]
fn ctrl_c_while_recording_a_python_program_exits_130_without_a_traceback() {
    if !has_python() {
        eprintln!("python3 not found: skipping");
        return;
    }
    let prog = "import time\n\ndef program(ctx):\n    open('started', 'w').close()\n    while True:\n        time.sleep(0.01)\n";
    let dir = scratch(&[("p.py", prog)]);
    let mut cmd = acesim_py(dir.path(), &["run", "p.py", "--ranks", "2"]);
    cmd.process_group(0);
    let child = cmd.spawn().unwrap();
    let start = Instant::now();
    while !dir.path().join("started").exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id();
    kill("-INT", &format!("-{pid}"));
    let o = wait_with_deadline(child, 30);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("error[interrupted]: Ctrl-C (SIGINT): interrupted while recording p.py"),
        "{e}"
    );
    assert!(!e.contains("Traceback"), "{e}");
    // No Python process is left: it was in the group acesim killed.
    let start = Instant::now();
    while !live_processes("-m acesim record p.py").is_empty()
        && start.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        live_processes("-m acesim record p.py"),
        Vec::<String>::new()
    );
}

/// Waits (up to 5 s) until no live process carries `marker`, then asserts it.
fn assert_no_process(marker: &str) {
    let start = Instant::now();
    while !live_processes(marker).is_empty() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(live_processes(marker), Vec::<String>::new());
}

#[test]
fn a_python_rank_that_records_nothing_for_the_record_timeout_is_stopped_and_named() {
    if !has_python() {
        eprintln!("python3 not found: skipping");
        return;
    }
    // Rank 1 loops in Python code; with `sleep`, it waits in a call that never returns to
    // Python: both are stopped, as their process is.
    let prog = "import time, sys\n\ndef program(ctx):\n    ctx.compute(1)\n    if ctx.rank == 1:\n        while ctx.args[0] == 'spin':\n            pass\n        time.sleep(600)\n";
    let dir = scratch(&[("stall.py", prog)]);
    for how in ["spin", "sleep"] {
        let start = Instant::now();
        let child = acesim_py(
            dir.path(),
            &[
                "run",
                "stall.py",
                "--ranks",
                "2",
                "--record-timeout",
                "2s",
                "--json",
                "p.json",
                "--",
                how,
            ],
        )
        .spawn()
        .unwrap();
        let o = wait_with_deadline(child, 60);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("error[program]: recording stall.py failed:\nrank 1: no ctx call for 2 s after its last ctx call, ctx.compute at stall.py:4 (1 operations recorded); it may loop forever\n(set --record-timeout or ACESIM_RECORD_TIMEOUT to wait longer, 0 for ever)"),
            "{how}: {e}"
        );
        assert!(start.elapsed() < Duration::from_secs(30), "{how}");
        assert!(!dir.path().join("p.json").exists());
        assert_no_process("-m acesim record stall.py");
    }
    // `acesim record` too, with the timeout from the environment; a program file that never
    // finishes loading is named as such.
    let dir = scratch(&[("loop.py", "while True:\n    pass\n")]);
    let child = acesim_py(dir.path(), &["record", "loop.py", "--ranks", "2"])
        .env("ACESIM_RECORD_TIMEOUT", "1s")
        .spawn()
        .unwrap();
    let o = wait_with_deadline(child, 60);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("recording loop.py failed:\nloop.py did not finish loading in 1 s (before rank 0 started); it may loop forever"),
        "{}",
        stderr(&o)
    );
    assert_no_process("-m acesim record loop.py");
}

#[test]
fn a_python_recording_that_outgrows_the_memory_budget_is_refused_with_exit_5() {
    if !has_python() {
        eprintln!("python3 not found: skipping");
        return;
    }
    let prog = "def program(ctx):\n    if ctx.rank == 0:\n        ctx.compute(1)\n        return\n    while True:\n        ctx.compute(1)\n";
    let dir = scratch(&[("grow.py", prog)]);
    let child = acesim_py(dir.path(), &["run", "grow.py", "--ranks", "2"])
        .env("ACESIM_MEMORY_LIMIT", "40MB")
        .spawn()
        .unwrap();
    let o = wait_with_deadline(child, 60);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    // The text may take 10000000 bytes: 68 before rank 1's operations (`# acesim schedule
    // 1`, `ranks 2`, `rank 0`, rank 0's compute, `rank 1`), then 26 per operation
    // (`compute 1000ps @grow.py:6`): 384612 fit.
    let e = stderr(&o);
    assert!(e.contains("error[memory]: grow.py: recording stopped: rank 1: the recorded schedule grew past 10000000 bytes after 384612 operations of this rank\n(the schedule text may take 1/4 of the 38.1 MiB of memory available, as the program read from it and the run need the rest; record fewer ranks or operations, or use --ignore-memory-limit)"), "{e}");
    assert_no_process("-m acesim record grow.py");
    // A program that ends, larger than the limit: refused, unless --ignore-memory-limit.
    let prog = "def program(ctx):\n    for _ in range(50000):\n        ctx.compute(1)\n";
    let dir = scratch(&[("big.py", prog)]);
    let o = acesim_py(
        dir.path(),
        &["record", "big.py", "--ranks", "1", "-o", "s.sched"],
    )
    .env("ACESIM_MEMORY_LIMIT", "4MB")
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rank 0: the recorded schedule grew past 1000000 bytes after 39998 operations of this rank"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("s.sched").exists());
    let o = acesim_py(
        dir.path(),
        &[
            "record",
            "big.py",
            "--ranks",
            "1",
            "-o",
            "s.sched",
            "--ignore-memory-limit",
        ],
    )
    .env("ACESIM_MEMORY_LIMIT", "4MB")
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("s.sched")).unwrap();
    assert_eq!(text.matches("compute 1000ps @big.py:3").count(), 50000);
    // A rank that ends the process with code 5 is not taken for the size limit.
    let prog = "import os\n\ndef program(ctx):\n    ctx.compute(1)\n    if ctx.rank == 1:\n        os._exit(5)\n";
    let dir = scratch(&[("five.py", prog)]);
    let o = acesim_py(dir.path(), &["run", "five.py", "--ranks", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "recording five.py failed:\nrank 1 exited with code 5 before finishing its program"
        ),
        "{}",
        stderr(&o)
    );
}
