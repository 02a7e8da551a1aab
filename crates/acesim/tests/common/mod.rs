//! Helpers the integration tests share: machines from TOML text, and random put/poll
//! workloads as schedule text.
// Each test file uses some of these.
#![allow(dead_code)]

use acesim::{Machine, MachineSource};
use proptest::prelude::*;

pub fn load(toml: &str) -> Machine {
    MachineSource::from_text("i.toml", toml)
        .load()
        .expect("machine loads")
}

/// A rank count, and puts (from, to, bytes) among those ranks.
pub fn workload() -> impl Strategy<Value = (u32, Vec<(u32, u32, u64)>)> {
    (2u32..12).prop_flat_map(|ranks| {
        let op = (
            0..ranks,
            0..ranks,
            prop::sample::select(vec![0u64, 100, 2048, 9000, 40_000]),
        );
        (Just(ranks), prop::collection::vec(op, 1..30))
    })
}

/// The puts of `ops` as a schedule, each receiver polling for every put it gets; with
/// `serial`, each put is completed before its rank issues the next.
pub fn puts_text(ranks: u32, ops: &[(u32, u32, u64)], serial: bool) -> String {
    let mut per = vec![String::new(); ranks as usize];
    let mut polls = vec![0usize; ranks as usize];
    for &(a, b, size) in ops {
        per[a as usize] += &match serial {
            true => format!("put {b} {size} tag=3 handle=1\ncomplete 1\n"),
            false => format!("put {b} {size} tag=3\n"),
        };
        polls[b as usize] += 1;
    }
    let mut t = format!("ranks {ranks}\n");
    for r in 0..ranks as usize {
        t += &format!("rank {r}\n{}{}", per[r], "poll 3\n".repeat(polls[r]));
    }
    t
}

/// Runs `program` keeping the per-operation records and keeping none
/// (`Options::summary_only`), checks that both runs agree on everything but the listed
/// operations and receives, and returns both.
pub fn with_and_without_records(
    machine: &Machine,
    program: acesim::Program,
) -> (acesim::Results, acesim::Results) {
    use acesim::run::simulate::{simulate_with, Options};
    let kept = simulate_with(machine, program.clone(), &Options::default()).expect("runs");
    let options = Options {
        summary_only: true,
        ..Default::default()
    };
    let bare = simulate_with(machine, program, &options).expect("runs without records");
    let json = |r: &acesim::Results| {
        let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).expect("JSON");
        let o = v.as_object_mut().expect("an object");
        o.remove("operations");
        o.remove("receives");
        v
    };
    assert_eq!(json(&kept), json(&bare));
    assert_eq!(kept.operation_count, bare.operation_count);
    assert_eq!(kept.operation_count, kept.operations.len() as u64);
    assert!(bare.operations.is_empty() && bare.receives.is_empty());
    (kept, bare)
}

/// The `[router]`, `[link]` and `[nic]` of BookSim2-like routers (one-flit 16-byte packets,
/// 4 VCs of 128 bytes, 1 ns stages and links), with `router` (more `[router]` fields).
pub fn booksim_text(router: &str) -> String {
    format!(
        "[router]\nrouting_delay='0 ns'\nvc_allocation_delay='1 ns'\nswitch_allocation_delay='1 ns'\nswitch_latency='1 ns'\nswitch_throughput='16 GB/s'\nvcs=4\nbuffer_per_vc='128 B'\n{router}\n[link]\nbandwidth='16 GB/s'\nlatency='1 ns'\n[nic]\nmtu='16 B'\nheader='4 B'\ncontrol_packet='4 B'\ninjection_queue=4\n"
    )
}

/// A machine of `topology` (the `[topology]` fields) on BookSim2-like routers.
pub fn booksim_like(topology: &str, router: &str) -> Machine {
    let text = format!("[topology]\n{topology}\n{}", booksim_text(router));
    MachineSource::from_text("b.toml", text)
        .load()
        .expect("machine loads")
}

/// One-flit packets on a BookSim2-like machine (as `examples/booksim/compare.py` maps
/// BookSim2's router), 3 µs warm-up and a 5 µs window.
pub fn flit_point(m: &Machine, pattern: &str, load: f64) -> acesim::run::traffic::TrafficPoint {
    use acesim::run::traffic::{run_point, Injection, TrafficConfig};
    let cfg = TrafficConfig {
        pattern: acesim::run::patterns::Pattern::parse(pattern).unwrap(),
        load,
        packet: 16,
        flit: 16,
        injection: Injection::Bernoulli,
        warmup: 3_000_000,
        measure: 5_000_000,
        drain: 50_000_000,
        seed: 1,
        check: false,
        partitions: None,
        threads: 1,
    };
    run_point(m, &cfg).expect("traffic runs")
}
