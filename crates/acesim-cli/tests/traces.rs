//! MPI traces from the command line: `acesim run TRACE.meta` replays a DUMPI trace and sets
//! the traced run beside the prediction; `acesim trace info` describes one without
//! simulating; what is not a trace is named.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn acesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("acesim runs")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const TESTBGP: &str = "tests/data/dumpi/sst-macro-testbgp/testbgp.meta";

#[test]
fn a_dumpi_trace_replays_and_reports_its_traced_window() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let o = acesim(&[
        "run",
        TESTBGP,
        "-m",
        "examples/machines/torus-4x4.toml",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("ranks: 7"), "{out}");
    // The longest rank's window, rank 6's 12.876 ms (`acesim trace info` lists them all).
    assert!(
        out.contains("traced run: 12.876 ms (rank 6's window"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let ranks = v["per_rank"].as_array().unwrap();
    assert_eq!(ranks.len(), 7);
    assert!(ranks
        .iter()
        .all(|r| r["traced_ps"].as_u64().unwrap() > 11_000_000_000));
}

#[test]
fn trace_info_lists_calls_bytes_and_windows_without_simulating() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("info.json");
    let o = acesim(&["trace", "info", TESTBGP, "--json", json.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("DUMPI 1.1.0 trace, 7 ranks"), "{out}");
    // 7 ranks x 84 isends and 84 irecvs (the trace's own footer counts the same).
    assert!(
        out.contains("MPI_Isend                         588"),
        "{out}"
    );
    assert!(
        out.contains("MPI_Alltoall                       49"),
        "{out}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["ranks"], 7);
    assert_eq!(v["windows"].as_array().unwrap().len(), 7);
    assert_eq!(v["calls"]["MPI_Waitall"], 98);
}

#[test]
fn trace_info_names_what_is_not_a_trace() {
    let o = acesim(&["trace", "info", "examples/papers/ring_put.c"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("this is the C program"), "{err}");
    let o = acesim(&[
        "run",
        "tests/data/dumpi/sst-macro-testbgp/testbgp-0003.bin",
        "-m",
        "table1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("give the trace's .meta file"), "{err}");
}
