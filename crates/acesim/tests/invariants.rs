//! The model's invariant checks (`--check`, always on in debug builds, so in every test):
//! they catch a broken state, and random workloads on every topology and routing keep
//! them. Results do not depend on seeds that should not matter.

mod common;

use acesim::engine::EventQueue;
use acesim::frontends::schedule;
use acesim::machine::topology::Topology;
use acesim::network::packet::{PacketEvent, PacketNetwork};
use acesim::network::Network;
use acesim::run::events::Event;
use acesim::run::simulate::{simulate_with, Options};
use acesim::runtime::RtEvent;
use acesim::simulate;
use common::{load, puts_text, workload};
use proptest::prelude::*;

#[test]
fn a_credit_beyond_the_buffer_is_reported() {
    let m = load("[topology]\nkind='torus'\ndims=[2,2]\n[router]\nbuffer_per_vc='4 KiB'");
    let topo = Topology::build(&m, 4).unwrap();
    let mut net = PacketNetwork::new(topo, &m);
    net.enable_checks();
    let mut q: EventQueue<Event<PacketEvent, RtEvent>> = EventQueue::default();
    assert!(net.violation().is_none());
    // Credits come back only for bytes that were sent: one out of nowhere is a bug.
    net.handle(
        &mut q,
        5,
        PacketEvent::Credit {
            link: 0,
            vc: 0,
            bytes: 64,
        },
    );
    let v = net.violation().expect("caught");
    assert!(v.contains("more than its 4096 B buffer"), "{v}");
    assert!(net.check_end(10).is_err());
}

