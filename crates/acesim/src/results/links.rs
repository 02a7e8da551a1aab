//! One row per directed link: what crossed it, how busy it was, and what waited for it.

use crate::machine::topology::{LinkEnd, Peer};
use crate::network::Network;
use crate::units::Ps;
use compact_str::CompactString;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct LinkResult {
    pub link: u32,
    /// Held in place (names are short): a million-node machine has millions of links.
    pub name: CompactString,
    pub class: &'static str,
    pub bandwidth_bytes_per_s: u64,
    pub bytes: u64,
    pub packets: u64,
    pub busy_ps: Ps,
    pub utilization: f64,
    /// Time packets waited for the link, and the link idled for want of buffer space
    /// downstream: absent where the model has no packets and no buffers (`flow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_ps: Option<Ps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_ps: Option<Ps>,
    /// Routers at the two ends (absent at a NIC end).
    pub src_router: Option<u32>,
    pub dst_router: Option<u32>,
}

/// Every link that is wired (router ports with no peer are left out), its utilization over
/// a run of `elapsed`.
pub fn links(net: &impl Network, elapsed: Ps) -> Vec<LinkResult> {
    let topo = net.topology();
    let waits = net.model().measures_waiting();
    (0..topo.num_links())
        .filter(|&l| l >= topo.num_ports() || topo.ports.peer[l as usize] != Peer::None)
        .map(|l| {
            let s = net.link_stats(l);
            LinkResult {
                link: l,
                name: topo.link_name(l),
                class: topo.link_class(l).name(),
                bandwidth_bytes_per_s: net.link_rate(l),
                bytes: s.bytes,
                packets: s.packets,
                busy_ps: s.busy_ps,
                utilization: if elapsed > 0 {
                    s.busy_ps as f64 / elapsed as f64
                } else {
                    0.0
                },
                wait_ps: waits.then_some(s.wait_ps),
                stall_ps: waits.then_some(s.stall_ps),
                src_router: if l >= topo.num_ports() {
                    None
                } else {
                    Some(topo.ports.port_router[l as usize])
                },
                dst_router: match topo.link_end(l) {
                    Some(LinkEnd::RouterIn(p)) => Some(topo.ports.port_router[p as usize]),
                    Some(LinkEnd::NicIn(_)) | None => None,
                },
            }
        })
        .collect()
}
