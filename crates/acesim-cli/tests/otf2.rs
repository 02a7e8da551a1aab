//! OTF2 traces from the command line: `acesim run traces.otf2` replays one, `acesim trace
//! info` describes it, a broken archive exits with 2; without the `otf2` feature the error
//! says how to get it.

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

const RING: &str = "tests/data/otf2/ring/traces.otf2";

/// Whether acesim was built with OTF2 (the `otf2` feature of acesim, which `acesim-cli/otf2`
/// or `acesim/otf2` turns on).
const OTF2: bool = acesim::frontends::otf2::AVAILABLE;

#[test]
fn an_otf2_trace_runs_and_is_described() {
    if !OTF2 {
        return;
    }
    let o = acesim(&["run", RING, "-m", "table1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("traced"), "{out}");
    let o = acesim(&["run", RING, "-m", "table1", "--format", "otf2"]);
    assert_eq!(o.status.code(), Some(0));
    let o = acesim(&["trace", "info", RING]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("OTF2 trace, 4 ranks"), "{out}");
    assert!(out.contains("4096 bytes sent point to point"), "{out}");
}

#[test]
fn a_broken_otf2_trace_exits_with_2() {
    if !OTF2 {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let anchor = dir.path().join("traces.otf2");
    std::fs::write(&anchor, b"garbage").unwrap();
    let o = acesim(&["run", anchor.to_str().unwrap(), "-m", "table1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("traces.otf2"), "{err}");
}

#[test]
fn without_the_feature_an_otf2_trace_says_how_to_get_it() {
    if OTF2 {
        return;
    }
    let o = acesim(&["run", RING, "-m", "table1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("built without OTF2"), "{err}");
    assert!(err.contains("scripts/setup"), "{err}");
}
