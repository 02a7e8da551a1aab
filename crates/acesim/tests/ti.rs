//! SimGrid time-independent traces: SimGrid's example traces in tests/data/simgrid-ti read
//! and replay to completion; sizes, flops and the three file forms are checked by hand;
//! bad input gives located errors.

use acesim::frontends::dumpi::TraceOptions;
use acesim::frontends::format::Format;
use acesim::frontends::ti;
use acesim::program::ops::{OpKind, Program};
use acesim::{simulate, Error, MachineSource};
use std::path::{Path, PathBuf};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/simgrid-ti")
        .join(rel)
}

fn gflops() -> TraceOptions {
    TraceOptions {
        flops: Some(1e9),
        ..Default::default()
    }
}

fn compute_of(prog: &Program, rank: usize) -> u64 {
    prog.ops[rank]
        .iter()
        .map(|o| match o.kind {
            OpKind::Compute { ps } => ps,
            _ => 0,
        })
        .sum()
}

/// The input error of reading `text` as a trace: its location's line and field, and message.
fn error(text: &str) -> (Option<usize>, Option<String>, String) {
    match ti::parse("t.txt", text, &gflops()) {
        Err(Error::Input { location, message }) => {
            assert_eq!(location.file, "t.txt");
            (location.line, location.field, message)
        }
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[test]
fn every_shipped_trace_replays_with_bytes_sent_received() {
    let m = MachineSource::open("table1").unwrap().load().unwrap();
    let mut read = 0;
    for entry in std::fs::read_dir(data("")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // actions0/1 are one rank each: they are read through their list, split_traces.
        if !(name.ends_with(".txt") || name == "split_traces")
            || name.starts_with("actions0")
            || name.starts_with("actions1")
        {
            continue;
        }
        let (prog, summary) = ti::read(&path, &gflops()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let res = simulate(&m, prog).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(res.partial.is_none(), "{name}");
        assert!(res.unmatched_messages.is_empty(), "{name}");
        assert_eq!(res.unmatched_receives, 0, "{name}");
        assert!(res.unfinished_requests.is_empty(), "{name}");
        let received: u64 = res.receives.iter().map(|r| r.size.unwrap_or(0)).sum();
        assert_eq!(received, summary.p2p_bytes, "{name}");
        assert!(res.predicted_time_ps > 0, "{name}");
        read += 1;
    }
    assert_eq!(read, 12);
}

#[test]
fn compute_at_flops_and_default_datatype() {
    // actions1.txt: rank 1 computes 1e9 flops: at 1 Gf/s exactly 1 s.
    let (prog, summary) = ti::read(&data("split_traces"), &gflops()).unwrap();
    assert_eq!(prog.ranks, 2);
    assert_eq!(compute_of(&prog, 1), 1_000_000_000_000);
    // `init` without an argument: the default datatype is MPI_BYTE, so `send 1 0 1e6` is
    // 1e6 bytes (SimGrid's InitAction); rank 0 sends 2, rank 1 one (isend).
    assert_eq!(summary.p2p_bytes, 3_000_000);
    let first_send = prog.ops[0].iter().find_map(|o| match o.kind {
        OpKind::Send { dst, size, tag, .. } => Some((dst, size, tag)),
        _ => None,
    });
    assert_eq!(first_send, Some((1, 1_000_000, 0)));
    // `init 1`: MPI_DOUBLE; an explicit datatype id wins (4 = MPI_LONG, 8 bytes; 5 =
    // MPI_FLOAT, 4 bytes).
    let (p, s) = ti::parse("t", "0 init 1\n1 init 1\n0 send 1 0 1e6\n1 recv 0 0 1e6\n0 isend 1 1 10 5\n1 irecv 0 1 10 5\n0 wait 0 1 1\n1 waitall\n", &gflops()).unwrap();
    assert_eq!(s.p2p_bytes, 8_000_000 + 40);
    assert!(matches!(
        p.ops[1][0].kind,
        OpKind::Recv {
            size: 8_000_000,
            ..
        }
    ));
    // compute-scale applies to flops; --flops 100Mf makes 1e9 flops 10 s.
    let half = TraceOptions {
        compute_scale: 0.5,
        ..gflops()
    };
    let (p, _) = ti::parse("t", "0 compute 1e9\n", &half).unwrap();
    assert_eq!(compute_of(&p, 0), 500_000_000_000);
    let slow = TraceOptions {
        flops: Some(ti::parse_flops("100Mf").unwrap()),
        ..Default::default()
    };
    let (p, _) = ti::parse("t", "0 compute 1e9\n0 sleep 0.25\n", &slow).unwrap();
    assert_eq!(compute_of(&p, 0), 10_250_000_000_000);
}

#[test]
fn flops_notation() {
    assert_eq!(ti::parse_flops("1Gf"), Ok(1e9));
    assert_eq!(ti::parse_flops("100Mf"), Ok(1e8));
    assert_eq!(ti::parse_flops("1e9"), Ok(1e9));
    assert_eq!(ti::parse_flops("2.5gigaflops"), Ok(2.5e9));
    assert_eq!(ti::parse_flops("3kf/s"), Ok(3e3));
    assert!(ti::parse_flops("1Gb").is_err());
    assert!(ti::parse_flops("0").is_err());
}

#[test]
fn compute_without_flops_names_the_option() {
    let e = ti::parse("t.txt", "0 init\n0 compute 5e8\n", &TraceOptions::default()).unwrap_err();
    let Error::Input { location, message } = e else {
        panic!()
    };
    assert_eq!(
        (location.line, location.field.as_deref()),
        (Some(2), Some("flops"))
    );
    assert!(message.contains("--flops"), "{message}");
    // A reduction's computation needs it too; a trace without flops does not.
    assert!(ti::parse("t", "0 allreduce 5e4 5e8\n", &TraceOptions::default()).is_err());
    assert!(ti::read(&data("actions_alltoallv.txt"), &TraceOptions::default()).is_ok());
}

#[test]
fn alltoallv_sizes_reach_the_network_as_given() {
    let (prog, _) = ti::read(&data("actions_alltoallv.txt"), &gflops()).unwrap();
    // `0 alltoallv 100 1 40 30 1000 1 80 100`: sends 1 40 30, receives 1 80 100 (bytes:
    // the default datatype is MPI_BYTE).
    let calls: Vec<_> = prog
        .coll_calls
        .iter()
        .map(|c| (c.kind.as_str(), c.sizes.clone()))
        .collect();
    assert_eq!(calls[0], ("alltoallv", vec![1, 40, 30, 1, 80, 100]));
    assert_eq!(calls[1], ("alltoallv", vec![80, 1, 40, 40, 1, 30]));
    assert_eq!(calls[2], ("alltoallv", vec![100, 30, 1, 30, 40, 1]));
    let m = MachineSource::open("table1").unwrap().load().unwrap();
    let res = simulate(&m, prog).unwrap();
    let a2a = &res.collectives[0];
    assert_eq!(a2a.kind, "alltoallv");
    // Off-diagonal blocks move: 40 + 30 + 80 + 40 + 100 + 30.
    assert_eq!(a2a.bytes, 320);
}

#[test]
fn v_collectives_and_reducescatter_sizes() {
    let (prog, _) = ti::read(&data("actions_allgatherv.txt"), &gflops()).unwrap();
    let c = &prog.coll_calls[0];
    // Datatypes 0 0 after the counts: MPI_DOUBLE.
    assert_eq!(
        c.sizes,
        vec![8 * 275427, 8 * 275427, 8 * 275427, 8 * 204020]
    );
    let (prog, _) = ti::read(&data("actions_reducescatter.txt"), &gflops()).unwrap();
    assert_eq!(prog.coll_calls[0].kind, "reduce_scatter");
    assert_eq!(
        prog.coll_calls[0].sizes,
        vec![8 * 275427, 8 * 275427, 8 * 275427, 8 * 204020]
    );
    // 11349173 flops of rank 0's reduction after the call, at 1 Gf/s.
    assert_eq!(compute_of(&prog, 0), 11_349_173_000);
    let (prog, _) = ti::read(&data("actions_bcast_reduce_datatypes.txt"), &gflops()).unwrap();
    let b: Vec<_> = prog
        .coll_calls
        .iter()
        .map(|c| (c.kind.as_str(), c.size, c.root))
        .collect();
    // bcast 5e4 root 1 MPI_DOUBLE; bcast 5e4 root 0 MPI_SHORT; reduce 5e4 root 0 MPI_LONG.
    assert_eq!(b[0], ("bcast", 400_000, 1));
    assert_eq!(b[3], ("bcast", 100_000, 0));
    assert_eq!(b[6], ("reduce", 400_000, 0));
}

#[test]
fn three_file_forms_give_one_program() {
    let dir = std::env::temp_dir().join(format!("acesim-ti-forms-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let r0 = std::fs::read_to_string(data("actions0.txt")).unwrap();
    let r1 = std::fs::read_to_string(data("actions1.txt")).unwrap();
    std::fs::write(dir.join("all.txt"), format!("{r0}{r1}")).unwrap();
    std::fs::write(dir.join("sub/a0.txt"), &r0).unwrap();
    std::fs::write(dir.join("sub/a1.txt"), &r1).unwrap();
    std::fs::write(dir.join("per_rank"), "sub/a0.txt\nsub/a1.txt\n").unwrap();
    std::fs::write(dir.join("shared"), "all.txt\n").unwrap();
    let ops = |p: &Path| {
        let (prog, _) = ti::read(p, &gflops()).unwrap();
        prog.ops
            .iter()
            .map(|r| r.iter().map(|o| o.kind).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    let all = ops(&dir.join("all.txt"));
    assert_eq!(all.len(), 2);
    assert_eq!(ops(&dir.join("per_rank")), all);
    assert_eq!(ops(&dir.join("shared")), all);
    assert_eq!(ops(&data("split_traces")), all);
    // By content: a first line `0 init` is a SimGrid trace; a list is not guessed.
    assert_eq!(Format::of_path(&dir.join("all.txt")), Format::Ti);
    assert_eq!(Format::of_path(&data("actions_alltoallv.txt")), Format::Ti);
    assert_eq!(Format::of_path(&dir.join("per_rank")), Format::Schedule);
    // A missing file of a list: located at the list's line.
    std::fs::write(dir.join("broken"), "sub/a0.txt\nsub/nope.txt\n").unwrap();
    let Err(Error::Input { location, message }) = ti::read(&dir.join("broken"), &gflops()) else {
        panic!()
    };
    assert_eq!(
        (location.line, location.field.as_deref()),
        (Some(2), Some("path"))
    );
    assert!(message.contains("rank 1's trace file"), "{message}");
    // A line of another rank in a rank's file.
    std::fs::write(dir.join("swapped"), "sub/a1.txt\nsub/a0.txt\n").unwrap();
    let Err(Error::Input { location, .. }) = ti::read(&dir.join("swapped"), &gflops()) else {
        panic!()
    };
    assert_eq!(location.field.as_deref(), Some("rank"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_gives_located_errors() {
    let (line, field, msg) = error("0 init\n0 sned 1 0 10\n");
    assert_eq!((line, field.as_deref()), (Some(2), Some("action")));
    assert!(
        msg.contains("unknown action `sned`") && msg.contains("send"),
        "{msg}"
    );

    let (line, field, msg) = error("0 init\n1 init\n0 send 1 0\n");
    assert_eq!((line, field.as_deref()), (Some(3), Some("arguments")));
    assert!(msg.contains("takes 3 to 4 arguments"), "{msg}");
    let (_, field, _) = error("0 barrier 3\n");
    assert_eq!(field.as_deref(), Some("arguments"));

    let (line, field, msg) = error("0 init\n1 init\n0 send 1 0 lots\n");
    assert_eq!((line, field.as_deref()), (Some(3), Some("size")));
    assert!(msg.contains("`lots`"), "{msg}");
    let (_, field, _) = error("0 init\n1 init\n0 send 1 x 10\n");
    assert_eq!(field.as_deref(), Some("tag"));
    let (_, field, _) = error("0 bcast 10 0 99\n");
    assert_eq!(field.as_deref(), Some("datatype"));

    // Ranks 0 and 2 only: two distinct ranks, so rank 2 is out of range.
    let (line, field, msg) = error("0 init\n2 init\n");
    assert_eq!((line, field.as_deref()), (Some(2), Some("rank")));
    assert!(msg.contains("rank 1 has no line"), "{msg}");
    let (_, field, _) = error("0 init\n1 init\n0 send 5 0 10\n");
    assert_eq!(field.as_deref(), Some("dst"));

    let (line, field, msg) = error("0 init\n1 init\n0 wait 0 1 0\n");
    assert_eq!((line, field.as_deref()), (Some(3), Some("src")));
    assert!(msg.contains("nothing to wait for"), "{msg}");
    let (_, _, msg) = error("0 init\n1 init\n0 isend 1 0 8\n0 wait 0 1 7\n1 recv 0 0 8\n");
    assert!(
        msg.contains("none of this rank's 1 pending requests"),
        "{msg}"
    );

    // alltoallv needs 2p + 2 arguments.
    let (_, field, msg) =
        error("0 init\n1 init\n0 alltoallv 10 1 1 10 1\n1 alltoallv 10 1 1 10 1 1\n");
    assert_eq!(field.as_deref(), Some("arguments"));
    assert!(msg.contains("2 values in each"), "{msg}");
}

#[test]
fn test_and_leftover_requests() {
    // actions_with_isend: rank 1 tests its irecv, then waits for it; rank 2's isend is never
    // waited for and is completed at the end of the rank (as SimGrid's replay does).
    let (prog, _) = ti::read(&data("actions_with_isend.txt"), &gflops()).unwrap();
    let kinds: Vec<_> = prog.ops[1].iter().map(|o| o.kind).collect();
    assert!(kinds.iter().any(|k| matches!(k, OpKind::Test { req: 0 })));
    assert!(kinds.iter().any(|k| matches!(k, OpKind::Wait { req: 0 })));
    assert!(matches!(
        prog.ops[2].last().unwrap().kind,
        OpKind::WaitAll { count: 1, .. }
    ));
}

/// A trace of one file per rank, written to a temporary folder: `rounds` rounds of a ring
/// exchange (isend, irecv, compute, wait both) with an allreduce every 100 rounds and a
/// waitall of two sends every 7; more lines than a window of the streamed reading.
fn long_ring_trace(name: &str, ranks: u32, rounds: u32) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("acesim-ti-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut list = String::new();
    for r in 0..ranks {
        let (next, prev) = ((r + 1) % ranks, (r + ranks - 1) % ranks);
        let mut t = format!("# rank {r}\n{r} init\n");
        for i in 0..rounds {
            t += &format!(
                "{r} isend {next} {i} {}\n{r} irecv {prev} {i} {}\n",
                64 + i % 9,
                64 + i % 9
            );
            t += &format!("{r} compute {}\n", 1000 + 10 * (r + i % 5));
            t += &format!("{r} wait {r} {next} {i}\n{r} wait {prev} {r} {i}\n");
            if i % 7 == 0 {
                t += &format!("{r} isend {next} 1 8\n{r} isend {next} 2 8\n{r} recv {prev} 1 8\n{r} recv {prev} 2 8\n{r} waitall\n");
            }
            if i % 100 == 99 {
                t += &format!("\n{r} allreduce 128 1000\n");
            }
        }
        t += &format!("{r} finalize\n");
        std::fs::write(dir.join(format!("rank{r}.txt")), t).unwrap();
        list += &format!("rank{r}.txt\n");
    }
    std::fs::write(dir.join("list"), list).unwrap();
    dir.join("list")
}

#[test]
fn a_trace_read_as_the_run_goes_is_the_same_run() {
    let m = MachineSource::open("table1").unwrap().load().unwrap();
    let list = long_ring_trace("stream", 4, 1500);
    let (whole, whole_summary) = ti::read(&list, &gflops()).unwrap();
    let (streamed, summary) = ti::read_streamed(&list, &gflops()).unwrap();
    assert_eq!(summary, whole_summary);
    // Before the run: the 15 allreduces of each rank kept once (one distinct call, a
    // sequence of 15 shared by the 4 ranks), and one handle per request in flight.
    assert_eq!(streamed.total_ops(), 0);
    assert_eq!(streamed.coll_calls.len(), 1);
    assert!(
        streamed.handles.iter().all(|&h| h == 2),
        "{:?}",
        streamed.handles
    );
    let a = simulate(&m, whole).unwrap();
    let b = simulate(&m, streamed.clone()).unwrap();
    assert_eq!(a.to_json(), b.to_json());
    // The sends are the transfers: 1500 isends and 215 x 2 more a rank.
    assert_eq!(a.operation_count, 4 * (1500 + 2 * 215));
    // The shared form is streamed too, ranks one after another or interleaved line by
    // line (as a time-ordered trace is), and gives the same run.
    let dir = list.parent().unwrap();
    let texts: Vec<String> = (0..4)
        .map(|r| std::fs::read_to_string(dir.join(format!("rank{r}.txt"))).unwrap())
        .collect();
    std::fs::write(dir.join("all.txt"), texts.concat()).unwrap();
    let mut rows: Vec<Vec<&str>> = texts.iter().map(|t| t.lines().collect()).collect();
    let mut mixed = String::new();
    // Rank r's lines come in bursts of r + 1, so that the ranks drift apart in the file.
    while rows.iter().any(|l| !l.is_empty()) {
        for (r, lines) in rows.iter_mut().enumerate() {
            for l in lines.drain(..lines.len().min(r + 1)) {
                mixed += l;
                mixed += "\n";
            }
        }
    }
    std::fs::write(dir.join("mixed.txt"), mixed).unwrap();
    for shared_file in ["all.txt", "mixed.txt"] {
        let (shared, shared_summary) =
            ti::read_streamed(&dir.join(shared_file), &gflops()).unwrap();
        assert!(shared.stream.is_some(), "{shared_file}");
        assert_eq!(shared.coll_calls.len(), 1, "{shared_file}");
        assert_eq!(shared_summary.calls, whole_summary.calls, "{shared_file}");
        let c = simulate(&m, shared.clone()).unwrap();
        let (whole_shared, _) = ti::read(&dir.join(shared_file), &gflops()).unwrap();
        let d = simulate(&m, whole_shared).unwrap();
        assert_eq!(c.to_json(), d.to_json(), "{shared_file}");
        assert_eq!(c.predicted_time_ps, a.predicted_time_ps, "{shared_file}");
        // Three jobs read the file side by side, each with its own place in it.
        let jobs = |p: &acesim::program::ops::Program| {
            simulate(&m, acesim::program::adjust::repeat_jobs(p, 3).unwrap()).unwrap()
        };
        let (whole_shared, _) = ti::read(&dir.join(shared_file), &gflops()).unwrap();
        assert_eq!(jobs(&shared).to_json(), jobs(&whole_shared).to_json());
    }
    // The shared file changed after the first reading: the run stops at the line.
    let mixed = dir.join("mixed.txt");
    let (shared, _) = ti::read_streamed(&mixed, &gflops()).unwrap();
    let mut text = std::fs::read_to_string(&mixed).unwrap();
    let cut = text.match_indices('\n').nth(20_999).unwrap().0 + 1;
    text.insert_str(cut, "3 sned 0 0 10\n");
    std::fs::write(&mixed, text).unwrap();
    let Err(Error::Input { location, message }) = simulate(&m, shared) else {
        panic!("a changed shared file must stop the run")
    };
    assert_eq!(location.line, Some(21_001), "{message}");
    assert!(location.file.ends_with("mixed.txt"), "{}", location.file);
    // A rank file changed after the first reading: the run stops at its line, counted
    // from the file's start, not the window's.
    let r2 = dir.join("rank2.txt");
    let mut text = std::fs::read_to_string(&r2).unwrap();
    let cut = text.match_indices('\n').nth(5999).unwrap().0 + 1;
    text.insert_str(cut, "2 sned 3 0 10\n");
    std::fs::write(&r2, text).unwrap();
    let Err(Error::Input { location, message }) = simulate(&m, streamed) else {
        panic!("a changed file must stop the run")
    };
    assert_eq!(location.line, Some(6001), "{message}");
    assert!(location.file.ends_with("rank2.txt"), "{}", location.file);
    let _ = std::fs::remove_dir_all(dir);
}

/// The collective calls of a streamed trace, kept once per distinct call: the same run as
/// the whole reading with each rank's own alltoallv counts, roots and repeated jobs, and
/// the same located error when ranks' calls differ.
#[test]
fn streamed_collectives_are_linked_as_the_whole_trace() {
    let m = MachineSource::open("table1").unwrap().load().unwrap();
    let dir = std::env::temp_dir().join(format!("acesim-ti-colls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let count = |i: u32, j: u32| 10 * (i + 1) + j;
    let mut text = String::new();
    for r in 0..3 {
        text += &format!("{r} init\n");
    }
    for round in 0..300 {
        for r in 0..3u32 {
            let send: Vec<u32> = (0..3).map(|j| count(r, j)).collect();
            let recv: Vec<u32> = (0..3).map(|j| count(j, r)).collect();
            let list = |v: &[u32]| {
                v.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            text += &format!(
                "{r} alltoallv {} {} {} {}\n{r} bcast {} {} \n{r} allreduce 64 100\n",
                send.iter().sum::<u32>(),
                list(&send),
                recv.iter().sum::<u32>(),
                list(&recv),
                100 + round,
                round % 3
            );
        }
    }
    for r in 0..3 {
        text += &format!("{r} finalize\n");
    }
    let path = dir.join("colls.txt");
    std::fs::write(&path, &text).unwrap();
    let (streamed, _) = ti::read_streamed(&path, &gflops()).unwrap();
    let (whole, _) = ti::read(&path, &gflops()).unwrap();
    // Stored once: 300 bcasts of their own size and root, one allreduce and one shared
    // alltoallv, and each rank's own alltoallv counts (900).
    assert_eq!(streamed.coll_calls.len(), 300 + 1 + 1 + 900);
    let (a, b) = (
        simulate(&m, whole.clone()).unwrap(),
        simulate(&m, streamed.clone()).unwrap(),
    );
    assert_eq!(a.to_json(), b.to_json());
    assert_eq!(a.collectives.len(), 900);
    let jobs = |p: &Program| {
        simulate(&m, acesim::program::adjust::repeat_jobs(p, 2).unwrap())
            .unwrap()
            .to_json()
    };
    assert_eq!(jobs(&whole), jobs(&streamed));
    let skip = |p: &Program| {
        let mut p = p.clone();
        acesim::program::adjust::skip_collectives(&mut p);
        simulate(&m, p).unwrap().to_json()
    };
    assert_eq!(skip(&whole), skip(&streamed));
    // Rank 2's 152nd bcast has another root: the same error, at the same line, both ways.
    let bad = text.replacen("2 bcast 251 1 ", "2 bcast 251 2 ", 1);
    assert!(bad != text, "the bcast to change is not in the trace");
    std::fs::write(&path, &bad).unwrap();
    let err = |p: Program| match simulate(&m, p) {
        Err(Error::Input { location, message }) => (location.line, message),
        other => panic!("expected an input error, got {other:?}"),
    };
    let (streamed, _) = ti::read_streamed(&path, &gflops()).unwrap();
    let (whole, _) = ti::read(&path, &gflops()).unwrap();
    let (line, message) = err(streamed);
    assert_eq!((line, message.clone()), err(whole));
    assert!(
        message.contains("mismatched collective calls on world: call #455"),
        "{message}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
