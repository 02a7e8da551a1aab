//! The packet model behind the [`Network`] interface.

use super::state::*;
use crate::engine::prefetch::prefetch;
use crate::engine::Schedule;
use crate::machine::loaded::Machine;
use crate::machine::topology::Topology;
use crate::network::interface::{LinkTotals, NetStats, Network, Notice};
use crate::network::link_kinds::link_kinds;

use crate::network::models::Model;
use crate::network::partition::{partition, Partitioning};
use crate::units::Ps;

impl PacketNetwork {
    /// How `parts` partitions split `topo` on `machine`: what `Network::partition` of a
    /// packet network built on them says, without building one (a parallel run's
    /// partitions then build their networks at once, each on its thread).
    pub fn partition_machine(
        topo: &Topology,
        machine: &Machine,
        parts: u32,
        source: &str,
    ) -> crate::error::Result<Partitioning> {
        split_topology(topo, &link_kinds(machine), parts, source)
    }

    /// What only a running network needs (packets, messages, input FIFOs, links' queues),
    /// taken out once the run is over: `release_run_state` frees it at once, a parallel
    /// run's end on another thread.
    pub(crate) fn take_run_state(&mut self) -> impl Send + 'static {
        // The free slots' list runs through the records taken.
        self.free_pending_credit = NO_CREDIT;
        (
            (
                std::mem::take(&mut self.packets),
                std::mem::take(&mut self.free_packets),
                std::mem::take(&mut self.messages),
                std::mem::take(&mut self.free_messages),
                std::mem::take(&mut self.fifos),
                std::mem::take(&mut self.long_crossings),
            ),
            (
                std::mem::take(&mut self.inputs),
                std::mem::take(&mut self.links),
                std::mem::take(&mut self.notices),
                std::mem::take(&mut self.pending_credits),
            ),
        )
    }
}

/// The split of `topo` into `parts` partitions, its links' latencies from `kinds`.
fn split_topology(
    topo: &Topology,
    kinds: &[LinkKind],
    parts: u32,
    source: &str,
) -> crate::error::Result<Partitioning> {
    let latency = |link: u32| kinds[topo.link_kind(link) as usize].latency;
    partition(topo, parts, latency, source)
}

impl Network for PacketNetwork {
    type Event = PacketEvent;

    fn send_data(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        payload: u64,
        token: u64,
    ) {
        self.send_message(q, now, src_nic, dst_nic, payload, token, true);
    }

    fn inject(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        payload: u64,
        token: u64,
    ) {
        self.send_message(q, now, src_nic, dst_nic, payload, token, false);
    }

    fn send_control(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        token: u64,
    ) {
        self.send_control_message(q, now, src_nic, dst_nic, token);
    }

    /// Routers, then NICs.
    fn entities(&self) -> u32 {
        self.topo.num_routers + self.topo.num_nics()
    }

    /// A router for what happens in it or on the links it sends on, a NIC for its DMA
    /// engines, its injection link and what it receives.
    #[inline(always)]
    fn origin(&self, ev: PacketEvent) -> u32 {
        let ports = &self.topo.ports;
        let nic = |nic: u32| self.topo.num_routers + nic;
        // A link is sent on by a router port's output, or by a NIC (links past the ports).
        let sender = |link: u32| match ports.port_router.get(link as usize) {
            Some(&router) => router,
            None => nic(link - ports.port_router.len() as u32),
        };
        match ev {
            PacketEvent::HeadArrive { pkt } | PacketEvent::RouteDone { pkt } => {
                ports.port_router[self.packets[pkt as usize].port as usize]
            }
            PacketEvent::InputFree { port } => ports.port_router[port as usize],
            PacketEvent::LinkFree { link } | PacketEvent::Credit { link, .. } => sender(link),
            PacketEvent::BigCredit { slot } => sender(self.big_credits[slot as usize].0),
            PacketEvent::NicTailArrive { pkt } | PacketEvent::RxDmaDone { pkt } => {
                nic(self.packets[pkt as usize].dst_nic)
            }
            PacketEvent::TxDmaDone { nic: n } => nic(n),
        }
    }

    fn entity_router(&self, entity: u32) -> Option<u32> {
        let routers = self.topo.num_routers;
        Some(if entity < routers {
            entity
        } else {
            self.topo.nic_router(entity - routers)
        })
    }

