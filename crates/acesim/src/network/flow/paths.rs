//! The route of a message: the links from its NIC to the destination's, by the topology's
//! routing function. A message takes one path. Where the packet model chooses per packet,
//! the flow model chooses once per message, by the same rules: a random up port at each
//! switch of a fat tree (`random`), or the up port whose link carries the fewest flows
//! (`adaptive`; on a mesh, torus or HyperX the productive port whose link carries the
//! fewest flows), a random intermediate group on a dragonfly (Valiant),
//! and for UGAL the path whose first link carries fewer flows, weighted by hops, as the
//! packet model weighs queued bytes (docs/flow.md).

use super::maxmin::MaxMin;
use super::state::*;
use crate::ids::NONE;
use crate::machine::options::Routing;
use crate::machine::topology::dragonfly::{Dragonfly, NO_GROUP};
use crate::machine::topology::fat_tree::FatTree;
use crate::machine::topology::hyperx::HyperX;
use crate::machine::topology::{Hop, Peer, Ports, Shape};
use crate::rng::Rng;

/// A route's router-to-router hops, and whether it is minimal.
pub(super) struct Route {
    pub(super) hops: u32,
    pub(super) minimal: bool,
}

impl FlowNetwork {
    /// The links from `src_nic` to `dst_nic` into `links` (none between two NICs of one
    /// node).
    pub(super) fn route(&mut self, src_nic: u32, dst_nic: u32, links: &mut Vec<u32>) -> Route {
        links.clear();
        let topo = &self.topo;
        if topo.nic_node(src_nic) == topo.nic_node(dst_nic) {
            return Route {
                hops: 0,
                minimal: true,
            };
        }
        let (src, dst) = (topo.nic_router(src_nic), topo.nic_router(dst_nic));
        // Routes that depend on the two ends alone (and the up ports' choice) are written
        // at once; the others are walked hop by hop.
        match &topo.shape {
            Shape::FatTree(f) => {
                let by = (self.params.routing, &mut self.rng);
                let loads = (&self.solver, &self.link_resource[..]);
                return fat_tree_route(f, &topo.ports, by, loads, (src_nic, dst_nic), links);
            }
            Shape::Grid(g) if self.params.routing != Routing::Adaptive => {
                links.push(topo.num_ports() + src_nic);
                let hops = g.path(&topo.ports, (src, dst), dst_nic, links);
                return Route {
                    hops,
                    minimal: true,
                };
            }
            _ => {}
        }
        let (via, copy) = match &topo.shape {
            Shape::Dragonfly(d) => {
                let d = *d;
                let copy = self.global_copy(&d, src, dst, dst_nic);
                (self.intermediate_group(&d, src, dst, (dst_nic, copy)), copy)
            }
            Shape::SlimFly(_) => (self.slim_fly_intermediate(src, dst), 0),
            Shape::Crossbar
            | Shape::Grid(_)
            | Shape::FatTree(_)
            | Shape::LeafSpine(_)
            | Shape::HyperX(_)
            | Shape::Graph(_) => (NO_GROUP, 0),
        };
        let topo = &self.topo;
        links.push(topo.num_ports() + src_nic);
        let (mut router, mut via_left, mut hops) = (src, via, 0);
        // HyperX with DAL: the dimensions derouted in so far.
        let mut derouted = 0u32;
        loop {
            let hop = match &topo.shape {
                Shape::Dragonfly(d) => {
                    if via_left != NO_GROUP && d.group_of(router) == via_left {
                        via_left = NO_GROUP;
                    }
                    d.route_copy(&topo.ports, router, dst_nic, via_left, copy)
                }
                Shape::SlimFly(s) if via_left != NO_GROUP || router != dst => {
                    if router == via_left {
                        via_left = NO_GROUP;
                    }
                    let target = if via_left == NO_GROUP { dst } else { via_left };
                    s.route(topo.ports.port_base[router as usize], router, target, 0)
                }
                Shape::Grid(g) if self.params.routing == Routing::Adaptive && router != dst => {
                    let (solver, resource) = (&self.solver, &self.link_resource);
                    let base = topo.ports.port_base[router as usize];
                    let (ports, n) = g.productive_ports(base, router, dst);
                    HyperX::least_loaded(&ports[..n], 0, |port| match resource[port as usize] {
                        NONE => 0,
                        r => solver.flows_on(r) as u64,
                    })
                }
                Shape::HyperX(h)
                    if router != dst && matches!(self.params.routing, Routing::Dal { .. }) =>
                {
                    let Routing::Dal { threshold } = self.params.routing else {
                        unreachable!("matched DAL")
                    };
                    hyperx_dal(
                        (h, &topo.ports),
                        (&self.solver, &self.link_resource),
                        threshold,
                        (router, dst),
                        &mut derouted,
                        &mut self.route_scratch,
                    )
                }
                Shape::HyperX(h) if self.params.routing == Routing::Adaptive && router != dst => {
                    let (solver, resource) = (&self.solver, &self.link_resource);
                    let (ports, n) = h.productive_ports(&topo.ports, router, dst);
                    HyperX::least_loaded(&ports[..n], 0, |port| match resource[port as usize] {
                        NONE => 0,
                        r => solver.flows_on(r) as u64,
                    })
                }
                _ => topo.route_between(router, src, dst, dst_nic),
            };
            links.push(hop.port);
            match topo.ports.peer[hop.port as usize] {
                Peer::Router(p) => {
                    router = topo.ports.port_router[p as usize];
                    hops += 1;
                }
                Peer::Nic(_) | Peer::None => break,
            }
        }
        Route {
            hops,
            minimal: via == NO_GROUP && derouted == 0,
        }
    }

