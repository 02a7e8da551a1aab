//! MPI semantics, protocols, collectives and several ranks per node, against hand-computed
//! expectations.

use acesim::frontends::schedule;
use acesim::program::collectives::{self, CollKind, CollSpec, Step, Transport};
use acesim::program::OpKind;
use acesim::units::{transfer_time, Ps};
use acesim::{simulate, Error, Machine, MachineSource, Results};

const TABLE1: &str = include_str!("../presets/table1.toml");
const L: Ps = 600;
const D: Ps = 140_000;
const B: u64 = 4_000_000_000;
const DMA: u64 = 2_800_000_000;

fn machine(toml: &str, sets: &[&str]) -> Machine {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    MachineSource::from_text("m.toml", toml)
        .with_overrides(&sets)
        .load()
        .expect("machine loads")
}

fn run(m: &Machine, sched: &str) -> Results {
    simulate(
        m,
        schedule::parse("t.sched", sched).expect("schedule parses"),
    )
    .expect("run finishes")
}

fn run_err(m: &Machine, sched: &str) -> String {
    match simulate(
        m,
        schedule::parse("t.sched", sched).expect("schedule parses"),
    ) {
        Ok(r) => panic!(
            "expected an error, the run finished at {}",
            r.predicted_time_ps
        ),
        Err(e) => e.to_string(),
    }
}

/// One message of `s` bytes over one crossbar router: DMA out, flight, DMA in.
fn one_way(s: u64) -> Ps {
    2 * transfer_time(s, DMA) + 2 * L + D + transfer_time(s + 32, B)
}

/// A control packet over one crossbar router.
fn control() -> Ps {
    2 * L + D + transfer_time(32, B)
}

#[test]
fn eager_ping_pong_latency() {
    let m = machine(
        TABLE1,
        &["mpi.send_overhead=500ns", "mpi.recv_overhead=300ns"],
    );
    let mut sched = String::from("ranks 2\nrank 0\n");
    sched += &"send 1 8 tag=1\nrecv 1 8 tag=2\n".repeat(10);
    sched += "rank 1\n";
    sched += &"recv 0 8 tag=1\nsend 0 8 tag=2\n".repeat(10);
    let res = run(&m, &sched);
    let round_trip = 2 * (500_000 + one_way(8) + 300_000);
    assert_eq!(res.per_rank[0].finish_ps, 10 * round_trip);
    assert_eq!(res.per_rank[0].overhead_ps, 10 * 500_000);
    assert_eq!(res.receives.len(), 20);
    assert!(res.receives.iter().all(|r| r.protocol == Some("eager")));
    // Rank 1 only sends and receives: its time is overhead plus time blocked in each. A
    // blocking send waits for its 8 bytes to be DMA'd out.
    let r1 = &res.per_rank[1];
    assert_eq!(r1.blocked_ps["send"], 10 * transfer_time(8, DMA));
    assert_eq!(
        r1.overhead_ps + r1.blocked_ps["send"] + r1.blocked_ps["recv"],
        r1.finish_ps
    );
}

#[test]
fn rendezvous_adds_exactly_its_control_round_trip() {
    let size = 100_000u64;
    let sched = format!("ranks 2\nrank 0\nsend 1 {size} tag=3\nrank 1\nrecv 0 {size} tag=3\n");
    let eager = run(&machine(TABLE1, &["mpi.eager_threshold=1MB"]), &sched);
    let rdv = run(&machine(TABLE1, &["mpi.eager_threshold=16KiB"]), &sched);
    assert_eq!(eager.receives.row(0).protocol, Some("eager"));
    assert_eq!(rdv.receives.row(0).protocol, Some("rendezvous"));
    let done = |r: &Results| r.receives.row(0).complete_ps.unwrap();
    // Request-to-send to the receiver, then its get request back: two control flights.
    assert_eq!(done(&rdv) - done(&eager), 2 * control());
    assert_eq!(rdv.operations.row(0).dma_start_ps, Some(2 * control()));
    // The sender is done when its data has left memory.
    assert_eq!(
        rdv.per_rank[0].finish_ps - eager.per_rank[0].finish_ps,
        2 * control()
    );
}

