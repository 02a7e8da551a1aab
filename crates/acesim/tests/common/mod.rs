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
