//! Routing decisions that need the network's state or its random numbers: Valiant and UGAL
//! on the dragonfly (at the source router, from local queue occupancy) and random up ports
//! on fat trees. Deterministic routes come straight from the topology.

use super::state::*;
use crate::engine::Schedule;

impl PacketNetwork {
    /// The next hop of packet `p` at `router`. On a dragonfly the source router picks the
    /// path (minimal, Valiant or UGAL) and the VC class is the number of global links
    /// crossed, which keeps local-global-local(-global-local) paths deadlock-free. Other
    /// topologies route when the head arrives (`deterministic`); they only fall through here.
    pub(super) fn route(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        router: u32,
        p: u32,
    ) -> crate::machine::topology::Hop {
        let crate::machine::topology::Shape::Dragonfly { g, .. } = self.topo.shape else {
            let pkt = &self.packets[p as usize];
            let mut hop =
                self.topo
                    .route_between(router, pkt.src_router, pkt.dst_router, pkt.dst_nic);
            if let (
                Routing::RandomUp,
                crate::machine::topology::Shape::FatTree { k, n, per_level },
            ) = (self.params.routing, &self.topo.shape)
            {
                // Up ports are the last k of a switch below the top level: going up, draw
                // one of them (the level reached, and so the path's length, is the same).
                let base = self.topo.port_base[router as usize];
                let ports = self.topo.port_base[router as usize + 1] - base;
                let going_up = router / per_level + 1 < *n && hop.port >= base + ports - k;
                if going_up {
                    hop.port = base + ports - k + self.rng.below(*k as u64) as u32;
                }
            }
            return hop;
        };
        let pkt = self.packets[p as usize];
        let here = self.topo.group_of(router);
        let dst_group = self.topo.group_of(pkt.dst_router);
        let mut via = pkt.via;
        if pkt.hops == 0 && here != dst_group && g > 2 && self.params.routing != Routing::Minimal {
            // A random intermediate group, neither the source's nor the destination's.
            let mut v = self.rng.below(g as u64 - 2) as u32;
            for skip in {
                let mut s = [here.min(dst_group), here.max(dst_group)];
                s.sort_unstable();
                s
            } {
                if v >= skip {
                    v += 1;
                }
            }
            via = match self.params.routing {
                Routing::Valiant => v,
                Routing::Ugal { threshold } => {
                    let min_port = self
                        .topo
                        .route_dragonfly(router, pkt.dst_nic, NO_GROUP)
                        .port;
                    let nm_port = self.topo.route_dragonfly(router, pkt.dst_nic, v).port;
                    // Credits back by now count, whether or not they woke anything.
                    self.settle_credits(q, min_port, false);
                    self.settle_credits(q, nm_port, false);
                    // The packet's own bytes count on both paths, so that with empty queues
                    // the shorter path wins.
                    let own = pkt.bytes as u64;
                    let (qm, qn) = (
                        self.occupancy(min_port) + own,
                        self.occupancy(nm_port) + own,
                    );
                    let (hm, hn) = (
                        self.dragonfly_hops(router, pkt.dst_nic, NO_GROUP),
                        self.dragonfly_hops(router, pkt.dst_nic, v),
                    );
                    if (qm * hm) as f64 > threshold * (qn * hn) as f64 {
                        v
                    } else {
                        NO_GROUP
                    }
                }
                Routing::Minimal | Routing::RandomUp => NO_GROUP,
            };
        }
        if via == here {
            via = NO_GROUP; // reached the intermediate group: now minimal to the destination
        }
        let pm = &mut self.packets[p as usize];
        if via != NO_GROUP {
            pm.minimal = false;
        }
        pm.via = via;
        let mut hop = self.topo.route_dragonfly(router, pkt.dst_nic, via);
        hop.class = pm.ghops;
        hop
    }

    /// Router-to-router hops from `router` to the destination's router along a path.
    pub(super) fn dragonfly_hops(&self, mut router: u32, dst_nic: u32, mut via: u32) -> u64 {
        let dst_router = self.topo.nic_router(dst_nic);
        let mut n = 0;
        while router != dst_router && n < 8 {
            if via != NO_GROUP && self.topo.group_of(router) == via {
                via = NO_GROUP;
            }
            let hop = self.topo.route_dragonfly(router, dst_nic, via);
            match self.topo.peer[hop.port as usize] {
                crate::machine::topology::Peer::Router(p) => {
                    router = self.inputs[p as usize].router
                }
                _ => break,
            }
            n += 1;
        }
        n.max(1)
    }

    /// Bytes queued for an output port: waiting for it, plus held in the buffers it feeds.
    pub(super) fn occupancy(&self, link: u32) -> u64 {
        let mut waiting = 0u64;
        let mut p = self.links[link as usize].wait_head;
        while p != NONE {
            waiting += self.packets[p as usize].bytes as u64;
            p = self.packets[p as usize].wait_next;
        }
        let held: u64 = match self.params.buffer {
            Some(cap) => (0..self.params.vcs as u32)
                .map(|vc| {
                    (cap as i64 - self.credits[(link * self.params.vcs as u32 + vc) as usize])
                        .max(0) as u64
                })
                .sum(),
            None => 0,
        };
        waiting + held
    }
}