#[test]
fn a_late_receive_releases_rendezvous_data() {
    // The receive is posted 10 us late: the data moves only after it.
    let m = machine(TABLE1, &[]);
    let size = 64 * 1024u64;
    let res = run(
        &m,
        &format!("ranks 2\nrank 0\nsend 1 {size}\nrank 1\ncompute 10us\nrecv 0 {size}\n"),
    );
    assert_eq!(
        res.operations.row(0).dma_start_ps,
        Some(10_000_000 + control())
    );
    // An eager message instead waits in the unexpected queue and completes at the post.
    let small = run(
        &m,
        "ranks 2\nrank 0\nsend 1 64\nrank 1\ncompute 10us\nrecv 0 64\n",
    );
    assert_eq!(small.receives.row(0).complete_ps, Some(10_000_000));
    assert!(small.receives.row(0).landed_ps.unwrap() < 10_000_000);
}

#[test]
fn any_source_matches_in_arrival_order_and_posting_order() {
    let m = machine(TABLE1, &[]);
    // Rank 1's message arrives first (rank 0 computes 5 us first).
    let sched = "ranks 3\nrank 0\ncompute 5us\nsend 2 8 tag=7\nrank 1\nsend 2 8 tag=7\nrank 2\nirecv any 8 tag=7 req=a\nirecv any 8 tag=any req=b\nwaitall a b\n";
    let res = run(&m, sched);
    let first = &res.receives.row(0);
    let second = &res.receives.row(1);
    assert_eq!((first.src, second.src), (Some(1), Some(0)));
    assert_eq!(first.complete_ps, Some(one_way(8)));
    assert_eq!(second.complete_ps, Some(5_000_000 + one_way(8)));
}

#[test]
fn messages_between_two_ranks_do_not_overtake() {
    // An eager 16 KB message and then a rendezvous one: the second's request-to-send reaches
    // the receiver long before the first's data has landed, yet the first receive gets the
    // first message.
    let m = machine(TABLE1, &[]);
    let sched = "ranks 2\nrank 0\nisend 1 16KB tag=5 req=a\nisend 1 1MB tag=5 req=b\nwaitall a b\nrank 1\nirecv 0 1MB tag=5 req=x\nirecv 0 1MB tag=5 req=y\nwaitall x y\n";
    let res = run(&m, sched);
    assert_eq!(res.receives.row(0).size, Some(16_000));
    assert_eq!(res.receives.row(1).size, Some(1_000_000));
    assert_eq!(res.receives.row(1).protocol, Some("rendezvous"));
    // The pair's order is kept across quiet spells: once every message sent has arrived
    // its counts start again, and the next burst is ordered the same way (three bursts,
    // the first two separated by a barrier, the last by a compute).
    let burst =
        |i| format!("isend 1 16KB tag=5 req=a{i}\nisend 1 1MB tag=5 req=b{i}\nwaitall a{i} b{i}\n");
    let recvs =
        |i| format!("irecv 0 1MB tag=5 req=x{i}\nirecv 0 1MB tag=5 req=y{i}\nwaitall x{i} y{i}\n");
    let sched = format!(
        "ranks 2\nrank 0\n{}barrier\n{}compute 5us\n{}rank 1\n{}barrier\n{}{}",
        burst(0),
        burst(1),
        burst(2),
        recvs(0),
        recvs(1),
        recvs(2)
    );
    let res = run(&m, &sched);
    let sizes: Vec<Option<u64>> = res.receives.iter().map(|r| r.size).collect();
    assert_eq!(sizes, [Some(16_000), Some(1_000_000)].repeat(3));
}

#[test]
fn zero_byte_messages_and_self_messages_work() {
    let m = machine(TABLE1, &[]);
    let res = run(
        &m,
        "ranks 2\nrank 0\nsend 1 0\nsend 0 0\nrecv 0 0\nrank 1\nrecv 0 0\n",
    );
    assert_eq!(res.receives.len(), 2);
    let at = |rank| {
        res.receives
            .iter()
            .find(|r| r.rank == rank)
            .unwrap()
            .complete_ps
    };
    assert_eq!(at(1), Some(one_way(0)));
    // To itself a zero-byte message moves through the DMA engines in no time.
    assert_eq!(at(0), Some(0));
}