    /// Dragonfly: which of the parallel global links between groups a message takes: by
    /// destination, or (`global_choice = "load"`) the one whose first link from the source
    /// router carries the fewest flows (ties keep the destination's own, then the lowest).
    fn global_copy(&self, d: &Dragonfly, src: u32, dst: u32, dst_nic: u32) -> u32 {
        let ports = &self.topo.ports;
        let hashed = d.hashed_copy(ports, dst_nic);
        if !d.by_load || d.group_of(src) == d.group_of(dst) {
            return hashed;
        }
        let mut best = (usize::MAX, hashed);
        for k in 0..d.copies() {
            let c = (hashed + k) % d.copies();
            let port = d.route_copy(ports, src, dst_nic, NO_GROUP, c).port;
            let r = self.link_resource[port as usize];
            let load = if r == NONE {
                0
            } else {
                self.solver.flows_on(r)
            };
            if load < best.0 {
                best = (load, c);
            }
        }
        best.1
    }

    /// Slim Fly: the router a message goes through first (`NO_GROUP`: minimal): Valiant's
    /// random one, or for UGAL that one when its path's first link carries fewer flows
    /// weighted by hops than the minimal path's.
    fn slim_fly_intermediate(&mut self, src: u32, dst: u32) -> u32 {
        let Shape::SlimFly(s) = &self.topo.shape else {
            return NO_GROUP;
        };
        if src == dst || !matches!(self.params.routing, Routing::Valiant | Routing::Ugal { .. }) {
            return NO_GROUP;
        }
        let v = s.draw_intermediate(src, dst, &mut self.rng);
        let Routing::Ugal { threshold } = self.params.routing else {
            return v;
        };
        let base = self.topo.ports.port_base[src as usize];
        let load = |port: u32| match self.link_resource[port as usize] {
            NONE => 1,
            r => self.solver.flows_on(r) as u64 + 1,
        };
        let minimal = (load(s.route(base, src, dst, 0).port), s.hops(src, dst));
        let around = (
            load(s.route(base, src, v, 0).port),
            s.hops(src, v) + s.hops(v, dst),
        );
        match Dragonfly::ugal_goes_around(minimal, around, threshold) {
            true => v,
            false => NO_GROUP,
        }
    }

