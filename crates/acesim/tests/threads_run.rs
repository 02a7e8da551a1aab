//! Programs on several threads (`acesim run --threads N`): the machine split into blocks of
//! routers, each with the ranks on its nodes, gives the same results, byte for byte, as one
//! thread: puts, gets and polls, eager and rendezvous messages with wildcards, collectives
//! of every transport, several ranks and NICs per node, messages copied within a node,
//! GOAL, traced runs, runs stopped at a time limit, runs keeping no records, and deadlocks,
//! reported rank by rank as one thread reports them. Across processes too (`mpirun -np P
//! acesim run`), with the processes played by threads (`engine::LocalExchange`).

mod common;

use acesim::engine::{Exchange, LocalExchange};
use acesim::frontends::schedule;
use acesim::run::simulate::{simulate_with, Options};
use acesim::run::simulate_processes::simulate_across;
use acesim::{Machine, Program};
use common::{load, puts_text, workload};
use proptest::prelude::*;

/// Machines whose partitions cut links between ranks that talk.
const TORUS: &str = "[topology]\nkind='torus'\ndims=[4,4]\n[router]\nvcs=2\nbuffer_per_vc='2 KiB'\n[nic]\nmtu='1 KiB'";
const DRAGONFLY: &str = "[topology]\nkind='dragonfly'\np=2\na=3\nh=1\ng=4\n[router]\nrouting='ugal'\nvcs=3\nbuffer_per_vc='4 KiB'";
const FAT_TREE: &str =
    "[topology]\nkind='fat_tree'\nk=2\nn=4\n[router]\nbuffer_per_vc='1 KiB'\n[nic]\nmtu='512 B'";

fn parse(text: &str) -> Program {
    schedule::parse("t.sched", text).expect("schedule parses")
}

fn options(threads: u32) -> Options {
    Options {
        threads: Some(threads),
        check: true,
        ..Default::default()
    }
}

/// The run's JSON (without its wall time), or its error as text.
fn outcome(m: &Machine, p: &Program, o: &Options) -> String {
    match simulate_with(m, p.clone(), o) {
        Ok(mut r) => {
            r.wall_seconds = 0.0;
            r.to_json()
        }
        Err(e) => format!("error: {e}"),
    }
}