#[test]
fn communicators_split_translate_ranks_and_isolate_messages() {
    let m = machine(TABLE1, &[]);
    // Split 4 ranks into evens and odds (key reverses the order among odds).
    let mut sched = String::from("ranks 4\n");
    for r in 0..4 {
        let key = if r % 2 == 1 { 10 - r } else { r };
        sched += &format!("rank {r}\ncomm_split {} {key} as=half\n", r % 2);
        // Rank 0 of each half sends to rank 1 of its half.
        sched += "allreduce 8 comm=half\n";
    }
    // Ranks 0 and 2 are half-ranks 0 and 1 of evens; ranks 3 and 1 are 0 and 1 of odds.
    sched = sched.replace(
        "rank 0\ncomm_split 0 0 as=half\nallreduce 8 comm=half\n",
        "rank 0\ncomm_split 0 0 as=half\nallreduce 8 comm=half\nsend 1 8 comm=half tag=4\n",
    );
    sched = sched.replace(
        "rank 2\ncomm_split 0 2 as=half\nallreduce 8 comm=half\n",
        "rank 2\ncomm_split 0 2 as=half\nallreduce 8 comm=half\nrecv 0 8 comm=half tag=4\n",
    );
    let res = run(&m, &sched);
    assert_eq!(
        res.receives
            .iter()
            .filter(|r| r.rank == 2)
            .map(|r| r.src)
            .collect::<Vec<_>>(),
        vec![Some(0)]
    );
    let ar: Vec<_> = res
        .collectives
        .iter()
        .filter(|c| c.kind == "allreduce")
        .collect();
    assert_eq!(ar.len(), 2);
    assert!(ar.iter().all(|c| c.ranks == 2));
    assert!(
        res.collectives
            .iter()
            .any(|c| c.kind == "allgather" && c.size == 8 && c.ranks == 4),
        "comm_split costs an allgather"
    );
    // A message on the world communicator does not match a receive on the split one.
    let cross = "ranks 2\nrank 0\ncomm_split 0 0 as=c\nsend 1 8\nrank 1\ncomm_split 0 0 as=c\nrecv 0 8 comm=c\n";
    let err = run_err(&m, cross);
    assert!(
        err.contains("rank 1: `recv 0 8 tag=0`") && err.contains("on split of world (color 0)"),
        "{err}"
    );
}

/// Messages and bytes sent by a collective, as the symbolic expansion says.
fn expected(kind: CollKind, algo: &str, p: u32, size: u64) -> (usize, u64) {
    let spec = CollSpec {
        kind,
        algorithm: algo.into(),
        transport: Transport::Msg,
        size,
        root: 0,
        segment: 64 * 1024,
    };
    let mut n = 0;
    let mut bytes = 0;
    for me in 0..p {
        for s in collectives::expand(&spec, algo, p, me) {
            if let Step::Send { bytes: b, .. } = s {
                n += 1;
                bytes += b;
            }
        }
    }
    (n, bytes)
}

#[test]
fn every_collective_runs_with_its_message_count_and_volume() {
    let m = machine(TABLE1, &["collectives.reduce_time_per_byte=1ns"]);
    let kinds = [
        CollKind::Barrier,
        CollKind::Bcast,
        CollKind::Reduce,
        CollKind::Allreduce,
        CollKind::Alltoall,
        CollKind::Allgather,
        CollKind::Gather,
        CollKind::Scatter,
    ];
    for p in [7u32, 8, 9] {
        for kind in kinds {
            for &algo in kind.algorithms() {
                let size = 3000u64;
                let spec = CollSpec {
                    kind,
                    algorithm: algo.into(),
                    transport: Transport::Msg,
                    size,
                    root: 0,
                    segment: 1024,
                };
                if collectives::resolve(&spec, p).is_err() {
                    continue; // e.g. pairwise on 7 ranks
                }
                let size_arg = if kind == CollKind::Barrier {
                    String::new()
                } else {
                    format!(" {size}")
                };
                let mut sched = format!("ranks {p}\n");
                for r in 0..p {
                    sched += &format!(
                        "rank {r}\n{}{size_arg} algo={algo} segment=1024\n",
                        kind.name()
                    );
                }
                let res = run(&m, &sched);
                let spec_seg = |s: CollSpec| CollSpec { segment: 1024, ..s };
                let (n, bytes) = {
                    let spec = spec_seg(spec.clone());
                    let mut n = 0;
                    let mut b = 0;
                    for me in 0..p {
                        for s in collectives::expand(&spec, algo, p, me) {
                            if let Step::Send { bytes, .. } = s {
                                n += 1;
                                b += bytes;
                            }
                        }
                    }
                    (n, b)
                };
                // The collective's steps are summarised on its record, not listed as operations.
                assert!(res.operations.is_empty());
                assert_eq!(
                    res.collectives[0].messages as usize,
                    n,
                    "{} {algo} p={p}: messages",
                    kind.name()
                );
                assert_eq!(
                    res.collectives[0].bytes,
                    bytes,
                    "{} {algo} p={p}: bytes",
                    kind.name()
                );
                assert_eq!(res.collectives.len(), 1);
                assert_eq!(res.collectives[0].algorithm, algo);
                assert_eq!(res.collectives[0].ranks, p);
                assert!(res.unmatched_messages.is_empty());
            }
        }
    }
    // Hand formulas for a few: alltoall pairwise p(p-1) messages of `size`; bcast binomial p-1.
    assert_eq!(expected(CollKind::Alltoall, "pairwise", 8, 100), (56, 5600));
    assert_eq!(expected(CollKind::Bcast, "binomial", 9, 100), (8, 800));
    assert_eq!(expected(CollKind::Allgather, "ring", 5, 10), (20, 200));
}

