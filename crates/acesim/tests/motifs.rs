//! Motifs (docs/motifs.md): each is the program its description says, written out by hand
//! here as schedule text and run side by side; they are generated as the run goes (the
//! program holds no operation before the run); bad parameters are located errors.

use acesim::frontends::motif;
use acesim::frontends::schedule;
use acesim::program::OpKind;
use acesim::{simulate, MachineSource, Program};

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn torus(dims: &str) -> acesim::Machine {
    MachineSource::open("table1")
        .unwrap()
        .with_overrides(&args(&[
            "topology.kind=\"torus\"",
            &format!("topology.dims={dims}"),
        ]))
        .load()
        .unwrap()
}

/// The motif's run against the schedule's (their JSON, the source locations aside).
fn same_run(m: &acesim::Machine, spec: &str, ranks: u32, a: &[&str], sched: &str) {
    let prog = motif::program(spec, Some(ranks), &args(a)).unwrap();
    // Generated as the run goes: before it, a rank holds its collective calls and
    // communicator creations only (linked before the run).
    assert!(
        prog.ops.iter().flatten().all(|o| matches!(
            o.kind,
            OpKind::Coll { .. } | OpKind::CommSplit { .. } | OpKind::CommDup { .. }
        )),
        "generated as the run goes"
    );
    let by_hand = schedule::parse("hand.sched", sched).unwrap();
    let (x, y) = (simulate(m, prog).unwrap(), simulate(m, by_hand).unwrap());
    assert_eq!(x.predicted_time_ps, y.predicted_time_ps, "{spec} {a:?}");
    assert_eq!(x.events, y.events, "{spec} {a:?}");
    let sends = |r: &acesim::Results| -> Vec<_> {
        (0..r.operations.len())
            .map(|i| {
                let o = r.operations.row(i);
                (o.src, o.dst, o.size, o.issue_ps, o.complete_ps)
            })
            .collect()
    };
    assert_eq!(sends(&x), sends(&y), "{spec} {a:?}");
}

#[test]
fn a_ring_is_irecv_isend_waitall_each_iteration() {
    let mut s = String::from("ranks 4\n");
    for r in 0..4 {
        s += &format!("rank {r}\n");
        for _ in 0..3 {
            s += &format!(
                "compute 1us\nirecv {} 8KiB req=0 tag=0\nisend {} 8KiB req=1 tag=0\nwaitall 0 1\n",
                (r + 3) % 4,
                (r + 1) % 4
            );
        }
    }
    same_run(
        &torus("[2,2]"),
        "motif:ring",
        4,
        &["iterations=3", "size=8KiB", "compute=1us"],
        &s,
    );
}

#[test]
fn a_halo2d_exchanges_with_the_grid_neighbours_that_exist() {
    // A 2x2 grid (ranks 0 1 / 2 3), no wrap: directions +x, -x, +y, -y carry tags 0..3; a
    // rank posts the receive from the neighbour behind a direction, then the send ahead.
    let halo = |r: i32| -> String {
        let (x, y) = (r % 2, r / 2);
        let mut ops = Vec::new();
        let mut req = 0;
        for (tag, (dx, dy)) in [(1, 0), (-1, 0), (0, 1), (0, -1)].into_iter().enumerate() {
            let (bx, by) = (x - dx, y - dy);
            if (0..2).contains(&bx) && (0..2).contains(&by) {
                ops.push(format!("irecv {} 1KiB req={req} tag={tag}", bx + 2 * by));
                req += 1;
            }
            let (ax, ay) = (x + dx, y + dy);
            if (0..2).contains(&ax) && (0..2).contains(&ay) {
                ops.push(format!("isend {} 1KiB req={req} tag={tag}", ax + 2 * ay));
                req += 1;
            }
        }
        let reqs: Vec<String> = (0..req).map(|q| q.to_string()).collect();
        ops.push(format!("waitall {}", reqs.join(" ")));
        ops.join("\n") + "\n"
    };
    let mut s = String::from("ranks 4\n");
    for r in 0..4 {
        s += &format!("rank {r}\n{}{}", halo(r), halo(r));
    }
    same_run(
        &torus("[2,2]"),
        "motif:halo2d",
        4,
        &["iterations=2", "size=1KiB", "dims=2x2"],
        &s,
    );
}

