//! `repeat N { ... }` blocks of the schedule format (docs/schedule-format.md#loops): a
//! program with loops runs exactly as the same program written out, holds its loop bodies
//! once, is written back with its loops, and its bad loops are located errors.

use acesim::frontends::schedule;
use acesim::{simulate, MachineSource, Results};

fn torus() -> acesim::Machine {
    MachineSource::open("table1")
        .unwrap()
        .with_overrides(&[
            "topology.kind=\"torus\"".into(),
            "topology.dims=[2,2]".into(),
        ])
        .load()
        .unwrap()
}

/// What two runs must share: the time, the events, every message and every collective.
fn same(x: &Results, y: &Results) {
    assert_eq!(x.predicted_time_ps, y.predicted_time_ps);
    assert_eq!(x.events, y.events);
    let ops = |r: &Results| -> Vec<_> {
        (0..r.operations.len())
            .map(|i| {
                let o = r.operations.row(i);
                (o.src, o.dst, o.size, o.issue_ps, o.complete_ps)
            })
            .collect()
    };
    assert_eq!(ops(x), ops(y));
    let colls = |r: &Results| -> Vec<_> {
        r.collectives
            .iter()
            .map(|c| (c.kind.clone(), c.start_ps, c.end_ps))
            .collect()
    };
    assert_eq!(colls(x), colls(y));
}

/// Rank `r`'s body: a ring exchange, a nested loop of compute, a region and an allreduce.
fn body(r: u32, inner: &str) -> String {
    format!(
        "region_begin step\nirecv {} 8KiB req=a\nisend {} 8KiB req=b\nwaitall a b\n{inner}allreduce 64\nregion_end step\n",
        (r + 3) % 4,
        (r + 1) % 4
    )
}

#[test]
fn a_loop_runs_as_its_body_written_out() {
    let (mut looped, mut flat) = (String::from("ranks 4\n"), String::from("ranks 4\n"));
    for r in 0..4 {
        looped += &format!(
            "rank {r}\ncompute 1us\nrepeat 5 {{\n{}}}\nrepeat 0 {{\ncompute 1s\n}}\n",
            body(r, "repeat 2 {\ncompute 300ns\n}\n")
        );
        flat += &format!("rank {r}\ncompute 1us\n");
        for _ in 0..5 {
            flat += &body(r, "compute 300ns\ncompute 300ns\n");
        }
    }
    let m = torus();
    let p = schedule::parse("loop.sched", &looped).unwrap();
    // Before the run a rank holds its collective calls only.
    assert_eq!(p.total_ops(), 4 * 5);
    let x = simulate(&m, p).unwrap();
    let y = simulate(&m, schedule::parse("flat.sched", &flat).unwrap()).unwrap();
    same(&x, &y);
    assert_eq!(x.collectives.len(), 5);
    // Written back, the loops stay loops, and the text runs the same.
    let text = schedule::write(&schedule::parse("loop.sched", &looped).unwrap()).unwrap();
    assert_eq!(text.matches("repeat ").count(), 4 * 3, "{text}");
    let z = simulate(&m, schedule::parse("written.sched", &text).unwrap()).unwrap();
    same(&x, &z);
}

#[test]
fn a_million_iterations_hold_one_body() {
    let mut s = String::from("ranks 2\n");
    for r in 0..2 {
        s += &format!(
            "rank {r}\nrepeat 1000000 {{\nsend {0} 8 tag=1\nrecv {0} 8 tag=1\n}}\n",
            1 - r
        );
    }
    let p = schedule::parse("big.sched", &s).unwrap();
    assert_eq!(p.total_ops(), 0, "no collective: an empty skeleton");
    assert!(p.stream.is_some());
    // An empty loop is skipped however many times it would run.
    let e = "ranks 1\nrank 0\nrepeat 1000000000000 {\nrepeat 5 {\n}\n}\ncompute 1us\n";
    let r = simulate(&torus(), schedule::parse("empty.sched", e).unwrap()).unwrap();
    assert_eq!(r.predicted_time_ps, 1_000_000);
}

#[test]
fn bad_loops_are_located_errors() {
    let err = |text: &str| -> String {
        let e = schedule::parse("bad.sched", text).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        e.to_string()
    };
    let one = |body: &str| err(&format!("ranks 2\nrank 0\n{body}rank 1\n"));
    assert!(one("repeat 3 {\ncompute 1us\n")
        .contains("bad.sched:3:1: field `repeat`: rank 0: `repeat 3 {` is never closed"));
    assert!(one("}\n").contains("bad.sched:3:1: field `repeat`: `}` without a `repeat N {`"));
    assert!(one("repeat x {\n}\n").contains("3:8: field `repeat`: 'x' is not a whole number"));
    assert!(one("repeat 3\n}\n").contains("expected `repeat N {`"));
    assert!(one("repeat 3 {\nisend 1 8 req=a\n}\nwait a\n")
        .contains("bad.sched:4:1: field `request`: rank 0: request 'a' is made in the `repeat` at line 3 but not waited for in it"));
    assert!(one("isend 1 8 req=a\nrepeat 3 {\nwait a\n}\n")
        .contains("bad.sched:5:6: field `request`: request 'a' was made at line 3, before the `repeat` at line 4"));
    assert!(one("repeat 3 {\ncomm_split 0 0 as=c\n}\n")
        .contains("comm_split inside the `repeat` at line 3: communicators are made once"));
    assert!(
        one("repeat 2 {\nregion_begin x\n}\nregion_end x\n").contains("region x is never closed")
    );
}
