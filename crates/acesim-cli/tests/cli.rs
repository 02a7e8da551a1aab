//! The `acesim` command end to end: good runs, bad input, exit codes, output files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn acesim(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("acesim runs")
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs a failing command in a scratch folder and checks the exit code, the message and
/// that no output file was left behind.
fn fails(files: &[(&str, &str)], args: &[&str], code: i32, needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", "out.json", "--links-csv", "links.csv"]);
    let o = acesim(&all, dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: expected `{n}` in:\n{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(!dir.path().join("out.json").exists(), "no partial output");
    assert!(!dir.path().join("links.csv").exists(), "no partial output");
}

const RING: &str = "ranks 2\nrank 0\nput 1 4 tag=0\nrank 1\npoll 0\n";

#[test]
fn the_papers_programs_run_and_write_their_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let fig1 = repo().join("examples/papers/fig1.c");
    let o = acesim(
        &[
            "run",
            fig1.to_str().unwrap(),
            "--machine",
            "table1",
            "--ranks",
            "2",
            "--json",
            "r.json",
            "--links-csv",
            "l.csv",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("predicted execution time: 100.302 us"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(json["predicted_time_ps"], 100_302_258);
    for key in ["ranks", "events", "per_rank", "operations", "regions"] {
        assert!(json.get(key).is_some(), "JSON has {key}");
    }
    let op = &json["operations"][0];
    for key in [
        "issue_ps",
        "dma_start_ps",
        "landed_ps",
        "complete_ps",
        "bandwidth_bytes_per_s",
    ] {
        assert!(op.get(key).is_some(), "operation has {key}");
    }
    assert_eq!(json["per_rank"][1]["finish_ps"], 100_153_058);
    let csv = std::fs::read_to_string(dir.path().join("l.csv")).unwrap();
    assert!(csv.starts_with("link,name,class,bandwidth_bytes_per_s,bytes,packets,busy_ps,utilization,wait_ps,stall_ps\n"));
    assert_eq!(
        csv.lines().count(),
        1 + 4,
        "two NICs: two injection and two ejection links"
    );
}

/// Every output file is byte-identical when the same inputs run twice: JSON, links CSV,
/// timeline, schedule, and the traffic tables, including runs that draw random numbers
/// (UGAL routing, random placement, Bernoulli injection).
#[test]
fn output_files_are_byte_identical_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let hot = repo().join("examples/schedules/hotspot.sched");
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let fly = repo().join("examples/dragonfly/dragonfly-1056.toml");
    let (hot, torus, fly) = (
        hot.to_str().unwrap(),
        torus.to_str().unwrap(),
        fly.to_str().unwrap(),
    );
    let runs: Vec<Vec<&str>> = vec![
        vec![
            "run",
            hot,
            "-m",
            torus,
            "--json",
            "@.json",
            "--links-csv",
            "@.csv",
            "--timeline",
            "@.trace.json",
            "--schedule-out",
            "@.sched",
            "-q",
        ],
        vec![
            "run",
            hot,
            "-m",
            torus,
            "--placement",
            "random",
            "--set",
            "placement.seed=7",
            "--json",
            "@.json",
            "-q",
        ],
        vec![
            "traffic",
            "-m",
            fly,
            "--set",
            "router.routing=\"ugal\"",
            "--load",
            "0.2,0.4",
            "--warmup",
            "1us",
            "--measure",
            "2us",
            "--csv",
            "@.csv",
            "--json",
            "@.json",
            "-q",
        ],
    ];
    for (i, args) in runs.iter().enumerate() {
        let mut files = Vec::new();
        for round in ["a", "b"] {
            let args: Vec<String> = args
                .iter()
                .map(|a| a.replace('@', &format!("{i}{round}")))
                .collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = acesim(&args, dir.path());
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            let mut names: Vec<String> = args
                .iter()
                .filter(|a| a.starts_with(&format!("{i}{round}")))
                .map(|a| a.to_string())
                .collect();
            names.sort();
            files.push(names);
        }
        for (a, b) in files[0].iter().zip(&files[1]) {
            let (ta, tb) = (
                std::fs::read(dir.path().join(a)).unwrap(),
                std::fs::read(dir.path().join(b)).unwrap(),
            );
            assert!(!ta.is_empty());
            assert!(ta == tb, "{a} and {b} differ");
        }
    }
}

#[test]
fn set_overrides_any_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.sched"), RING).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "r.sched", "--json", "-", "-q"];
        args.extend(extra);
        let o = acesim(&args, dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["predicted_time_ps"].as_u64().unwrap()
    };
    let base = run(&[]);
    // One router on each way: 28 ns less switch latency, twice.
    assert_eq!(
        run(&["--set", "router.switch_latency=100ns"]),
        base - 2 * 28_000
    );
    assert_eq!(run(&["--set", "node.overhead=1us"]), base + 2_000_000);
}

#[test]
fn goal_files_run_with_dependencies() {
    let dir = tempfile::tempdir().unwrap();
    let goal = "num_ranks 2\nrank 0 {\nl1: calc 100\nl2: send 8b to 1 tag 5\nl2 requires l1\n}\nrank 1 {\nl1: recv 8b from 0 tag 5\n}\n";
    std::fs::write(dir.path().join("t.goal"), goal).unwrap();
    let o = acesim(&["run", "t.goal", "--json", "-", "-q"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // 100 ns calc, 8 B DMA (2858 ps), 2 cables + router + 40 B at 4 GB/s, 8 B DMA.
    let landed = 100_000 + 2_858 + 1_200 + 140_000 + 10_000 + 2_858;
    assert_eq!(v["per_rank"][1]["finish_ps"], landed);
    assert_eq!(v["operations"][0]["kind"], "send");
    // The real traces shipped with the project run to completion.
    for f in [
        "loggopsim_binary_tree_32.goal",
        "schedgen_schedule.goal",
        "loggopsim2_schedule.goal",
    ] {
        let path = repo().join("tests/data/goal").join(f);
        let o = acesim(&["run", path.to_str().unwrap(), "-q"], dir.path());
        assert!(o.status.success(), "{f}: {}", stderr(&o));
    }
}

#[test]
fn machine_errors_name_file_line_and_field() {
    let torus = "[topology]\nkind = \"torus\"\ndims = [4, 0]\n";
    fails(
        &[("m.toml", torus), ("r.sched", RING)],
        &["run", "r.sched", "-m", "m.toml"],
        2,
        &["m.toml:3:8: field `topology.dims`: dimension 1 has size 0"],
    );
    let typo = "[topology]\nkind = \"crossbar\"\n[router]\nswich_latency = \"1 ns\"\n";
    fails(
        &[("m.toml", typo), ("r.sched", RING)],
        &["run", "r.sched", "-m", "m.toml"],
        2,
        &["m.toml:4:1", "unknown field `swich_latency`"],
    );
    let unit = "[topology]\nkind = \"crossbar\"\n[link]\nlatency = \"5 parsecs\"\n";
    fails(
        &[("m.toml", unit), ("r.sched", RING)],
        &["run", "r.sched", "-m", "m.toml"],
        2,
        &["m.toml:4:11", "not a time unit"],
    );
    let mtu = "[topology]\nkind = \"crossbar\"\n[nic]\nmtu = \"16 B\"\nheader = \"32 B\"\n";
    fails(
        &[("m.toml", mtu), ("r.sched", RING)],
        &["run", "r.sched", "-m", "m.toml"],
        2,
        &["field `nic.mtu`", "larger than the packet header"],
    );
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--set", "router.vcs=lots"],
        2,
        &["command line", "router.vcs"],
    );
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--set", "router.vcs=0"],
        2,
        &["command line: field `router.vcs`"],
    );
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "-m", "nosuch"],
        2,
        &["nosuch: no such machine file, and not a preset"],
    );
    fails(
        &[("r.sched", RING)],
        &[
            "run",
            "r.sched",
            "--set",
            "topology.kind=\"torus\"",
            "--set",
            "topology.dims=[4096,4096,64]",
            "--set",
            "nic.count=64",
        ],
        2,
        &["2^28"],
    );
    fails(
        &[("r.sched", "ranks 2\nrank 0\nput 1 4 nic=3\n")],
        &["run", "r.sched"],
        2,
        &["r.sched:3: field `nic`: rank 0: nic=3 but the machine has 1 NIC(s) per node"],
    );
    fails(
        &[("r.sched", "ranks 2\nrank 0\nput 1 2TiB\n")],
        &["run", "r.sched"],
        2,
        &["larger than acesim supports"],
    );
    let small = "[topology]\nkind = \"mesh\"\ndims = [2]\n";
    let three = "ranks 3\n";
    fails(
        &[("m.toml", small), ("r.sched", three)],
        &["run", "r.sched", "-m", "m.toml"],
        2,
        &["3 ranks at 1 per node need 3 nodes but this mesh has 2 nodes"],
    );
}

