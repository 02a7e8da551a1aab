//! Routing decisions that need the network's state or its random numbers. The policies are
//! the topology's (`machine/topology/dragonfly.rs`, `fat_tree.rs`); this file gives them
//! what only the network knows: the occupancy of the ports at the source router and the
//! packet's progress. Deterministic routes come straight from the topology when a head
//! arrives (`router.rs`).

use super::state::*;
use crate::engine::Schedule;
use crate::machine::options::Routing;
use crate::machine::topology::dragonfly::{Dragonfly, NO_GROUP};
use crate::machine::topology::fat_tree::FatTree;
use crate::machine::topology::hyperx::HyperX;
use crate::machine::topology::{Hop, Shape};

impl PacketNetwork {
    /// The next hop of packet `p` at `router`. On a dragonfly the source router picks the
    /// path (minimal, Valiant or UGAL) and the VC class is the number of global links
    /// crossed, which keeps local-global-local(-global-local) paths deadlock-free. On a fat
    /// tree with random routing an up port is drawn; with adaptive routing the least
    /// occupied one is taken.
    pub(super) fn route(&mut self, q: &mut impl Schedule<PacketEvent>, router: u32, p: u32) -> Hop {
        let pkt = &self.packets[p as usize];
        let (src, dst, dst_nic) = (pkt.src_router, pkt.dst_router, pkt.dst_nic);
        match &self.topo.shape {
            Shape::Dragonfly(d) => {
                let d = *d;
                self.route_dragonfly(q, &d, router, p)
            }
            Shape::FatTree(f) if self.params.routing == Routing::Adaptive => {
                let hop = self.topo.route_between(router, src, dst, dst_nic);
                let Some(first) = f.up_ports(&self.topo.ports, router, hop) else {
                    return hop;
                };
                let k = f.k;
                FatTree::least_loaded_up(k, first, hop, |port| {
                    // Credits back by now count, whether or not they woke anything.
                    self.settle_credits(q, port, false);
                    self.occupancy(port)
                })
            }
            Shape::FatTree(f) if self.params.routing == Routing::RandomUp => {
                let hop = self.topo.route_between(router, src, dst, dst_nic);
                f.random_up(
                    &self.topo.ports,
                    router,
                    hop,
                    &mut self.rngs[router as usize],
                )
            }
            Shape::HyperX(_)
                if router != dst && matches!(self.params.routing, Routing::Dal { .. }) =>
            {
                self.route_hyperx_dal(q, router, p)
            }
            Shape::HyperX(h) if self.params.routing == Routing::Adaptive && router != dst => {
                let (ports, n) = h.productive_ports(&self.topo.ports, router, dst);
                let hops = u32::from(self.packets[p as usize].hops);
                HyperX::least_loaded(&ports[..n], hops, |port| {
                    // Credits back by now count, whether or not they woke anything.
                    self.settle_credits(q, port, false);
                    self.occupancy(port)
                })
            }
            Shape::Grid(_) if self.params.routing == Routing::Adaptive && router != dst => {
                self.route_grid_adaptive(q, router, p)
            }
            Shape::SlimFly(_) if router != dst || self.packets[p as usize].via != NO_GROUP => {
                self.route_slim_fly(q, router, p)
            }
            Shape::Graph(g) if g.layered() && router != dst => {
                let mut hop = self.topo.route_between(router, src, dst, dst_nic);
                hop.class = self.packets[p as usize].hops.min(u8::MAX as u16) as u8;
                hop
            }
            Shape::FatTree(_)
            | Shape::Graph(_)
            | Shape::SlimFly(_)
            | Shape::Crossbar
            | Shape::Grid(_)
            | Shape::LeafSpine(_)
            | Shape::HyperX(_) => self.topo.route_between(router, src, dst, dst_nic),
        }
    }

    fn route_dragonfly(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        d: &Dragonfly,
        router: u32,
        p: u32,
    ) -> Hop {
        let pkt = self.packets[p as usize];
        let here = d.group_of(router);
        let dst_group = d.group_of(pkt.dst_router);
        let mut via = pkt.via;
        let mut copy = pkt.copy;
        if pkt.hops == 0 {
            copy = match d.by_load && here != dst_group {
                true => self.least_loaded_copy(q, d, router, &pkt),
                false => d.hashed_copy(&self.topo.ports, pkt.dst_nic),
            };
        }
        let at_source = pkt.hops == 0 && d.has_intermediate(here, dst_group);
        if at_source && self.params.routing != Routing::Minimal {
            let v = d.draw_intermediate(here, dst_group, &mut self.rngs[router as usize]);
            via = match self.params.routing {
                Routing::Valiant => v,
                Routing::Ugal { threshold } => {
                    if self.ugal_goes_around(q, d, router, &pkt, (v, copy), threshold) {
                        v
                    } else {
                        NO_GROUP
                    }
                }
                Routing::Minimal | Routing::RandomUp | Routing::Adaptive | Routing::Dal { .. } => {
                    NO_GROUP
                }
            };
        }
        let via = self.note_via(p, via, here);
        let pm = &mut self.packets[p as usize];
        pm.copy = copy;
        let mut hop = d.route_copy(&self.topo.ports, router, pkt.dst_nic, via, copy);
        hop.class = pm.ghops;
        hop
    }

