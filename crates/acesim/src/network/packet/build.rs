//! Building the packet network from a machine: link classes, buffers, VC classes, and
//! what it will cost in memory.

use super::state::*;
use crate::machine::loaded::Machine;
use crate::machine::options::{Routing, SwitchAllocator};
use crate::machine::topology::{LinkClass, LinkEnd, PlannedSize, Shape, Topology};
use crate::network::interface::{LinkStats, NetStats, NicStats};
use crate::network::link_kinds::{link_kinds, router_delay};
use crate::prefault;
use crate::zero_pages::ZeroPages;
use std::collections::HashMap;
use std::sync::Arc;

impl NetParams {
    pub fn from_config(c: &Machine) -> NetParams {
        let r = &c.router;
        NetParams {
            router_delay: router_delay(c),
            vcs: r.vcs as u8,
            buffer: r.buffer_per_vc.limit().map(|s| s.0),
            dma_rate: c.nic.dma_rate.0,
            memory_bandwidth: c.node.memory_bandwidth.limit().map(|b| b.0),
            max_payload: c.nic.mtu.0 - c.nic.header.0,
            header: c.nic.header.0,
            control: c.nic.control_packet.0,
            injection_queue: c.nic.injection_queue as usize,
            routing: c.routing,
            routing_seed: c.router.routing_seed,
            oldest_first: c.switch_allocator == SwitchAllocator::Age,
        }
    }

    /// Packets needed for `payload` bytes (a zero-byte message still sends a header).
    pub fn packets_for(&self, payload: u64) -> u64 {
        payload.div_ceil(self.max_payload).max(1)
    }
}

impl PacketNetwork {
    pub fn new(topo: Topology, config: &Machine) -> PacketNetwork {
        Self::build(topo, config, None)
    }

    /// Partition `me` of a parallel run whose routers are split by `of_router`. Its
    /// arrays are indexed by the whole machine's ids but written only where it works: the
    /// links and router inputs at its routers, the counts and credits of the links its
    /// routers and NICs send on. The rest stay zero pages the system does not back with
    /// memory (a partition of two holds half the machine's link and input rows).
    pub fn new_partition(
        topo: Topology,
        config: &Machine,
        me: u32,
        of_router: Arc<Vec<u32>>,
    ) -> PacketNetwork {
        let mut net = Self::build(topo, config, Some((me, &of_router)));
        net.make_partition(me, of_router);
        net.map_own_counts();
        net
    }