#[test]
fn program_errors_name_file_line_and_field() {
    fails(
        &[("r.sched", "ranks 2\nrank 0\nput 7 4\n")],
        &["run", "r.sched"],
        2,
        &["r.sched:3:5: field `dst`: rank 7 is out of range"],
    );
    fails(
        &[("r.sched", "ranks 2\nrank 0\nput 1 -4\n")],
        &["run", "r.sched"],
        2,
        &["r.sched:3:7: field `size`", "negative"],
    );
    fails(
        &[("r.sched", RING)],
        &["run", "r.sched", "--ranks", "4"],
        2,
        &["--ranks 4 but r.sched is a schedule for 2 ranks"],
    );
    let bad_c = "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  MGEN_rdma_put(1, 4 0);\n}\n";
    fails(
        &[("p.c", bad_c)],
        &["run", "p.c", "--ranks", "2"],
        2,
        &["the C compiler", "p.c:3"],
    );
    let range_c = "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 0) MGEN_rdma_put(5, 4, 0);\n  return 0;\n}\n";
    fails(
        &[("p.c", range_c)],
        &["run", "p.c", "--ranks", "2"],
        2,
        &["p.c:4: field `dst`: rank 5 is out of range"],
    );
    fails(
        &[("p.c", range_c)],
        &["run", "p.c"],
        2,
        &["--ranks is needed"],
    );
    fails(
        &[(
            "t.goal",
            "num_ranks 2\nrank 0 {\nl1: send 1b to 9 tag 0\n}\n",
        )],
        &["run", "t.goal"],
        2,
        &["t.goal:3:16: field `dst`"],
    );
}

