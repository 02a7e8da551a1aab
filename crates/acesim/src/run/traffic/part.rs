//! One partition of a traffic run: the routers of a block of the machine, their NICs, the
//! generators of the nodes attached to them and the queue of their events. A serial run
//! is one partition of the whole machine; a parallel run has one per thread, advancing in
//! the windows of `engine::windows`.

use crate::engine::windows::advance_clock;
use crate::engine::{EventQueue, Partition};
use crate::network::packet::{Crossing, PacketEvent, PacketNetwork};
use crate::network::{Network, Notice};
use crate::run::events::{prefetch_upcoming, Event};
use crate::run::partition_report::PartitionCounter;
use crate::run::patterns::Traffic;
use crate::run::traffic::injection::{Gen, Injector};
use crate::run::traffic::measure::{Measurement, Tally};
use crate::units::Ps;

/// A partition of a traffic run.
pub(super) struct TrafficPart {
    pub net: PacketNetwork,
    pub q: EventQueue<Event<PacketEvent, Gen>>,
    pub traffic: Traffic,
    pub injector: Injector,
    pub window: Measurement,
    /// Per node, the NIC its next packet leaves from (nodes take their NICs in turn).
    nic_next: Vec<u32>,
    nodes: u32,
    nics: u32,
    /// Payload of every packet (the packet less its header).
    payload: u64,
    /// When generation stops: the end of the measurement window.
    gen_end: Ps,
    notices: Vec<Notice>,
    /// Time of the last event handled.
    pub last: Ps,
    /// Counts events by partition, for `--partitions` (serial runs only).
    pub counter: Option<PartitionCounter>,
}

impl TrafficPart {
    /// The partition of `net` that generates for the nodes `mine` says are its.
    pub fn new(
        net: PacketNetwork,
        (traffic, mut injector, window): (Traffic, Injector, Measurement),
        payload: u64,
        mine: impl Fn(u32) -> bool,
    ) -> TrafficPart {
        let nodes = net.topology().num_nodes;
        let nics = net.topology().nics_per_node();
        // Origins of event keys: the generators, then the network's entities.
        let mut q = EventQueue::new(nodes + net.entities());
        for node in (0..nodes).filter(|&n| mine(n)) {
            q.set_origin(node);
            q.schedule(injector.first(node), Event::Own(Gen { node }));
        }
        let gen_end = window.end();
        TrafficPart {
            net,
            q,
            traffic,
            injector,
            window,
            nic_next: vec![0; nodes as usize],
            nodes,
            nics,
            payload,
            gen_end,
            notices: Vec::new(),
            last: 0,
            counter: None,
        }
    }

    /// Node `node` offers a packet at `now`, and its next one later.
    fn generate(&mut self, now: Ps, node: u32) {
        if now >= self.gen_end {
            return;
        }
        let dst = self.traffic.destination(node, self.injector.rng(node));
        if dst != node {
            let token = self.window.create(now);
            let i = self.nic_next[node as usize];
            self.nic_next[node as usize] = (i + 1) % self.nics;
            let (src, dst) = (node * self.nics + i, dst * self.nics + i);
            self.net
                .inject(&mut self.q, now, src, dst, self.payload, token);
        }
        let next = self.injector.next(node, now);
        self.q.schedule(next, Event::Own(Gen { node }));
    }
}

impl Partition for TrafficPart {
    type Crossing = Crossing;
    type Tally = (Tally, u64);

    fn next_time(&self) -> Option<Ps> {
        self.q.peek_time()
    }

    fn run_until(&mut self, end: Ps, out: &mut [Vec<Crossing>]) -> Result<(), String> {
        self.handle_until(end);
        advance_clock(&mut self.last, self.q.now())?;
        self.net.take_crossings(out);
        Ok(())
    }

    fn receive(&mut self, from: &mut Vec<Crossing>) {
        self.net.receive(&mut self.q, from);
    }

    /// What it measured, and the events it handled.
    fn tally(&self) -> (Tally, u64) {
        (self.window.tally(), self.q.processed())
    }
}

impl TrafficPart {
    /// Handles the events before `end`.
    #[inline(always)]
    fn handle_until(&mut self, end: Ps) {
        while let Some((now, ev)) = self.q.pop_before(end) {
            prefetch_upcoming(&self.q, &self.net);
            let origin = match ev {
                Event::Own(Gen { node }) => node,
                Event::Net(e) => self.nodes + self.net.origin(e),
            };
            self.q.set_origin(origin);
            if let Some(c) = &mut self.counter {
                c.count(&self.q, now, self.q.current_key().1, origin);
            }
            match ev {
                Event::Own(Gen { node }) => self.generate(now, node),
                Event::Net(e) => self.net.handle(&mut self.q, now, e),
            }
            if !self.net.notices().is_empty() {
                std::mem::swap(&mut self.notices, self.net.notices());
                for n in self.notices.drain(..) {
                    if let Notice::Landed { token, hops } = n {
                        self.window.land(now, token, hops);
                    }
                }
            }
        }
    }
}
