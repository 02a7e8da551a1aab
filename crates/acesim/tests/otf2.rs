//! OTF2 traces (feature `otf2`): the traces of tests/data/otf2 (written by make_traces.c)
//! read into the operations written, replay with every byte received, and a broken archive
//! is a located error.
#![cfg(feature = "otf2")]

use acesim::frontends::dumpi::TraceOptions;
use acesim::frontends::format::Format;
use acesim::frontends::otf2;
use acesim::program::ops::{Op, OpKind, Program, ANY_SOURCE, UNDEFINED};
use acesim::{simulate, MachineSource};
use std::path::{Path, PathBuf};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/otf2")
        .join(rel)
}

fn kinds(prog: &Program, r: usize) -> Vec<OpKind> {
    prog.ops[r].iter().map(|o: &Op| o.kind).collect()
}

const NS: u64 = 1000;

#[test]
fn ring_reads_into_the_operations_written() {
    let (prog, summary) = otf2::read(&data("ring/traces.otf2"), &TraceOptions::default()).unwrap();
    assert_eq!(prog.ranks, 4);
    for r in 0..4u32 {
        let ops = kinds(&prog, r as usize);
        let OpKind::WaitAll { list, count: 2 } = ops[5] else {
            panic!("rank {r}: {ops:?}");
        };
        assert_eq!(&prog.req_lists[list as usize..list as usize + 2], &[1, 0]);
        assert_eq!(
            ops,
            vec![
                OpKind::Compute { ps: 10_000 * NS },
                OpKind::Irecv {
                    src: (r + 3) % 4,
                    size: 1024,
                    tag: 7,
                    comm: 0,
                    req: 0
                },
                OpKind::Compute { ps: 500 * NS },
                OpKind::Isend {
                    dst: (r + 1) % 4,
                    size: 1024,
                    tag: 7,
                    comm: 0,
                    req: 1
                },
                OpKind::Compute { ps: 500 * NS },
                OpKind::WaitAll { list, count: 2 },
                OpKind::Compute { ps: 4000 * NS },
            ],
            "rank {r}"
        );
    }
    assert_eq!(summary.p2p_bytes, 4 * 1024);
    // The MPI region: MPI_Init leaves at 1 µs, MPI_Finalize enters at 20 µs (make_traces.c).
    assert_eq!(summary.windows, vec![19_000 * NS; 4]);
    assert_eq!(prog.traced_windows, Some(vec![19_000 * NS; 4]));
    assert_eq!(summary.calls["MPI_Waitall"], 4);
    assert_eq!(summary.format, "OTF2");
}

#[test]
fn collectives_and_a_sub_communicator() {
    let (prog, summary) =
        otf2::read(&data("collectives/traces.otf2"), &TraceOptions::default()).unwrap();
    assert_eq!(prog.ranks, 4);
    for r in 0..4usize {
        let ops = kinds(&prog, r);
        let member = r == 1 || r == 3;
        let (color, key) = if member {
            (0, (r / 2) as i64)
        } else {
            (UNDEFINED, 0)
        };
        assert_eq!(
            ops[0],
            OpKind::CommSplit {
                parent: 0,
                color,
                key,
                result: 1
            },
            "rank {r}"
        );
        let calls: Vec<(String, u64, u32, u32)> = ops
            .iter()
            .filter_map(|k| match k {
                OpKind::Coll { call } => {
                    let c = &prog.coll_calls[*call as usize];
                    Some((c.kind.clone(), c.size, c.root, c.comm))
                }
                _ => None,
            })
            .collect();
        // The trace has Score-P's byte counts (every block a rank sends or receives): the
        // block sizes come back.
        let mut want = vec![
            ("bcast".to_string(), 256, 0, 0),
            ("allreduce".to_string(), 64, 0, 0),
            ("allgather".to_string(), 16, 0, 0),
            ("scan".to_string(), 32, 0, 0),
            ("exscan".to_string(), 8, 0, 0),
            ("reduce".to_string(), 128, 2, 0),
        ];
        if member {
            want.push(("barrier".to_string(), 0, 0, 1));
        }
        assert_eq!(calls, want, "rank {r}");
    }
    assert_eq!(
        kinds(&prog, 1).last(),
        Some(&OpKind::Send {
            dst: 1,
            size: 100,
            tag: 3,
            comm: 1
        })
    );
    assert_eq!(
        kinds(&prog, 3).last(),
        Some(&OpKind::Recv {
            src: 0,
            size: 100,
            tag: 3,
            comm: 1
        })
    );
    assert_eq!(summary.collective_calls, 4 * 6 + 2);
    assert_eq!(summary.comms_created, 2);
}