#[test]
fn a_program_that_cannot_finish_exits_3_with_a_report() {
    let c = "#include \"mgen.h\"\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 1) MGEN_rdma_poll(42);\n  return 0;\n}\n";
    fails(
        &[("p.c", c)],
        &["run", "p.c", "--ranks", "2"],
        3,
        &[
            "deadlock",
            "rank 1: `poll 42` at p.c:4 waits for a put with tag 42",
        ],
    );
    let goal = "num_ranks 2\nrank 0 {\nl1: recv 1b from 1 tag 0\n}\nrank 1 {\nl1: recv 1b from 0 tag 0\n}\n";
    fails(
        &[("t.goal", goal)],
        &["run", "t.goal"],
        3,
        &["rank 0: `l1: recv 1 1 tag=0` at t.goal:3 waits for a message from rank 1 with tag 0"],
    );
}

#[test]
fn record_writes_the_schedule_of_a_c_program() {
    let dir = tempfile::tempdir().unwrap();
    let ring = repo().join("examples/papers/ring_put.c");
    let o = acesim(
        &["record", ring.to_str().unwrap(), "--ranks", "3"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("ranks 3\nrank 0\nput 1 4 tag=0 handle=1 @"),
        "{text}"
    );
    assert!(text.contains("rank 2\nput 0 4 tag=0 handle=1 @"), "{text}");
}

#[test]
fn ranks_per_node_and_placement_flags() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.sched"), "ranks 4\nrank 0\nput 1 8\n").unwrap();
    std::fs::write(dir.path().join("nodes.txt"), "1\n0\n1\n0\n").unwrap();
    let nodes = |extra: &[&str]| {
        let mut args = vec!["run", "r.sched", "--json", "-", "-q"];
        args.extend(extra);
        let o = acesim(&args, dir.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["node"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(nodes(&[]), vec![0, 1, 2, 3]);
    assert_eq!(nodes(&["--ranks-per-node", "2"]), vec![0, 0, 1, 1]);
    assert_eq!(
        nodes(&["--ranks-per-node", "2", "--placement", "cyclic"]),
        vec![0, 1, 0, 1]
    );
    assert_eq!(
        nodes(&["--ranks-per-node", "2", "--placement", "nodes.txt"]),
        vec![1, 0, 1, 0]
    );
    let random = nodes(&[
        "--ranks-per-node",
        "2",
        "--placement",
        "random",
        "--set",
        "placement.seed=3",
    ]);
    assert_eq!(
        random,
        nodes(&[
            "--ranks-per-node",
            "2",
            "--placement",
            "random",
            "--set",
            "placement.seed=3"
        ])
    );
    fails(
        &[("r.sched", "ranks 4\n"), ("p.txt", "0\n0\n0\n1\n")],
        &[
            "run",
            "r.sched",
            "--ranks-per-node",
            "2",
            "--placement",
            "p.txt",
        ],
        2,
        &["p.txt:3:1: field `node`: node 0 gets more than placement.ranks_per_node = 2 ranks"],
    );
    fails(
        &[("r.sched", "ranks 4\n")],
        &["run", "r.sched", "--placement", "missing.txt"],
        2,
        &["missing.txt"],
    );
    fails(
        &[("r.sched", "ranks 4\n")],
        &["run", "r.sched", "--set", "placement.policy=spiral"],
        2,
        &["unknown placement 'spiral'"],
    );
}

#[test]
fn timeline_files_open_as_chrome_traces_and_match_the_operations() {
    let dir = tempfile::tempdir().unwrap();
    let sched = repo().join("examples/schedules/hotspot.sched");
    let machine = repo().join("examples/machines/torus-4x4.toml");
    let o = acesim(
        &[
            "run",
            sched.to_str().unwrap(),
            "-m",
            machine.to_str().unwrap(),
            "--json",
            "r.json",
            "--timeline",
            "t.json",
            "--timeline-links",
            "busiest:2,nic0->r0",
            "-q",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let res: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("t.json")).unwrap()).unwrap();
    let ev = t["traceEvents"].as_array().unwrap();
    // Every put is an async slice from issue to completion on its rank's process.
    let ops = res["operations"].as_array().unwrap();
    for (i, op) in ops.iter().enumerate() {
        let pid = op["rank"].as_u64().unwrap() + 1;
        let find = |ph: &str| {
            ev.iter()
                .find(|e| e["ph"] == ph && e["id"] == i && e["pid"] == pid)
                .unwrap_or_else(|| panic!("no {ph} for op {i}"))
        };
        let us = |ps: &serde_json::Value| ps.as_u64().unwrap() as f64 / 1e6;
        assert!((find("b")["ts"].as_f64().unwrap() - us(&op["issue_ps"])).abs() < 1e-6);
        assert!((find("e")["ts"].as_f64().unwrap() - us(&op["complete_ps"])).abs() < 1e-6);
    }
    // CPU slices of one rank never overlap unless nested (collectives and regions contain).
    let trace = res["trace"]
        .as_array()
        .expect("--timeline adds the trace to --json");
    assert!(trace.iter().any(|e| e["kind"] == "region"));
    assert!(trace
        .iter()
        .any(|e| e["kind"] == "blocked" && e["name"] == "poll"));
    // Counter tracks: two busiest links plus the one named.
    let counters: std::collections::BTreeSet<&str> = ev
        .iter()
        .filter(|e| e["ph"] == "C")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(counters.len(), 3, "{counters:?}");
    assert!(counters.contains("nic0->r0 utilization"));
    // The busiest are the fabric's links (router to router), the hotspot's in-links, not
    // NIC links: the links table says which those are.
    let mut fabric: Vec<(u64, &str)> = res["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["src_router"].is_u64() && l["dst_router"].is_u64())
        .map(|l| (l["busy_ps"].as_u64().unwrap(), l["name"].as_str().unwrap()))
        .collect();
    fabric.sort_by_key(|f| std::cmp::Reverse(f.0));
    let mut chosen: Vec<u64> = fabric
        .iter()
        .filter(|(_, name)| counters.contains(format!("{name} utilization").as_str()))
        .map(|&(busy, _)| busy)
        .collect();
    chosen.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(chosen, [fabric[0].0, fabric[1].0], "{counters:?}");
    assert!(ev
        .iter()
        .filter(|e| e["ph"] == "C")
        .all(|e| (0.0..=1.0).contains(&e["args"]["utilization"].as_f64().unwrap())));
    fails(
        &[("r.sched", RING)],
        &[
            "run",
            "r.sched",
            "--timeline",
            "t.json",
            "--timeline-links",
            "r9->r10",
        ],
        2,
        &["no link named 'r9->r10'"],
    );
}

fn scratch(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn limits_stop_the_run_with_partial_results_marked_partial() {
    let long: String = format!(
        "ranks 2\nrank 0\n{}rank 1\n{}",
        "put 1 4KB tag=1\n".repeat(200),
        "poll 1\n".repeat(200)
    );
    let dir = scratch(&[("long.sched", &long)]);
    let full = acesim(&["run", "long.sched", "--json", "full.json"], dir.path());
    assert_eq!(full.status.code(), Some(0), "{}", stderr(&full));
    let full: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("full.json")).unwrap())
            .unwrap();
    assert!(full.get("partial").is_none());
    let end = full["predicted_time_ps"].as_u64().unwrap();

    let o = acesim(
        &[
            "run",
            "long.sched",
            "--max-events",
            "100",
            "--json",
            "p.json",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("PARTIAL RESULTS"));
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p.json")).unwrap()).unwrap();
    assert_eq!(p["partial"]["reason"], "max-events");
    assert_eq!(p["events"], 100);
    assert!(p["predicted_time_ps"].as_u64().unwrap() < end);

    let half = format!("{}ps", end / 2);
    let o = acesim(
        &[
            "run",
            "long.sched",
            "--max-sim-time",
            &half,
            "-q",
            "--json",
            "t.json",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(4));
    assert!(stderr(&o).contains("partial results"));
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("t.json")).unwrap()).unwrap();
    assert_eq!(t["partial"]["reason"], "max-sim-time");
    assert_eq!(t["predicted_time_ps"].as_u64().unwrap(), end / 2);
    // Rank 0 only issues its puts; rank 1 is still polling for them.
    assert_eq!(t["partial"]["ranks_finished"], 1);
    // A limit past the end changes nothing.
    let o = acesim(
        &[
            "run",
            "long.sched",
            "--max-sim-time",
            "1s",
            "--max-events",
            "100000000",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0));
    fails(
        &[("long.sched", &long)],
        &["run", "long.sched", "--max-sim-time", "soon"],
        2,
        &["max-sim-time", "soon"],
    );
}

#[test]
fn ctrl_c_stops_the_run_and_writes_partial_results() {
    let long: String = format!(
        "ranks 2\nrank 0\n{}rank 1\n{}",
        "put 1 64 tag=1\n".repeat(1_000_000),
        "poll 1\n".repeat(1_000_000)
    );
    let dir = scratch(&[("long.sched", &long)]);
    let child = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(["run", "long.sched", "--json", "p.json", "-q"])
        .current_dir(dir.path())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p.json")).unwrap()).unwrap();
    assert_eq!(p["partial"]["reason"], "interrupted");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 2, "only the input and the result: {names:?}");
}

#[test]
fn runs_that_would_not_fit_in_memory_are_refused_unless_asked() {
    let dir = scratch(&[("r.sched", RING)]);
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(["run", "r.sched", "--json", "out.json"])
        .env("ACESIM_MEMORY_LIMIT", "1KiB")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(stderr(&o).contains("error[memory]: this run needs about"));
    assert!(stderr(&o).contains("--ignore-memory-limit"));
    assert!(!dir.path().join("out.json").exists());
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(["run", "r.sched", "--ignore-memory-limit"])
        .env("ACESIM_MEMORY_LIMIT", "1KiB")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A machine far too large is refused before it is built (this one would take minutes).
    std::fs::write(
        dir.path().join("ft.toml"),
        "[topology]\nkind = \"fat_tree\"\nk = 4097\nn = 2\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(["run", "r.sched", "-m", "ft.toml", "--json", "out.json"])
        .env("ACESIM_MEMORY_LIMIT", "8GiB")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(stderr(&o).contains("GiB of memory but only 8.0 GiB is available"));
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(["validate", "r.sched"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("machine ok") && out.contains("program ok: 2 ranks"),
        "{out}"
    );
    assert!(out.contains("the run needs about"), "{out}");
}

#[test]
fn machine_and_validate_apply_the_memory_admission_and_timelines_count() {
    let dir = scratch(&[("r.sched", RING)]);
    std::fs::write(
        dir.path().join("huge.toml"),
        "[topology]\nkind = \"torus\"\ndims = [16384, 16384]\n",
    )
    .unwrap();
    // Refused with exit 5 before the topology is built (it used to abort, exit 134).
    for args in [
        vec!["machine", "-m", "huge.toml"],
        vec!["validate", "-m", "huge.toml"],
        vec!["validate", "-m", "huge.toml", "r.sched"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
            .args(&args)
            .env("ACESIM_MEMORY_LIMIT", "8GiB")
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(5), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("of memory but only 8.0 GiB is available"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
    // A timeline costs kilobytes per operation: a budget that fits the run does not fit
    // the run and its timeline.
    let mut sched = String::from("ranks 64\n");
    for r in 0..64 {
        let d = (r + 1) % 64;
        sched += &format!("rank {r}\nput {d} 64 tag=0 handle=a\ncomplete a\npoll 0\n");
    }
    std::fs::write(dir.path().join("ring.sched"), sched).unwrap();
    let budget = |extra: &[&str]| {
        let mut args = vec!["run", "ring.sched", "--json", "o.json"];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_acesim"))
            .args(&args)
            .env("ACESIM_MEMORY_LIMIT", "900KiB")
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    assert_eq!(budget(&[]).status.code(), Some(0));
    let o = budget(&["--timeline", "t.json"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(!dir.path().join("t.json").exists());
}

#[test]
fn check_mode_runs_clean_on_the_examples() {
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let hot = repo().join("examples/schedules/hotspot.sched");
    let o = acesim(
        &[
            "run",
            hot.to_str().unwrap(),
            "--machine",
            torus.to_str().unwrap(),
            "--check",
        ],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1008999092 ps"));
}

#[test]
fn a_program_on_threads_writes_the_same_files_as_on_one() {
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let hot = repo().join("examples/schedules/hotspot.sched");
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2", "3"] {
        let (json, csv, timeline) = (
            format!("r{threads}.json"),
            format!("l{threads}.csv"),
            format!("t{threads}.json"),
        );
        let o = acesim(
            &[
                "run",
                hot.to_str().unwrap(),
                "--machine",
                torus.to_str().unwrap(),
                "--threads",
                threads,
                "--check",
                "--json",
                &json,
                "--links-csv",
                &csv,
                "--timeline",
                &timeline,
            ],
            dir.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let summary = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(summary.contains("1008999092 ps"), "{summary}");
        if threads != "1" {
            assert!(
                summary.contains(&format!("{threads} threads, ")),
                "{summary}"
            );
        }
        let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
        outputs.push((read(&json), read(&csv), read(&timeline)));
    }
    assert!(outputs[1..].iter().all(|o| *o == outputs[0]));
}

/// A schedule past the size read on threads (2 MB): 16 ranks on a 4x4 torus, computing,
/// exchanging around a ring inside regions, with source locations.
fn large_schedule() -> String {
    let mut text = String::from("ranks 16\n");
    for r in 0..16 {
        let (next, prev) = ((r + 1) % 16, (r + 15) % 16);
        text += &format!("rank {r}\n");
        for i in 0..400 {
            text += &format!("region_begin phase{}\n", (r + i) % 3);
            for _ in 0..25 {
                text += &format!("compute 1ns @big.c:{i}\n");
            }
            text += &format!("sendrecv {next} 64 {prev} 64 @ring.c:{r}\n");
            text += &format!("region_end phase{}\n", (r + i) % 3);
        }
    }
    text
}

#[test]
fn a_large_schedule_read_on_threads_runs_and_fails_as_on_one() {
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let text = large_schedule();
    assert!(text.len() > 2 << 20, "{} bytes", text.len());
    // The last rank's block opens a region it never closes: one error, at that line.
    let bad = text.replacen("rank 15\n", "rank 15\nregion_begin open\n", 1);
    let dir = scratch(&[("big.sched", &text), ("bad.sched", &bad)]);
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let json = format!("r{threads}.json");
        let args = ["run", "big.sched", "--machine", torus.to_str().unwrap()];
        let o = acesim(
            &[&args[..], &["--threads", threads, "--json", &json]].concat(),
            dir.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        outputs.push(std::fs::read_to_string(dir.path().join(&json)).unwrap());
        let args = ["run", "bad.sched", "--machine", torus.to_str().unwrap()];
        let o = acesim(&[&args[..], &["--threads", threads]].concat(), dir.path());
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        outputs.push(stderr(&o));
    }
    assert_eq!(outputs[0], outputs[2], "the results differ on 2 threads");
    assert_eq!(outputs[1], outputs[3], "the error differs on 2 threads");
    let line = 2 + 15 * (1 + 400 * 28) + 1;
    assert!(
        outputs[1].contains(&format!(
            "bad.sched:{line}:1: field `region`: rank 15: region open is never closed"
        )),
        "{}",
        outputs[1]
    );
}

#[test]
fn traffic_check_mode_and_threads_change_no_result() {
    // Load 1.0 saturates the 4x4 torus: its run stops at the drain limit with packets still
    // in the network, which the bytes-conservation check must count. Two threads give
    // the same bytes as one.
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let dir = tempfile::tempdir().unwrap();
    for injection in ["bernoulli", "periodic"] {
        let mut outputs = Vec::new();
        for (check, threads) in [(true, "1"), (false, "1"), (true, "2"), (false, "2")] {
            let json = format!("{injection}-{check}-{threads}.json");
            let mut args = vec![
                "traffic",
                "-m",
                torus.to_str().unwrap(),
                "--load",
                "0.3,1.0",
                "--injection",
                injection,
                "--warmup",
                "1us",
                "--measure",
                "2us",
                "--drain",
                "1us",
                "--json",
                &json,
                "--threads",
                threads,
                "-q",
            ];
            if check {
                args.push("--check");
            }
            let o = acesim(&args, dir.path());
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
            outputs.push(std::fs::read_to_string(dir.path().join(&json)).unwrap());
        }
        assert_eq!(outputs[0], outputs[1], "--check changed a result");
        assert_eq!(outputs[0], outputs[2], "two threads changed a result");
        assert_eq!(outputs[0], outputs[3], "two threads changed a result");
        let points: serde_json::Value = serde_json::from_str(&outputs[0]).unwrap();
        assert!(
            points[1]["packets_lost"].as_u64().unwrap() > 0,
            "the saturated point stopped with measured packets in flight"
        );
    }
}

#[test]
fn errors_show_the_line_and_suggest_the_intended_name() {
    let dir = scratch(&[(
        "m.toml",
        "[topology]\nkind = \"crossbar\"\nnodes = 4\n[router]\nvc = 2\n",
    )]);
    let o = acesim(&["validate", "--machine", "m.toml"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with("error[input]: m.toml:5:1: unknown field `vc`; did you mean `vcs`?"),
        "{err}"
    );
    assert!(err.contains("5 | vc = 2"), "{err}");
    assert!(err.contains("  | ^^"), "{err}");
    let dir = scratch(&[("d.sched", "ranks 2\nrank 0\nrecv 1 8\nrank 1\nrecv 0 8\n")]);
    let o = acesim(&["run", "d.sched"], dir.path());
    assert_eq!(o.status.code(), Some(3));
    let err = stderr(&o);
    assert!(
        err.starts_with("error[deadlock]: the program can never finish"),
        "{err}"
    );
    assert!(err.contains("cycle: rank 0 -> rank 1 -> rank 0"), "{err}");
}

#[test]
fn a_record_timeout_of_0_waits_for_ever_as_the_help_says() {
    // `0` has no unit, and needs none: it is no limit (`0s` too).
    let dir = tempfile::tempdir().unwrap();
    let fig1 = repo().join("examples/papers/fig1.c");
    let fig1 = fig1.to_str().unwrap();
    for t in ["0", "0s"] {
        let o = acesim(
            &["record", fig1, "--ranks", "2", "--record-timeout", t],
            dir.path(),
        );
        assert!(o.status.success(), "--record-timeout {t}: {}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("ranks 2"));
    }
    let o = acesim(
        &["record", fig1, "--ranks", "2", "--record-timeout", "7"],
        dir.path(),
    );
    assert_eq!(
        o.status.code(),
        Some(2),
        "a number other than 0 needs a unit"
    );
    assert!(stderr(&o).contains("record-timeout"), "{}", stderr(&o));
}

#[test]
fn simgrid_trace_runs_with_format_ti() {
    let o = acesim(
        &[
            "run",
            "tests/data/simgrid-ti/actions_alltoallv.txt",
            "--format",
            "ti",
            "-m",
            "table1",
        ],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("ranks: 3") && out.contains("alltoallv"),
        "{out}"
    );
    // The per-rank files through their list, on compare-models too.
    let o = acesim(
        &[
            "compare-models",
            "tests/data/simgrid-ti/split_traces",
            "--format",
            "ti",
            "--flops",
            "1Gf",
            "-m",
            "table1",
            "-q",
        ],
        &repo(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Compute without --flops: exit 2 naming the option; a bad --format value.
    fails(
        &[("t.txt", "0 init\n0 compute 1e9\n")],
        &["run", "t.txt", "-m", "table1"],
        2,
        &["t.txt:2", "--flops"],
    );
    fails(
        &[("t.txt", "0 init\n")],
        &["run", "t.txt", "--format", "tii", "-m", "table1"],
        2,
        &["unknown format `tii`", "ti"],
    );
    fails(
        &[("t.txt", "0 init\n")],
        &["run", "t.txt", "--flops", "fast", "-m", "table1"],
        2,
        &["field `flops`", "fast"],
    );
}

#[test]
fn python_programs_and_reports_need_no_activated_venv() {
    // The README's commands after `scripts/setup`, in a shell that activated nothing: the
    // binary finds the project venv beside its build.
    if !repo().join(".venv/bin/python3").is_file() {
        assert!(
            std::env::var("CI").is_err(),
            "CI runs after scripts/setup, which makes .venv"
        );
        eprintln!("no .venv (scripts/setup not run): skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.py"),
        "def main(ctx):\n    ctx.put((ctx.rank + 1) % ctx.size, 64, tag=1)\n    ctx.poll(1)\n",
    )
    .unwrap();
    let bare = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_acesim"))
            .args(args)
            .current_dir(dir.path())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .output()
            .expect("acesim runs")
    };
    let o = bare(&["run", "p.py", "--ranks", "4", "--json", "r.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = bare(&["report", "r.json", "-o", "rep"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(dir.path().join("rep").exists());
}

#[test]
fn timings_name_each_phase_on_stderr_and_change_no_output() {
    // A two-thread run lists its partitions' phases; the JSON is the same bytes with and
    // without --timings, and stdout (the summary) has no timings in it.
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let dir = scratch(&[("big.sched", &large_schedule())]);
    let mut jsons = Vec::new();
    for timed in [false, true] {
        let json = format!("t{timed}.json");
        let mut args = vec!["run", "big.sched", "--machine", torus.to_str().unwrap()];
        args.extend(["--threads", "2", "--json", &json]);
        if timed {
            args.push("--timings");
        }
        let o = acesim(&args, dir.path());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        jsons.push(std::fs::read(dir.path().join(&json)).unwrap());
        let err = stderr(&o);
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(!out.contains("timings"), "{out}");
        if !timed {
            assert!(!err.contains("timings"), "{err}");
            continue;
        }
        let phases = [
            "read program",
            "link and lay out",
            "build partitions",
            "windows",
            "end partitions",
            "merge runtimes",
            "collect results",
            "write outputs",
            "total",
        ];
        let mut at = err
            .find("timings (wall seconds):")
            .expect("a timings table");
        for phase in phases {
            // In the order the run goes through them, each with its seconds.
            let found = err[at..]
                .find(&format!("  {phase} "))
                .unwrap_or_else(|| panic!("{phase}: {err}"));
            at += found;
            let seconds: f64 = err[at..]
                .split_whitespace()
                .nth(phase.split(' ').count())
                .unwrap()
                .parse()
                .unwrap();
            assert!(seconds >= 0.0, "{phase}: {err}");
        }
    }
    assert!(jsons[0] == jsons[1], "--timings changed the JSON");
}

/// A program read from a pipe (`/dev/stdin`) runs as the same program read from a file:
/// the check for binary files must not eat the pipe's first bytes, and a pipe cannot be
/// mapped into memory as a file is.
#[cfg(unix)]
#[test]
fn a_program_from_a_pipe_runs_as_from_a_file() {
    use std::io::Write;
    let program = "ranks 2\nrank 0\nsend 1 4KB tag=0\nrank 1\nrecv 0 4KB tag=0\n";
    let dir = scratch(&[("p.sched", program)]);
    let from_file = acesim(&["run", "p.sched", "--json", "file.json"], dir.path());
    assert!(from_file.status.success(), "{}", stderr(&from_file));
    let mut child = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args([
            "run",
            "/dev/stdin",
            "--format",
            "schedule",
            "--json",
            "pipe.json",
        ])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(program.as_bytes())
        .unwrap();
    let from_pipe = child.wait_with_output().unwrap();
    assert!(from_pipe.status.success(), "{}", stderr(&from_pipe));
    let json = |f: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(f)).unwrap()).unwrap()
    };
    let (a, b) = (json("file.json"), json("pipe.json"));
    assert_eq!(a["predicted_time_ps"], b["predicted_time_ps"]);
    assert_eq!(a["operations"], b["operations"]);
    assert!(a["predicted_time_ps"].as_u64().unwrap() > 0);
}