#[test]
fn recursive_doubling_barrier_needs_extra_steps_off_powers_of_two() {
    let m = machine(TABLE1, &["node.overhead=0.6us"]);
    let barrier = |p: u32, transport: &str| {
        let mut s = format!("ranks {p}\n");
        for r in 0..p {
            s += &format!("rank {r}\nbarrier algo=recursive_doubling transport={transport}\n");
        }
        run(&m, &s)
    };
    for transport in ["msg", "rdma"] {
        let p8 = barrier(8, transport);
        let p9 = barrier(9, transport);
        let count = |r: &Results| r.collectives[0].messages as usize;
        // p = 2^n: n exchanges per rank. p = 2^n + r: 2r extra messages.
        assert_eq!(count(&p8), 8 * 3, "{transport}");
        assert_eq!(count(&p9), 8 * 3 + 2, "{transport}");
        // The extra steps cost two more latencies: 9 ranks are slower than 8 and 16.
        let p16 = barrier(16, transport);
        assert!(p9.predicted_time_ps > p8.predicted_time_ps);
        assert!(
            p9.predicted_time_ps > p16.predicted_time_ps,
            "{transport}: 9 ranks {} vs 16 ranks {}",
            p9.predicted_time_ps,
            p16.predicted_time_ps
        );
    }
}

#[test]
fn mismatched_collectives_are_refused_before_running() {
    let m = machine(TABLE1, &[]);
    let err = run_err(
        &m,
        "ranks 2\nrank 0\nbarrier @a.c:3\nrank 1\nallreduce 8 @a.c:5\n",
    );
    assert!(err.contains("a.c:5: field `collective`: mismatched collective calls on world: call #1 is `allreduce 8 B` on rank 1 but `barrier` on rank 0 (a.c:3)"), "{err}");
    let err = run_err(
        &m,
        "ranks 2\nrank 0\nbcast 8 root=0\nrank 1\nbcast 16 root=0\n",
    );
    assert!(err.contains("mismatched collective calls"), "{err}");
    let err = run_err(&m, "ranks 2\nrank 0\nbarrier\nbarrier\nrank 1\nbarrier\n");
    assert!(
        err.contains("rank 0 makes 2 calls but rank 1 makes 1"),
        "{err}"
    );
    let all6: String = (0..6)
        .map(|r| format!("rank {r}\nalltoall 8 algo=pairwise\n"))
        .collect();
    let err = run_err(&m, &format!("ranks 6\n{all6}"));
    assert!(err.contains("power-of-two"), "{err}");
    // An unknown algorithm name is refused when the machine is loaded.
    let err = MachineSource::from_text("m.toml", TABLE1)
        .with_overrides(&["collectives.barrier=rign".to_string()])
        .load()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("command line: field `collectives.barrier`")
            && err.contains("unknown barrier algorithm 'rign'"),
        "{err}"
    );
    let err = run_err(
        &m,
        "ranks 2\nrank 0\nbcast 8 root=5\nrank 1\nbcast 8 root=5\n",
    );
    assert!(err.contains("root 5 is out of range"), "{err}");
}

