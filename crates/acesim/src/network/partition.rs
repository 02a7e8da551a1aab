//! How a network splits among the partitions of a parallel run: contiguous blocks of
//! routers (slabs of a torus, groups of a dragonfly, pods of a fat tree), balanced by the
//! ports they have, and the lookahead: the smallest latency of a link between two
//! partitions, the window by which conservative partitions can advance together.

use crate::error::{Error, Location, Result};
use crate::machine::topology::ports::LinkEnd;
use crate::machine::topology::shape::Shape;
use crate::machine::topology::Topology;
use crate::units::Ps;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partitioning {
    pub parts: u32,
    /// The partition of each router (its NICs and their ranks live with it).
    pub of_router: Vec<u32>,
    /// The smallest latency of a link whose ends are in different partitions (`Ps::MAX`
    /// for one partition).
    pub lookahead: Ps,
    /// Directed router-to-router links between partitions.
    pub cut_links: u64,
}

/// Splits `topo` into `parts` partitions; `latency(link)` is a link's cable latency.
/// `source` names where `parts` came from, for errors.
pub fn partition(
    topo: &Topology,
    parts: u32,
    latency: impl Fn(u32) -> Ps,
    source: &str,
) -> Result<Partitioning> {
    let bad = |msg: String| Error::input(Location::file(source).with_field("partitions"), msg);
    let routers = topo.num_routers;
    if parts == 0 || parts > routers {
        return Err(bad(format!(
            "{parts} partitions for a {} of {routers} router(s): a partition holds at least one router",
            topo.kind()
        )));
    }
    // Routers in the order blocks are cut from, each with its work: its ports (links to
    // other routers and to NICs), which a switch that serves no node has too.
    let mut order: Vec<u32> = (0..routers).collect();
    order.sort_by_key(|&r| (position(topo, r), r));
    let base = &topo.ports.port_base;
    let work: Vec<u64> = (0..routers as usize)
        .map(|r| u64::from(base[r + 1] - base[r]).max(1))
        .collect();
    let total: u64 = work.iter().sum();
    let mut of_router = vec![0u32; routers as usize];
    let (mut done, mut part) = (0u64, 0u32);
    for (i, &r) in order.iter().enumerate() {
        // Move on once this partition has its share, leaving a router for each one left.
        let left = routers as usize - i;
        if part + 1 < parts
            && (done >= total * u64::from(part + 1) / u64::from(parts)
                || left <= (parts - part - 1) as usize)
        {
            part += 1;
        }
        of_router[r as usize] = part;
        done += work[r as usize];
    }
    let (mut lookahead, mut cut_links) = (Ps::MAX, 0);
    for link in 0..topo.num_ports() {
        let Some(LinkEnd::RouterIn(port)) = topo.link_end(link) else {
            continue;
        };
        let from = topo.ports.port_router[link as usize];
        let to = topo.ports.port_router[port as usize];
        if of_router[from as usize] != of_router[to as usize] {
            cut_links += 1;
            lookahead = lookahead.min(latency(link));
        }
    }
    if lookahead == 0 {
        return Err(bad(format!(
            "a link between two of the {parts} partitions has no latency (0 ps), so they could never advance apart: give the links a latency or use fewer partitions"
        )));
    }
    Ok(Partitioning {
        parts,
        of_router,
        lookahead,
        cut_links,
    })
}

/// Where a router falls in the order partitions are cut from: its number, except in a fat
/// tree, whose switches are numbered level by level: there the position within a level,
/// so that a block is a pod (a subtree) with its switches of every level.
fn position(topo: &Topology, router: u32) -> u32 {
    match &topo.shape {
        Shape::FatTree(f) => router % f.per_level,
        _ => router,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MachineSource;

    fn topology(toml: &str, nodes: u32) -> Topology {
        let m = MachineSource::from_text("t.toml", toml)
            .load()
            .expect("loads");
        Topology::build(&m, nodes).expect("builds")
    }

    #[test]
    fn a_torus_splits_into_slabs_with_the_cable_latency_as_lookahead() {
        let t = topology("[topology]\nkind='torus'\ndims=[4,4]", 16);
        let p = partition(&t, 2, |_| 25_000, "t").unwrap();
        // Row-major routers: the first two rows, then the last two.
        assert_eq!(p.of_router, [[0; 8], [1; 8]].concat());
        assert_eq!(p.lookahead, 25_000);
        // Each slab meets the other across two rows of 4 (wrap-around included), both ways.
        assert_eq!(p.cut_links, 16);
        let one = partition(&t, 1, |_| 25_000, "t").unwrap();
        assert_eq!((one.lookahead, one.cut_links), (Ps::MAX, 0));
    }

    #[test]
    fn a_fat_tree_splits_into_pods() {
        // 2-ary 3-tree: 4 switches per level; pods are positions {0,1} and {2,3}.
        let t = topology("[topology]\nkind='fat_tree'\nk=2\nn=3", 8);
        let p = partition(&t, 2, |_| 1_000, "t").unwrap();
        for level in 0..3 {
            let row: Vec<u32> = (0..4).map(|w| p.of_router[level * 4 + w]).collect();
            assert_eq!(row, [0, 0, 1, 1], "level {level}");
        }
    }

    #[test]
    fn every_partition_gets_a_router_and_bad_counts_are_refused() {
        let t = topology("[topology]\nkind='torus'\ndims=[3,3]", 9);
        for parts in 1..=9 {
            let p = partition(&t, parts, |_| 1, "t").unwrap();
            let mut seen = vec![false; parts as usize];
            p.of_router.iter().for_each(|&q| seen[q as usize] = true);
            assert!(
                seen.iter().all(|&s| s),
                "{parts} partitions: {:?}",
                p.of_router
            );
        }
        let e = partition(&t, 10, |_| 1, "t").unwrap_err().to_string();
        assert!(
            e.contains("10 partitions for a torus of 9 router(s)"),
            "{e}"
        );
        assert!(partition(&t, 0, |_| 1, "t").is_err());
        let e = partition(&t, 2, |_| 0, "t").unwrap_err().to_string();
        assert!(e.contains("no latency"), "{e}");
    }
}