    /// Dragonfly: the group a message goes through first (`NO_GROUP`: minimal), its
    /// paths over parallel global link `copy`.
    fn intermediate_group(
        &mut self,
        d: &Dragonfly,
        src: u32,
        dst: u32,
        (dst_nic, copy): (u32, u32),
    ) -> u32 {
        let (here, there) = (d.group_of(src), d.group_of(dst));
        if !d.has_intermediate(here, there) || self.params.routing == Routing::Minimal {
            return NO_GROUP;
        }
        let v = d.draw_intermediate(here, there, &mut self.rng);
        match self.params.routing {
            Routing::Valiant => v,
            Routing::Ugal { threshold } => {
                let ports = &self.topo.ports;
                let first = |via| d.route_copy(ports, src, dst_nic, via, copy).port;
                let load = |port: u32| {
                    let r = self.link_resource[port as usize];
                    if r == NONE {
                        1
                    } else {
                        self.solver.flows_on(r) as u64 + 1
                    }
                };
                let minimal = (
                    load(first(NO_GROUP)),
                    d.path_hops(ports, src, dst_nic, NO_GROUP, copy),
                );
                let around = (load(first(v)), d.path_hops(ports, src, dst_nic, v, copy));
                match Dragonfly::ugal_goes_around(minimal, around, threshold) {
                    true => v,
                    false => NO_GROUP,
                }
            }
            Routing::Minimal | Routing::RandomUp | Routing::Adaptive | Routing::Dal { .. } => {
                NO_GROUP
            }
        }
    }
}

/// HyperX, DAL at `router`: as the packet model decides (`network::packet::routing`),
/// with the flows on a link for its queued bytes (the message's own counting on both).
/// `derouted` gains the dimension of a deroute. A function of the fields it reads, so
/// that the route's loop keeps its borrow of the topology.
fn hyperx_dal(
    (h, ports): (&HyperX, &Ports),
    (solver, link_resource): (&MaxMin, &[u32]),
    threshold: f64,
    (router, dst): (u32, u32),
    derouted: &mut u32,
    candidates: &mut Vec<(u32, u8, bool)>,
) -> Hop {
    h.dal_candidates(ports, router, dst, *derouted, candidates);
    let (port, deroute) = HyperX::dal_choice(candidates, 1, threshold, |port| match link_resource
        [port as usize]
    {
        NONE => 0,
        r => solver.flows_on(r) as u64,
    });
    if let Some(dim) = deroute {
        *derouted |= 1 << dim;
    }
    Hop { port, class: 0 }
}

/// A fat tree's route, written at once (`FatTree::path`), the up ports chosen as the
/// routing says (at random, or the least loaded by the solver's flows on each link).
fn fat_tree_route(
    f: &FatTree,
    ports: &Ports,
    (routing, rng): (Routing, &mut Rng),
    (solver, resource): (&MaxMin, &[u32]),
    (src_nic, dst_nic): (u32, u32),
    links: &mut Vec<u32>,
) -> Route {
    links.push(ports.peer.len() as u32 + src_nic);
    let ends = (ports.nic_node(src_nic), dst_nic);
    let hops = match routing {
        Routing::RandomUp => f.path(
            ports,
            ends,
            |first, hop| Hop {
                port: first + rng.below(f.k as u64) as u32,
                ..hop
            },
            links,
        ),
        Routing::Adaptive => f.path(
            ports,
            ends,
            |first, hop| {
                FatTree::least_loaded_up(f.k, first, hop, |port| match resource[port as usize] {
                    NONE => 0,
                    r => solver.flows_on(r) as u64,
                })
            },
            links,
        ),
        _ => f.path(ports, ends, |_, hop| hop, links),
    };
    Route {
        hops,
        minimal: true,
    }
}