#[test]
fn messages_never_received_are_reported_with_counts() {
    let m = machine(TABLE1, &[]);
    let res = run(
        &m,
        "ranks 2\nrank 0\nsend 1 8 tag=1\nsend 1 8 tag=1\nsend 1 8 tag=2\nrank 1\n",
    );
    assert_eq!(res.unmatched_messages, vec![(0, 1, 1, 2), (0, 1, 2, 1)]);
    assert!(res
        .summary()
        .contains("warning: 3 messages were never received"));
    // A rendezvous send nobody receives can never finish.
    let err = run_err(&m, "ranks 2\nrank 0\nsend 1 1MB\nrank 1\n");
    assert!(
        err.contains("rank 0: `send 1 1000000 tag=0`")
            && err.contains("a receive matching its 1000000 B message to rank 1 (rendezvous)"),
        "{err}"
    );
}

#[test]
fn ranks_sharing_a_node_share_its_dma_engines() {
    // Two ranks per node: ranks 0 and 1 on node 0, ranks 2 and 3 on node 1.
    let m = machine(TABLE1, &["placement.ranks_per_node=2"]);
    let size = 1_000_000u64;
    // Same node: through the DMA engines only, no link carries a byte.
    let local = run(
        &m,
        &format!("ranks 2\nrank 0\nput 1 {size} handle=a\ncomplete a\nrank 1\n"),
    );
    assert!(local.links.iter().all(|l| l.bytes == 0));
    assert_eq!(local.per_rank[1].node, 0);
    // Ranks 0 and 1 both put to node 1: one NIC, one send DMA engine, FIFO.
    let res = run(
        &m,
        &format!("ranks 4\nrank 0\nput 2 {size}\nrank 1\nput 3 {size}\n"),
    );
    let (a, b) = (&res.operations.row(0), &res.operations.row(1));
    let packets = size.div_ceil(2016);
    let dma_all =
        (packets - 1) * transfer_time(2016, DMA) + transfer_time(size - (packets - 1) * 2016, DMA);
    assert_eq!(b.dma_start_ps, Some(a.dma_start_ps.unwrap() + dma_all));
    // With two NICs per node each rank has its own engine and they run side by side.
    let two = machine(
        TABLE1,
        &[
            "placement.ranks_per_node=2",
            "nic.count=2",
            "nic.selection=by_rank",
        ],
    );
    let res = run(
        &two,
        &format!("ranks 4\nrank 0\nput 2 {size}\nrank 1\nput 3 {size}\n"),
    );
    assert_eq!(
        res.operations.row(0).dma_start_ps,
        res.operations.row(1).dma_start_ps
    );
    // Cyclic placement puts ranks 0 and 1 on different nodes.
    let cyc = machine(
        TABLE1,
        &["placement.ranks_per_node=2", "placement.policy=cyclic"],
    );
    let res = run(&cyc, "ranks 4\nrank 0\nput 1 8\n");
    assert_eq!(
        res.per_rank.iter().map(|r| r.node).collect::<Vec<_>>(),
        vec![0, 1, 0, 1]
    );
    assert!(res.links.iter().any(|l| l.bytes > 0));
}

#[test]
fn waitany_returns_at_the_first_completion_and_test_never_blocks() {
    let m = machine(TABLE1, &[]);
    let sched = "ranks 3\nrank 0\nirecv 1 8 req=a\nirecv 2 8 req=b\ntest a\nwaitany a b\nrank 1\ncompute 1us\nsend 0 8\nrank 2\nsend 0 8\n";
    let res = run(&m, sched);
    // Rank 0 leaves waitany when rank 2's message is in, before rank 1's.
    assert_eq!(res.per_rank[0].finish_ps, one_way(8));
    // The run still ends when every receive has completed.
    assert_eq!(res.predicted_time_ps, 1_000_000 + one_way(8));
}

