//! The flow model behind the [`Network`] interface.

use super::coupling::{Coupling, CouplingReport};
use super::maxmin::MaxMin;
use super::state::*;
use crate::engine::Schedule;
use crate::machine::topology::Topology;
use crate::network::interface::{LinkTotals, NetStats, Network, Notice};
use crate::network::models::Model;
use crate::network::partition::Partitioning;
use crate::units::Ps;

impl Network for FlowNetwork {
    type Event = FlowEvent;

    fn send_data(
        &mut self,
        q: &mut impl Schedule<FlowEvent>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        payload: u64,
        token: u64,
    ) {
        self.send_message(q, now, (src_nic, dst_nic), payload, token, Kind::Data);
    }

    fn inject(
        &mut self,
        q: &mut impl Schedule<FlowEvent>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        payload: u64,
        token: u64,
    ) {
        self.send_message(q, now, (src_nic, dst_nic), payload, token, Kind::Injected);
    }

    fn send_control(
        &mut self,
        q: &mut impl Schedule<FlowEvent>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        token: u64,
    ) {
        self.send_control_packet(q, now, (src_nic, dst_nic), token);
    }

    /// A message's events are its sending NIC's, and the solves are one more entity's. Not
    /// one entity for the whole model: an origin's counter orders its events of one
    /// picosecond only until it wraps (2^19 events with a million ranks), and a million
    /// NICs starting at once schedule millions. Each NIC's events keep the order they were
    /// scheduled in, and a picosecond's events are handled NIC by NIC, as they lie in
    /// memory.
    fn entities(&self) -> u32 {
        self.topo.num_nics() + 1
    }

    fn origin(&self, ev: FlowEvent) -> u32 {
        match ev {
            FlowEvent::Solve => self.topo.num_nics(),
            FlowEvent::Reach { msg, .. }
            | FlowEvent::Deliver { msg, .. }
            | FlowEvent::Arrived { msg } => self.messages[msg as usize].src_nic,
            FlowEvent::ControlArrived { slot } => self.controls[slot as usize].src_nic,
        }
    }

    fn entity_router(&self, _: u32) -> Option<u32> {
        None
    }

    /// The split a packet-level run would make (the flow model runs on one thread: its
    /// solves tie partitions together, `coupling`).
    fn partition(&self, parts: u32, source: &str) -> crate::error::Result<Partitioning> {
        let latency = |link: u32| self.kinds[self.topo.link_kind(link) as usize].latency;
        crate::network::partition::partition(&self.topo, parts, latency, source)
    }

    fn measure_coupling(&mut self, parts: u32, source: &str) -> crate::error::Result<bool> {
        let split = self.partition(parts, source)?;
        let topo = &self.topo;
        self.coupling = Some(Coupling::new(&split, topo.num_nics(), |n| {
            topo.nic_router(n)
        }));
        Ok(true)
    }

    fn coupling(&self) -> Option<CouplingReport> {
        self.coupling.as_ref().map(Coupling::report)
    }

    /// The solve of every change made at this picosecond.
    fn at_picosecond_end(&self) -> Option<FlowEvent> {
        self.solve_due.then_some(FlowEvent::Solve)
    }

    fn handle(&mut self, q: &mut impl Schedule<FlowEvent>, now: Ps, ev: FlowEvent) {
        match ev {
            FlowEvent::Solve => self.on_solve(q, now),
            FlowEvent::Reach { msg, version } => self.on_reach(q, now, msg, version),
            FlowEvent::Deliver { msg, what } => self.on_deliver(q, now, msg, what),
            FlowEvent::Arrived { msg } => self.on_arrived(now, msg),
            FlowEvent::ControlArrived { slot } => self.on_control_arrived(slot),
        }
    }

    fn notices(&mut self) -> &mut Vec<Notice> {
        &mut self.notices
    }

    fn model(&self) -> Model {
        Model::Flow
    }

    fn topology(&self) -> &Topology {
        &self.topo
    }

    fn in_flight(&self) -> bool {
        self.active != 0
    }

    fn stuck_summary(&self) -> Option<String> {
        (self.active != 0).then(|| format!("{} messages still moving", self.active))
    }

    fn settle(&mut self) -> Ps {
        0
    }

    fn enable_checks(&mut self) {
        self.checks = true;
    }

    fn violation(&self) -> Option<&str> {
        self.violation.as_deref()
    }

    fn check_end(&self, _end: Ps) -> Result<(), String> {
        if let Some(v) = &self.violation {
            return Err(v.clone());
        }
        self.stats.counters.check_conserved()?;
        Ok(())
    }

    fn check_stopped(&self, _end: Ps) -> Result<(), String> {
        match &self.violation {
            Some(v) => Err(v.clone()),
            None => Ok(()),
        }
    }

    fn enable_trace(&mut self) {
        self.stats.enable_trace(self.link_counts.len());
    }

    fn release_run_state(&mut self) {
        // What only the run needed: the results read the statistics and the topology.
        self.messages = Vec::new();
        self.controls = Vec::new();
        self.free_controls = Vec::new();
        self.routes = Vec::new();
        self.free_routes = Vec::new();
        self.tx_queue = super::queues::Queues::new(0);
        self.tx_busy = Vec::new();
        self.waiting = super::queues::Queues::new(0);
        self.moving = Vec::new();
        self.inject_free = Vec::new();
        self.reserved = super::reservations::Reservations::new(0);
        self.flow_message = Vec::new();
        self.solver = MaxMin::default();
        self.link_resource = Vec::new();
        self.tx_resource = Vec::new();
        self.rx_resource = Vec::new();
        self.memory_resource = Vec::new();
        self.timings = Default::default();
    }

    fn stats(&self) -> &NetStats {
        &self.stats
    }

    fn take_link_stats(&mut self) -> LinkTotals {
        LinkTotals::Counted(std::mem::take(&mut self.link_counts))
    }

    fn kind_rates(&self) -> Vec<u64> {
        self.kinds.iter().map(|k| k.rate).collect()
    }
}
