//! Packets per NIC and the paths they took, and the same over all NICs.

use crate::machine::topology::Topology;
use crate::network::NicStats;
use serde::Serialize;

/// Packets of one NIC and their paths (ACES reports hop counts per NIC).
#[derive(Debug, Clone, Serialize)]
pub struct NicResult {
    pub nic: u32,
    pub node: u32,
    pub injected_packets: u64,
    pub ejected_packets: u64,
    /// Mean router-to-router hops of the packets it injected (over those delivered).
    pub mean_hops: f64,
    /// Fraction of the packets it injected that were routed minimally (over those delivered).
    pub minimal_fraction: f64,
}

/// The NICs that sent or received a packet.
pub fn nics(stats: &[NicStats], topo: &Topology) -> Vec<NicResult> {
    stats
        .iter()
        .enumerate()
        .filter(|(_, s)| s.injected_packets > 0 || s.ejected_packets > 0)
        .map(|(i, s)| NicResult {
            nic: i as u32,
            node: topo.nic_node(i as u32),
            injected_packets: s.injected_packets,
            ejected_packets: s.ejected_packets,
            mean_hops: mean_hops(s.hops, s.delivered_packets),
            minimal_fraction: minimal_fraction(s.minimal_packets, s.delivered_packets),
        })
        .collect()
}

/// Mean hops and the fraction routed minimally over the packets of all NICs.
pub fn over_all(stats: &[NicStats]) -> (f64, f64) {
    // Over the packets delivered: hops and routes are counted when a packet arrives.
    let delivered = stats.iter().map(|s| s.delivered_packets).sum();
    (
        mean_hops(stats.iter().map(|s| s.hops).sum(), delivered),
        minimal_fraction(stats.iter().map(|s| s.minimal_packets).sum(), delivered),
    )
}

/// Mean hops of `packets` packets that made `hops` hops in all (0 without packets).
pub fn mean_hops(hops: u64, packets: u64) -> f64 {
    if packets == 0 {
        0.0
    } else {
        hops as f64 / packets as f64
    }
}

/// The fraction of `packets` packets that were routed minimally (1 without packets).
pub fn minimal_fraction(minimal: u64, packets: u64) -> f64 {
    if packets == 0 {
        1.0
    } else {
        minimal as f64 / packets as f64
    }
}
