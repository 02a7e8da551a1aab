//! Synthetic traffic on several threads (`--threads N`): the machine split into blocks of
//! routers, each advanced by its own thread in windows of the smallest link latency, gives
//! the same point, byte for byte, as one thread: on tori, meshes, dragonflies with UGAL
//! and fat trees, below and past saturation, with the model's invariants checked.

mod common;

use acesim::run::patterns::Pattern;
use acesim::run::traffic::{run_point, run_point_on, Injection, TrafficConfig, TrafficPoint};
use acesim::Machine;
use common::load;
use proptest::prelude::*;

/// Packets of 256 B (the points' size) fit the buffers below.
const NIC: &str = "\n[nic]\nmtu='256 B'\nheader='16 B'\ncontrol_packet='16 B'";

fn machine(text: &str) -> Machine {
    load(&format!("{text}{NIC}"))
}

fn config(m: &Machine, pattern: &str, load: f64, seed: u64, threads: u32) -> TrafficConfig {
    TrafficConfig {
        load,
        check: true,
        threads,
        ..TrafficConfig::with_defaults(
            m,
            Pattern::parse(pattern).expect("pattern"),
            256,
            None,
            Injection::Bernoulli,
            Some(200_000),
            Some(1_000_000),
            Some(3_000_000),
            seed,
        )
        .expect("config")
    }
}

/// The point as JSON: everything a user gets from it.
fn json(p: &TrafficPoint) -> String {
    serde_json::to_string(p).expect("serialises")
}

fn on_threads(m: &Machine, pattern: &str, load: f64, seed: u64, threads: u32) -> TrafficPoint {
    run_point(m, &config(m, pattern, load, seed, threads)).expect("runs")
}

fn assert_same_on(m: &Machine, pattern: &str, load: f64, seed: u64, threads: &[u32]) {
    let one = on_threads(m, pattern, load, seed, 1);
    assert!(one.packets_measured > 0, "measures something");
    for &n in threads {
        let many = on_threads(m, pattern, load, seed, n);
        assert_eq!(
            json(&one),
            json(&many),
            "{pattern} at {load} on {n} threads"
        );
        let par = many.parallel.expect("says how it ran");
        assert_eq!(par.threads, n);
        assert!(
            par.crossings > 0,
            "{pattern} crosses between {n} partitions"
        );
        assert!(par.windows > 0);
    }
}

const TORUS: &str = "[topology]\nkind='torus'\ndims=[8,8]\n[router]\nvcs=4\nbuffer_per_vc='1 KiB'";

#[test]
fn a_torus_gives_the_same_point_on_any_number_of_threads() {
    let m = machine(TORUS);
    assert_same_on(&m, "uniform", 0.2, 1, &[2, 3, 4]);
    // Past saturation: packets wait for credits across partitions, and the run stops at
    // the drain limit with packets still in flight.
    assert_same_on(&m, "uniform", 1.0, 2, &[2, 4]);
    assert_same_on(&m, "transpose", 0.5, 3, &[2]);
}

