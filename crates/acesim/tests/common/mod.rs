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