    /// Slim Fly: minimal, or (Valiant, UGAL) through an intermediate router drawn at the
    /// source, on VC class = hops taken.
    fn route_slim_fly(&mut self, q: &mut impl Schedule<PacketEvent>, router: u32, p: u32) -> Hop {
        let pkt = self.packets[p as usize];
        let dst = pkt.dst_router;
        let base = self.topo.ports.port_base[router as usize];
        let Shape::SlimFly(s) = &self.topo.shape else {
            unreachable!("called on a Slim Fly")
        };
        let mut via = pkt.via;
        if pkt.hops == 0 && router != dst && self.params.routing != Routing::Minimal {
            let v = s.draw_intermediate(router, dst, &mut self.rngs[router as usize]);
            let min = (s.route(base, router, dst, 0).port, s.hops(router, dst));
            let around = (
                s.route(base, router, v, 0).port,
                s.hops(router, v) + s.hops(v, dst),
            );
            via = match self.params.routing {
                Routing::Ugal { threshold } => {
                    match self.ugal_prefers(min, around, pkt.bytes as u64, threshold, q) {
                        true => v,
                        false => NO_GROUP,
                    }
                }
                _ => v,
            };
        }
        let via = self.note_via(p, via, router);
        let Shape::SlimFly(s) = &self.topo.shape else {
            unreachable!("called on a Slim Fly")
        };
        let target = if via == NO_GROUP { dst } else { via };
        s.route(base, router, target, pkt.hops.min(3) as u8)
    }

    /// HyperX, DAL: the least loaded minimal port, or the least loaded hop to another
    /// coordinate of a dimension still to correct (once per dimension), when the minimal
    /// port's queued bytes (the packet's own counting on both) exceed the threshold times
    /// twice the other's: a deroute costs that dimension two hops instead of one. VC class
    /// = hops taken.
    fn route_hyperx_dal(&mut self, q: &mut impl Schedule<PacketEvent>, router: u32, p: u32) -> Hop {
        let Shape::HyperX(h) = &self.topo.shape else {
            unreachable!("called on a HyperX")
        };
        let Routing::Dal { threshold } = self.params.routing else {
            unreachable!("called with DAL routing")
        };
        let pkt = self.packets[p as usize];
        let mut candidates = std::mem::take(&mut self.route_scratch);
        h.dal_candidates(
            &self.topo.ports,
            router,
            pkt.dst_router,
            pkt.copy,
            &mut candidates,
        );
        let (port, deroute) =
            HyperX::dal_choice(&candidates, u64::from(pkt.bytes), threshold, |port| {
                // Credits back by now count, whether or not they woke anything.
                self.settle_credits(q, port, false);
                self.occupancy(port)
            });
        self.route_scratch = candidates;
        if let Some(dim) = deroute {
            let pm = &mut self.packets[p as usize];
            pm.copy |= 1 << dim;
            pm.minimal = false;
        }
        Hop {
            port,
            class: pkt.hops.min(u8::MAX as u16) as u8,
        }
    }

    /// Mesh and torus, minimal adaptive with escape channels (Duato): of the ports that
    /// bring the packet closer, the least occupied whose adaptive VCs have room for it and
    /// for every packet already waiting for that port, on the adaptive class; if none has,
    /// the escape hop (dimension order, `Grid::escape_hop`). A packet on an adaptive VC
    /// thus never waits for buffer space, only packets on the escape channels do, and
    /// those are deadlock-free: so is the whole.
    fn route_grid_adaptive(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        router: u32,
        p: u32,
    ) -> Hop {
        let Shape::Grid(g) = &self.topo.shape else {
            unreachable!("called on a grid")
        };
        let pkt = &self.packets[p as usize];
        let (dst, bytes) = (pkt.dst_router, pkt.bytes as i64);
        let base = self.topo.ports.port_base[router as usize];
        let (ports, n) = g.productive_ports(base, router, dst);
        let escape = g.escape_hop(base, router, dst);
        let class = g.adaptive_class();
        let (lo, hi) = self.class_range[class as usize];
        let vcs = self.params.vcs as usize;
        let mut best: Option<(u64, u32)> = None;
        for &port in &ports[..n] {
            // Credits back by now count, whether or not they woke anything.
            self.settle_credits(q, port, false);
            let waiting = self.waiting_bytes(port);
            let credits = &self.credits[port as usize * vcs..][..vcs];
            let room = (lo..hi).map(|vc| credits[vc as usize]).max().unwrap_or(0);
            if room < bytes.saturating_add(waiting as i64) {
                continue;
            }
            let load = waiting + self.held_bytes(port);
            if best.is_none_or(|(l, _)| load < l) {
                best = Some((load, port));
            }
        }
        match best {
            Some((_, port)) => Hop { port, class },
            None => escape,
        }
    }