#[test]
fn a_receive_learns_its_source_tag_and_size_at_completion() {
    let (prog, _) = otf2::read(&data("anysource/traces.otf2"), &TraceOptions::default()).unwrap();
    assert_eq!(
        kinds(&prog, 0),
        vec![
            OpKind::Irecv {
                src: 1,
                size: 4096,
                tag: 9,
                comm: 0,
                req: 0
            },
            OpKind::Test { req: 0 },
            OpKind::Wait { req: 0 },
        ]
    );
    assert_eq!(
        kinds(&prog, 1),
        vec![OpKind::Send {
            dst: 0,
            size: 4096,
            tag: 9,
            comm: 0
        }]
    );
    assert!(!kinds(&prog, 0).iter().any(|k| matches!(
        k,
        OpKind::Irecv {
            src: ANY_SOURCE,
            ..
        }
    )));
}

#[test]
fn every_trace_replays_with_bytes_sent_received() {
    let m = MachineSource::open("table1").unwrap().load().unwrap();
    for name in ["ring", "collectives", "anysource"] {
        let path = data(&format!("{name}/traces.otf2"));
        assert_eq!(Format::of_path(&path), Format::Otf2);
        let (prog, summary) = otf2::read(&path, &TraceOptions::default()).unwrap();
        let res = simulate(&m, prog).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(res.partial.is_none(), "{name}");
        assert!(res.unmatched_messages.is_empty(), "{name}");
        assert_eq!(res.unmatched_receives, 0, "{name}");
        assert!(res.unfinished_requests.is_empty(), "{name}");
        let received: u64 = res.receives.iter().map(|r| r.size.unwrap_or(0)).sum();
        assert_eq!(received, summary.p2p_bytes, "{name}");
        assert!(res.predicted_time_ps > 0, "{name}");
    }
}

#[test]
fn compute_scale_and_threshold() {
    let opts = TraceOptions {
        compute_scale: 0.5,
        compute_threshold: 1000 * NS,
        ..Default::default()
    };
    let (prog, _) = otf2::read(&data("ring/traces.otf2"), &opts).unwrap();
    let compute: Vec<u64> = prog.ops[0]
        .iter()
        .filter_map(|o| match o.kind {
            OpKind::Compute { ps } => Some(ps),
            _ => None,
        })
        .collect();
    assert_eq!(compute, vec![5_000 * NS, 2_000 * NS]);
}

/// A copy of trace `name` in a temporary directory.
fn copy(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = data(name);
    for entry in walk(&from) {
        let rel = entry.strip_prefix(&from).unwrap();
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &to).unwrap();
    }
    dir
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_truncated_event_file_is_a_located_error() {
    let dir = copy("ring");
    let evt = dir.path().join("traces/2.evt");
    let len = std::fs::metadata(&evt).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&evt).unwrap();
    f.set_len(len / 2).unwrap();
    let err = otf2::read(&dir.path().join("traces.otf2"), &TraceOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("traces.otf2"), "{text}");
    assert!(text.contains("rank 2"), "{text}");
    assert_eq!(err.exit_code(), 2, "{text}");
}

/// An event file cut anywhere and closed by an end marker (0x02) is an error. Cut between
/// two events, the library reads it cleanly, with fewer events: the definitions' event
/// count catches it. (Cut without the marker, the library reads the missing bytes out of its
/// buffer, whatever it holds: `a_truncated_event_file_is_a_located_error`.)
#[test]
fn an_event_file_cut_anywhere_is_a_located_error() {
    let whole = std::fs::read(data("ring").join("traces/2.evt")).unwrap();
    let mut counted = 0;
    // The last two bytes are the file's end markers: cutting them loses no event.
    for cut in 1..whole.len() - 2 {
        let dir = copy("ring");
        let evt = dir.path().join("traces/2.evt");
        std::fs::write(&evt, [&whole[..cut], &[2u8][..]].concat()).unwrap();
        let err = otf2::read(&dir.path().join("traces.otf2"), &TraceOptions::default())
            .expect_err(&format!("cut at byte {cut}"));
        let text = err.to_string();
        assert!(text.contains("traces.otf2"), "{text}");
        assert!(text.contains("rank 2"), "{text}");
        assert_eq!(err.exit_code(), 2, "{text}");
        if text.contains("events the definitions give it (cut short?)") {
            counted += 1;
        }
    }
    assert!(counted >= 10, "{counted} cuts between events");
}

#[test]
fn a_corrupt_anchor_or_missing_definitions_is_an_error() {
    let dir = copy("ring");
    std::fs::write(dir.path().join("traces.otf2"), b"not an anchor file").unwrap();
    let err = otf2::read(&dir.path().join("traces.otf2"), &TraceOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("not a readable OTF2 trace"),
        "{err}"
    );
    let dir = copy("ring");
    std::fs::remove_file(dir.path().join("traces.def")).unwrap();
    let err = otf2::read(&dir.path().join("traces.otf2"), &TraceOptions::default()).unwrap_err();
    assert!(err.to_string().contains("traces.otf2"), "{err}");
    let err = otf2::read(&data("nothing/traces.otf2"), &TraceOptions::default()).unwrap_err();
    assert!(err.to_string().contains("nothing"), "{err}");
}

