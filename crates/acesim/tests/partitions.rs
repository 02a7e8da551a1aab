//! `--partitions N`: how a run would split among the partitions of a parallel run. The
//! counts add up, no event crosses partitions sooner than the lookahead (the link latency
//! is a sound window), and a run with nothing crossing splits perfectly.

mod common;

use acesim::frontends::schedule;
use acesim::network::Model;
use acesim::results::partitions::PartitionReport;
use acesim::run::simulate::{simulate_with, Options};
use acesim::{Machine, Results};
use common::{load, puts_text, workload};
use proptest::prelude::*;

fn run(m: &Machine, text: &str, parts: u32) -> Results {
    let options = Options {
        partitions: Some(parts),
        check: true,
        ..Default::default()
    };
    simulate_with(m, schedule::parse("p", text).unwrap(), &options).expect("runs")
}

fn report(r: &Results) -> &PartitionReport {
    r.partitions.as_ref().expect("measured")
}

#[test]
fn a_run_with_nothing_crossing_splits_perfectly() {
    // A 4x2 torus: routers 0-3 (y = 0) and 4-7 (y = 1) make the two partitions. Ranks 0
    // and 1 put to each other along y = 0, ranks 4 and 5 the same along y = 1: two mirror
    // images, with nothing between them.
    let m = load("[topology]\nkind='torus'\ndims=[4,2]");
    let text = "ranks 8\nrank 0\nput 1 4096 tag=1\npoll 1\nrank 1\nput 0 4096 tag=1\npoll 1\n\
                rank 4\nput 5 4096 tag=1\npoll 1\nrank 5\nput 4 4096 tag=1\npoll 1\n";
    let r = run(&m, text, 2);
    let p = report(&r);
    assert_eq!(p.partitions, 2);
    assert_eq!(p.cross_events, 0);
    assert_eq!(p.events[0], p.events[1]);
    assert_eq!(p.events.iter().sum::<u64>(), r.events);
    assert_eq!(p.critical_events * 2, r.events);
    assert_eq!(p.speedup_bound, 2.0);
    // The lookahead is the torus links' cable latency, and every link between the two
    // rows is cut: 4 columns, both ways, twice (the wrap-around of a 2-ring).
    assert_eq!(p.lookahead_ps, m.link.latency.0);
    assert_eq!(p.cut_links, 16);
}

#[test]
fn what_cannot_be_split_is_refused() {
    let m = load("[topology]\nkind='torus'\ndims=[2,2]");
    let text = "ranks 2\nrank 0\nput 1 8\nrank 1\npoll 0\n";
    let options = |parts, model| Options {
        partitions: Some(parts),
        model,
        ..Default::default()
    };
    let err = |o: &Options| {
        simulate_with(&m, schedule::parse("p", text).unwrap(), o)
            .expect_err("refused")
            .to_string()
    };
    let e = err(&options(5, Model::Packet));
    assert!(e.contains("5 partitions for a torus of 4 router(s)"), "{e}");
    // At flow level too (which measures its solves: tests/flow.rs).
    let e = err(&options(5, Model::Flow));
    assert!(e.contains("5 partitions for a torus of 4 router(s)"), "{e}");
}

#[test]
fn synthetic_traffic_is_measured_per_load() {
    // Uniform traffic on a 4x4 torus at half load, in 2 and 4 slabs.
    use acesim::run::patterns::Pattern;
    use acesim::run::traffic::{run_point, TrafficConfig};
    let m = load("[topology]\nkind='torus'\ndims=[4,4]");
    for parts in [2, 4] {
        let cfg = TrafficConfig {
            load: 0.5,
            check: true,
            partitions: Some(parts),
            ..TrafficConfig::with_defaults(
                &m,
                Pattern::parse("uniform").unwrap(),
                2048,
                None,
                acesim::run::traffic::Injection::Bernoulli,
                Some(100_000),
                Some(1_000_000),
                None,
                1,
            )
            .unwrap()
        };
        let point = run_point(&m, &cfg).expect("runs");
        let p = point.partitions.as_ref().expect("measured");
        assert_eq!(p.events.iter().sum::<u64>(), point.events);
        assert_eq!(p.cross_events_within_lookahead, 0);
        assert!(p.cross_events > 0, "uniform traffic crosses");
        assert!(p.speedup_bound > 1.0 && p.speedup_bound <= f64::from(parts));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// On every topology: each event is counted once, nothing crosses partitions sooner
    /// than the lookahead, the bound lies between 1 and the partitions, and the report is
    /// deterministic.
    #[test]
    fn the_counts_add_up_and_the_lookahead_is_sound(
        (ranks, ops) in workload(),
        parts in 2u32..5,
        machine in prop::sample::select(vec![
            "[topology]\nkind='torus'\ndims=[3,4]\n[router]\nvcs=2\nbuffer_per_vc='2 KiB'\n[nic]\nmtu='1 KiB'",
            "[topology]\nkind='dragonfly'\np=1\na=3\nh=1\ng=4\n[router]\nrouting='ugal'\nvcs=3\nbuffer_per_vc='4 KiB'",
            "[topology]\nkind='fat_tree'\nk=2\nn=4\n[router]\nbuffer_per_vc='1 KiB'\n[nic]\nmtu='512 B'",
        ]),
    ) {
        let m = load(machine);
        let t = puts_text(ranks, &ops, false);
        let r = run(&m, &t, parts);
        let p = report(&r);
        prop_assert_eq!(p.events.iter().sum::<u64>(), r.events);
        prop_assert!(p.cross_events <= r.events);
        prop_assert_eq!(p.cross_events_within_lookahead, 0);
        prop_assert!(p.critical_events * u64::from(parts) >= r.events);
        prop_assert!(p.speedup_bound >= 1.0 && p.speedup_bound <= f64::from(parts));
        let again = run(&m, &t, parts);
        prop_assert_eq!(p, report(&again));
    }
}