#[test]
fn mpi_errors_point_at_the_line() {
    let e = |s: &str| schedule::parse("t.sched", s).unwrap_err().to_string();
    assert!(e("ranks 2\nrank 0\nwait r\n")
        .contains("t.sched:3:6: field `request`: request 'r' was not created"));
    assert!(e("ranks 2\nrank 0\nisend 1 8\n").contains("needs a request name"));
    assert!(
        e("ranks 2\nrank 0\nsend 1 8 comm=rows\n").contains("communicator 'rows' was not created")
    );
    assert!(
        e("ranks 2\nrank 0\nbarrier transport=carrier\n").contains("unknown transport 'carrier'")
    );
    assert!(e("ranks 2\nrank 0\ncomm_split red 0 as=x\n").contains("'red' is not a color"));
    let m = machine(TABLE1, &[]);
    let err = run_err(&m, "ranks 4\nrank 0\ncomm_split 0 0 as=h\nsend 3 8 comm=h\nrank 1\ncomm_split 1 0 as=h\nrank 2\ncomm_split 0 0 as=h\nrank 3\ncomm_split 1 0 as=h\n");
    assert!(
        err.contains(
            "t.sched:4: field `dst`: rank 3 is out of range: the communicator has 2 ranks"
        ),
        "{err}"
    );
    let _ = Error::Internal(String::new());
}

/// The barrier study (examples/barriers): put-based barriers on `table1`.
fn barrier_time(p: u32, algo: &str, latency: &str) -> Ps {
    let m = machine(TABLE1, &[&format!("node.overhead={latency}")]);
    let mut s = format!("ranks {p}\n");
    for r in 0..p {
        s += &format!("rank {r}\nbarrier algo={algo} transport=rdma\n");
    }
    run(&m, &s).collectives[0].duration_ps
}

#[test]
fn barrier_study_reproduces_the_papers_findings() {
    for latency in ["0.6us", "0.8us"] {
        for p in [4u32, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65] {
            assert!(
                barrier_time(p, "recursive_doubling", latency) < barrier_time(p, "ring", latency),
                "recursive doubling beats ring at p = {p}, {latency}"
            );
        }
        for p in [4u32, 8, 16, 32, 64] {
            let at = barrier_time(p, "recursive_doubling", latency);
            assert!(
                at < barrier_time(p - 1, "recursive_doubling", latency),
                "p = {p} vs {}",
                p - 1
            );
            assert!(
                at < barrier_time(p + 1, "recursive_doubling", latency),
                "p = {p} vs {}",
                p + 1
            );
        }
        // A higher node latency makes every barrier slower.
        assert!(barrier_time(16, "ring", "0.8us") > barrier_time(16, "ring", "0.6us"));
    }
}

fn deadlock(m: &Machine, sched: &str) -> acesim::error::DeadlockReport {
    match simulate(m, schedule::parse("t.sched", sched).expect("parses")) {
        Err(Error::Deadlock(r)) => *r,
        Err(e) => panic!("expected a deadlock, got {e}"),
        Ok(r) => panic!("expected a deadlock, finished at {}", r.predicted_time_ps),
    }
}

#[test]
fn deadlock_reports_name_the_cycle_of_ranks_waiting_for_each_other() {
    let m = machine(TABLE1, &[]);
    // 0 -> 2 -> 1 -> 0 wait in a circle; rank 3 waits on rank 0 but is not in the circle.
    let r = deadlock(
        &m,
        "ranks 4\nrank 0\nrecv 2 8 tag=1\nrank 1\nrecv 0 8\nrank 2\nrecv 1 8\nrank 3\nrecv 0 8 tag=9\n",
    );
    assert_eq!(r.blocked.len(), 4);
    assert_eq!(r.cycle, Some(vec![0, 2, 1]));
    let text = r.to_string();
    assert!(
        text.contains("cycle: rank 0 -> rank 2 -> rank 1 -> rank 0"),
        "{text}"
    );
    assert!(
        text.contains("rank 3: `recv 0 8 tag=9` at t.sched:9"),
        "{text}"
    );
    // A rendezvous send waits for its receiver: two large blocking sends face each other.
    let big = "ranks 2\nrank 0\nsend 1 1MB\nrecv 1 1MB\nrank 1\nsend 0 1MB\nrecv 0 1MB\n";
    let r = deadlock(&m, big);
    assert_eq!(r.cycle, Some(vec![0, 1]));
    // Waiting for a put that nobody sends has no cycle to report.
    let r = deadlock(&m, "ranks 2\nrank 0\npoll 7\nrank 1\ncompute 1us\n");
    assert_eq!(r.cycle, None);
    assert!(r.to_string().contains("tag 7"));
    // ANY_SOURCE can be satisfied by anyone: no cycle through it.
    let r = deadlock(&m, "ranks 2\nrank 0\nrecv any 8\nrank 1\nrecv 0 8\n");
    assert_eq!(r.cycle, None);
    // A poll inside an RDMA barrier waits for a put of the peer's own barrier, which comes
    // later in the peer's program (its steps are not generated yet): named, and the circle
    // closed through it.
    let r = deadlock(
        &m,
        "ranks 2\nrank 0\nbarrier transport=rdma\nrecv 1 8 tag=1\nrank 1\nrecv 0 8 tag=1\nbarrier transport=rdma\n",
    );
    let text = r.to_string();
    assert!(
        text.contains("that rank 1 issues only later in its program, at t.sched:7"),
        "{text}"
    );
    assert_eq!(r.cycle, Some(vec![0, 1]));
}