    /// Bytes of the packets waiting for output `link`.
    fn waiting_bytes(&self, link: u32) -> u64 {
        let mut waiting = 0u64;
        let mut p = self.links[link as usize].wait_head;
        while p != NONE {
            waiting += self.packets[p as usize].bytes as u64;
            p = self.packets[p as usize].wait_next;
        }
        waiting
    }

    /// Records where packet `p` goes through (`via`: a group or router, `NO_GROUP` for
    /// none), none once it is `here`, and that it left the minimal path; gives it back.
    fn note_via(&mut self, p: u32, via: u32, here: u32) -> u32 {
        // Reached the intermediate group or router: now minimal to the destination.
        let via = if via == here { NO_GROUP } else { via };
        let pm = &mut self.packets[p as usize];
        if via != NO_GROUP {
            pm.minimal = false;
        }
        pm.via = via;
        via
    }

    /// `global_choice = "load"`: of the parallel global links toward the destination's
    /// group, the one whose first port here has the fewest bytes queued (ties keep the
    /// destination's own, then the lowest).
    fn least_loaded_copy(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        d: &Dragonfly,
        router: u32,
        pkt: &Packet,
    ) -> u32 {
        let hashed = d.hashed_copy(&self.topo.ports, pkt.dst_nic);
        let mut best = (u64::MAX, hashed);
        for k in 0..d.copies() {
            let c = (hashed + k) % d.copies();
            let port = d
                .route_copy(&self.topo.ports, router, pkt.dst_nic, NO_GROUP, c)
                .port;
            self.settle_credits(q, port, false);
            let load = self.occupancy(port);
            if load < best.0 {
                best = (load, c);
            }
        }
        best.1
    }

    /// UGAL at the source router: the queued bytes of the first port of each path (the
    /// packet's own counting on both, so that with empty queues the shorter path wins)
    /// times the path's hops; both paths over the packet's parallel global link `copy`.
    fn ugal_goes_around(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        d: &Dragonfly,
        router: u32,
        pkt: &Packet,
        (via, copy): (u32, u32),
        threshold: f64,
    ) -> bool {
        let ports = &self.topo.ports;
        let min_port = d
            .route_copy(ports, router, pkt.dst_nic, NO_GROUP, copy)
            .port;
        let nm_port = d.route_copy(ports, router, pkt.dst_nic, via, copy).port;
        let hm = d.path_hops(ports, router, pkt.dst_nic, NO_GROUP, copy);
        let hn = d.path_hops(ports, router, pkt.dst_nic, via, copy);
        self.ugal_prefers(
            (min_port, hm),
            (nm_port, hn),
            pkt.bytes as u64,
            threshold,
            q,
        )
    }

    /// UGAL's choice between the minimal path and the other, each given by its first port
    /// and its hops: the other wins when the minimal one's queued bytes × hops exceed
    /// `threshold` times its own (the packet's own `bytes` counting on both, so that with
    /// empty queues the shorter path wins).
    fn ugal_prefers(
        &mut self,
        (min_port, hm): (u32, u64),
        (nm_port, hn): (u32, u64),
        bytes: u64,
        threshold: f64,
        q: &mut impl Schedule<PacketEvent>,
    ) -> bool {
        // Credits back by now count, whether or not they woke anything.
        self.settle_credits(q, min_port, false);
        self.settle_credits(q, nm_port, false);
        let qm = self.occupancy(min_port) + bytes;
        let qn = self.occupancy(nm_port) + bytes;
        Dragonfly::ugal_goes_around((qm, hm), (qn, hn), threshold)
    }

    /// Bytes queued for an output port: waiting for it, plus held in the buffers it feeds.
    pub(super) fn occupancy(&self, link: u32) -> u64 {
        self.waiting_bytes(link) + self.held_bytes(link)
    }

    /// Bytes held in the buffers output `link` feeds (none without finite buffers).
    fn held_bytes(&self, link: u32) -> u64 {
        match self.params.buffer {
            Some(cap) => (0..self.params.vcs as u32)
                .map(|vc| {
                    (cap as i64 - self.credits[(link * self.params.vcs as u32 + vc) as usize])
                        .max(0) as u64
                })
                .sum(),
            None => 0,
        }
    }
}
