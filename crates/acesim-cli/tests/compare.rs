//! `acesim compare-models`: both network levels on one program, their report and JSON, and
//! its errors (the same as `acesim run`'s, a deadlock naming its level).

use serde_json::Value;
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

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).expect("the JSON was written"))
        .expect("valid JSON")
}

/// Equal but for the last digit JSON text may lose.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

fn scratch(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// Ranks 1..=8 each put 64 KiB to rank 0 at once, which polls them all.
fn incast() -> String {
    let mut s = String::from("ranks 9\nrank 0\n");
    s.push_str(&"poll 0\n".repeat(8));
    for r in 1..=8 {
        s.push_str(&format!(
            "rank {r}\nput 0 64KiB tag=0 handle=1\ncomplete 1\n"
        ));
    }
    s
}

/// `acesim run PROGRAM ARGS --model MODEL --json`, its summary.
fn run(dir: &Path, program: &str, args: &[&str], model: &str) -> Value {
    let out = dir.join(format!("run-{model}.json"));
    let mut all = vec!["run", program, "--model", model, "-q", "--json", path(&out)];
    all.extend(args);
    let o = acesim(&all, dir);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&out)
}

/// `|flow - packet| / packet` of every operation's latency, sorted.
fn latency_errors(packet: &Value, flow: &Value) -> Vec<f64> {
    let (p, f) = (
        packet["operations"].as_array().unwrap(),
        flow["operations"].as_array().unwrap(),
    );
    assert_eq!(p.len(), f.len());
    let mut e: Vec<f64> = p
        .iter()
        .zip(f)
        .map(|(p, f)| {
            for k in ["kind", "rank", "src", "dst", "size", "tag"] {
                assert_eq!(p[k], f[k], "the same operation at both levels");
            }
            let (p, f) = (
                p["latency_ps"].as_u64().unwrap(),
                f["latency_ps"].as_u64().unwrap(),
            );
            p.abs_diff(f) as f64 / p as f64
        })
        .collect();
    e.sort_by(f64::total_cmp);
    e
}

