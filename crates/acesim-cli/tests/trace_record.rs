//! `acesim trace record`: real MPI programs (examples/mpi-traces) run under the system MPI
//! with the PMPI tracer; each trace reads with acesim's DUMPI reader into the operations the
//! program performs, `acesim trace info` counts its calls, and it replays to completion with
//! as many bytes received as sent. Without mpicc and mpirun the tests print
//! "skipped: no mpicc" and return.

use acesim::frontends::dumpi::records::{Call, RankFile};
use acesim::frontends::dumpi::{self, TraceOptions};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// MPI runs one at a time (the machine is small and shared).
static MPI: Mutex<()> = Mutex::new(());

const MPIRUN: [&str; 5] = [
    "mpirun",
    "--oversubscribe",
    "--allow-run-as-root",
    "-np",
    "4",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Whether an MPI is installed; says the test is skipped when not.
fn have_mpi(test: &str) -> bool {
    if on_path("mpicc") && on_path("mpirun") {
        return true;
    }
    println!("{test}: skipped: no mpicc (install an MPI: scripts/setup does it with apt-get)");
    false
}

fn acesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("acesim runs")
}

/// Compiles examples/mpi-traces/NAME.c into `dir`.
fn compile(name: &str, dir: &Path) -> PathBuf {
    let exe = dir.join(name);
    let src = repo().join(format!("examples/mpi-traces/{name}.c"));
    let o = Command::new("mpicc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("mpicc runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    exe
}

/// Records `name` with `args` into DIR/trace; returns DIR/trace.meta.
fn record(name: &str, args: &[&str], dir: &Path) -> PathBuf {
    let exe = compile(name, dir);
    let out = dir.join("trace");
    let mut cmd: Vec<&str> = vec!["trace", "record", "-o", out.to_str().unwrap(), "--"];
    cmd.extend(MPIRUN);
    cmd.push(exe.to_str().unwrap());
    cmd.extend(args);
    let o = {
        let _one = MPI.lock().unwrap_or_else(|e| e.into_inner());
        acesim(&cmd)
    };
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let meta = out.join("trace.meta");
    assert!(
        stdout.contains(&format!(
            "replay it: acesim run {}",
            meta.canonicalize().unwrap().display()
        )),
        "{stdout}"
    );
    meta
}

/// A record: label, call, wall-clock start and stop (ns).
type Rec = (u16, Call, (i64, i64));

/// Every rank's calls, as acesim's reader decodes them.
fn calls(meta: &Path) -> Vec<Vec<Rec>> {
    let m = dumpi::Meta::parse(meta, &std::fs::read_to_string(meta).unwrap()).unwrap();
    (0..m.ranks)
        .map(|r| {
            let f = m.rank_file(r);
            let file = std::fs::File::open(&f).unwrap();
            let mut rf = RankFile::open(BufReader::new(file), &f.display().to_string()).unwrap();
            assert_eq!(rf.version, [1, 1, 0]);
            let mut v = Vec::new();
            while let Some(rec) = rf.next_record().unwrap() {
                v.push((rec.label, rec.call, rec.wall.expect("wall times")));
            }
            v
        })
        .collect()
}

/// The traced MPI region of each rank: from MPI_Init's (or MPI_Init_thread's) return to MPI_Finalize's call, in ns.
fn mpi_regions(all: &[Vec<Rec>]) -> Vec<i64> {
    all.iter()
        .map(|c| {
            // MPI_Init or MPI_Init_thread.
            let init = c
                .iter()
                .find(|x| x.0 == 124 || x.0 == 171)
                .expect("MPI_Init")
                .2
                 .1;
            let fin = c.iter().find(|x| x.0 == 125).expect("MPI_Finalize").2 .0;
            fin - init
        })
        .collect()
}

/// `acesim trace info` shows `count` calls of `name`.
fn info_shows(meta: &Path, expected: &[(&str, u64)]) {
    let o = acesim(&["trace", "info", meta.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for (name, n) in expected {
        let found = out.lines().any(|l| {
            let mut w = l.split_whitespace();
            w.next() == Some(*name) && w.next() == Some(&n.to_string()) && w.next().is_none()
        });
        assert!(found, "trace info should show {n} {name}:\n{out}");
    }
}

/// Replays on table1 and returns the JSON result.
fn replay(meta: &Path, dir: &Path) -> serde_json::Value {
    let json = dir.join("run.json");
    let o = acesim(&[
        "run",
        meta.to_str().unwrap(),
        "-m",
        "table1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// Sends, bytes sent and bytes received of a replay.
fn traffic(v: &serde_json::Value) -> (usize, u64, u64) {
    let sends: Vec<&serde_json::Value> = v["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "send")
        .collect();
    let sent = sends.iter().map(|o| o["size"].as_u64().unwrap()).sum();
    let received = v["receives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["size"].as_u64().unwrap())
        .sum();
    (sends.len(), sent, received)
}

fn report(name: &str, v: &serde_json::Value, regions: &[i64]) {
    let predicted = v["predicted_time_ps"].as_u64().unwrap();
    let traced = v["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["traced_ps"].as_u64().unwrap())
        .max()
        .unwrap();
    let region = regions.iter().copied().max().unwrap();
    println!(
        "{name}: predicted {:.1} us on table1; traced window {:.1} us (with MPI_Init and MPI_Finalize), MPI region {:.1} us",
        predicted as f64 / 1e6,
        traced as f64 / 1e6,
        region as f64 / 1e3
    );
    assert!(predicted > 0);
    assert!(traced > 0 && region > 0);
}

#[test]
fn a_recorded_ring_gives_each_rank_one_send_right_and_one_recv_left() {
    if !have_mpi("ring") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let meta = record("ring", &["4096", "1"], dir.path());
    let all = calls(&meta);
    assert_eq!(all.len(), 4);
    for (r, c) in all.iter().enumerate() {
        let r = r as i32;
        let sends: Vec<&Call> = c
            .iter()
            .map(|x| &x.1)
            .filter(|c| matches!(c, Call::Send { .. }))
            .collect();
        let recvs: Vec<&Call> = c
            .iter()
            .map(|x| &x.1)
            .filter(|c| matches!(c, Call::Recv { .. }))
            .collect();
        // MPI_BYTE is DUMPI's datatype 5.
        assert_eq!(
            sends,
            [&Call::Send {
                count: 4096,
                dtype: 5,
                dest: (r + 1) % 4,
                tag: 0,
                comm: 2
            }],
            "rank {r}"
        );
        assert_eq!(
            recvs,
            [&Call::Recv {
                count: 4096,
                dtype: 5,
                source: (r + 3) % 4,
                tag: 0,
                comm: 2
            }],
            "rank {r}"
        );
        // MPI_Init first, MPI_Finalize last; rank and size asked on MPI_COMM_WORLD.
        assert_eq!(c.first().unwrap().0, 124);
        assert_eq!(c.last().unwrap().0, 125);
        assert!(c.iter().any(|x| x.1 == Call::CommRank { comm: 2, rank: r }));
    }
    let (_, summary) = dumpi::read(&meta, &TraceOptions::default()).unwrap();
    assert_eq!(summary.p2p_bytes, 4 * 4096);
    info_shows(
        &meta,
        &[
            ("MPI_Send", 4),
            ("MPI_Recv", 4),
            ("MPI_Init", 4),
            ("MPI_Finalize", 4),
        ],
    );
    let v = replay(&meta, dir.path());
    assert_eq!(traffic(&v), (4, 4 * 4096, 4 * 4096));
    report("ring", &v, &mpi_regions(&all));
}

#[test]
fn a_recorded_halo_exchange_reads_as_isend_irecv_and_waitall() {
    if !have_mpi("halo2d") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (n, steps) = (256, 3);
    let meta = record("halo2d", &["256", "3"], dir.path());
    let all = calls(&meta);
    // 4 ranks: a 2 x 2 periodic grid, so west = east and south = north.
    for (r, c) in all.iter().enumerate() {
        let r = r as i32;
        let (x, y) = (r % 2, r / 2);
        let nb = [
            (1 - x) + y * 2,
            (1 - x) + y * 2,
            x + (1 - y) * 2,
            x + (1 - y) * 2,
        ];
        let mut started = Vec::new();
        let mut completed: Vec<i32> = Vec::new();
        let (mut isends, mut irecvs, mut waitalls) = (0, 0, 0);
        for (_, call, _) in c {
            match call {
                Call::Isend {
                    count,
                    dtype,
                    dest,
                    tag,
                    comm,
                    request,
                } => {
                    assert_eq!(
                        (*count, *dtype, *comm),
                        (n, 14, 2),
                        "MPI_DOUBLE is datatype 14"
                    );
                    assert_eq!(*dest, nb[*tag as usize], "rank {r}");
                    started.push(*request);
                    isends += 1;
                }
                Call::Irecv {
                    count,
                    dtype,
                    source,
                    tag,
                    comm,
                    request,
                } => {
                    assert_eq!((*count, *dtype, *comm), (n, 14, 2));
                    assert_eq!(*source, nb[(*tag ^ 1) as usize], "rank {r}");
                    started.push(*request);
                    irecvs += 1;
                }
                Call::Complete { requests } => {
                    assert_eq!(requests.len(), 8);
                    completed.extend(requests);
                    waitalls += 1;
                }
                _ => {}
            }
        }
        assert_eq!(
            (isends, irecvs, waitalls),
            (4 * steps, 4 * steps, steps),
            "rank {r}"
        );
        // Every request made is completed once, by the Waitall of its step.
        assert_eq!(started, completed, "rank {r}");
    }
    info_shows(
        &meta,
        &[("MPI_Isend", 48), ("MPI_Irecv", 48), ("MPI_Waitall", 12)],
    );
    let v = replay(&meta, dir.path());
    let bytes = 4 * 4 * 3 * 256 * 8;
    assert_eq!(traffic(&v), (48, bytes, bytes));
    assert_eq!(v["unfinished_requests"].as_array().unwrap().len(), 0);
    report("halo2d", &v, &mpi_regions(&all));
}

#[test]
fn a_recorded_allreduce_loop_replays_its_collectives() {
    if !have_mpi("allreduce") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let meta = record("allreduce", &["1024", "10"], dir.path());
    let all = calls(&meta);
    for c in &all {
        let reduces: Vec<&Call> = c
            .iter()
            .map(|x| &x.1)
            .filter(|c| {
                matches!(
                    c,
                    Call::Rooted {
                        kind: "allreduce",
                        ..
                    }
                )
            })
            .collect();
        assert_eq!(reduces.len(), 10);
        for call in reduces {
            assert_eq!(
                call,
                &Call::Rooted {
                    kind: "allreduce",
                    count: 1024,
                    dtype: 14,
                    root: 0,
                    comm: 2
                }
            );
        }
        assert_eq!(
            c.iter()
                .filter(|x| x.1 == Call::Barrier { comm: 2 })
                .count(),
            2
        );
    }
    info_shows(&meta, &[("MPI_Allreduce", 40), ("MPI_Barrier", 8)]);
    let v = replay(&meta, dir.path());
    let colls = v["collectives"].as_array().unwrap();
    assert_eq!(
        colls.iter().filter(|c| c["kind"] == "allreduce").count(),
        10
    );
    assert!(colls
        .iter()
        .filter(|c| c["kind"] == "allreduce")
        .all(|c| c["size"] == 8192));
    assert_eq!(colls.iter().filter(|c| c["kind"] == "barrier").count(), 2);
    let (_, sent, received) = traffic(&v);
    assert_eq!(sent, received);
    report("allreduce", &v, &mpi_regions(&all));
}

#[test]
fn a_failing_program_passes_on_its_exit_code() {
    if !have_mpi("failing program") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let o = acesim(&[
        "trace",
        "record",
        "-o",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "exit 3",
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("exited with code 3") && err.contains("incomplete"),
        "{err}"
    );
    // A program that runs fine but is no MPI program writes no trace: said, non-zero.
    let o = acesim(&["trace", "record", "-o", out.to_str().unwrap(), "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrote no trace"));
}

#[test]
fn trace_record_names_a_missing_launcher_and_an_unwritable_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let o = acesim(&[
        "trace",
        "record",
        "-o",
        out.to_str().unwrap(),
        "--",
        "no-such-mpirun-acesim",
        "-np",
        "4",
        "./app",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`no-such-mpirun-acesim` is not a program"));
    assert!(!out.exists(), "nothing is made when the command cannot run");
    // A folder under a file cannot be made.
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let bad = file.join("trace");
    let o = acesim(&[
        "trace",
        "record",
        "-o",
        bad.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be written"));
    // The command is required, after --.
    let o = acesim(&["trace", "record", "-o", out.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(0));
}

#[test]
fn every_traced_call_reads_back_and_replays_to_completion() {
    if !have_mpi("calls") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let meta = record("calls", &[], dir.path());
    let all = calls(&meta);
    for (r, c) in all.iter().enumerate() {
        let peer = (r ^ 1) as i32;
        let has = |want: &Call| c.iter().any(|x| &x.1 == want);
        // Sendrecv_replace: the same count and type both ways.
        assert!(has(&Call::Sendrecv {
            send: (64, 9, peer, 5),
            recv: (64, 9, peer, 5),
            comm: 2
        }));
        // The derived type (4 MPI_INT) is the first user datatype, 28.
        let quad = if r % 2 == 0 {
            Call::Send {
                count: 16,
                dtype: 28,
                dest: peer,
                tag: 14,
                comm: 2,
            }
        } else {
            Call::Recv {
                count: 16,
                dtype: 28,
                source: peer,
                tag: 14,
                comm: 2,
            }
        };
        assert!(has(&quad), "rank {r}");
        // New communicators are numbered from 4: split, then dup, then create.
        assert!(has(&Call::CommSplit {
            old: 2,
            color: (r % 2) as i32,
            key: -(r as i32),
            new: 4
        }));
        assert!(has(&Call::CommDup { old: 4, new: 5 }));
        let created = if r < 2 { 6 } else { 1 };
        assert!(
            has(&Call::CommCreate {
                old: 2,
                group: 4,
                new: created
            }),
            "rank {r}"
        );
        // The non-periodic shift with MPI_PROC_NULL ends: rank 0 only receives from 1, rank 3
        // only sends to 2; calls to MPI_PROC_NULL alone are not written.
        let (r, up, down) = (r as i32, r as i32 + 1, r as i32 - 1);
        let shift_send = Call::Send {
            count: 64,
            dtype: 9,
            dest: down,
            tag: 15,
            comm: 2,
        };
        let shift_recv = Call::Recv {
            count: 64,
            dtype: 9,
            source: up,
            tag: 15,
            comm: 2,
        };
        let shift = Call::Sendrecv {
            send: (64, 9, down, 15),
            recv: (64, 9, up, 15),
            comm: 2,
        };
        match r {
            0 => assert!(has(&shift_recv) && !has(&shift_send) && !has(&shift)),
            3 => assert!(has(&shift_send) && !has(&shift_recv) && !has(&shift)),
            _ => assert!(has(&shift)),
        }
        assert!(!c.iter().any(|x| matches!(
            x.1,
            Call::Isend { tag: 16, .. } | Call::Irecv { tag: 16, .. } | Call::Recv { tag: 17, .. }
        )));
        // Persistent requests keep their ids across starts.
        let starts: Vec<&Vec<i32>> = c
            .iter()
            .filter_map(|x| match &x.1 {
                Call::Start { requests } => Some(requests),
                _ => None,
            })
            .collect();
        assert_eq!(starts.len(), 4);
        assert_eq!(starts[0], starts[1]);
    }
    let f = dumpi::Meta::parse(&meta, &std::fs::read_to_string(&meta).unwrap()).unwrap();
    let file = std::fs::File::open(f.rank_file(0)).unwrap();
    let rf = RankFile::open(BufReader::new(file), "rank 0").unwrap();
    // DUMPI's predefined types first (MPI_CHAR 2, MPI_BYTE 5, MPI_INT 9, MPI_DOUBLE 14), then
    // the user type: MPI_Type_size of each.
    let t = &rf.type_sizes;
    assert_eq!(t.len(), 29, "{t:?}");
    assert_eq!(
        (t[0], t[1], t[2], t[5], t[9], t[14], t[28]),
        (0, 0, 1, 1, 4, 8, 16),
        "{t:?}"
    );
    info_shows(
        &meta,
        &[
            ("MPI_Init_thread", 4),
            ("MPI_Sendrecv", 10),
            ("MPI_Sendrecv_replace", 4),
            ("MPI_Comm_split", 4),
            ("MPI_Comm_create", 4),
            ("MPI_Reduce_scatter", 4),
            ("MPI_Alltoallv", 4),
            // (Waitsome, Test* and Iprobe counts depend on timing.)
            ("MPI_Start", 8),
            ("MPI_Gatherv", 4),
        ],
    );
    let v = replay(&meta, dir.path());
    let (_, sent, received) = traffic(&v);
    assert_eq!(sent, received);
    assert_eq!(v["unmatched_messages"].as_array().unwrap().len(), 0);
    assert_eq!(v["unfinished_requests"].as_array().unwrap().len(), 0);
    report("calls", &v, &mpi_regions(&all));
}

#[test]
fn without_mpicc_trace_record_says_so_and_makes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).unwrap();
    let out = dir.path().join("t");
    let o = Command::new(env!("CARGO_BIN_EXE_acesim"))
        .args([
            "trace",
            "record",
            "-o",
            out.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "true",
        ])
        .env("PATH", &bin)
        .env_remove("MPICC")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no `mpicc` on PATH") && err.contains("--tracer"),
        "{err}"
    );
    assert!(!out.exists());
}
