//! DUMPI traces: the two real traces in tests/data/dumpi read completely and replay to
//! completion; corrupt, truncated and inconsistent copies give located errors.

use acesim::frontends::dumpi::{self, TraceOptions};
use acesim::frontends::format::Format;
use acesim::program::ops::OpKind;
use acesim::{simulate, MachineSource};
use std::path::{Path, PathBuf};

mod common;

const TABLE1: &str = include_str!("../presets/table1.toml");

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/dumpi")
        .join(rel)
}

fn testtrace() -> PathBuf {
    data("sst-dumpi-testtrace/testtrace.meta")
}

fn testbgp() -> PathBuf {
    data("sst-macro-testbgp/testbgp.meta")
}

/// `MPI_X called N times` lines of callcounts-single.txt (the first block: rank 0).
fn callcounts(path: &Path) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((name, rest)) = line.split_once(" called ") else {
            continue;
        };
        let n: u64 = rest.split_whitespace().next().unwrap().parse().unwrap();
        if out.iter().any(|(m, _)| m == name) {
            break; // the second block repeats the first
        }
        out.push((name.to_string(), n));
    }
    out
}

#[test]
fn testtrace_reads_with_the_traced_call_counts() {
    let (prog, summary) = dumpi::read(&testtrace(), &TraceOptions::default()).unwrap();
    assert_eq!(prog.ranks, 4);
    assert_eq!(summary.version, [1, 0, 0]);
    // callcounts-single.txt is rank 0's footer; all 4 ranks make the same calls.
    let counts = callcounts(&data("sst-dumpi-testtrace/callcounts-single.txt"));
    let nonzero: Vec<_> = counts.iter().filter(|(_, n)| *n > 0).collect();
    assert_eq!(nonzero.len(), 9, "{nonzero:?}");
    for (name, n) in nonzero {
        assert_eq!(summary.calls.get(name.as_str()), Some(&(4 * n)), "{name}");
    }
    // Rank 0 (testtrace-0000.txt): Isend 1 int to 1, Recv 1 int from 3, Wait, and the
    // barrier and allreduce as collective calls.
    let kinds: Vec<_> = prog.ops[0]
        .iter()
        .filter(|o| !matches!(o.kind, OpKind::Compute { .. }))
        .map(|o| o.kind)
        .collect();
    assert!(matches!(kinds[0], OpKind::Coll { .. }));
    assert!(matches!(
        kinds[1],
        OpKind::Isend {
            dst: 1,
            size: 4,
            tag: 1337,
            comm: 0,
            ..
        }
    ));
    assert!(matches!(
        kinds[2],
        OpKind::Recv {
            src: 3,
            size: 4,
            tag: 1337,
            comm: 0
        }
    ));
    assert!(matches!(kinds[3], OpKind::Wait { .. }));
    assert!(matches!(kinds[4], OpKind::Coll { .. }));
    assert_eq!(kinds.len(), 5);
    assert_eq!(prog.coll_calls[0].kind, "barrier");
    assert_eq!(prog.coll_calls[1].kind, "allreduce");
    assert_eq!(prog.coll_calls[1].size, 4);
    assert_eq!(summary.p2p_bytes, 4 * 4);
    // Rank 0's window, its MPI region: MPI_Init returns at .737670000, MPI_Finalize enters at
    // .739939000 (dumpi2ascii's lines 11 and 49).
    assert_eq!(summary.windows[0], (739_939_000 - 737_670_000) * 1000);
    // Compute: the gaps between rank 0's calls, which sum to the window minus the calls.
    let compute: u64 = prog.ops[0]
        .iter()
        .map(|o| match o.kind {
            OpKind::Compute { ps } => ps,
            _ => 0,
        })
        .sum();
    // Gaps (us): 24 6 7 15 10 8 15 7 between the nine calls of testtrace-0000.txt.
    assert_eq!(compute, (24 + 6 + 7 + 15 + 10 + 8 + 15 + 7) * 1_000_000);
}

#[test]
fn compute_scale_and_threshold() {
    let opts = TraceOptions {
        compute_scale: 2.0,
        compute_threshold: 10_000_000, // 10 us: keeps the gaps of 24, 15, 10 and 15 us
        ..Default::default()
    };
    let (prog, _) = dumpi::read(&testtrace(), &opts).unwrap();
    let compute: u64 = prog.ops[0]
        .iter()
        .map(|o| match o.kind {
            OpKind::Compute { ps } => ps,
            _ => 0,
        })
        .sum();
    assert_eq!(compute, 2 * (24 + 15 + 10 + 15) * 1_000_000);
    let none = TraceOptions {
        compute_scale: 0.0,
        ..Default::default()
    };
    let (prog, _) = dumpi::read(&testtrace(), &none).unwrap();
    assert!(prog
        .ops
        .iter()
        .flatten()
        .all(|o| !matches!(o.kind, OpKind::Compute { .. })));
}