#[test]
fn ranks_that_end_with_pending_requests_are_reported() {
    let m = machine(TABLE1, &[]);
    let r = run(
        &m,
        "ranks 3\nrank 0\nirecv 1 8 tag=1 req=a\nirecv 2 8 tag=2 req=b\nrank 1\ncompute 1us\nrank 2\nsend 0 8 tag=2\n",
    );
    assert_eq!(r.unfinished_requests.len(), 1);
    let u = &r.unfinished_requests[0];
    assert_eq!((u.rank, u.count), (0, 2));
    assert!(u.first.contains("from rank 1 with tag 1"), "{}", u.first);
    assert!(r
        .summary()
        .contains("warning: 1 rank finished with 2 requests pending"));
    // Waiting for them clears the warning.
    let r = run(
        &m,
        "ranks 2\nrank 0\nirecv 1 8 tag=1 req=a\nwait a\nrank 1\nsend 0 8 tag=1\n",
    );
    assert!(r.unfinished_requests.is_empty());
}

#[test]
fn finished_collective_steps_give_their_records_back_and_user_records_keep_their_order() {
    // 300 collectives (ring allreduces of eager and rendezvous sizes, and barriers by
    // puts) on 8 ranks, with a user message from rank 0 to rank 1 after each: the runtime
    // holds the program's own transfers and the steps in flight, not every step of every
    // call.
    let m = machine(TABLE1, &[]);
    let (p, calls) = (8u32, 300u32);
    let mut sched = format!("ranks {p}\n");
    for r in 0..p {
        sched += &format!("rank {r}\n");
        for i in 0..calls {
            let size = [64, 200_000, 4096][i as usize % 3];
            if i % 5 == 0 {
                sched += "barrier algo=recursive_doubling transport=rdma\n";
            } else {
                sched += &format!("allreduce {size} algo=ring\n");
            }
            match r {
                0 => sched += &format!("send 1 {} tag={i}\n", 8 + i),
                1 => sched += &format!("recv 0 {} tag={i}\n", 8 + i),
                _ => {}
            }
        }
    }
    let res = run(&m, &sched);
    assert_eq!(res.collectives.len(), calls as usize);
    // Ring allreduce: 2 (p - 1) messages per rank; recursive doubling on 8 ranks: 3 puts.
    let per_call = 2 * (p as u64 - 1) * p as u64;
    for (i, c) in res.collectives.iter().enumerate() {
        let want = if i % 5 == 0 { 3 * p as u64 } else { per_call };
        assert_eq!(c.messages, want, "call {i} ({})", c.kind);
    }
    assert!(
        res.transfer_records <= calls as usize + 2 * per_call as usize,
        "{} records held for {} user messages and {per_call} steps a call",
        res.transfer_records,
        calls
    );
    // The user's messages and receives are all there, in issue and posting order, with
    // what they matched.
    assert_eq!(res.operations.len(), calls as usize);
    assert_eq!(res.receives.len(), calls as usize);
    for (i, (op, rv)) in res.operations.iter().zip(res.receives.iter()).enumerate() {
        assert_eq!(
            (op.src, op.dst, op.tag, op.size),
            (0, 1, i as i64, 8 + i as u64)
        );
        assert_eq!(
            (rv.src, rv.tag, rv.size),
            (Some(0), Some(i as i64), Some(8 + i as u64))
        );
        assert!(rv.complete_ps.expect("received") >= op.landed_ps.expect("landed"));
    }
    assert!(res.unmatched_messages.is_empty());
}

