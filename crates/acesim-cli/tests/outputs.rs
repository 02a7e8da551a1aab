//! Output files (README "Outputs"): symbolic links written through to their target,
//! devices and pipes written in place, the umask followed and an existing file's mode kept,
//! all outputs or none, and outputs that would overwrite each other or an input refused.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const RING: &str = "ranks 2\nrank 0\nput 1 4 tag=0\nrank 1\npoll 0\n";

fn acesim(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("acesim runs")
}

/// `acesim ARGS` under `umask MASK`, through the shell (the test process keeps its own).
fn acesim_umask(mask: &str, args: &[&str], dir: &Path) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("umask {mask} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_acesim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("sh runs")
}

fn ok(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.sched"), RING).unwrap();
    dir
}

/// The JSON summary of RING, written to a plain new file (the reference).
fn reference_json() -> String {
    let dir = scratch();
    ok(&acesim(
        &["run", "r.sched", "-q", "--json", "ref.json"],
        dir.path(),
    ));
    std::fs::read_to_string(dir.path().join("ref.json")).unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn a_symlink_is_written_through_to_its_final_target() {
    let want = reference_json();
    let dir = scratch();
    let d = dir.path();
    std::fs::create_dir(d.join("data")).unwrap();
    std::fs::create_dir(d.join("links")).unwrap();
    std::fs::write(d.join("data/real.json"), "old").unwrap();
    // A chain: links/a.json -> b.json -> ../data/real.json (relative at each hop).
    std::os::unix::fs::symlink("../data/real.json", d.join("links/b.json")).unwrap();
    std::os::unix::fs::symlink("b.json", d.join("links/a.json")).unwrap();
    // A link to a file that does not exist yet: the file is created, the link kept.
    std::os::unix::fs::symlink("data/new.csv", d.join("dangling.csv")).unwrap();
    ok(&acesim(
        &[
            "run",
            "r.sched",
            "-q",
            "--json",
            "links/a.json",
            "--links-csv",
            "dangling.csv",
        ],
        d,
    ));
    for l in ["links/a.json", "links/b.json", "dangling.csv"] {
        assert!(
            std::fs::symlink_metadata(d.join(l))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{l} is still a link"
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.join("data/real.json")).unwrap(),
        want
    );
    assert!(std::fs::read_to_string(d.join("data/new.csv"))
        .unwrap()
        .starts_with("link,"));
    // The temporary files were made in the targets' folder and are gone.
    assert_eq!(names(&d.join("data")), ["new.csv", "real.json"]);
    assert_eq!(names(&d.join("links")), ["a.json", "b.json"]);
}

#[test]
fn devices_and_pipes_are_written_in_place() {
    let want = reference_json();
    let dir = scratch();
    let d = dir.path();
    ok(&acesim(&["run", "r.sched", "-q", "--json", "/dev/null"], d));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());

    let fifo = d.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo not available: skipping the FIFO case");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    ok(&acesim(
        &[
            "run",
            "r.sched",
            "-q",
            "--json",
            "fifo",
            "--links-csv",
            "l.csv",
        ],
        d,
    ));
    assert_eq!(reader.join().unwrap(), want);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(names(d), ["fifo", "l.csv", "r.sched"]);
}

#[test]
fn dev_stdout_appends_to_standard_output_and_is_never_replaced() {
    let want = reference_json();
    let dir = scratch();
    let d = dir.path();
    let before = std::fs::symlink_metadata("/dev/stdout")
        .ok()
        .map(|m| m.file_type());
    // Standard output is a regular file that already holds a line: the JSON and then the
    // summary follow it, nothing is truncated or overwritten.
    let out = std::fs::File::create(d.join("out.txt")).unwrap();
    let st = Command::new("sh")
        .arg("-c")
        .arg("echo before && exec \"$0\" run r.sched --json /dev/stdout")
        .arg(env!("CARGO_BIN_EXE_acesim"))
        .current_dir(d)
        .stdout(Stdio::from(out))
        .status()
        .unwrap();
    // A regression would replace /dev/stdout with a regular file (as root): put it back
    // before failing, so that the machine is not left broken.
    let after = std::fs::symlink_metadata("/dev/stdout")
        .ok()
        .map(|m| m.file_type());
    if after != before && before.is_some_and(|t| t.is_symlink()) {
        let _ = std::fs::remove_file("/dev/stdout");
        let _ = std::os::unix::fs::symlink("/proc/self/fd/1", "/dev/stdout");
        panic!("/dev/stdout was replaced (put back)");
    }
    assert!(st.success());
    let text = std::fs::read_to_string(d.join("out.txt")).unwrap();
    let rest = text
        .strip_prefix("before\n")
        .expect("the first line is kept");
    let summary = rest.strip_prefix(&want).expect("then the JSON, whole");
    assert!(summary.starts_with("predicted execution time"), "{text}");
    assert_eq!(
        std::fs::symlink_metadata("/dev/stdout")
            .ok()
            .map(|m| m.file_type()),
        before,
        "/dev/stdout is what it was"
    );
    assert_eq!(names(d), ["out.txt", "r.sched"]);
    // /proc/self/fd/1 is the same thing.
    let o = acesim(&["run", "r.sched", "-q", "--json", "/proc/self/fd/1"], d);
    ok(&o);
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
}

