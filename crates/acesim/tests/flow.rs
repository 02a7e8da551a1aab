//! The flow model against the packet model: alone on its route a message takes exactly
//! what the packet model gives it (puts, gets, eager and rendezvous messages, from one
//! header's worth to 2 MiB, on every topology); shared, its invariants hold and the two
//! models stay close where the network is not what limits.

use acesim::frontends::schedule;
use acesim::network::Model;
use acesim::run::simulate::{simulate_with, Options};
use acesim::{Machine, MachineSource, Results};

fn machine(toml: &str) -> Machine {
    MachineSource::from_text("flow-test.toml", toml)
        .load()
        .expect("machine loads")
}

fn run(m: &Machine, sched: &str, model: Model) -> Results {
    run_with(
        m,
        sched,
        &Options {
            model,
            check: true,
            ..Default::default()
        },
    )
}

fn run_with(m: &Machine, sched: &str, options: &Options) -> Results {
    let prog = schedule::parse("flow-test.sched", sched).expect("schedule parses");
    simulate_with(m, prog, options).expect("runs")
}

/// Runs `sched` at both levels and checks that every time is the same.
fn same_times(m: &Machine, sched: &str, what: &str) {
    let p = run(m, sched, Model::Packet);
    let f = run(m, sched, Model::Flow);
    assert_eq!(f.model, "flow");
    assert_eq!(
        p.predicted_time_ps, f.predicted_time_ps,
        "{what}: predicted time"
    );
    assert_eq!(p.operations.len(), f.operations.len());
    for (a, b) in p.operations.iter().zip(&f.operations) {
        assert_eq!(
            (a.dma_start_ps, a.landed_ps, a.complete_ps),
            (b.dma_start_ps, b.landed_ps, b.complete_ps),
            "{what}: {} {} -> {}",
            a.kind,
            a.src,
            a.dst
        );
    }
    for (a, b) in p.per_rank.iter().zip(&f.per_rank) {
        assert_eq!(a.finish_ps, b.finish_ps, "{what}: rank {} finishes", a.rank);
    }
    // Every byte crossed the same links.
    for (a, b) in p.all_links.iter().zip(f.all_links.iter()) {
        assert_eq!(
            (a.bytes, a.packets, a.busy_ps),
            (b.bytes, b.packets, b.busy_ps),
            "{what}: {}",
            a.name
        );
    }
}

const TOPOLOGIES: &[(&str, &str, u32)] = &[
    ("crossbar", "[topology]\nkind = 'crossbar'\nnodes = 4", 4),
    ("torus", "[topology]\nkind = 'torus'\ndims = [4, 4]", 16),
    (
        "fat tree",
        "[topology]\nkind = 'fat_tree'\nk = 4\nn = 2",
        16,
    ),
    (
        "dragonfly",
        "[topology]\nkind = 'dragonfly'\np = 2\na = 4\nh = 2\n[router]\nvcs = 3",
        72,
    ),
];

const SIZES: &[&str] = &["0", "4", "2016", "2017", "16KiB", "16385", "64KiB", "2MiB"];

/// A schedule where rank 0 and the last rank, far apart, do `ops`.
fn pair(ranks: u32, first: &str, last: &str) -> String {
    format!("ranks {ranks}\nrank 0\n{first}rank {}\n{last}", ranks - 1)
}

#[test]
fn a_put_alone_takes_what_the_packet_model_gives_it() {
    for (name, toml, ranks) in TOPOLOGIES {
        let m = machine(toml);
        for size in SIZES {
            let s = pair(
                *ranks,
                &format!("put {} {size} tag=1 handle=h\ncomplete h\n", ranks - 1),
                "poll 1\n",
            );
            same_times(&m, &s, &format!("put {size} on a {name}"));
        }
    }
}

#[test]
fn a_get_alone_takes_what_the_packet_model_gives_it() {
    for (name, toml, ranks) in TOPOLOGIES {
        let m = machine(toml);
        for size in SIZES {
            let s = pair(
                *ranks,
                &format!("get {} {size} handle=h\ncomplete h\n", ranks - 1),
                "",
            );
            same_times(&m, &s, &format!("get {size} on a {name}"));
        }
    }
}

#[test]
fn eager_and_rendezvous_messages_alone_take_what_the_packet_model_gives_them() {
    // The eager threshold is 16 KiB: 16KiB goes eagerly, 16385 B by rendezvous.
    for (name, toml, ranks) in TOPOLOGIES {
        let m = machine(toml);
        for size in SIZES {
            let s = pair(
                *ranks,
                &format!("send {} {size}\nrecv {} {size}\n", ranks - 1, ranks - 1),
                &format!("recv 0 {size}\nsend 0 {size}\n"),
            );
            same_times(&m, &s, &format!("ping-pong of {size} on a {name}"));
        }
    }
}