#[test]
fn testbgp_reads_with_its_footer_counts_and_replays() {
    let (prog, summary) = dumpi::read(&testbgp(), &TraceOptions::default()).unwrap();
    assert_eq!(prog.ranks, 7);
    assert_eq!(summary.version, [1, 1, 0]);
    // The footer of every rank: Isend 84, Irecv 84, Waitall 14, Barrier 3, Alltoall 7,
    // Comm_group 1, Group_incl 1, Comm_size 1, Comm_rank 29, Comm_create 1, Init 1, Finalize 1.
    for (name, n) in [
        ("MPI_Isend", 84),
        ("MPI_Irecv", 84),
        ("MPI_Waitall", 14),
        ("MPI_Barrier", 3),
        ("MPI_Alltoall", 7),
        ("MPI_Comm_create", 1),
        ("MPI_Comm_rank", 29),
    ] {
        assert_eq!(summary.calls.get(name), Some(&(7 * n)), "{name}");
    }
    assert_eq!(summary.calls.values().sum::<u64>(), 7 * 227);
    let sends = summary.p2p_bytes;
    let m = MachineSource::from_text("table1.toml", TABLE1)
        .load()
        .unwrap();
    let res = simulate(&m, prog).unwrap();
    assert!(res.partial.is_none());
    assert!(res.unmatched_messages.is_empty());
    assert_eq!(res.unmatched_receives, 0);
    assert!(res.unfinished_requests.is_empty());
    // Bytes sent = bytes received by the user's receives.
    assert_eq!(res.receives.len(), 7 * 84);
    let received: u64 = res.receives.iter().map(|r| r.size.unwrap_or(0)).sum();
    assert_eq!(received, sends);
    // The alltoalls ran on the sub-communicator Comm_create made.
    let a2a: Vec<_> = res
        .collectives
        .iter()
        .filter(|c| c.kind == "alltoall")
        .collect();
    assert_eq!(a2a.len(), 7);
    assert!(res.predicted_time_ps > 0);
}

#[test]
fn format_is_recognised_by_content() {
    assert_eq!(Format::of_path(&testbgp()), Format::Dumpi);
    let bin = data("sst-macro-testbgp/testbgp-0000.bin");
    assert_eq!(Format::of_path(&bin), Format::Dumpi);
    let e = acesim::frontends::binary::check_not_binary(&bin).unwrap_err();
    assert!(e
        .to_string()
        .contains("one rank of a DUMPI trace; give the trace's .meta file"));
}

/// A copy of the testbgp trace in a temporary folder (removed when the copy is dropped),
/// with rank `r`'s file changed by `f`; it derefs to the copy's `.meta` path.
fn broken_copy(name: &str, r: usize, f: impl FnOnce(&mut Vec<u8>)) -> TraceCopy {
    let dir = tempfile::Builder::new()
        .prefix(&format!("acesim-dumpi-{name}-"))
        .tempdir()
        .unwrap();
    for entry in std::fs::read_dir(data("sst-macro-testbgp")).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
    }
    let target = dir.path().join(format!("testbgp-{r:04}.bin"));
    let mut bytes = std::fs::read(&target).unwrap();
    f(&mut bytes);
    std::fs::write(&target, bytes).unwrap();
    let meta = dir.path().join("testbgp.meta");
    TraceCopy { _dir: dir, meta }
}

struct TraceCopy {
    _dir: tempfile::TempDir,
    meta: PathBuf,
}

impl std::ops::Deref for TraceCopy {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.meta
    }
}

fn read_err(meta: &Path) -> String {
    let e = dumpi::read(meta, &TraceOptions::default()).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    e.to_string()
}

#[test]
fn truncated_file_is_located() {
    let meta = broken_copy("trunc", 3, |b| b.truncate(b.len() - 20));
    let e = read_err(&meta);
    assert!(e.contains("testbgp-0003.bin"), "{e}");
    assert!(e.contains("index"), "{e}");
    // Cut in the middle of the records (the index kept): the body ends early.
    let meta = broken_copy("trunc2", 2, |b| {
        let tail = b[b.len() - 64..].to_vec();
        // Keep the first 600 bytes of records, then the index, with its offsets unchanged.
        b.truncate(600);
        b.extend_from_slice(&tail);
    });
    let e = read_err(&meta);
    assert!(e.contains("testbgp-0002.bin"), "{e}");
}

