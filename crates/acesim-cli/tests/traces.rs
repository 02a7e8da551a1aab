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
    // The longest rank's window, rank 6's MPI region of 12.639 ms (`acesim trace info` lists them all).
    assert!(
        out.contains("traced run: 12.639 ms (rank 6's window"),
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

#[test]
fn trace_info_reads_simgrid_traces_without_a_host_speed() {
    let o = acesim(&[
        "trace",
        "info",
        "tests/data/simgrid-ti/actions_with_isend.txt",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("SimGrid time-independent trace, 3 ranks"),
        "{out}"
    );
    // Three sends of 1e6 bytes (after `init`, MPI_BYTE elements).
    assert!(out.contains("3000000 bytes sent point to point"), "{out}");
}

/// The predicted time and rank count a run prints.
fn predicted(args: &[&str]) -> (u64, String) {
    let o = acesim(args);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let ps = out
        .split('(')
        .nth(1)
        .and_then(|s| s.split(" ps)").next())
        .and_then(|s| s.parse().ok())
        .expect("predicted time in ps");
    (ps, out)
}

#[test]
fn jobs_fill_the_machine_and_stay_apart() {
    let torus = "examples/machines/torus-4x4.toml";
    // 16 nodes, 4 ranks per node: 64 slots hold 9 jobs of 7 ranks (one NIC idle).
    let o = acesim(&[
        "run",
        TESTBGP,
        "-m",
        torus,
        "--ranks-per-node",
        "4",
        "--jobs",
        "fill",
        "-q",
        "--json",
        "-",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["per_rank"].as_array().unwrap().len(), 63);
    // Each job's alltoalls run on its own sub-communicator: 9 x 7 alltoall calls.
    let a2a = v["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "alltoall")
        .count();
    assert_eq!(a2a, 63);
    // One job alone on the machine's first 7 nodes takes what `--jobs 1` takes.
    let (one, _) = predicted(&["run", TESTBGP, "-m", torus]);
    let (jobs1, _) = predicted(&["run", TESTBGP, "-m", torus, "--jobs", "1"]);
    assert_eq!(one, jobs1);
}

#[test]
fn capped_messages_and_skipped_collectives_take_less_time() {
    let torus = "examples/machines/torus-4x4.toml";
    let (full, _) = predicted(&["run", TESTBGP, "-m", torus]);
    let (skip, _) = predicted(&["run", TESTBGP, "-m", torus, "--collectives", "skip"]);
    let (cap, _) = predicted(&["run", TESTBGP, "-m", torus, "--max-message", "64"]);
    assert!(skip < full, "{skip} < {full}");
    assert!(cap <= full, "{cap} <= {full}");
    for (args, needle) in [
        (&["--collectives", "maybe"][..], "expected `run` or `skip`"),
        (
            &["--jobs", "two"][..],
            "expected a number of jobs or `fill`",
        ),
        (&["--jobs", "0"][..], "expected 1 or more jobs"),
        (&["--max-message", "lots"][..], "field `max-message`"),
    ] {
        let mut all = vec!["run", TESTBGP, "-m", torus];
        all.extend_from_slice(args);
        let o = acesim(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn a_run_stopped_early_counts_hops_and_routes_over_the_packets_delivered() {
    // Minimal routing routes every packet minimally, also in a run stopped while packets
    // are still in flight (they were counted at injection, their routes on delivery).
    let o = acesim(&[
        "run",
        TESTBGP,
        "-m",
        "examples/studies/dragonfly_halo/dragonfly.toml",
        "--jobs",
        "fill",
        "--compute-scale",
        "0",
        "--max-sim-time",
        "20us",
        "-q",
        "--json",
        "-",
    ]);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["partial"]["reason"], "max-sim-time");
    assert_eq!(v["minimal_fraction"], 1.0);
    let nics = v["nics"].as_array().unwrap();
    assert!(nics.iter().all(|n| n["minimal_fraction"] == 1.0));
    let injected: u64 = nics
        .iter()
        .map(|n| n["injected_packets"].as_u64().unwrap())
        .sum();
    let ejected: u64 = nics
        .iter()
        .map(|n| n["ejected_packets"].as_u64().unwrap())
        .sum();
    assert!(
        ejected < injected,
        "stopped with packets in flight: {ejected} < {injected}"
    );
}