#[test]
fn the_papers_programs_and_overheads_are_exact_at_flow_level() {
    let table1 = MachineSource::open("table1").unwrap().load().unwrap();
    // The NSIM-ACE ring: every rank puts 4 bytes to the next (302 258 ps, README).
    let mut ring = String::from("ranks 8\n");
    for r in 0..8 {
        ring += &format!(
            "rank {r}\nput {} 4 tag=1 handle=h\npoll 1\ncomplete h\n",
            (r + 1) % 8
        );
    }
    assert_eq!(run(&table1, &ring, Model::Flow).predicted_time_ps, 302_258);
    same_times(&table1, &ring, "the papers' ring");
    // With library and MPI overheads, back-to-back messages from one NIC (they leave in
    // order), and a GOAL-like fan-out.
    let m = machine("[topology]\nkind = 'torus'\ndims = [4, 4]\n[node]\noverhead = '0.6us'");
    let fan = pair(
        16,
        "isend 15 1 req=a\nisend 15 100 tag=2 req=b\nisend 15 64KiB tag=3 req=c\nwaitall a b c\n",
        "recv 0 1\nrecv 0 100 tag=2\nrecv 0 64KiB tag=3\n",
    );
    same_times(&m, &fan, "three messages back to back");
}

#[test]
fn one_packet_puts_into_one_rank_land_in_turn_as_in_the_packet_model() {
    // Eight 1000-byte puts into rank 0 at once: one packet each, served in turn by the
    // ejection link and the receiving DMA engine, the k-th one receive-DMA time after the
    // one before, the last when it does at packet level. On the crossbar they all reach
    // the ejection link at once, so the order they were reserved in (the senders' order)
    // is the packet model's: every time is the same. On the torus the nearer senders'
    // packets arrive first and the packet model serves them first; the flow level serves
    // them in the order they left (`network/flow/packets.rs`): the same landing times,
    // taken by other puts.
    let k = 8;
    let body: String = (1..=k)
        .map(|r| format!("rank {r}\nput 0 1000 tag=1\n"))
        .collect();
    let s = format!("ranks {}\n{body}rank 0\n{}", k + 1, "poll 1\n".repeat(k));
    for (toml, exact) in [
        ("[topology]\nkind = 'crossbar'\nnodes = 9", true),
        ("[topology]\nkind = 'torus'\ndims = [3, 3]", false),
    ] {
        let m = machine(toml);
        if exact {
            same_times(&m, &s, &format!("one-packet incast on {toml}"));
        }
        let p = run(&m, &s, Model::Packet);
        let f = run(&m, &s, Model::Flow);
        assert_eq!(p.predicted_time_ps, f.predicted_time_ps, "{toml}");
        let landings = |r: &Results| -> Vec<u64> {
            let mut l: Vec<u64> = r.operations.iter().filter_map(|o| o.landed_ps).collect();
            l.sort_unstable();
            l
        };
        let landed = landings(&f);
        assert_eq!(landed.len(), k);
        assert_eq!(
            landed,
            landings(&p),
            "{toml}: the packet model's landing times"
        );
        let dma = acesim::units::transfer_time(1000, m.nic.dma_rate.0);
        for w in landed.windows(2) {
            assert_eq!(w[1] - w[0], dma, "{toml}: puts land one DMA apart");
        }
        // Traced for a timeline, a packet's arrival at its NIC is an event of its own (links'
        // activity is recorded in time order); untraced, it is no event: the same times
        // either way.
        let options = Options {
            model: Model::Flow,
            check: true,
            trace: true,
            ..Default::default()
        };
        let traced = run_with(&m, &s, &options);
        assert!(traced.link_activity.is_some(), "{toml}: traced");
        assert_eq!(traced.predicted_time_ps, f.predicted_time_ps, "{toml}");
        let times = |r: &Results| -> Vec<_> {
            r.operations
                .iter()
                .map(|o| (o.dma_start_ps, o.landed_ps, o.complete_ps))
                .collect()
        };
        assert_eq!(times(&traced), times(&f), "{toml}: traced");
        assert!(traced.events > f.events, "{toml}: one event more a packet");
    }
}