#[test]
fn corrupt_label_and_missing_rank_file() {
    // Byte 0x10 is the first record's label (MPI_Init, 124): make it an unread call.
    let meta = broken_copy("label", 1, |b| {
        b[0x10] = 0x00;
        b[0x11] = 0xF0;
    });
    let e = read_err(&meta);
    assert!(e.contains("testbgp-0001.bin, record 1"), "{e}");
    assert!(e.contains("label 240"), "{e}");
    let meta = broken_copy("missing", 0, |_| {});
    std::fs::remove_file(meta.parent().unwrap().join("testbgp-0005.bin")).unwrap();
    let e = read_err(&meta);
    assert!(e.contains("rank 5"), "{e}");
    assert!(e.contains("testbgp-0005.bin"), "{e}");
}

#[test]
fn mixed_versions_are_refused() {
    let header = 0x2bcd; // testbgp's header offset (index)
    let meta = broken_copy("version", 4, |b| b[header + 1] = 0);
    let e = read_err(&meta);
    assert!(e.contains("testbgp-0004.bin"), "{e}");
    assert!(e.contains("different traces"), "{e}");
}

#[test]
fn unknown_datatype_and_unknown_call_names() {
    // Shrink rank 6's datatype table to 2 entries: MPI_INT (9) is then unknown.
    let sizes = 0x3543;
    let meta = broken_copy("dtype", 6, |b| {
        b[sizes..sizes + 4].copy_from_slice(&2i32.to_be_bytes())
    });
    let e = read_err(&meta);
    assert!(e.contains("testbgp-0006.bin, record"), "{e}");
    assert!(e.contains("unknown datatype"), "{e}");
    let opts = TraceOptions {
        ignore_calls: vec!["MPI_Not_a_call".into()],
        ..Default::default()
    };
    let e = dumpi::read(&testbgp(), &opts).unwrap_err().to_string();
    assert!(e.contains("unknown MPI call `MPI_Not_a_call`"), "{e}");
}

#[test]
fn a_replay_that_keeps_no_records_is_the_same_run_and_holds_the_requests_in_flight() {
    // testbgp: isends and irecvs completed by waitalls, alltoalls, a sub-communicator.
    let m = MachineSource::from_text("table1.toml", TABLE1)
        .load()
        .unwrap();
    for meta in [testbgp(), testtrace()] {
        let (prog, _) = dumpi::read(&meta, &TraceOptions::default()).unwrap();
        let (kept, bare) = common::with_and_without_records(&m, prog);
        assert!(kept.operation_count > 0, "{}", meta.display());
        // Kept, every transfer has its record; without, the slots of finished ones are
        // taken again.
        assert!(kept.transfer_records as u64 >= kept.operation_count);
        assert!(bare.transfer_records <= kept.transfer_records);
        if meta == testbgp() {
            // Its 588 messages come 6 isends and 6 irecvs per waitall on each of 7
            // ranks. A record is free once both ends have taken its handles again, in
            // their next round: at most two rounds of 7 x 6 sends, plus an alltoall's
            // steps in flight (7 x 6). Kept: 595.
            assert!(
                bare.transfer_records <= 84 + 7 * 6,
                "{}",
                bare.transfer_records
            );
        }
    }
}

#[test]
fn a_trace_read_as_the_run_goes_is_the_same_run() {
    use acesim::program::adjust;
    use acesim::program::stream::is_structural;
    use acesim::Program;
    let m = MachineSource::from_text("table1.toml", TABLE1)
        .load()
        .unwrap();
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
    for meta in [testbgp(), testtrace()] {
        let (whole, whole_summary) = dumpi::read(&meta, &opts).unwrap();
        let (streamed, summary) = dumpi::read_streamed(&meta, &opts).unwrap();
        assert_eq!(summary, whole_summary);
        // Before the run, the program holds its collectives and creations only.
        assert!(streamed
            .ops
            .iter()
            .flatten()
            .all(|o| is_structural(&o.kind)));
        assert!(streamed.total_ops() < whole.total_ops() / 4);
        for (name, lay_out) in layouts {
            let a = simulate(&m, lay_out(whole.clone())).unwrap();
            let b = simulate(&m, lay_out(streamed.clone())).unwrap();
            assert_eq!(a.to_json(), b.to_json(), "{}, {name}", meta.display());
        }
    }
}

#[test]
fn a_rank_file_that_changed_after_it_was_read_stops_the_run_with_its_error() {
    let meta = broken_copy("changed", 0, |_| {});
    let (prog, _) = dumpi::read_streamed(&meta, &TraceOptions::default()).unwrap();
    let file = meta.with_file_name("testbgp-0005.bin");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() - 20]).unwrap();
    let m = MachineSource::from_text("table1.toml", TABLE1)
        .load()
        .unwrap();
    let e = simulate(&m, prog).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    let e = e.to_string();
    assert!(e.contains("testbgp-0005.bin") && e.contains("index"), "{e}");
}