#[test]
fn a_stopped_run_counts_the_bytes_still_in_the_network() {
    // Synthetic traffic stops with packets in flight: bytes injected = bytes delivered +
    // bytes of the packets still in the network, and a byte lost on the way is caught.
    let m = load("[topology]\nkind='torus'\ndims=[2,2]\n[router]\nbuffer_per_vc='4 KiB'");
    let topo = Topology::build(&m, 4).unwrap();
    let mut net = PacketNetwork::new(topo, &m);
    net.enable_checks();
    let mut q: EventQueue<Event<PacketEvent, RtEvent>> = EventQueue::default();
    net.inject(&mut q, 0, 0, 3, 10_000, 1);
    let mut now = 0;
    while net.stats.counters.bytes_injected == 0 || net.stats.counters.bytes_delivered == 0 {
        let (t, Event::Net(e)) = q.pop().expect("packets still on the way") else {
            unreachable!("only network events")
        };
        now = t;
        net.handle(&mut q, now, e);
    }
    assert!(
        net.stats.counters.bytes_injected > net.stats.counters.bytes_delivered,
        "some still in flight"
    );
    assert!(net.check_end(now).is_err(), "a finished run's check fails");
    assert_eq!(net.check_stopped(now), Ok(()));
    net.stats.counters.bytes_delivered -= 1;
    let v = net.check_stopped(now).expect_err("a lost byte is caught");
    assert!(v.contains("bytes still in the network"), "{v}");
    net.stats.counters.bytes_delivered += 1;
    while let Some((t, Event::Net(e))) = q.pop() {
        now = t;
        net.handle(&mut q, now, e);
    }
    assert_eq!(
        net.stats.counters.bytes_injected,
        net.stats.counters.bytes_delivered
    );
    assert_eq!(net.check_stopped(now), Ok(()));
    assert_eq!(net.check_end(now), Ok(()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// With the checks on, a broken invariant fails the run (exit 70 in the CLI); every run
    /// here must finish cleanly, within the routes' hop bound and deterministically.
    #[test]
    fn dragonfly_routings_keep_every_invariant(
        (ranks, ops) in workload(),
        routing in prop::sample::select(vec!["minimal", "valiant", "ugal"]),
        palm in any::<bool>(),
    ) {
        let m = load(&format!(
            "[topology]\nkind='dragonfly'\np=1\na=3\nh=1\ng=4\narrangement='{}'\n[router]\nrouting='{routing}'\nvcs=3\nbuffer_per_vc='4 KiB'",
            if palm { "palmtree" } else { "consecutive" }
        ));
        let t = puts_text(ranks, &ops, false);
        let run = || simulate(&m, schedule::parse("w", &t).unwrap()).expect("finishes with checks on");
        let a = run();
        prop_assert_eq!(a.unpolled_puts.len(), 0);
        for l in &a.links {
            prop_assert!(l.busy_ps <= a.predicted_time_ps);
        }
        let mut b = run();
        b.wall_seconds = a.wall_seconds;
        prop_assert_eq!(a.to_json(), b.to_json());
    }

    /// Credits that wake nothing are kept off the event queue and counted when their link's
    /// credits are next read: results are byte-identical to making every credit an event,
    /// on contended tori with small buffers and on dragonflies whose UGAL routing reads
    /// the credits of two ports.
    #[test]
    fn credits_off_the_queue_change_nothing(
        (ranks, ops) in workload(),
        machine in prop::sample::select(vec![
            "[topology]\nkind='torus'\ndims=[3,4]\n[router]\nvcs=2\nbuffer_per_vc='2 KiB'\n[nic]\nmtu='1 KiB'",
            "[topology]\nkind='mesh'\ndims=[4,3]\n[router]\nbuffer_per_vc='unbounded'",
            "[topology]\nkind='dragonfly'\np=1\na=3\nh=1\ng=4\n[router]\nrouting='ugal'\nvcs=3\nbuffer_per_vc='4 KiB'",
            "[topology]\nkind='fat_tree'\nk=2\nn=4\n[router]\nbuffer_per_vc='1 KiB'\n[nic]\nmtu='512 B'",
        ]),
    ) {
        let m = load(machine);
        let t = puts_text(ranks, &ops, false);
        let run = |eager: bool| {
            let options = Options { every_credit_an_event: eager, ..Default::default() };
            let mut r = simulate_with(&m, schedule::parse("w", &t).unwrap(), &options).expect("finishes");
            r.wall_seconds = 0.0;
            r.events = 0;
            r.to_json()
        };
        prop_assert_eq!(run(false), run(true));
    }

    /// The same with packets of 64 KiB and more, whose credit events refer to a side table
    /// (events stay 8 bytes): contended puts of several such packets on a small torus.
    #[test]
    fn big_packet_credits_change_nothing(
        ops in prop::collection::vec((0u32..6, 0u32..6, prop::sample::select(vec![70_000u64, 150_000, 300_000])), 2..16),
    ) {
        let m = load("[topology]\nkind='torus'\ndims=[2,3]\n[router]\nvcs=2\nbuffer_per_vc='200 KiB'\n[nic]\nmtu='96 KiB'");
        let t = puts_text(6, &ops, false);
        let run = |eager: bool| {
            let options = Options { every_credit_an_event: eager, check: true, ..Default::default() };
            let mut r = simulate_with(&m, schedule::parse("w", &t).unwrap(), &options).expect("finishes");
            r.wall_seconds = 0.0;
            r.events = 0;
            r.to_json()
        };
        prop_assert_eq!(run(false), run(true));
    }

    /// Seeds of randomness a run does not use change nothing: the routing seed on a torus
    /// (routing is deterministic there), the placement seed under block placement.
    #[test]
    fn unused_seeds_do_not_change_results(
        (ranks, ops) in workload(),
        seed_a in any::<u32>(),
        seed_b in any::<u32>(),
    ) {
        let t = puts_text(ranks, &ops, false);
        let run = |seed: u32| {
            let m = load(&format!(
                "[topology]\nkind='torus'\ndims=[3,4]\n[router]\nrouting_seed={seed}\n[placement]\npolicy='block'\nseed={seed}"
            ));
            let mut r = simulate(&m, schedule::parse("w", &t).unwrap()).expect("finishes");
            r.wall_seconds = 0.0;
            // The machine's record names the seeds (and their hash): all else is the same.
            r.machine = None;
            r.to_json()
        };
        prop_assert_eq!(run(seed_a), run(seed_b));
    }
}

#[test]
fn dragonfly_hops_stay_within_the_route_bound() {
    // Every node sends to a node in the next group: minimal routes are local-global-local,
    // Valiant ones go through an intermediate group.
    let ranks = 12;
    let mut ops = Vec::new();
    for r in 0..ranks {
        ops.push((r, (r + 3) % ranks, 9000));
    }
    for (routing, max_mean) in [("minimal", 3.0), ("valiant", 5.0)] {
        let m = load(&format!(
            "[topology]\nkind='dragonfly'\np=1\na=3\nh=1\ng=4\n[router]\nrouting='{routing}'\nvcs=3"
        ));
        let r = simulate(
            &m,
            schedule::parse("w", &puts_text(ranks, &ops, false)).unwrap(),
        )
        .unwrap();
        assert!(
            r.mean_hops > 0.0 && r.mean_hops <= max_mean,
            "{routing}: {}",
            r.mean_hops
        );
        if routing == "minimal" {
            assert!(r
                .nics
                .iter()
                .all(|n| n.minimal_fraction == 1.0 || n.injected_packets == 0));
        }
    }
}

/// The size the memory estimate plans with is the size that gets built.
#[test]
fn planned_sizes_match_built_topologies() {
    let machines = [
        "[topology]\nkind='crossbar'\nnodes=5\n[nic]\ncount=2",
        "[topology]\nkind='crossbar'",
        "[topology]\nkind='mesh'\ndims=[3,4]\nnodes_per_router=2",
        "[topology]\nkind='torus'\ndims=[2,3,4,2,2,3]\n[nic]\ncount=2",
        "[topology]\nkind='mesh'\ndims=[5]\nwrap=[true]",
        "[topology]\nkind='fat_tree'\nk=3\nn=3",
        "[topology]\nkind='fat_tree'\nk=4\nn=1\n[nic]\ncount=2",
        "[topology]\nkind='fat_tree'\nk=2\nn=4",
        "[topology]\nkind='leaf_spine'\nnodes_per_leaf=4\nspines=2\nlinks_per_spine=2\nleaves=3",
        "[topology]\nkind='leaf_spine'\nnodes_per_leaf=3\nspines=3",
        "[topology]\nkind='dragonfly'\np=2\na=4\nh=2\n[router]\nvcs=3",
        "[topology]\nkind='dragonfly'\np=1\na=3\nh=1\ng=3\narrangement='palmtree'\n[router]\nvcs=3",
    ];
    for text in machines {
        let m = load(text);
        for ranks in [1, 7, 16] {
            let planned = acesim::machine::topology::planned_size(&m, ranks);
            let t = Topology::build(&m, ranks).unwrap();
            assert_eq!(planned.nodes, t.num_nodes as u64, "{text}");
            assert_eq!(planned.routers, t.num_routers as u64, "{text}");
            assert_eq!(planned.nics, t.num_nics() as u64, "{text}");
            assert_eq!(planned.ports, t.num_ports() as u64, "{text}");
            assert_eq!(planned.links(), t.num_links() as u64, "{text}");
        }
    }
}