#[test]
fn global_links_chosen_by_load_spread_what_hashing_puts_on_one() {
    // A dragonfly of 3 groups of 4 routers, 2 global links each: 4 parallel global links
    // between each pair of groups, 2 at router 0 and 2 at router 1 (copies 0-1, 2-3).
    // Nodes 8 and 12 of group 1 hash to the same copy (node mod 4 = 0): by destination,
    // everything group 0's routers 0 and 2 send them crosses one global link. By load, each
    // source router takes the copy whose first port has the least queued, and the same
    // bytes cross more links, sooner.
    let df = |choice: &str| {
        machine(&format!(
            "[topology]\nkind = 'dragonfly'\np = 2\na = 4\nh = 2\ng = 3\nglobal_choice = '{choice}'\n"
        ))
    };
    let mut s = String::from("ranks 16\n");
    for (src, dst) in [(0, 8), (1, 12), (4, 8), (5, 12)] {
        s += &format!("rank {src}\nput {dst} 64KiB tag=1\nput {dst} 64KiB tag=1\n");
    }
    s += "rank 8\npoll 1\npoll 1\npoll 1\npoll 1\nrank 12\npoll 1\npoll 1\npoll 1\npoll 1\n";
    for model in [Model::Packet, Model::Flow] {
        let used = |r: &Results| {
            let global: Vec<_> = r
                .all_links
                .iter()
                // The data (acknowledgements, a few bytes, go back the other way).
                .filter(|l| l.class == "global" && l.bytes >= 65536)
                .collect();
            (global.len(), global.iter().map(|l| l.bytes).sum::<u64>())
        };
        let hash = run(&df("hash"), &s, model);
        let load = run(&df("load"), &s, model);
        let (hash_links, hash_bytes) = used(&hash);
        let (load_links, load_bytes) = used(&load);
        assert_eq!(
            hash_links, 1,
            "{model:?}: hashing puts it all on one global link"
        );
        assert!(
            load_links >= 2,
            "{model:?}: by load {load_links} global links"
        );
        assert_eq!(hash_bytes, load_bytes, "{model:?}: the same bytes cross");
        assert!(
            load.predicted_time_ps < hash.predicted_time_ps,
            "{model:?}: {} ps by load, {} ps by hash",
            load.predicted_time_ps,
            hash.predicted_time_ps
        );
    }
    // A choice acesim does not know is refused with the field and the choices.
    let e = MachineSource::from_text(
        "df.toml",
        "[topology]\nkind = 'dragonfly'\np = 2\na = 4\nh = 2\nglobal_choice = 'lode'\n",
    )
    .load()
    .unwrap_err()
    .to_string();
    assert!(e.contains("topology.global_choice"), "{e}");
    assert!(e.contains("expected hash or load"), "{e}");
}

/// `--partitions` at flow level counts the solves that change rates in several partitions
/// of the split a parallel run would make: on a line of 4 routers split in 2 ({0, 1} and
/// {2, 3}), puts 0 -> 3 (2 MiB) and 1 -> 2 (1 MiB) share the link 1 -> 2: the first solve
/// halves both rates, the second, when the shorter ends, gives 0 -> 3 the link again; each
/// message's ends are in both partitions. Puts 0 -> 1 and 2 -> 3 share nothing: no rate
/// ever changes.
#[test]
fn flow_partitions_count_the_solves_that_tie_partitions_together() {
    let m = machine("[topology]\nkind='mesh'\ndims=[4]");
    let measure = |sched: &str| {
        let prog = schedule::parse("flow-test.sched", sched).expect("schedule parses");
        let options = Options {
            model: Model::Flow,
            partitions: Some(2),
            ..Default::default()
        };
        let r = simulate_with(&m, prog, &options).expect("runs");
        assert!(
            r.partitions.is_none(),
            "events are not counted at flow level"
        );
        r.coupling.expect("measured")
    };
    let puts = |a: (u32, u32, &str), b: (u32, u32, &str)| {
        let mut t = "ranks 4\n".to_string();
        for (src, dst, size) in [a, b] {
            t += &format!("rank {src}\nput {dst} {size} handle=h\ncomplete h\n");
        }
        t
    };
    let shared = measure(&puts((0, 3, "2MiB"), (1, 2, "1MiB")));
    assert_eq!(
        (shared.partitions, shared.solves, shared.coupled_solves),
        (2, 2, 2)
    );
    assert_eq!((shared.rate_changes, shared.rate_changes_across), (3, 3));
    assert!(shared.lookahead_ps > 0);
    let apart = measure(&puts((0, 1, "1MiB"), (2, 3, "1MiB")));
    assert_eq!(
        (apart.solves, apart.coupled_solves, apart.rate_changes),
        (0, 0, 0)
    );
}

/// Under contention a message is only slower than alone: the check mode reports a message
/// that lands before its time alone. A message's slot, once free, is taken by the next
/// message; a rate change leaves the old message's next-milestone event behind, and that
/// event once matched the new message when their versions did (both counted from 0), ending
/// its flow early: the 64-rank simple-spread all-to-all of 4 KiB met it.
#[test]
fn a_message_in_a_reused_slot_never_lands_before_its_time_alone() {
    let m = machine("[topology]\nkind = 'torus'\ndims = [8, 8]");
    let mut s = String::from("ranks 64\n");
    for r in 0..64 {
        s += &format!("rank {r}\nalltoall 4KiB algo=simple_spread\n");
    }
    // `run` checks: it fails on a broken invariant.
    let f = run(&m, &s, Model::Flow);
    assert_eq!(f.model, "flow");
}