#[test]
fn a_trace_read_as_the_run_goes_is_the_same_run() {
    use acesim::program::adjust;
    use acesim::program::stream::is_structural;
    let m = MachineSource::open("table1").unwrap().load().unwrap();
    type LayOut = fn(Program) -> Program;
    let layouts: [(&str, LayOut); 3] = [
        ("as traced", |p| p),
        ("3 jobs, messages capped at 1 KiB", |p| {
            let mut p = adjust::repeat_jobs(&p, 3).unwrap();
            adjust::cap_messages(&mut p, 1024);
            p
        }),
        ("collectives skipped", |mut p| {
            adjust::skip_collectives(&mut p);
            p
        }),
    ];
    let opts = TraceOptions {
        compute_scale: 0.5,
        ..Default::default()
    };
    for name in ["ring", "collectives", "anysource"] {
        let path = data(&format!("{name}/traces.otf2"));
        let (whole, whole_summary) = otf2::read(&path, &opts).unwrap();
        // Windows of one event cut every call and every request's life in pieces.
        // Ranks 0 and 1 keep their location open between windows, the others open it again.
        for events in [1, 2, 3, 5, 16_384] {
            let (streamed, summary) = otf2::read_in_windows(&path, &opts, events, 2).unwrap();
            assert_eq!(summary, whole_summary, "{name}");
            assert!(streamed
                .ops
                .iter()
                .flatten()
                .all(|o| is_structural(&o.kind)));
            for (how, lay_out) in layouts {
                let a = simulate(&m, lay_out(whole.clone())).unwrap();
                let b = simulate(&m, lay_out(streamed.clone())).unwrap();
                assert_eq!(
                    a.to_json(),
                    b.to_json(),
                    "{name}, windows of {events}, {how}"
                );
            }
        }
    }
}

#[test]
fn an_event_file_that_changed_after_it_was_read_stops_the_run_with_its_error() {
    let dir = copy("ring");
    let anchor = dir.path().join("traces.otf2");
    let (prog, _) = otf2::read_in_windows(&anchor, &TraceOptions::default(), 4, 0).unwrap();
    let evt = dir.path().join("traces/2.evt");
    let len = std::fs::metadata(&evt).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&evt).unwrap();
    f.set_len(len / 2).unwrap();
    let m = MachineSource::open("table1").unwrap().load().unwrap();
    let e = simulate(&m, prog).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    let text = e.to_string();
    assert!(
        text.contains("traces.otf2") && text.contains("rank 2"),
        "{text}"
    );
}

#[test]
fn a_streamed_trace_on_threads_and_processes_is_the_run_of_one() {
    use acesim::engine::LocalExchange;
    use acesim::run::simulate::{simulate_with, Options};
    use acesim::run::simulate_processes::simulate_across;
    let m = MachineSource::open("table1")
        .unwrap()
        .with_overrides(&[
            "topology.kind=\"torus\"".to_string(),
            "topology.dims=[2,2]".to_string(),
        ])
        .load()
        .unwrap();
    let json = |r: acesim::results::Results| {
        let mut r = r;
        r.wall_seconds = 0.0;
        r.to_json()
    };
    for name in ["ring", "collectives", "anysource"] {
        let path = data(&format!("{name}/traces.otf2"));
        let (whole, _) = otf2::read(&path, &TraceOptions::default()).unwrap();
        let (streamed, _) = otf2::read_in_windows(&path, &TraceOptions::default(), 2, 1).unwrap();
        let one = json(simulate(&m, whole).unwrap());
        let threads = Options {
            threads: Some(2),
            ..Default::default()
        };
        let on_threads = json(simulate_with(&m, streamed.clone(), &threads).unwrap());
        assert_eq!(one, on_threads, "{name} on 2 threads");
        let single = Options::default();
        let across: Vec<_> = std::thread::scope(|s| {
            let runs: Vec<_> = LocalExchange::group(2)
                .into_iter()
                .map(|ex| {
                    let (m, p, o) = (&m, streamed.clone(), &single);
                    s.spawn(move || simulate_across(m, p, o, &ex).unwrap())
                })
                .collect();
            runs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut across = across.into_iter();
        let first = across.next().unwrap().expect("process 0's results");
        assert_eq!(one, json(first), "{name} across 2 processes");
        assert!(across.all(|r| r.is_none()));
    }
}