#[test]
fn collectives_are_linked_not_expanded_before_the_run() {
    // 200 all-to-alls (simple spread: one isend, one irecv and a wait a round) and 100 ring
    // allreduces on 16 ranks: linking leaves one operation per call; the runtime generates
    // each call's steps round by round as a rank reaches them (15 rounds of two messages,
    // 30 for the ring), so a rank never holds a call's 45 operations at once, let alone
    // the program's 11,500.
    let p = 16u32;
    let mut sched = format!("ranks {p}\n");
    for r in 0..p {
        sched += &format!("rank {r}\n");
        for i in 0..300 {
            sched += if i % 3 == 2 {
                "allreduce 4096 algo=ring\n"
            } else {
                "alltoall 1024 algo=simple_spread\n"
            };
        }
    }
    let mut prog = schedule::parse("t.sched", &sched).expect("schedule parses");
    let config = acesim::program::collective_defaults::CollectivesConfig::default();
    acesim::program::link::link(&mut prog, &config).expect("links");
    for r in 0..p as usize {
        assert_eq!(prog.ops[r].len(), 300, "rank {r}");
        assert!(prog.ops[r]
            .iter()
            .all(|o| matches!(o.kind, OpKind::Collective { .. })));
        assert_eq!(prog.handles[r], 0, "rank {r}: no request of its own");
    }
    assert!(prog.req_lists.is_empty());
    // And the run is the same as with a handle per message: every message arrives.
    let res = simulate(&machine(TABLE1, &[]), prog).expect("run finishes");
    assert_eq!(res.collectives.len(), 300);
    let messages: u64 = res.collectives.iter().map(|c| c.messages).sum();
    assert_eq!(messages, 200 * 16 * 15 + 100 * 2 * 15 * 16);
    assert!(res.unmatched_messages.is_empty() && res.unfinished_requests.is_empty());
}

#[test]
fn progress_is_told_where_the_run_is_as_it_goes() {
    use acesim::run::progress::{Progress, Status};
    use acesim::run::simulate::{simulate_with, Options};
    use std::sync::{Arc, Mutex};
    // 16 ranks, 200 ring allreduces: some ten thousand events, reported every 4,096.
    let mut sched = "ranks 16\n".to_string();
    for r in 0..16 {
        sched += &format!("rank {r}\n{}", "allreduce 4096 algo=ring\n".repeat(200));
    }
    let prog = schedule::parse("t.sched", &sched).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = Arc::clone(&seen);
    let mut progress = Progress::new(move |s| s2.lock().unwrap().push(s));
    progress.every = std::time::Duration::ZERO;
    let options = Options {
        progress: Some(progress),
        ..Default::default()
    };
    let res = simulate_with(&machine(TABLE1, &[]), prog, &options).unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.len() as u64,
        res.events / 4096,
        "one report per 4,096 events"
    );
    let mut last = (0, 0, 0);
    for s in seen.iter() {
        let Status::Run {
            sim_ps,
            events,
            ranks_finished,
            ranks,
        } = *s
        else {
            panic!("{s:?}")
        };
        assert_eq!(ranks, 16);
        assert!(sim_ps <= res.predicted_time_ps);
        assert!(
            (sim_ps, events, ranks_finished) >= last,
            "{s:?} after {last:?}"
        );
        last = (sim_ps, events, ranks_finished);
    }
}

#[test]
fn a_stopped_run_does_not_give_calls_that_never_finished_a_mean_of_zero() {
    use acesim::run::simulate::{simulate_with, Options};
    let sched = "ranks 4\nrank 0\nbarrier\ncompute 10us\nallreduce 1024\nrank 1\nbarrier\ncompute 10us\nallreduce 1024\nrank 2\nbarrier\ncompute 10us\nallreduce 1024\nrank 3\nbarrier\ncompute 10us\nallreduce 1024\n";
    let prog = schedule::parse("t.sched", sched).unwrap();
    let options = Options {
        max_sim_time: Some(5_000_000),
        ..Default::default()
    };
    let res = simulate_with(&machine(TABLE1, &[]), prog, &options).unwrap();
    assert!(res.partial.is_some());
    let text = res.summary();
    assert!(
        text.contains(
            "allreduce (recursive_doubling): 1 calls, none finished when the run stopped"
        ),
        "{text}"
    );
    assert!(!text.contains("mean 0 ps"), "{text}");
    assert!(
        text.contains("barrier (recursive_doubling): 1 calls, mean"),
        "{text}"
    );
}