/// The outcome of a run across `n` processes (threads exchanging bytes as MPI processes
/// do): process 0's; the others return nothing, or the same input error.
fn outcome_across(m: &Machine, p: &Program, o: &Options, n: usize) -> String {
    let outcomes: Vec<acesim::Result<Option<acesim::results::Results>>> = std::thread::scope(|s| {
        let handles: Vec<_> = LocalExchange::group(n)
            .into_iter()
            .map(|ex| s.spawn(move || simulate_across(m, p.clone(), o, &ex)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a process panicked"))
            .collect()
    });
    let mut outcomes = outcomes.into_iter();
    let first = match outcomes.next().expect("process 0") {
        Ok(Some(mut r)) => {
            r.wall_seconds = 0.0;
            r.to_json()
        }
        Ok(None) => panic!("process 0 returned no results"),
        Err(e) => format!("error: {e}"),
    };
    for (k, other) in outcomes.enumerate() {
        match other {
            Ok(None) => {}
            Ok(Some(_)) => panic!("process {} returned results", k + 1),
            Err(e) => assert_eq!(first, format!("error: {e}"), "process {}", k + 1),
        }
    }
    first
}

/// Runs `p` on 1, 2 and 3 threads, across 2 and 3 processes, and across 2 processes of 2
/// threads, and checks that the outcomes are identical; returns the one-thread outcome.
fn same_on_threads(m: &Machine, p: &Program, o: Options) -> String {
    let one = outcome(
        m,
        p,
        &Options {
            threads: Some(1),
            ..o.clone()
        },
    );
    for n in [2, 3] {
        let many = outcome(
            m,
            p,
            &Options {
                threads: Some(n),
                ..o.clone()
            },
        );
        assert_eq!(one, many, "{n} threads");
        let across = Options {
            threads: None,
            ..o.clone()
        };
        assert_eq!(
            one,
            outcome_across(m, p, &across, n as usize),
            "{n} processes"
        );
    }
    let hybrid = Options {
        threads: Some(2),
        ..o.clone()
    };
    assert_eq!(
        one,
        outcome_across(m, p, &hybrid, 2),
        "2 processes of 2 threads"
    );
    one
}

/// Messages among ranks: each rank posts a receive for every message it gets (by source
/// and tag, or from any source), sends its own, and waits for all of them.
fn messages_text(ranks: u32, msgs: &[(u32, u32, u64, bool)]) -> String {
    let mut t = format!("ranks {ranks}\n");
    for r in 0..ranks {
        t += &format!("rank {r}\n");
        let mut reqs = Vec::new();
        for (i, &(src, dst, size, any)) in msgs.iter().enumerate() {
            if dst == r {
                let from = if any {
                    "any".to_string()
                } else {
                    src.to_string()
                };
                let tag = if any {
                    "any".to_string()
                } else {
                    i.to_string()
                };
                t += &format!("irecv {from} {size} req=q{i} tag={tag}\n");
                reqs.push(format!("q{i}"));
            }
        }
        for (i, &(src, dst, size, _)) in msgs.iter().enumerate() {
            if src == r {
                t += &format!("isend {dst} {size} req=s{i} tag={i}\n");
                reqs.push(format!("s{i}"));
            }
        }
        if !reqs.is_empty() {
            t += &format!("waitall {}\n", reqs.join(" "));
        }
        t += "compute 1us\nallreduce 64\nalltoall 512\nbarrier algo=ring transport=rdma\n";
    }
    t
}

#[test]
fn every_kind_of_operation_gives_the_same_results_on_any_number_of_threads() {
    // Rendezvous (above 4 KiB) and eager messages, any-source receives, collectives.
    let msgs = [
        (0, 15, 100, false),
        (15, 0, 9000, false),
        (3, 12, 20_000, true),
        (12, 3, 64, false),
        (5, 10, 5000, true),
        (10, 5, 5000, false),
        (7, 8, 1, false),
    ];
    let p = parse(&messages_text(16, &msgs));
    for machine in [TORUS, DRAGONFLY, FAT_TREE] {
        let m = load(machine);
        let one = same_on_threads(&m, &p, options(1));
        assert!(one.contains("\"predicted_time_ps\""), "{one}");
        // Traced, and keeping no records.
        same_on_threads(
            &m,
            &p,
            Options {
                trace: true,
                ..options(1)
            },
        );
        same_on_threads(
            &m,
            &p,
            Options {
                summary_only: true,
                ..options(1)
            },
        );
    }
}

#[test]
fn gets_puts_and_polls_cross_partitions() {
    let mut t = "ranks 16\n".to_string();
    for r in 0..16u32 {
        let peer = 15 - r;
        t += &format!(
            "rank {r}\nget {peer} 3000 handle=1\nput {peer} 700 tag=5 handle=2\ncomplete 1\ncomplete 2\npoll 5\nput {peer} 50000 tag=6\npoll 6\n"
        );
    }
    let p = parse(&t);
    for machine in [TORUS, DRAGONFLY, FAT_TREE] {
        same_on_threads(&load(machine), &p, options(1));
    }
}

#[test]
fn several_ranks_and_nics_per_node_and_copies_within_a_node() {
    let msgs: Vec<(u32, u32, u64, bool)> = (0..32)
        .map(|i| (i, (i * 7 + 3) % 32, 1000 + 700 * u64::from(i), i % 5 == 0))
        .filter(|m| m.0 != m.1)
        .collect();
    let p = parse(&messages_text(32, &msgs));
    for extra in [
        "\n[placement]\nranks_per_node=2",
        "\n[placement]\nranks_per_node=2\n[node]\nintra_node='memory'",
        "\n[placement]\npolicy='random'\nranks_per_node=2",
    ] {
        same_on_threads(&load(&format!("{TORUS}{extra}")), &p, options(1));
    }
    // TORUS ends in its [nic] table.
    let two_nics = load(&format!("{TORUS}\ncount=2\n[placement]\nranks_per_node=2"));
    same_on_threads(&two_nics, &p, options(1));
}

#[test]
fn a_run_stopped_at_a_time_gives_the_same_partial_results() {
    let p = parse(&messages_text(
        16,
        &[(0, 15, 90_000, false), (15, 0, 90_000, false)],
    ));
    let m = load(TORUS);
    let stopped = same_on_threads(
        &m,
        &p,
        Options {
            max_sim_time: Some(3_000_000),
            ..options(1)
        },
    );
    assert!(stopped.contains("max-sim-time"), "{stopped}");
    // An event limit stops at the end of a window: the same one on any number of threads
    // above one.
    let limited = Options {
        max_events: Some(500),
        ..options(2)
    };
    let two = outcome(&m, &p, &limited);
    assert!(two.contains("max-events"), "{two}");
    assert_eq!(
        two,
        outcome(
            &m,
            &p,
            &Options {
                threads: Some(3),
                ..limited.clone()
            }
        )
    );
    // And on processes: the same window.
    let across = Options {
        threads: None,
        ..limited
    };
    assert_eq!(two, outcome_across(&m, &p, &across, 2));
}

#[test]
fn an_interruption_stops_every_partition_at_the_same_window() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let p = parse(&messages_text(
        16,
        &[(0, 15, 90_000, false), (15, 0, 90_000, false)],
    ));
    let m = load(TORUS);
    // Set before the run: on threads every partition stops after the first window.
    let interrupted = Options {
        interrupt: Some(Arc::new(AtomicBool::new(true))),
        ..options(2)
    };
    let two = outcome(&m, &p, &interrupted);
    assert!(two.contains("\"interrupted\""), "{two}");
    // Across processes the flag of one process (here only process 1's is set) stops
    // them all at the same window, with the results of threads.
    let outcomes: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = LocalExchange::group(2)
            .into_iter()
            .map(|ex| {
                let (m, p) = (&m, &p);
                s.spawn(move || {
                    let o = Options {
                        interrupt: Some(Arc::new(AtomicBool::new(ex.me() == 1))),
                        ..options(1)
                    };
                    match simulate_across(m, p.clone(), &o, &ex) {
                        Ok(Some(mut r)) => {
                            r.wall_seconds = 0.0;
                            r.to_json()
                        }
                        Ok(None) => String::new(),
                        Err(e) => format!("error: {e}"),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    assert_eq!(outcomes[0], two);
    assert_eq!(outcomes[1], "");
}

#[test]
fn a_deadlock_is_reported_rank_by_rank_as_on_one_thread() {
    // Ranks 0 and 15 (in different partitions) each receive before they send.
    let t = "ranks 16\nrank 0\nrecv 15 10 tag=1\nsend 15 10 tag=1\nrank 15\nrecv 0 10 tag=1\nsend 0 10 tag=1\n";
    let p = parse(t);
    let report = same_on_threads(&load(TORUS), &p, options(1));
    assert!(report.contains("can never finish"), "{report}");
    let without_records = Options {
        summary_only: true,
        ..options(1)
    };
    assert_eq!(report, same_on_threads(&load(TORUS), &p, without_records));
    assert!(
        report.contains("rank 0:") && report.contains("rank 15:"),
        "{report}"
    );
}

#[test]
fn ranks_stopped_inside_collectives_are_reported_as_on_one_thread() {
    // Rank 15 waits for a message nobody sends, so never enters the RDMA ring barrier the
    // others wait in, polling for puts; then all ranks stopped inside an all-to-all.
    let mut t = "ranks 16\n".to_string();
    for r in 0..16 {
        t += &format!("rank {r}\ncompute {}ns\n", 100 * r);
        if r == 15 {
            t += "recv 0 10 tag=3\n";
        }
        t += "barrier algo=ring transport=rdma\nalltoall 4096\n";
    }
    let report = same_on_threads(&load(TORUS), &parse(&t), options(1));
    assert!(report.contains("can never finish"), "{report}");
    let without_records = Options {
        summary_only: true,
        ..options(1)
    };
    assert_eq!(
        report,
        same_on_threads(&load(TORUS), &parse(&t), without_records)
    );
    // The barrier's puts are named as such, not by the tags the runtime gives them.
    assert!(
        report.contains("waits for a put of this call that rank 15 issues only later"),
        "{report}"
    );
    assert!(!report.contains("-46116"), "{report}");
    let mut t = "ranks 16\n".to_string();
    for r in 0..16 {
        t += &format!("rank {r}\nalltoall 40000\nallreduce 64\n");
    }
    let stopped = same_on_threads(
        &load(TORUS),
        &parse(&t),
        Options {
            max_sim_time: Some(20_000_000),
            ..options(1)
        },
    );
    assert!(stopped.contains("max-sim-time"), "{stopped}");
}

#[test]
fn what_a_program_leaves_undone_is_listed_as_on_one_thread() {
    // Ranks 3 and 12 (different partitions) finish with receives nothing matches; ranks 0
    // and 15 leave a message unreceived and a put unpolled.
    let t = "ranks 16\nrank 0\nsend 15 10 tag=7\nput 15 64 tag=9\nrank 3\nirecv 12 10 req=b tag=2\nrank 12\nirecv 3 10 req=b tag=2\n";
    let one = same_on_threads(&load(TORUS), &parse(t), options(1));
    assert!(one.contains("\"unfinished_requests\""), "{one}");
    assert!(one.contains("\"unpolled_puts\""), "{one}");
}

#[test]
fn a_run_that_keeps_no_records_reuses_those_of_finished_ranks() {
    // Rank 0 puts to rank 15 four times and waits for each; rank 15 starts after rank 0
    // has finished and puts back as often. Rank 0 polls none of them, rank 15 two.
    let mut t = "ranks 16\nrank 0\n".to_string();
    for h in 0..4 {
        t += &format!("put 15 64 tag=1 handle=h{h}\n");
    }
    t += &(0..4)
        .map(|h| format!("complete h{h}\n"))
        .collect::<String>();
    t += "rank 15\npoll 1\npoll 1\ncompute 1ms\n";
    for h in 0..4 {
        t += &format!("put 0 64 tag=2 handle=h{h}\n");
    }
    t += &(0..4)
        .map(|h| format!("complete h{h}\n"))
        .collect::<String>();
    let m = load(TORUS);
    let (kept, bare) = common::with_and_without_records(&m, parse(&t));
    // A finished rank names none of its requests again: rank 15's puts take rank 0's
    // four records, where a run that lists the operations keeps all eight.
    assert_eq!(kept.transfer_records, 8);
    assert_eq!(bare.transfer_records, 4);
    assert_eq!(bare.unpolled_puts, vec![(0, 2, 4), (15, 1, 2)]);
    // Across threads and processes, whose shares send a free record as one byte.
    let summary_only = Options {
        summary_only: true,
        ..options(1)
    };
    same_on_threads(&m, &parse(&t), summary_only.clone());
    // Requests a finished rank leaves pending are still listed.
    let t = "ranks 16\nrank 0\nsend 15 10 tag=7\nisend 15 20000 req=a tag=8\nput 15 64 tag=9\nrank 3\nirecv 12 10 req=b tag=2\nrank 12\nirecv 3 10 req=b tag=2\n";
    let one = same_on_threads(&m, &parse(t), summary_only);
    assert!(one.contains("\"unfinished_requests\""), "{one}");
}

#[test]
fn goal_programs_give_the_same_results() {
    let mut t = "num_ranks 16\n".to_string();
    for r in 0..16u32 {
        let (to, from) = ((r + 5) % 16, (r + 11) % 16);
        t += &format!(
            "rank {r} {{\nl1: send 4000b to {to} tag 1\nl2: recv 4000b from {from} tag 1\nl3: calc 500\nl3 requires l2\nl4: send 100b to {to} tag 2\nl4 requires l3\nl5: recv 100b from {from} tag 2\n}}\n"
        );
    }
    let p = acesim::frontends::goal::parse("t.goal", &t).expect("goal parses");
    same_on_threads(&load(DRAGONFLY), &p, options(1));
}

#[test]
fn bad_thread_counts_and_models_are_refused() {
    let p = parse(&puts_text(4, &[(0, 3, 100)], false));
    let m = load(TORUS);
    let e = outcome(&m, &p, &options(17));
    assert!(
        e.contains("17 partitions") && e.contains("16 router"),
        "{e}"
    );
    let flow = Options {
        model: acesim::network::Model::Flow,
        ..options(2)
    };
    let e = outcome(&m, &p, &flow);
    assert!(e.contains("flow model runs on one thread"), "{e}");
    let measured = Options {
        partitions: Some(2),
        ..options(2)
    };
    let e = outcome(&m, &p, &measured);
    assert!(e.contains("--partitions"), "{e}");
    // Across processes: the packet model, the same inputs everywhere, no more partitions
    // than the machine splits into (2 processes of 9 threads are 18).
    let e = outcome_across(&m, &p, &options(9), 2);
    assert!(e.contains("18 partitions"), "{e}");
    let e = outcome_across(&m, &p, &flow, 2);
    assert!(e.contains("leave out mpirun"), "{e}");
    let e = outcome_across(&m, &p, &options(1), 17);
    assert!(e.contains("17 partitions"), "{e}");
    let other = parse(&puts_text(4, &[(0, 3, 100), (1, 2, 5)], false));
    let outcomes: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = LocalExchange::group(2)
            .into_iter()
            .map(|ex| {
                let (m, p, other) = (&m, &p, &other);
                s.spawn(move || {
                    let prog = if ex.me() == 0 {
                        p.clone()
                    } else {
                        other.clone()
                    };
                    match simulate_across(m, prog, &Options::default(), &ex) {
                        Err(e) => e.to_string(),
                        Ok(_) => "ran".into(),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    for e in outcomes {
        assert!(e.contains("process 1 differs from process 0"), "{e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random puts among random ranks, and random messages: the same bytes on 1, 2 and 3
    /// threads, with the model's invariants checked.
    #[test]
    fn random_workloads_give_the_same_bytes_on_any_number_of_threads(
        (ranks, ops) in workload(),
        machine in prop::sample::select(vec![TORUS, DRAGONFLY, FAT_TREE]),
        serial in any::<bool>(),
        random_placement in any::<bool>(),
    ) {
        let placement = if random_placement { "\n[placement]\npolicy='random'" } else { "" };
        let m = load(&format!("{machine}{placement}"));
        same_on_threads(&m, &parse(&puts_text(ranks, &ops, serial)), options(1));
        let msgs: Vec<(u32, u32, u64, bool)> = ops
            .iter()
            .filter(|o| o.0 != o.1)
            .map(|&(a, b, size)| (a, b, size, size == 9000))
            .collect();
        same_on_threads(&m, &parse(&messages_text(ranks, &msgs)), options(1));
    }
}

#[test]
fn a_run_that_makes_no_tables_prints_the_summary_of_one_that_does() {
    // Puts and a collective across the partitions' cut, inside a region.
    let mut t = "ranks 16\n".to_string();
    for r in 0..16u32 {
        t += &format!(
            "rank {r}\nregion_begin exchange\nput {} 9000 tag=1\npoll 1\nallreduce 1KiB\nregion_end exchange\n",
            (r + 5) % 16,
        );
    }
    let (m, p) = (load(TORUS), parse(&t));
    let summary_only = Options {
        summary_only: true,
        ..options(1)
    };
    let bare = Options {
        no_tables: true,
        ..summary_only.clone()
    };
    let run = |o: &Options| {
        let mut r = simulate_with(&m, p.clone(), o).expect("the run ends");
        r.wall_seconds = 0.0;
        r
    };
    for threads in [1, 2] {
        let at = |o: &Options| Options {
            threads: Some(threads),
            ..o.clone()
        };
        let (with, without) = (run(&at(&summary_only)), run(&at(&bare)));
        assert_eq!(with.summary(), without.summary(), "{threads} threads");
        // The totals are still added up; the tables are not made.
        assert_eq!(
            (with.bytes_injected, with.packet_hops),
            (without.bytes_injected, without.packet_hops)
        );
        assert!(!with.all_links.is_empty() && !with.per_rank.is_empty());
        assert!(without.all_links.is_empty() && without.per_rank.is_empty());
        assert!(without.nics.is_empty());
    }
    // Across threads and processes, whose shares then carry the totals alone.
    let one = same_on_threads(&m, &p, bare.clone());
    assert!(one.contains("\"packet_hops\""), "{one}");
    // Every rank finishes, so a process leaves the ranks that finished cleanly out of its
    // share (`Runtime::into_share`): those with a put never polled or a message never
    // received are still sent, and the summary's notes count them as one process does.
    let mut t = "ranks 16\n".to_string();
    for r in 0..16u32 {
        t += &format!("rank {r}\nput {} 9000 tag=1\npoll 1\n", (r + 5) % 16);
        if r % 3 == 0 {
            t += &format!("put {} 64 tag=9\n", (r + 3) % 16);
        }
        if [1, 6, 14].contains(&r) {
            t += &format!("isend {} 32 tag=4 req=q\nwait q\n", (r + 7) % 16);
        }
    }
    let p = parse(&t);
    let one = simulate_with(&m, p.clone(), &bare)
        .expect("the run ends")
        .summary();
    // Six puts of tag 9 never polled; three messages never received.
    assert!(
        one.contains("note: 6 puts landed but were never polled"),
        "{one}"
    );
    assert!(
        one.contains("warning: 3 messages were never received"),
        "{one}"
    );
    same_on_threads(&m, &p, bare);
}