#[test]
fn nothing_is_created_under_dev_or_proc_and_failed_writes_are_named() {
    let dir = scratch();
    let d = dir.path();
    let o = acesim(
        &["run", "r.sched", "-q", "--json", "/dev/acesim-test.json"],
        d,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("acesim creates no files under /dev, /proc or /sys"));
    if Path::new("/dev/acesim-test.json").exists() {
        let _ = std::fs::remove_file("/dev/acesim-test.json");
        panic!("a file was created under /dev (removed)");
    }
    let o = acesim(&["run", "r.sched", "-q", "--json", "/proc/version"], d);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot write /proc/version: "), "{err}");
    assert!(!err.contains("entity not found"), "{err}");
    assert_eq!(names(d), ["r.sched"]);
}

#[test]
fn new_files_follow_the_umask_and_existing_files_keep_their_mode() {
    let dir = scratch();
    let d = dir.path();
    ok(&acesim_umask(
        "022",
        &["run", "r.sched", "-q", "--json", "a.json"],
        d,
    ));
    assert_eq!(mode(&d.join("a.json")), 0o644);
    ok(&acesim_umask(
        "077",
        &["run", "r.sched", "-q", "--json", "b.json"],
        d,
    ));
    assert_eq!(mode(&d.join("b.json")), 0o600);
    std::fs::write(d.join("c.json"), "old").unwrap();
    std::fs::set_permissions(d.join("c.json"), std::fs::Permissions::from_mode(0o640)).unwrap();
    ok(&acesim_umask(
        "022",
        &["run", "r.sched", "-q", "--json", "c.json"],
        d,
    ));
    assert_eq!(mode(&d.join("c.json")), 0o640);
    assert_ne!(std::fs::read_to_string(d.join("c.json")).unwrap(), "old");
    // traffic too.
    ok(&acesim_umask(
        "022",
        &[
            "traffic", "--ranks", "4", "--load", "0.1", "-q", "--csv", "t.csv",
        ],
        d,
    ));
    assert_eq!(mode(&d.join("t.csv")), 0o644);
}

/// Runs a command that must be refused before the run: exit 2, a message that contains
/// every needle, and the folder exactly as it was (same names, same bytes).
fn refused(files: &[(&str, &str)], args: &[&str], needles: &[&str]) {
    let dir = scratch();
    let d = dir.path();
    for (n, t) in files {
        std::fs::write(d.join(n), t).unwrap();
    }
    std::os::unix::fs::symlink("x.json", d.join("to-x.json")).unwrap();
    let snapshot = |d: &Path| -> Vec<(String, Vec<u8>)> {
        names(d)
            .into_iter()
            .map(|n| {
                let b = std::fs::read(d.join(&n)).unwrap_or_default();
                (n, b)
            })
            .collect()
    };
    let before = snapshot(d);
    let o = acesim(args, d);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: expected `{n}` in:\n{err}");
    }
    assert_eq!(snapshot(d), before, "{args:?}: a file was touched");
}

