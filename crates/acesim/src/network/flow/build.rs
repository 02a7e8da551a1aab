//! Building the flow model from a machine, and the solver resources it creates as messages
//! first use them: a link, a NIC's send or receive DMA engine, a node's memory.

use super::state::*;
use crate::ids::NONE;
use crate::machine::loaded::Machine;
use crate::machine::topology::{PlannedSize, Topology};
use crate::network::interface::{LinkCounts, NetStats, NicStats};
use crate::network::link_kinds::link_kinds;
use crate::rng::Rng;

/// Bytes per second as bytes per picosecond, the solver's unit.
pub(super) fn per_ps(bytes_per_s: u64) -> f64 {
    bytes_per_s as f64 / 1e12
}

impl FlowNetwork {
    pub fn new(topo: Topology, machine: &Machine) -> FlowNetwork {
        let params = FlowParams {
            dma_rate: machine.nic.dma_rate.0,
            memory_bandwidth: machine.node.memory_bandwidth.limit().map(|b| b.0),
            max_payload: machine.nic.mtu.0 - machine.nic.header.0,
            header: machine.nic.header.0,
            control: machine.nic.control_packet.0,
            injection_queue: machine.nic.injection_queue as u64,
            routing: machine.routing,
        };
        let (links, nics, nodes) = (
            topo.num_links() as usize,
            topo.num_nics() as usize,
            topo.num_nodes as usize,
        );
        FlowNetwork {
            kinds: link_kinds(machine),
            params,
            solver: Default::default(),
            link_resource: vec![NONE; links],
            route_scratch: Vec::new(),
            tx_resource: vec![NONE; nics],
            rx_resource: vec![NONE; nics],
            memory_resource: vec![NONE; nodes],
            messages: Vec::new(),
            free_messages: Vec::new(),
            controls: Vec::new(),
            free_controls: Vec::new(),
            routes: Vec::new(),
            free_routes: Vec::new(),
            tx_busy: vec![false; nics],
            tx_queue: super::queues::Queues::new(nics),
            moving: vec![NONE; nics],
            waiting: super::queues::Queues::new(nics),
            inject_free: vec![0; nics],
            reserved: super::reservations::Reservations::new(links + nics),
            flow_message: Vec::new(),
            solve_due: false,
            changed: Vec::new(),
            timings: Default::default(),
            busy_times: Default::default(),
            route_links: Vec::new(),
            uses: Vec::new(),
            notices: Vec::new(),
            active: 0,
            rng: Rng::new(machine.router.routing_seed),
            stats: NetStats::new(0, nics),
            // Zero pages until counted.
            link_counts: bytemuck::zeroed_vec(links),
            checks: false,
            violation: None,
            coupling: None,
            topo,
        }
    }

    /// Bytes the flow model takes on a machine of `size` with up to `queued` messages
    /// waiting for their NICs and `moving` in flight: per link its statistics, its solver
    /// resource and that resource's flow list (when a message uses it), per NIC its queues,
    /// per queued message a request, and per moving one its record, route and flow
    /// (measured on the million-rank neighbour exchange: docs/flow.md).
    pub fn estimate_bytes(size: &PlannedSize, queued: u64, moving: u64) -> u64 {
        use std::mem::size_of;
        size.links() * (4 + 8 + size_of::<LinkCounts>() as u64 + 128)
            + size.nics * (8 + 8 + 4 + 8 + 8 + 8 + size_of::<NicStats>() as u64)
            + size.nodes * 4
            + queued * 2 * (size_of::<Pending>() as u64 + 8)
            + moving * (size_of::<Message>() as u64 + 256)
    }

    /// The solver resource in `table[at]`, created with `capacity` on first use.
    fn resource(
        table: &mut [u32],
        at: u32,
        solver: &mut super::maxmin::MaxMin,
        capacity: u64,
    ) -> u32 {
        let r = &mut table[at as usize];
        if *r == NONE {
            *r = solver.add_resource(per_ps(capacity));
        }
        *r
    }

    /// What a message uses while it moves: (resource, bytes of it per wire byte).
    pub(super) fn uses_of(&mut self, m: u32, uses: &mut Vec<(u32, f64)>) {
        let msg = &self.messages[m as usize];
        let (kind, src, dst, payload, wire) =
            (msg.kind, msg.src_nic, msg.dst_nic, msg.payload, msg.wire);
        let (at, len) = (msg.route_at as usize, msg.route_len as usize);
        uses.clear();
        for i in at..at + len {
            let link = self.routes[i];
            let rate = self.kinds[self.topo.link_kind(link) as usize].rate;
            uses.push((
                Self::resource(&mut self.link_resource, link, &mut self.solver, rate),
                1.0,
            ));
        }
        if kind == Kind::Data && payload > 0 {
            let share = payload as f64 / wire as f64;
            let dma = self.params.dma_rate;
            uses.push((
                Self::resource(&mut self.tx_resource, src, &mut self.solver, dma),
                share,
            ));
            uses.push((
                Self::resource(&mut self.rx_resource, dst, &mut self.solver, dma),
                share,
            ));
            if let Some(mem) = self.params.memory_bandwidth {
                for node in [self.topo.nic_node(src), self.topo.nic_node(dst)] {
                    uses.push((
                        Self::resource(&mut self.memory_resource, node, &mut self.solver, mem),
                        share,
                    ));
                }
            }
        }
        // One entry per resource (a node's memory serves both of its DMA engines).
        uses.sort_by_key(|u| u.0);
        uses.dedup_by(|a, b| {
            if a.0 == b.0 {
                b.1 += a.1;
                true
            } else {
                false
            }
        });
    }
}