    fn partition(&self, parts: u32, source: &str) -> crate::error::Result<Partitioning> {
        split_topology(&self.topo, &self.kinds, parts, source)
    }

    fn handle(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, ev: PacketEvent) {
        match ev {
            PacketEvent::HeadArrive { pkt } => self.on_head_arrive(q, now, pkt),
            PacketEvent::RouteDone { pkt } => self.on_route_done(q, now, pkt),
            PacketEvent::LinkFree { link } => self.on_link_free(q, now, link),
            PacketEvent::InputFree { port } => self.on_input_free(q, now, port),
            PacketEvent::Credit { link, vc, bytes } => self.on_credit(q, now, link, vc, bytes),
            PacketEvent::BigCredit { slot } => self.on_big_credit(q, now, slot),
            PacketEvent::NicTailArrive { pkt } => self.on_nic_tail_arrive(q, now, pkt),
            PacketEvent::TxDmaDone { nic } => self.on_tx_dma_done(q, now, nic),
            PacketEvent::RxDmaDone { pkt } => self.on_rx_dma_done(q, now, pkt),
        }
    }

    /// Two ahead, the event's own record: its packet, link, input or NIC. One ahead, a
    /// head's input (its packet, asked for the event before, names the port).
    #[inline(always)]
    fn prefetch(&self, ev: &PacketEvent, ahead: usize) {
        if ahead == 1 {
            if let PacketEvent::HeadArrive { pkt } = *ev {
                if let Some(p) = self.packets.get(pkt as usize) {
                    prefetch(&self.inputs, p.port);
                }
            }
            return;
        }
        match *ev {
            PacketEvent::HeadArrive { pkt }
            | PacketEvent::RouteDone { pkt }
            | PacketEvent::NicTailArrive { pkt }
            | PacketEvent::RxDmaDone { pkt } => prefetch(&self.packets, pkt),
            PacketEvent::LinkFree { link } | PacketEvent::Credit { link, .. } => {
                prefetch(&self.links, link)
            }
            PacketEvent::InputFree { port } => prefetch(&self.inputs, port),
            PacketEvent::TxDmaDone { nic } => prefetch(&self.nics, nic),
            PacketEvent::BigCredit { .. } => {}
        }
    }

    fn notices(&mut self) -> &mut Vec<Notice> {
        &mut self.notices
    }

    fn model(&self) -> Model {
        Model::Packet
    }

    fn topology(&self) -> &Topology {
        &self.topo
    }

    fn in_flight(&self) -> bool {
        self.live_packets != 0
    }

    fn stuck_summary(&self) -> Option<String> {
        self.stuck_packets()
    }

    fn settle(&mut self) -> Ps {
        self.settle_all_credits()
    }

    /// Checks the model's invariants while running: a link never sends two packets at
    /// once (so never exceeds its bandwidth), credits stay within 0..=buffer, every packet
    /// is consumed exactly once and no message lands more packets than it has.
    fn enable_checks(&mut self) {
        self.checks = Some(Box::default());
    }

    /// The first broken invariant, if checks are on and one broke.
    fn violation(&self) -> Option<&str> {
        self.checks.as_ref().and_then(|c| c.violation.as_deref())
    }

    fn check_end(&self, end: Ps) -> Result<(), String> {
        self.check_finished(end)
    }

    fn check_stopped(&self, end: Ps) -> Result<(), String> {
        self.check_in_flight(end)
    }

    /// Records every link's busy intervals (for timelines).
    fn enable_trace(&mut self) {
        let links = self.stats.links.len();
        self.stats.enable_trace(links);
    }

    /// Frees what only a running network needs (packets, messages, input FIFOs) once the
    /// run is over, so that collecting the results does not add to it: the peak memory
    /// of large runs is at the end.
    fn release_run_state(&mut self) {
        drop(self.take_run_state());
    }

    fn stats(&self) -> &NetStats {
        &self.stats
    }

    fn take_link_stats(&mut self) -> LinkTotals {
        LinkTotals::Waited(std::mem::take(&mut self.stats.links))
    }

    fn kind_rates(&self) -> Vec<u64> {
        self.kinds.iter().map(|k| k.rate).collect()
    }
}