#[test]
fn outputs_that_name_the_same_file_or_an_input_are_refused() {
    let x = [("x.json", "keep")];
    refused(
        &x,
        &[
            "run",
            "r.sched",
            "--json",
            "x.json",
            "--timeline",
            "./x.json",
        ],
        &["--json and --timeline name the same file"],
    );
    refused(
        &x,
        &[
            "run",
            "r.sched",
            "--json",
            "to-x.json",
            "--links-csv",
            "x.json",
        ],
        &["--json and --links-csv name the same file"],
    );
    // The same new file twice.
    refused(
        &[],
        &[
            "run",
            "r.sched",
            "--json",
            "n.json",
            "--schedule-out",
            "n.json",
        ],
        &["--json and --schedule-out name the same file"],
    );
    refused(
        &x,
        &[
            "traffic",
            "--ranks",
            "4",
            "--load",
            "0.1",
            "--csv",
            "x.json",
            "--json",
            "to-x.json",
        ],
        &["--csv and --json name the same file"],
    );
    refused(
        &[],
        &["run", "r.sched", "--json", "r.sched"],
        &["--json 'r.sched' is the program 'r.sched'"],
    );
    refused(
        &[("m.toml", "[topology]\nkind = \"crossbar\"\n")],
        &["run", "r.sched", "-m", "m.toml", "--links-csv", "./m.toml"],
        &["--links-csv './m.toml' is the machine file 'm.toml'"],
    );
    refused(
        &[("p.txt", "0\n1\n")],
        &[
            "run",
            "r.sched",
            "--placement",
            "p.txt",
            "--timeline",
            "p.txt",
        ],
        &["--timeline 'p.txt' is the placement file 'p.txt'"],
    );
    refused(
        &[("m.toml", "[topology]\nkind = \"crossbar\"\n")],
        &[
            "traffic", "--load", "0.1", "-m", "m.toml", "--json", "m.toml",
        ],
        &["--json 'm.toml' is the machine file 'm.toml'"],
    );
    refused(
        &[(
            "p.c",
            "int MGEN_Main(int argc, char **argv) { return 0; }\n",
        )],
        &["record", "p.c", "--ranks", "2", "-o", "p.c"],
        &["-o 'p.c' is the program 'p.c'"],
    );
}

/// A small tmpfs mounted for one test (root only), unmounted when dropped.
struct SmallFs(tempfile::TempDir);