    /// The network, or partition `part` (its index, and the partition of every router).
    fn build(topo: Topology, config: &Machine, part: Option<(u32, &[u32])>) -> PacketNetwork {
        let params = NetParams::from_config(config);
        let nl = topo.num_links();
        let kinds = link_kinds(config);
        // A partition holds the routers `part` gives it, their NICs, and the links that
        // leave or enter them. The other entries of its machine-wide arrays stay zero
        // pages that the system never backs with memory.
        let holds_router = |r: u32| part.is_none_or(|(me, of)| of[r as usize] == me);
        let holds_link = |l: u32| {
            holds_router(topo.link_router(l))
                || match topo.link_end(l) {
                    Some(LinkEnd::RouterIn(port)) => {
                        holds_router(topo.ports.port_router[port as usize])
                    }
                    Some(LinkEnd::NicIn(nic)) => holds_router(topo.nic_router(nic)),
                    None => false,
                }
        };
        let mut links = ZeroPages::<Link>::new(nl as usize);
        // A whole network writes every row now: mapped at once, they cost less than a
        // fault a page (`prefault::populate`; 0.64–0.72 s against 0.75–0.83 s for
        // `nn-1m`'s network). Partitions building side by side on threads took longer
        // so (0.81–0.90 s against 0.67 s): they fault their halves in as they write.
        if part.is_none() {
            prefault::populate(&mut links);
        }
        for l in (0..nl).filter(|&l| holds_link(l)) {
            let class = topo.link_class(l);
            let (to, to_nic) = match topo.link_end(l) {
                Some(LinkEnd::RouterIn(port)) => (port, false),
                Some(LinkEnd::NicIn(nic)) => (nic, true),
                None => (NONE, false),
            };
            links[l as usize] = Link {
                busy_until: 0,
                free_seq: 0,
                stalled_since: NOT_STALLED,
                ser_memo: (0, 0),
                wait_head: NONE,
                wait_tail: NONE,
                wait_len: 0,
                rr_last: u32::MAX,
                to,
                pending_credit: NO_CREDIT,
                kind: topo.link_kind(l),
                free_pending: false,
                to_nic,
                network_hop: l < topo.num_ports() && !to_nic && to != NONE,
                global: class == LinkClass::Global,
            };
        }
        let vcs = params.vcs as usize;
        // A partition sends on the links that leave its routers (and their NICs).
        let sends_on = |l: u32| holds_router(topo.link_router(l));
        let mut credits = vec![0i64; nl as usize * vcs];
        if part.is_none() {
            prefault::populate(&mut credits);
        }
        let buffer = params.buffer.map_or(i64::MAX, |b| b as i64);
        for l in (0..nl).filter(|&l| sends_on(l)) {
            credits[l as usize * vcs..(l as usize + 1) * vcs].fill(buffer);
        }
        let fifos = if vcs > INLINE_VCS {
            vec![(NONE, NONE); topo.num_ports() as usize * vcs]
        } else {
            Vec::new()
        };
        let mut inputs = ZeroPages::<Input>::new(topo.num_ports() as usize);
        if part.is_none() {
            prefault::populate(&mut inputs);
        }
        for port in 0..topo.num_ports() {
            let router = topo.ports.port_router[port as usize];
            if holds_router(router) {
                inputs[port as usize] = Input {
                    fifo: [(NONE, NONE); INLINE_VCS],
                    xbar_free: 0,
                    free_seq: 0,
                    router,
                    upstream: topo.link_into_port(port).unwrap_or(NONE),
                    routed: 0,
                    free_pending: false,
                    last_vc: 0,
                    crossing: 0,
                };
            }
        }
        let nics = vec![Nic::default(); topo.num_nics() as usize];
        let topo_nics = topo.num_nics() as usize;
        let params_seed = params.routing_seed;
        let topo_routers = topo.num_routers;
        let deterministic =
            // A dragonfly's, a Slim Fly's and a layered graph's VC class counts the hops a
            // packet took.
            !matches!(topo.shape, Shape::Dragonfly(_) | Shape::SlimFly(_))
                && !matches!(&topo.shape, Shape::Graph(g) if g.layered())
                && params.routing == Routing::Minimal;
        let node_mem_free = vec![0; topo.num_nodes as usize];
        let mut net = PacketNetwork {
            topo,
            params,
            links,
            kinds,
            stats: NetStats::new(nl as usize, topo_nics),
            credits,
            class_range: [(0, 0); 256],
            pending_credits: Vec::new(),
            big_credits: Vec::new(),
            free_big_credits: Vec::new(),
            free_pending_credit: NO_CREDIT,
            inputs,
            fifos,
            long_crossings: HashMap::new(),
            nics,
            node_mem_free,
            packets: Vec::new(),
            free_packets: Vec::new(),
            messages: Vec::new(),
            free_messages: Vec::new(),
            notices: Vec::new(),
            live_packets: 0,
            // Only routing that draws needs them (Valiant, UGAL, random up ports).
            rngs: if deterministic {
                Vec::new()
            } else {
                (0..topo_routers)
                    .map(|r| crate::rng::Rng::stream(params_seed, u64::from(r)))
                    .collect()
            },
            checks: None,
            eager_credits: false,
            deterministic,
            route_scratch: Vec::new(),
            split: None,
        };
        net.fill_class_ranges();
        net
    }

    /// The VCs of every class, computed once (see `class_vcs`).
    pub(super) fn fill_class_ranges(&mut self) {
        for class in 0..=255u8 {
            self.class_range[class as usize] = self.class_vcs(class);
        }
    }

    /// VCs of a class: the VCs are split evenly between the classes routing needs.
    pub(super) fn class_vcs(&self, class: u8) -> (u8, u8) {
        let vcs = self.params.vcs;
        let classes = self.topo.vc_classes.min(vcs);
        let class = class.min(classes - 1);
        let per = vcs / classes;
        let lo = class * per;
        let hi = if class + 1 == classes { vcs } else { lo + per };
        (lo, hi)
    }

    /// Bytes `PacketNetwork::new` allocates for `topo` with `vcs` VCs, and per message sent.
    pub fn estimate_bytes(size: &PlannedSize, vcs: u64, messages: u64) -> u64 {
        use std::mem::size_of;
        size.links() * (size_of::<Link>() + size_of::<LinkStats>()) as u64
            + size.links() * vcs * 8
            + size.ports * size_of::<Input>() as u64
            + if vcs > INLINE_VCS as u64 {
                size.ports * vcs * 8
            } else {
                0
            }
            + size.nics * (size_of::<Nic>() + size_of::<NicStats>()) as u64
            + size.nodes * 8
            + messages * size_of::<Message>() as u64
    }

    /// Makes every returned credit an event, even one that wakes nothing: the plain
    /// schedule that keeping such credits off the queue must reproduce exactly (tests).
    #[doc(hidden)]
    pub fn every_credit_an_event(&mut self) {
        self.eager_credits = true;
    }

    pub(super) fn kind(&self, link: u32) -> &LinkKind {
        &self.kinds[self.links[link as usize].kind as usize]
    }
}
