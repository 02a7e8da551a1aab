//! `mpirun -np P acesim traffic` and `acesim run`: the machine split among processes that
//! exchange what crosses between them through MPI gives the bytes of one process; a
//! command that cannot split, a build without MPI and processes given different inputs
//! are refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const ACESIM: &str = env!("CARGO_BIN_EXE_acesim");

/// The traffic of these tests: a 4x4 torus past saturation (packets wait for credits
/// across the two blocks) and below it.
fn traffic_args(json: &Path) -> Vec<String> {
    let torus = repo().join("examples/machines/torus-4x4.toml");
    [
        "traffic",
        "-m",
        torus.to_str().unwrap(),
        "--load",
        "0.2,1.0",
        "--all-loads",
        "--warmup",
        "1us",
        "--measure",
        "3us",
        "--drain",
        "2us",
        "--check",
        "--json",
        json.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `cmd`, which must succeed.
#[cfg(feature = "mpi")]
fn succeeds(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    o
}

#[cfg(feature = "mpi")]
fn mpirun() -> Option<Command> {
    let found = Command::new("mpirun").arg("--version").output().is_ok();
    if !found {
        eprintln!("skipped: no mpirun (scripts/setup installs Open MPI)");
        return None;
    }
    let mut cmd = Command::new("mpirun");
    // CI runs as root; Open MPI refuses root unless told.
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .arg("--oversubscribe");
    Some(cmd)
}

#[cfg(feature = "mpi")]
#[test]
fn two_processes_give_the_bytes_of_one() {
    let Some(mut mpi) = mpirun() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one.json"), dir.path().join("two.json"));
    succeeds(Command::new(ACESIM).args(traffic_args(&one)));
    let o = succeeds(mpi.args(["-np", "2", ACESIM]).args(traffic_args(&two)));
    let out = String::from_utf8_lossy(&o.stdout);
    // Process 0 alone prints: one table, and how the run went.
    assert_eq!(out.matches("load  offered").count(), 1, "{out}");
    assert!(out.contains("2 processes"), "{out}");
    let (a, b) = (std::fs::read(&one).unwrap(), std::fs::read(&two).unwrap());
    assert!(a == b, "two processes changed the results");
    // Two processes of two threads each.
    let Some(mut mpi) = mpirun() else { return };
    let four = dir.path().join("four.json");
    let o = succeeds(
        mpi.args(["-np", "2", ACESIM])
            .args(traffic_args(&four))
            .args(["--threads", "2"]),
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 processes of 2 threads"));
    assert!(
        std::fs::read(&four).unwrap() == a,
        "threads in processes changed the results"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn a_program_on_two_processes_writes_the_files_of_one() {
    let Some(mut mpi) = mpirun() else { return };
    let dir = tempfile::tempdir().unwrap();
    let files = |name: &str| -> Vec<String> {
        ["json", "csv", "timeline"]
            .iter()
            .map(|ext| {
                dir.path()
                    .join(format!("{name}.{ext}"))
                    .display()
                    .to_string()
            })
            .collect()
    };
    let args = |f: &[String]| -> Vec<String> {
        let mut a: Vec<String> = [
            "run",
            "examples/mpi/collectives.c",
            "-m",
            "examples/machines/torus-4x4.toml",
            "--ranks",
            "16",
            "--check",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend([f[0].clone(), "--links-csv".into(), f[1].clone()]);
        a.extend(["--timeline".into(), f[2].clone()]);
        a
    };
    let (one, two) = (files("one"), files("two"));
    succeeds(Command::new(ACESIM).args(args(&one)).current_dir(repo()));
    let o = succeeds(
        mpi.args(["-np", "2", ACESIM])
            .args(args(&two))
            .current_dir(repo()),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    // Process 0 alone prints the summary, and how the run went.
    assert_eq!(out.matches("predicted execution time").count(), 1, "{out}");
    assert!(out.contains("2 processes"), "{out}");
    for (a, b) in one.iter().zip(&two) {
        let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
        assert!(a == b, "two processes changed {}", two[0]);
    }
    // Two processes of two threads each: the same files again.
    let Some(mut mpi) = mpirun() else { return };
    let four = files("four");
    let o = succeeds(
        mpi.args(["-np", "2", ACESIM])
            .args(args(&four))
            .args(["--threads", "2"])
            .current_dir(repo()),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("2 processes of 2 threads"), "{out}");
    for (a, b) in one.iter().zip(&four) {
        let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
        assert!(a == b, "two processes of two threads changed {}", four[0]);
    }
    // A deadlock: process 0 reports it, as one process does, and the run fails.
    let dl = dir.path().join("dl.sched");
    std::fs::write(&dl, "ranks 16\nrank 0\nrecv 15 10 tag=1\nsend 15 10 tag=1\nrank 15\nrecv 0 10 tag=1\nsend 0 10 tag=1\n").unwrap();
    let dl = dl.display().to_string();
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let single = Command::new(ACESIM)
        .args(["run", &dl, "-m", torus.to_str().unwrap(), "--ranks", "16"])
        .output()
        .unwrap();
    assert_eq!(single.status.code(), Some(3), "{}", stderr(&single));
    let o = mpirun()
        .unwrap()
        .args([
            "-np",
            "2",
            ACESIM,
            "run",
            &dl,
            "-m",
            torus.to_str().unwrap(),
            "--ranks",
            "16",
        ])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).starts_with(&stderr(&single)), "{}", stderr(&o));
}

/// A JSON long enough to be formatted in chunks (over 65,536 rows): process 0 formats it on
/// the threads of both processes of its machine, and writes the bytes of one thread.
#[cfg(feature = "mpi")]
#[test]
fn a_long_json_formatted_on_the_machines_cores_is_the_same_bytes() {
    let Some(mut mpi) = mpirun() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (ranks, puts) = (16, 4200);
    let mut text = format!("ranks {ranks}\n");
    for r in 0..ranks {
        text += &format!("rank {r}\n");
        text += &format!("put {} 8 tag=1\n", (r + 1) % ranks).repeat(puts);
        text += &"poll 1\n".repeat(puts);
    }
    let sched = dir.path().join("many.sched");
    std::fs::write(&sched, text).unwrap();
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let args = |json: &Path| {
        let mut a: Vec<String> = vec!["run".into(), sched.display().to_string()];
        a.extend(["-m".into(), torus.display().to_string(), "-q".into()]);
        a.extend(["--json".into(), json.display().to_string()]);
        a
    };
    let (one, two) = (dir.path().join("one.json"), dir.path().join("two.json"));
    succeeds(
        Command::new(ACESIM)
            .args(args(&one))
            .args(["--threads", "1"]),
    );
    succeeds(mpi.args(["-np", "2", ACESIM]).args(args(&two)));
    let a = std::fs::read_to_string(&one).unwrap();
    assert!(
        a.matches("\"rank\":").count() > 1 << 16,
        "too few rows to chunk"
    );
    assert!(
        a.as_bytes() == std::fs::read(&two).unwrap(),
        "formatting on the machine's cores changed the JSON"
    );
}

#[cfg(feature = "mpi")]
#[test]
fn processes_given_different_inputs_are_refused() {
    let Some(mut mpi) = mpirun() else { return };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("x.json");
    let mut other = traffic_args(&json);
    other[4] = "0.3".into();
    let o = mpi
        .args(["-np", "1", ACESIM])
        .args(traffic_args(&json))
        .args([":", "-np", "1", ACESIM])
        .args(other)
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("the processes of the run were given different inputs"),
        "{}",
        stderr(&o)
    );
    assert!(!json.exists(), "no output when the inputs disagree");
}

#[test]
fn commands_that_do_not_split_refuse_several_processes() {
    // What mpirun tells its processes: here a launch of 2.
    let o = Command::new(ACESIM)
        .args(["machine", "-m", "table1"])
        .current_dir(repo())
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`acesim machine` runs in one process, and mpirun started 2"),
        "{}",
        stderr(&o)
    );
}

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_run_as_copies() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("x.json");
    let o = Command::new(ACESIM)
        .args(traffic_args(&json))
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("built without MPI"), "{}", stderr(&o));
    assert!(!json.exists());
}

/// Each process reads whole only its own ranks' blocks of a schedule: a program whose
/// ranks on both processes exchange, wait for request lists, meet in collective calls and
/// regions and name source files gives the files of one process; a line wrong in one
/// process's rank fails every process with the error of one process; a rank on each
/// process calling a third that never answers is reported as one process reports it.
#[cfg(feature = "mpi")]
#[test]
fn processes_reading_their_own_ranks_give_the_results_and_errors_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let torus = repo().join("examples/machines/torus-4x4.toml");
    let schedule = |name: &str, extra: &dyn Fn(u32) -> String| -> String {
        let mut t = "ranks 16\n".to_string();
        for r in 0..16u32 {
            let (next, prev) = ((r + 1) % 16, (r + 15) % 16);
            t += &format!(
                "rank {r}\nregion_begin step\nisend {next} 5000 req=a tag=1\nirecv {prev} 5000 req=b tag=1 @src/x.c:{r}\nwaitall a b\nsendrecv {prev} 64 {next} 64\nput {} 9000 tag=2 handle=h\ncomplete h\nallreduce 2KiB\nregion_end step\n{}",
                (r + 3) % 16,
                extra(r)
            );
        }
        let path = dir.path().join(name);
        std::fs::write(&path, t).unwrap();
        path.display().to_string()
    };
    let run = |mpi: Option<Command>, sched: &str, json: Option<&Path>| -> Output {
        let mut cmd = match mpi {
            Some(mut m) => {
                m.args(["-np", "2", ACESIM]);
                m
            }
            None => Command::new(ACESIM),
        };
        cmd.args(["run", sched, "-m", torus.to_str().unwrap(), "-q"]);
        if let Some(j) = json {
            cmd.args(["--json", j.to_str().unwrap()]);
        }
        cmd.output().unwrap()
    };
    let Some(mpi) = mpirun() else { return };
    let good = schedule("good.sched", &|_| String::new());
    let (one, two) = (dir.path().join("one.json"), dir.path().join("two.json"));
    let o = run(None, &good, Some(&one));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(Some(mpi), &good, Some(&two));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let strip = |p: &Path| {
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        for k in ["wall_seconds", "parallel"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    assert_eq!(strip(&one), strip(&two));
    // Rank 13 (on process 1) puts to a rank that does not exist; rank 14 (also there)
    // names a NIC the machine does not have.
    for (name, bad) in [("dst", 13), ("nic", 14)] {
        let line = match name {
            "dst" => "put 99 4KB tag=3\n",
            _ => "put 1 4KB tag=3 nic=5\n",
        };
        let sched = schedule(&format!("{name}.sched"), &|r| match r == bad {
            true => line.to_string(),
            false => String::new(),
        });
        let single = run(None, &sched, None);
        assert_eq!(single.status.code(), Some(2), "{}", stderr(&single));
        let o = run(mpirun(), &sched, None);
        assert_ne!(o.status.code(), Some(0));
        // Both processes print it.
        let first = stderr(&single)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        assert!(first.contains(&format!("field `{name}`")), "{first}");
        assert!(stderr(&o).contains(&first), "{}", stderr(&o));
    }
    // Rank 2 (process 0) and rank 13 (process 1) wait for rank 7, which never sends.
    let sched = schedule("dead.sched", &|r| match r {
        2 | 13 => "recv 7 8 tag=77\n".to_string(),
        _ => String::new(),
    });
    let single = run(None, &sched, None);
    assert_eq!(single.status.code(), Some(3), "{}", stderr(&single));
    assert!(stderr(&single).contains("rank 13"), "{}", stderr(&single));
    let o = run(mpirun(), &sched, None);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).starts_with(&stderr(&single)), "{}", stderr(&o));
}