#[test]
fn a_sweep3d_wavefront_receives_west_and_north_then_sends_east_and_south() {
    // 2x2: rank 0 starts, 1 and 2 follow, 3 last.
    let s = "ranks 4\n\
        rank 0\ncompute 2us\nsend 1 4KiB tag=0\nsend 2 4KiB tag=1\n\
        rank 1\nrecv 0 4KiB tag=0\ncompute 2us\nsend 3 4KiB tag=1\n\
        rank 2\nrecv 0 4KiB tag=1\ncompute 2us\nsend 3 4KiB tag=0\n\
        rank 3\nrecv 2 4KiB tag=0\nrecv 1 4KiB tag=1\ncompute 2us\n";
    same_run(
        &torus("[2,2]"),
        "motif:sweep3d",
        4,
        &["iterations=1", "compute=2us"],
        s,
    );
}

#[test]
fn an_incast_sends_every_rank_to_the_root() {
    let s = "ranks 3\n\
        rank 0\nisend 2 64KiB req=0 tag=0\nwait 0\n\
        rank 1\nisend 2 64KiB req=0 tag=0\nwait 0\n\
        rank 2\nirecv 0 64KiB req=0 tag=0\nirecv 1 64KiB req=1 tag=0\nwaitall 0 1\n";
    same_run(
        &torus("[3]"),
        "motif:incast",
        3,
        &["iterations=1", "size=64KiB", "root=2"],
        s,
    );
}

#[test]
fn random_pairs_and_halo3d_with_corners_balance_their_messages() {
    let m = torus("[4,4]");
    for (spec, a) in [
        ("motif:random_pairs", vec!["iterations=20", "seed=3"]),
        (
            "motif:halo3d",
            vec!["iterations=4", "corners=true", "blocking=true"],
        ),
        ("motif:halo2d", vec!["iterations=4", "corners=true"]),
    ] {
        let prog = motif::program(spec, Some(16), &args(&a)).unwrap();
        let res = simulate(&m, prog).unwrap();
        // Every message sent was received: nothing unmatched, nothing pending.
        assert!(
            res.unmatched_messages.is_empty() && res.unfinished_requests.is_empty(),
            "{spec}"
        );
        assert_eq!(res.unmatched_receives, 0, "{spec}");
        let sent: u64 = (0..res.operations.len())
            .map(|i| res.operations.row(i).size)
            .sum();
        let received: u64 = res.receives.iter().map(|r| r.size.unwrap_or(0)).sum();
        assert_eq!(sent, received, "{spec}");
        assert!(sent > 0, "{spec}");
    }
}

#[test]
fn an_allreduce_loop_is_compute_then_allreduce() {
    let mut s = String::from("ranks 4\n");
    for r in 0..4 {
        s += &format!("rank {r}\n");
        for _ in 0..3 {
            s += "compute 1us\nallreduce 64KiB algo=ring\n";
        }
    }
    same_run(
        &torus("[2,2]"),
        "motif:allreduce",
        4,
        &["iterations=3", "size=64KiB", "compute=1us", "algo=ring"],
        &s,
    );
}

#[test]
fn an_fft_transposes_in_the_rows_then_the_columns_of_its_grid() {
    // A 2x2 grid: rows {0,1} {2,3} (color y, key x), columns {0,2} {1,3}.
    let mut s = String::from("ranks 4\n");
    for r in 0..4 {
        let (x, y) = (r % 2, r / 2);
        s += &format!("rank {r}\ncomm_split {y} {x} as=row\ncomm_split {x} {y} as=col\n");
        for _ in 0..2 {
            s += "compute 3us\nalltoall 16KiB comm=row\ncompute 3us\nalltoall 16KiB comm=col\n";
        }
    }
    same_run(
        &torus("[2,2]"),
        "motif:fft",
        4,
        &["iterations=2", "size=16KiB", "compute=3us", "dims=2x2"],
        &s,
    );
}