/// The point of a run across `processes` of `threads` threads each (processes played by
/// threads exchanging bytes as MPI processes do), from process 0.
fn across(
    m: &Machine,
    pattern: &str,
    load: f64,
    seed: u64,
    (processes, threads): (usize, u32),
) -> TrafficPoint {
    let cfg = config(m, pattern, load, seed, threads);
    let points: Vec<TrafficPoint> = std::thread::scope(|s| {
        let handles: Vec<_> = acesim::engine::LocalExchange::group(processes)
            .into_iter()
            .map(|ex| {
                let cfg = &cfg;
                s.spawn(move || run_point_on(m, cfg, None, Some(&ex)).expect("runs"))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a process panicked"))
            .collect()
    });
    points.into_iter().next().expect("process 0")
}

#[test]
fn processes_of_several_threads_give_the_point_of_one_thread() {
    let m = machine(TORUS);
    let one = on_threads(&m, "uniform", 0.6, 11, 1);
    for shape in [(2, 1), (2, 2), (2, 3)] {
        let point = across(&m, "uniform", 0.6, 11, shape);
        assert_eq!(json(&one), json(&point), "{shape:?}");
        let par = point.parallel.expect("says how it ran");
        assert_eq!((par.processes, par.threads), (shape.0 as u32, shape.1));
        assert!(par.crossings > 0 && par.windows > 0);
    }
}

#[test]
fn a_dragonfly_with_ugal_gives_the_same_point() {
    // Groups of 4 routers; UGAL draws at each source router and reads its own queues.
    let m = machine(
        "[topology]\nkind='dragonfly'\np=2\na=4\nh=2\n[router]\nvcs=3\nbuffer_per_vc='2 KiB'\nrouting='ugal'",
    );
    assert_same_on(&m, "uniform", 0.3, 5, &[2, 3]);
    assert_same_on(&m, "worst_case", 0.4, 6, &[2]);
}

#[test]
fn a_fat_tree_and_a_mesh_give_the_same_point() {
    let tree = machine("[topology]\nkind='fat_tree'\nk=4\nn=2");
    assert_same_on(&tree, "uniform", 0.5, 7, &[2, 4]);
    let mesh =
        machine("[topology]\nkind='mesh'\ndims=[4,4]\n[router]\nvcs=2\nbuffer_per_vc='512 B'");
    assert_same_on(&mesh, "uniform", 0.9, 8, &[2]);
}

#[test]
fn a_tofu_with_four_nics_per_node_gives_the_same_point() {
    // The preset's nodes have four NICs each, on their node's router.
    let (_, text) = acesim::machine::config::PRESETS
        .iter()
        .find(|(name, _)| *name == "tofu")
        .expect("the tofu preset");
    let m = load(text);
    let one = on_threads(&m, "uniform", 0.1, 9, 1);
    let two = on_threads(&m, "uniform", 0.1, 9, 2);
    assert_eq!(json(&one), json(&two));
}

#[test]
fn packets_that_cross_for_milliseconds_give_the_same_point() {
    // 256-byte packets on 50 KB/s links take 5.12 ms to cross: longer than a router input
    // keeps in its record (`Input::crossing`, up to 4.3 ms), so the heads that come behind
    // them find when they left in the side table. Contended (load 0.5), so some do.
    let m = machine(&format!(
        "{TORUS}\n[link]\nbandwidth='50 KB/s'\n[nic_link]\nbandwidth='50 KB/s'"
    ));
    let point = |threads: u32| {
        let cfg = TrafficConfig {
            load: 0.5,
            check: true,
            threads,
            ..TrafficConfig::with_defaults(
                &m,
                Pattern::parse("uniform").expect("pattern"),
                256,
                None,
                Injection::Bernoulli,
                Some(50_000_000_000),
                Some(200_000_000_000),
                Some(2_000_000_000_000),
                3,
            )
            .expect("config")
        };
        run_point(&m, &cfg).expect("runs")
    };
    let one = point(1);
    assert!(one.packets_measured > 100, "{}", one.packets_measured);
    assert!(one.max_link_utilization <= 1.0 + 1e-9);
    assert_eq!(json(&one), json(&point(2)));
}

#[test]
fn bad_thread_counts_are_refused() {
    let m = load("[topology]\nkind='torus'\ndims=[2,2]");
    let e = run_point(&m, &config(&m, "uniform", 0.1, 1, 5)).unwrap_err();
    assert!(e.to_string().contains("5 partitions"), "{e}");
    let cfg = TrafficConfig {
        partitions: Some(2),
        ..config(&m, "uniform", 0.1, 1, 2)
    };
    let e = run_point(&m, &cfg).unwrap_err().to_string();
    assert!(
        e.contains("--partitions") && e.contains("one thread"),
        "{e}"
    );
    // A crossbar is one router: one thread.
    let x = load("[topology]\nkind='crossbar'\nnodes=8");
    let e = run_point(&x, &config(&x, "uniform", 0.1, 1, 2)).unwrap_err();
    assert!(e.to_string().contains("2 partitions"), "{e}");
    // Links without latency leave partitions no window to advance in.
    let flat = load("[topology]\nkind='torus'\ndims=[4,4]\n[link]\nlatency='0ns'");
    let e = run_point(&flat, &config(&flat, "uniform", 0.1, 1, 2)).unwrap_err();
    assert!(e.to_string().contains("no latency"), "{e}");
    // Every core, but a small machine stays on one thread (1,024 routers a thread).
    let small = load("[topology]\nkind='torus'\ndims=[4,4]");
    let p = run_point(&small, &config(&small, "uniform", 0.1, 1, 0)).expect("runs");
    assert_eq!(p.parallel.expect("ran").threads, 1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let big = machine("[topology]\nkind='torus'\ndims=[64,32]");
    let cfg = TrafficConfig {
        warmup: 20_000,
        measure: 40_000,
        ..config(&big, "uniform", 0.05, 1, 0)
    };
    let p = run_point(&big, &cfg).expect("runs");
    assert_eq!(p.parallel.expect("ran").threads, cores.min(2));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn random_points_are_the_same_on_two_threads(
        offered in 0.05f64..1.0,
        seed in 0u64..1000,
        pattern in prop::sample::select(vec!["uniform", "bit_complement", "tornado", "neighbor"]),
    ) {
        // Small buffers (backpressure across partitions) or large ones.
        let m = machine(&format!(
            "[topology]\nkind='torus'\ndims=[4,4]\n[router]\nvcs=2\nbuffer_per_vc='{}'",
            if seed % 2 == 0 { "512 B" } else { "4 KiB" }
        ));
        let one = on_threads(&m, pattern, offered, seed, 1);
        let two = on_threads(&m, pattern, offered, seed, 2);
        prop_assert_eq!(json(&one), json(&two));
    }
}
