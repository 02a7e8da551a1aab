//! Cheap checks that keep the fuzzer on inputs it can run in milliseconds. They skip inputs
//! that are legitimately huge (a 2^26-rank schedule, a machine with millions of routers):
//! those are valid, slow by nature, and not bugs.

#![allow(dead_code)] // Each target uses some of these.

use acesim::program::{OpKind, Program};
use acesim::Machine;

/// Largest rank count a parser target lets through (the parsers allow 2^26).
pub const MAX_RANKS: u64 = 1 << 14;

/// True when a line that could declare the rank count (`ranks N`, `num_ranks N`, possibly
/// quoted or escaped) names more than `MAX_RANKS`. Looks at every digit run of such lines,
/// so it errs on the side of skipping.
pub fn declares_many_ranks(text: &str) -> bool {
    text.lines().any(|line| {
        let plain: String = line.chars().filter(|&c| c != '"' && c != '\\').collect();
        plain.contains("ranks")
            && plain
                .split(|c: char| !c.is_ascii_digit())
                .filter(|run| !run.is_empty())
                .any(|run| run.parse::<u64>().map_or(true, |n| n > MAX_RANKS))
    })
}

/// A rough upper bound on the router ports and NICs of `c` built for `ranks` ranks, in
/// saturating 64-bit arithmetic (the config may ask for anything validation lets through).
pub fn rough_machine_size(c: &Machine, ranks: u32) -> u64 {
    let t = &c.config().topology;
    let nics = u64::from(c.nic.count.max(1));
    let get = |v: Option<u32>, default: u64| v.map_or(default, u64::from);
    let ranks = u64::from(ranks.max(1));
    let nodes_and_ports = match t.kind.as_str() {
        "crossbar" => {
            let nodes = get(t.nodes, ranks);
            nodes.saturating_mul(nics).saturating_mul(2)
        }
        "mesh" | "torus" => {
            let dims = t.dims.clone().unwrap_or_default();
            let routers = dims
                .iter()
                .fold(1u64, |acc, &d| acc.saturating_mul(u64::from(d)));
            let per_router = (2 * dims.len() as u64).saturating_add(
                get(t.nodes_per_router, 1)
                    .saturating_mul(nics)
                    .saturating_mul(2),
            );
            routers.saturating_mul(per_router)
        }
        "fat_tree" => {
            let (k, n) = (get(t.k, 2), get(t.n, 1));
            let n32 = u32::try_from(n).unwrap_or(u32::MAX);
            let nodes = k.saturating_pow(n32);
            // n levels of k^(n-1) switches with 2k ports, plus the NICs.
            nodes
                .saturating_mul(n.saturating_mul(2))
                .saturating_add(nodes.saturating_mul(nics))
        }
        "leaf_spine" => {
            let m = get(t.nodes_per_leaf, 1);
            let spines = get(t.spines, 1);
            let q = get(t.links_per_spine, 1);
            let leaves = get(t.leaves, ranks.div_ceil(m.max(1)));
            let leaf_ports = m
                .saturating_mul(nics)
                .saturating_add(spines.saturating_mul(q));
            leaves
                .saturating_mul(leaf_ports)
                .saturating_mul(2)
                .saturating_add(spines.saturating_mul(leaves).saturating_mul(q))
        }
        "dragonfly" => {
            let (p, a, h) = (get(t.p, 1), get(t.a, 1), get(t.h, 1));
            let g = get(t.g, a.saturating_mul(h).saturating_add(1));
            let routers = g.saturating_mul(a);
            let per_router = a
                .saturating_add(h)
                .saturating_add(p.saturating_mul(nics).saturating_mul(2));
            routers.saturating_mul(per_router)
        }
        _ => u64::MAX,
    };
    nodes_and_ports
}

/// Largest machine (`rough_machine_size`) a target builds.
pub const MAX_MACHINE: u64 = 1 << 16;

/// True when `program` is small enough to simulate in a few milliseconds: few ranks, few
/// operations, small messages and collectives.
pub fn small_program(p: &Program) -> bool {
    const MAX_BYTES: u64 = 64 * 1024;
    if p.ranks > 8 || p.total_ops() > 200 {
        return false;
    }
    let sizes_ok = p.ops.iter().flatten().all(|op| match op.kind {
        OpKind::Put { size, .. }
        | OpKind::Get { size, .. }
        | OpKind::Send { size, .. }
        | OpKind::Recv { size, .. }
        | OpKind::Isend { size, .. }
        | OpKind::Irecv { size, .. } => size <= MAX_BYTES,
        _ => true,
    });
    let colls_ok = p
        .coll_calls
        .iter()
        .all(|c| c.size <= MAX_BYTES && (c.segment == 0 || c.size / c.segment <= 64));
    sizes_ok && colls_ok
}