#[test]
fn a_bsp_step_is_compute_a_3d_halo_then_a_small_allreduce() {
    // A 2x2x2 grid: each rank has one neighbour per dimension; direction tags 0..5 are
    // +x, -x, +y, -y, +z, -z.
    let mut s = String::from("ranks 8\n");
    for r in 0..8i32 {
        let c = [r % 2, (r / 2) % 2, r / 4];
        s += &format!("rank {r}\n");
        for _ in 0..2 {
            s += "compute 2us\n";
            let mut req = 0;
            for (tag, (d, sign)) in [(0, 1), (0, -1), (1, 1), (1, -1), (2, 1), (2, -1)]
                .into_iter()
                .enumerate()
            {
                let peer = |step: i32| {
                    let mut p = c;
                    p[d] += step;
                    (0..2).contains(&p[d]).then(|| p[0] + 2 * p[1] + 4 * p[2])
                };
                if let Some(src) = peer(-sign) {
                    s += &format!("irecv {src} 2KiB req={req} tag={tag}\n");
                    req += 1;
                }
                if let Some(dst) = peer(sign) {
                    s += &format!("isend {dst} 2KiB req={req} tag={tag}\n");
                    req += 1;
                }
            }
            let reqs: Vec<String> = (0..req).map(|q| q.to_string()).collect();
            s += &format!("waitall {}\nallreduce 16\n", reqs.join(" "));
        }
    }
    same_run(
        &torus("[2,2,2]"),
        "motif:bsp",
        8,
        &["iterations=2", "size=2KiB", "compute=2us", "reduce=16"],
        &s,
    );
}

#[test]
fn a_motif_with_collectives_holds_one_call_per_rank_and_iteration() {
    // Its skeleton (linked before the run) is one operation per rank and call; the calls
    // themselves are recorded once for every rank and iteration.
    let p = motif::program("motif:fft", Some(16), &args(&["iterations=1000"])).unwrap();
    assert_eq!(p.total_ops(), 16 * (2 + 2 * 1000));
    assert_eq!(p.coll_calls.len(), 2);
    let m = torus("[4,4]");
    let res = simulate(
        &m,
        motif::program("motif:fft", Some(16), &args(&["iterations=3"])).unwrap(),
    )
    .unwrap();
    // Two splits on the world, then per iteration one alltoall on each of the 4 rows and
    // 4 columns; the second split's communicators are named apart from the first's.
    assert_eq!(res.collectives.len(), 2 + 3 * 8);
    assert_eq!(
        res.collectives
            .iter()
            .filter(|c| c.comm.starts_with("split #2 of world"))
            .count(),
        3 * 4
    );
}

#[test]
fn memory_does_not_grow_with_iterations() {
    // A million iterations make a program of no operations before the run.
    let p: Program =
        motif::program("motif:halo3d", Some(8), &args(&["iterations=1000000"])).unwrap();
    assert_eq!(p.total_ops(), 0);
    assert!(p.stream.is_some());
}

#[test]
fn bad_parameters_are_located_errors() {
    let err = |spec: &str, ranks: Option<u32>, a: &[&str]| -> String {
        let e = motif::program(spec, ranks, &args(a)).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        e.to_string()
    };
    assert!(err("motif:halo3d", Some(64), &["dims=4x4x2"])
        .contains("field `dims`: dims 4x4x2 hold 32 ranks, not the 64 of the run"));
    assert!(err("motif:halo3d", Some(8), &["dims=2x4"]).contains("expected 3 dimensions"));
    assert!(err("motif:hallo2d", Some(4), &[]).contains("did you mean `halo2d`"));
    assert!(err("motif:ring", Some(4), &["size=lots"]).contains("field `size`"));
    assert!(
        err("motif:ring", Some(4), &["corners=true"]).contains("ring has no parameter `corners`")
    );
    assert!(err("motif:ring", Some(4), &["iterations"]).contains("NAME=VALUE"));
    assert!(err("motif:incast", Some(4), &["root=4"]).contains("root 4 is not one of the 4 ranks"));
    assert!(err("motif:ring", None, &[]).contains("--ranks"));
    assert!(err("motif:halo2d", Some(4), &["blocking=maybe"]).contains("expected true or false"));
    assert!(err("motif:fft", Some(8), &["dims=4x4"]).contains("hold 16 ranks, not the 8"));
    assert!(err("motif:allreduce", Some(8), &["algo=a b"]).contains("expected an algorithm name"));
    assert!(err("motif:bsp", Some(8), &["algo=ring"]).contains("bsp has no parameter `algo`"));
    // An algorithm the collective does not have is found when the calls are linked.
    let m = torus("[2,2]");
    let p = motif::program("motif:allreduce", Some(4), &args(&["algo=ringo"])).unwrap();
    let e = simulate(&m, p).unwrap_err().to_string();
    assert!(
        e.contains("motif:allreduce:1: field `algo`: unknown allreduce algorithm 'ringo'"),
        "{e}"
    );
}