impl SmallFs {
    fn mount() -> Option<SmallFs> {
        let dir = tempfile::tempdir().ok()?;
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        if !st.success() {
            return None;
        }
        // Fill it, so that whatever is written next fails with "no space left".
        let _ = std::fs::write(dir.path().join("filler"), vec![0u8; 1 << 20]);
        Some(SmallFs(dir))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn an_output_that_fails_leaves_every_other_output_as_it_was() {
    let Some(full) = SmallFs::mount() else {
        eprintln!("cannot mount a tmpfs here (not root?): skipping");
        return;
    };
    let dir = scratch();
    let d = dir.path();
    std::fs::write(d.join("keep.json"), "old results").unwrap();
    std::fs::write(d.join("keep.csv"), "old table").unwrap();
    let t = full.0.path().join("t.json");
    let o = acesim(
        &[
            "run",
            "r.sched",
            "--json",
            "keep.json",
            "--links-csv",
            "keep.csv",
            "--timeline",
            t.to_str().unwrap(),
        ],
        d,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("No space left"), "{err}");
    assert!(err.contains("t.json"), "{err}");
    assert_eq!(
        std::fs::read_to_string(d.join("keep.json")).unwrap(),
        "old results"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("keep.csv")).unwrap(),
        "old table"
    );
    assert_eq!(names(d), ["keep.csv", "keep.json", "r.sched"]);
    assert_eq!(names(full.0.path()), ["filler"]);

    // traffic: the CSV is kept when the JSON cannot be written.
    let j = full.0.path().join("t.json");
    let o = acesim(
        &[
            "traffic",
            "--ranks",
            "4",
            "--load",
            "0.1",
            "-q",
            "--csv",
            "keep.csv",
            "--json",
            j.to_str().unwrap(),
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(d.join("keep.csv")).unwrap(),
        "old table"
    );
    assert_eq!(names(full.0.path()), ["filler"]);
}

#[test]
fn report_on_a_bad_result_is_located_and_leaves_no_folder() {
    let dir = scratch();
    let d = dir.path();
    std::fs::write(
        d.join("bad.json"),
        "{\"predicted_time_ps\": 5,\n \"ranks\": [}\n",
    )
    .unwrap();
    std::fs::write(d.join("other.json"), "{\"ranks\": 2}").unwrap();
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python");
    let report = |file: &str| {
        Command::new(env!("CARGO_BIN_EXE_acesim"))
            .args(["report", file])
            .current_dir(d)
            .env("PYTHONPATH", &python)
            .output()
            .unwrap()
    };
    let o = report("bad.json");
    let err = String::from_utf8_lossy(&o.stderr);
    if err.contains("needs Python") {
        eprintln!("no python3 here: skipping");
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.json:2:12: not valid JSON: Expecting value"),
        "{err}"
    );
    assert!(!err.contains("Traceback"), "{err}");
    let o = report("other.json");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("other.json: not an acesim result: it has no predicted_time_ps"),
        "{err}"
    );
    assert_eq!(names(d), ["bad.json", "other.json", "r.sched"]);
}

/// Runs `schedule` on a crossbar on every core (no `--threads`) and on one (`--threads
/// 1`), writing each of `outputs` (`--json`, `--links-csv`): each output's bytes, every
/// core's and one's.
fn on_every_core_and_one(schedule: &str, outputs: &[&str]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.sched"), schedule).unwrap();
    std::fs::write(
        dir.path().join("x.toml"),
        "[topology]\nkind = \"crossbar\"\n",
    )
    .unwrap();
    let run = |name: &str, extra: &[&str]| -> Vec<Vec<u8>> {
        let files: Vec<String> = (0..outputs.len()).map(|i| format!("{name}.{i}")).collect();
        let mut args = vec!["run", "p.sched", "--machine", "x.toml", "-q"];
        for (flag, file) in outputs.iter().zip(&files) {
            args.extend_from_slice(&[flag, file]);
        }
        args.extend_from_slice(extra);
        ok(&acesim(&args, dir.path()));
        files
            .iter()
            .map(|f| std::fs::read(dir.path().join(f)).unwrap())
            .collect()
    };
    let every = run("every", &[]);
    let one = run("one", &["--threads", "1"]);
    every.into_iter().zip(one).collect()
}

/// A JSON of more than 65,536 rows is formatted on every core (a run not given
/// `--threads`) and on one (`--threads 1`): the same bytes either way.
#[test]
fn a_large_json_is_the_same_bytes_on_every_core_and_on_one() {
    let ranks = 1024;
    let mut text = format!("ranks {ranks}\n");
    for r in 0..ranks {
        text += &format!("rank {r}\n");
        text += &format!("put {} 8 tag=1\n", (r + 1) % ranks).repeat(64);
        text += &"poll 1\n".repeat(64);
    }
    let [(every, one)] = &on_every_core_and_one(&text, &["--json"])[..] else {
        panic!("one output")
    };
    assert!(every == one, "the JSON differs between every core and one");
    let v: serde_json::Value = serde_json::from_slice(every).unwrap();
    assert_eq!(v["operations"].as_array().unwrap().len(), 64 * ranks);
    assert_eq!(v["per_rank"].as_array().unwrap().len(), ranks);
}

/// Rows of 65,536 ranks or links and more are made on every core (`results::rows`): a run
/// of 70,000 ranks on a crossbar gives the same JSON and links table as on one core.
#[test]
fn many_ranks_and_links_give_the_same_rows_on_every_core_and_on_one() {
    let ranks = 70_000;
    let mut text = format!("ranks {ranks}\n");
    for r in 0..ranks {
        text += &format!("rank {r}\ncompute {}ns\n", r % 7);
    }
    let [(json, json_one), (csv, csv_one)] =
        &on_every_core_and_one(&text, &["--json", "--links-csv"])[..]
    else {
        panic!("two outputs")
    };
    assert!(
        json == json_one,
        "the JSON differs between every core and one"
    );
    assert!(
        csv == csv_one,
        "the links table differs between every core and one"
    );
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    let rows = v["per_rank"].as_array().unwrap();
    assert_eq!(rows.len(), ranks);
    // Each row is its own rank's, in rank order.
    for r in [0, 1, 6, 65_535, 65_536, ranks - 1] {
        assert_eq!(rows[r]["rank"], r);
        assert_eq!(rows[r]["compute_ps"], (r % 7) as u64 * 1000);
    }
    // A link each way between the crossbar and every node, and a line of header.
    let lines = csv.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(lines, 2 * ranks + 1);
}