#[test]
fn the_flow_level_is_exact_on_the_papers_ring() {
    let dir = scratch(&[]);
    let ring = repo().join("examples/papers/ring_put.c");
    let o = acesim(
        &[
            "compare-models",
            path(&ring),
            "--machine",
            "table1",
            "--ranks",
            "8",
            "--json",
            "c.json",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for line in [
        "machine: crossbar: 1 routers, 8 nodes, 1 NICs/node   ranks: 8",
        "packet level: predicted 302.258 ns (302258 ps)",
        "flow level:   predicted 302.258 ns (302258 ps)",
        "total time: flow - packet = 0 ps (0.000 %)",
        "operations: 8 compared",
        "latency (complete - issue): error 0 on all 8 operations (exact to the picosecond)",
        "landed - issue: error 0 on all 8 operations (exact to the picosecond)",
        "links: the same bytes on all 16 links",
        "speed-up of the flow level: ",
    ] {
        assert!(out.contains(line), "expected `{line}` in:\n{out}");
    }
    let c = json(&dir.path().join("c.json"));
    assert_eq!(c["packet"]["predicted_time_ps"], 302_258);
    assert_eq!(c["flow"]["predicted_time_ps"], 302_258);
    assert_eq!(c["time_difference"], 0.0);
    for interval in ["latency", "landed"] {
        let d = &c["operations"][interval];
        assert_eq!(d["operations"], 8, "{interval}");
        assert_eq!(d["exact"], 8, "{interval}");
        assert_eq!(d["max_error"], 0.0, "{interval}");
        assert!(d["worst"].is_null(), "{interval}");
    }
    assert_eq!(c["links"]["differing"], 0);
    assert_eq!(c["links"]["packet_bytes"], c["links"]["flow_bytes"]);
}

#[test]
fn a_contended_incast_shows_its_small_difference_and_worst_operation() {
    let dir = scratch(&[("incast.sched", &incast())]);
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let machine = ["-m", path(&torus)];
    let o = acesim(
        &[
            &["compare-models", "incast.sched"][..],
            &machine,
            &["--json", "c.json"],
        ]
        .concat(),
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let c = json(&dir.path().join("c.json"));
    // The same runs as `acesim run` at each level.
    let packet = run(dir.path(), "incast.sched", &machine, "packet");
    let flow = run(dir.path(), "incast.sched", &machine, "flow");
    assert_eq!(packet["model"], "packet");
    assert_eq!(flow["model"], "flow");
    for (level, r) in [("packet", &packet), ("flow", &flow)] {
        assert_eq!(c[level]["predicted_time_ps"], r["predicted_time_ps"]);
        assert_eq!(c[level]["events"], r["events"]);
        assert_eq!(c[level]["model"], level);
    }
    let (p, f) = (
        packet["predicted_time_ps"].as_u64().unwrap(),
        flow["predicted_time_ps"].as_u64().unwrap(),
    );
    // Bandwidth-bound: the totals differ, a little.
    assert_ne!(p, f);
    let diff = c["time_difference"].as_f64().unwrap();
    assert!(close(diff, (f as f64 - p as f64) / p as f64), "{diff}");
    assert!(diff.abs() < 0.05, "{diff}");
    let percent = format!("({:+.3} %)", diff * 100.0);
    assert!(
        out.contains("total time: flow - packet = ") && out.contains(&percent),
        "{percent} in:\n{out}"
    );
    // The per-operation errors are those of the two runs' rows.
    let errors = latency_errors(&packet, &flow);
    let d = &c["operations"]["latency"];
    assert_eq!(d["operations"], 8);
    assert!(close(d["max_error"].as_f64().unwrap(), errors[7]), "{d}");
    assert!(close(d["median_error"].as_f64().unwrap(), errors[3]), "{d}");
    assert!(close(d["p95_error"].as_f64().unwrap(), errors[7]), "{d}");
    assert_eq!(
        d["exact"].as_u64().unwrap(),
        errors.iter().filter(|&&e| e == 0.0).count() as u64
    );
    assert!(errors[7] > 0.0);
    let w = &d["worst"];
    assert_eq!(w["kind"], "put");
    assert_eq!(w["dst"], 0);
    assert_eq!(w["size"], 65536);
    assert!(close(w["error"].as_f64().unwrap(), errors[7]), "{w}");
    let i = w["index"].as_u64().unwrap() as usize;
    assert_eq!(w["packet_ps"], packet["operations"][i]["latency_ps"]);
    assert_eq!(w["flow_ps"], flow["operations"][i]["latency_ps"]);
    let named = format!("worst: operation {i}, put {} -> 0, 64 KiB, tag 0", w["src"]);
    assert!(out.contains(&named), "{named} in:\n{out}");
    assert!(
        out.contains("latency (complete - issue): error median "),
        "{out}"
    );
    // Minimal routes on a torus: the same bytes on every link.
    assert_eq!(c["links"]["links"], 96);
    assert_eq!(c["links"]["differing"], 0);
    assert!(
        out.contains("links: the same bytes on all 96 links"),
        "{out}"
    );
}

#[test]
fn the_json_has_every_field_and_no_wall_time() {
    let dir = scratch(&[("incast.sched", &incast())]);
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let args = [
        "compare-models",
        "incast.sched",
        "-m",
        path(&torus),
        "--ranks-per-node",
        "2",
        "-q",
        "--json",
    ];
    let first = acesim(&[&args[..], &["a.json"]].concat(), dir.path());
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(stdout(&first), "", "-q prints nothing");
    let second = acesim(&[&args[..], &["b.json"]].concat(), dir.path());
    assert!(second.status.success(), "{}", stderr(&second));
    let a = std::fs::read_to_string(dir.path().join("a.json")).unwrap();
    assert_eq!(
        a,
        std::fs::read_to_string(dir.path().join("b.json")).unwrap(),
        "the same inputs give the same file"
    );
    assert!(!a.contains("wall"), "{a}");
    let c: Value = serde_json::from_str(&a).unwrap();
    let keys =
        |v: &Value| -> Vec<String> { v.as_object().expect("an object").keys().cloned().collect() };
    let mut top = keys(&c);
    top.sort();
    assert_eq!(
        top,
        [
            "acesim_version",
            "flow",
            "links",
            "operations",
            "packet",
            "ranks",
            "time_difference",
            "topology"
        ]
    );
    assert_eq!(c["ranks"], 9);
    let mut level = keys(&c["packet"]);
    level.sort();
    assert_eq!(
        level,
        ["events", "model", "predicted_time", "predicted_time_ps"]
    );
    let mut ops = keys(&c["operations"]);
    ops.sort();
    assert_eq!(
        ops,
        [
            "flow_rows",
            "landed",
            "latency",
            "matched",
            "packet_rows",
            "reordered"
        ]
    );
    assert_eq!(c["operations"]["matched"], 8);
    for interval in ["latency", "landed"] {
        let mut d = keys(&c["operations"][interval]);
        d.sort();
        assert_eq!(
            d,
            [
                "exact",
                "max_error",
                "median_error",
                "operations",
                "p95_error",
                "worst"
            ]
        );
        let mut w = keys(&c["operations"][interval]["worst"]);
        w.sort();
        assert_eq!(
            w,
            [
                "dst",
                "error",
                "flow_index",
                "flow_issue_ps",
                "flow_ps",
                "index",
                "kind",
                "packet_issue_ps",
                "packet_ps",
                "rank",
                "size",
                "src",
                "tag"
            ]
        );
    }
    let mut links = keys(&c["links"]);
    links.sort();
    assert_eq!(
        links,
        [
            "differing",
            "flow_bytes",
            "links",
            "max_difference_bytes",
            "packet_bytes",
            "worst"
        ]
    );
    // --ranks-per-node reached the runs: two ranks a node, as `acesim run` places them.
    let packet = run(
        dir.path(),
        "incast.sched",
        &["-m", path(&torus), "--ranks-per-node", "2"],
        "packet",
    );
    assert_eq!(
        c["packet"]["predicted_time_ps"],
        packet["predicted_time_ps"]
    );
    assert_eq!(c["topology"], packet["topology"]);
    let alone = run(dir.path(), "incast.sched", &["-m", path(&torus)], "packet");
    assert_ne!(packet["predicted_time_ps"], alone["predicted_time_ps"]);
}

#[test]
fn adaptive_routing_on_a_dragonfly_moves_bytes_between_links() {
    let machine = "[topology]\nkind = \"dragonfly\"\np = 2\na = 4\nh = 2\n[router]\nvcs = 3\nrouting = \"ugal\"\n";
    let mut prog = String::from("ranks 72\n");
    for r in 0..72 {
        prog.push_str(&format!(
            "rank {r}\nput {} 64KiB tag=0 handle=1\npoll 0\ncomplete 1\n",
            (r + 37) % 72
        ));
    }
    let dir = scratch(&[("df.toml", machine), ("p.sched", &prog)]);
    let o = acesim(
        &[
            "compare-models",
            "p.sched",
            "-m",
            "df.toml",
            "--json",
            "c.json",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = json(&dir.path().join("c.json"));
    let l = &c["links"];
    let differing = l["differing"].as_u64().unwrap();
    assert!(differing > 0, "{l}");
    let w = &l["worst"];
    let (p, f) = (
        w["packet_bytes"].as_u64().unwrap(),
        w["flow_bytes"].as_u64().unwrap(),
    );
    assert_eq!(l["max_difference_bytes"].as_u64().unwrap(), p.abs_diff(f));
    let line = format!(
        "links: {differing} of {} links carry different bytes; largest difference ",
        l["links"]
    );
    let out = stdout(&o);
    assert!(out.contains(&line), "{line} in:\n{out}");
    assert!(
        out.contains(&format!(" on {}", w["name"].as_str().unwrap())),
        "{out}"
    );
}

/// `compare-models` and `run` with the same arguments fail alike: exit code and message.
fn fails_as_run(files: &[(&str, &str)], args: &[&str], code: i32, needle: &str) {
    let dir = scratch(files);
    let mut compare = vec!["compare-models"];
    compare.extend(args);
    compare.extend(["--json", "out.json"]);
    let c = acesim(&compare, dir.path());
    let mut run = vec!["run"];
    run.extend(args);
    let r = acesim(&run, dir.path());
    assert_eq!(c.status.code(), Some(code), "{args:?}: {}", stderr(&c));
    assert_eq!(r.status.code(), Some(code), "{args:?}: {}", stderr(&r));
    assert_eq!(stderr(&c), stderr(&r), "{args:?}");
    assert!(stderr(&c).contains(needle), "{needle} in: {}", stderr(&c));
    assert!(!stderr(&c).contains("panicked"));
    assert!(
        !dir.path().join("out.json").exists(),
        "no output on failure"
    );
}

#[test]
fn bad_input_fails_as_run_does() {
    let ring = "ranks 2\nrank 0\nput 1 4 tag=0\nrank 1\npoll 0\n";
    fails_as_run(
        &[("r.sched", ring)],
        &["r.sched", "-m", "nosuch.toml"],
        2,
        "nosuch.toml",
    );
    fails_as_run(
        &[("r.sched", ring)],
        &["r.sched", "--set", "router.vcs=lots"],
        2,
        "router.vcs",
    );
    fails_as_run(
        &[
            (
                "m.toml",
                "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[router]\nvcs = 1\n",
            ),
            ("r.sched", ring),
        ],
        &["r.sched", "-m", "m.toml"],
        2,
        "m.toml:5:7: field `router.vcs`",
    );
    fails_as_run(
        &[("r.sched", "ranks 2\nrank 0\nput 1 4 tag=0 colour=red\n")],
        &["r.sched"],
        2,
        "r.sched:3",
    );
    fails_as_run(&[], &["missing.sched"], 2, "missing.sched");
    fails_as_run(
        &[("r.sched", ring)],
        &["r.sched", "--ranks", "0"],
        2,
        "--ranks must be at least 1",
    );
    fails_as_run(
        &[("r.sched", ring)],
        &["r.sched", "--placement", "spiral"],
        2,
        "spiral",
    );
    fails_as_run(
        &[("r.sched", ring)],
        &["r.sched", "--record-timeout", "soon"],
        2,
        "record-timeout",
    );
    // An unknown option: clap's message (naming the command) and exit code 2, as for run.
    let dir = scratch(&[("r.sched", ring)]);
    let o = acesim(&["compare-models", "r.sched", "--bogus"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unexpected argument '--bogus'")
            && stderr(&o).contains("Usage: acesim compare-models"),
        "{}",
        stderr(&o)
    );
    // --model is run's: both levels run here.
    let o = acesim(
        &["compare-models", "r.sched", "--model", "flow"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unexpected argument '--model'"),
        "{}",
        stderr(&o)
    );
    // An output that cannot be written is refused before any work.
    let o = acesim(
        &["compare-models", "r.sched", "--json", "nofolder/c.json"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot write this output file: the folder 'nofolder' does not exist"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stdout(&o), "");
    // An output that would overwrite the program.
    let o = acesim(
        &["compare-models", "r.sched", "--json", "r.sched"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("would overwrite an input"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("r.sched")).unwrap(),
        ring
    );
}

#[test]
fn a_program_that_cannot_finish_names_the_level() {
    let dir = scratch(&[("p.sched", "ranks 2\nrank 0\npoll 0\nrank 1\ncompute 1us\n")]);
    let o = acesim(
        &["compare-models", "p.sched", "--json", "c.json"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    for line in [
        "error[deadlock]: the program can never finish at the packet level (1 rank blocked at 1.000 us)",
        "  rank 0: `poll 0` at p.sched:3 waits for a put with tag 0 that never lands",
        "  the flow level cannot finish it either (1 rank blocked at 1.000 us)",
    ] {
        assert!(err.contains(line), "expected `{line}` in:\n{err}");
    }
    assert!(!dir.path().join("c.json").exists());
    // `run` keeps its message.
    let o = acesim(&["run", "p.sched"], dir.path());
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).starts_with("error[deadlock]: the program can never finish (1 rank"));
}

#[test]
fn a_deadlock_at_one_level_only_says_what_the_other_level_does() {
    // Eight eager 64 KiB messages race to rank 0, whose two wildcard receives take the first
    // two to arrive and a third waits for rank 8's. At packet level rank 8's message is the
    // second to land (taken by a wildcard: the third receive waits for ever); at flow level
    // the messages share the ejection link fairly and rank 8's lands later.
    let mut prog = String::from(
        "ranks 9\nrank 0\ncompute 1ms\nrecv any 64KiB\nrecv any 64KiB\nrecv 8 64KiB\n",
    );
    for r in 1..=8 {
        prog.push_str(&format!("rank {r}\nsend 0 64KiB\n"));
    }
    let dir = scratch(&[("race.sched", &prog)]);
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let args = [
        "race.sched",
        "-m",
        path(&torus),
        "--set",
        "mpi.eager_threshold=128KiB",
    ];
    let levels: Vec<Option<i32>> = ["packet", "flow"]
        .iter()
        .map(|m| {
            let o = acesim(
                &[&["run"][..], &args, &["-q", "--model", m]].concat(),
                dir.path(),
            );
            o.status.code()
        })
        .collect();
    assert_eq!(
        levels,
        [Some(3), Some(0)],
        "this race no longer separates the levels (packet, flow exit codes): choose another"
    );
    let flow = run(dir.path(), "race.sched", &args[1..], "flow");
    let o = acesim(&[&["compare-models"][..], &args].concat(), dir.path());
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    let finishes = format!(
        "  the flow level finishes this program in {}",
        flow["predicted_time"].as_str().unwrap()
    );
    for line in [
        "error[deadlock]: the program can never finish at the packet level (1 rank blocked at ",
        "  rank 0: `recv 8 65536 tag=0` at race.sched:6 waits for a message from rank 8",
        &finishes,
    ] {
        assert!(err.contains(line), "expected `{line}` in:\n{err}");
    }
    assert_eq!(stdout(&o), "");
}

#[test]
fn ctrl_c_stops_the_comparison_and_writes_nothing() {
    let long: String = format!(
        "ranks 2\nrank 0\n{}rank 1\n{}",
        "put 1 64 tag=1\n".repeat(1_000_000),
        "poll 1\n".repeat(1_000_000)
    );
    let dir = scratch(&[("long.sched", &long)]);
    let child = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(["compare-models", "long.sched", "--json", "c.json"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
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
    assert_eq!(
        stderr(&o),
        "error[interrupted]: Ctrl-C (SIGINT): stopped while running the packet level\n"
    );
    assert_eq!(stdout(&o), "");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "only the input: {names:?}");
}
