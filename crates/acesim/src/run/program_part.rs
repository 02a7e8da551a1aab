//! A program run, or one partition of a run on threads: the network (of the whole machine,
//! or the routers of a block of it with their NICs), the runtime (every rank, or those on
//! the nodes of the block) and the queue of their events. What crosses to another
//! partition: the network's packets and credits, and the runtime's mirrors of transfers
//! whose other end lives there.

use crate::engine::windows::advance_clock;
use crate::engine::{EventQueue, Partition};
use crate::network::packet::{Crossing, PacketNetwork};
use crate::network::Network;
use crate::run::events::{prefetch_upcoming, Event};
use crate::run::options::Options;
use crate::run::partition_report::PartitionCounter;
use crate::runtime::{Mirror, RtEvent, Runtime};
use crate::units::Ps;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A program run, or a partition of one.
pub(super) struct ProgramPart<N: Network> {
    pub net: N,
    pub rt: Runtime,
    pub q: EventQueue<Event<N::Event, RtEvent>>,
    /// The runtime's entities (ranks) come first among the origins of event keys.
    ranks: u32,
    notices: Vec<crate::network::Notice>,
    /// Scratch for what crosses, by partition.
    packets_out: Vec<Vec<Crossing>>,
    mirrors_out: Vec<Vec<Mirror>>,
    /// Time of the last event handled.
    pub last: Ps,
    /// Counts events by partition, for `--partitions` (serial runs only).
    pub counter: Option<PartitionCounter>,
    /// Set from outside (Ctrl-C) to stop the run: a partition's tally carries it, so that
    /// every partition takes the same decision at a window's end.
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// What a partition hands another at the end of a window (between processes, as bytes).
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) enum Handed {
    Packet(Crossing),
    Mirror(Mirror),
}

impl<N: Network> ProgramPart<N> {
    /// The run of `rt` on `net` (or partition of one, when both were made partitions of
    /// `parts`), with its ranks started.
    pub fn new(net: N, mut rt: Runtime, parts: usize) -> ProgramPart<N> {
        let ranks = rt.entities();
        let mut q = EventQueue::new(ranks + net.entities());
        rt.start(&mut q);
        ProgramPart {
            net,
            rt,
            q,
            ranks,
            notices: Vec::new(),
            packets_out: (0..parts).map(|_| Vec::new()).collect(),
            mirrors_out: (0..parts).map(|_| Vec::new()).collect(),
            last: 0,
            counter: None,
            interrupt: None,
        }
    }

    /// Handles the events before `end`, at most until `max_events` have been handled in
    /// all; an error if time went back.
    pub fn run_events(&mut self, end: Ps, max_events: u64) -> Result<(), String> {
        while self.q.processed() < max_events {
            let Some((now, ev)) = self.q.pop_before(end) else {
                break;
            };
            prefetch_upcoming(&self.q, &self.net);
            let origin = match ev {
                Event::Net(e) => self.ranks + self.net.origin(e),
                Event::Own(e) => self.rt.origin(e),
            };
            self.q.set_origin(origin);
            if let Some(c) = &mut self.counter {
                c.count(&self.q, now, self.q.current_key().1, origin);
            }
            self.rt.at_event(self.q.current_key());
            match ev {
                Event::Net(e) => self.net.handle(&mut self.q, now, e),
                Event::Own(e) => self.rt.handle(&mut self.q, &mut self.net, now, e),
            }
            self.take_notices(now);
            // What the model keeps for the end of the picosecond, once its last event is
            // handled (the flow model's solve of all its changes).
            if let Some(e) = self.net.at_picosecond_end() {
                if self.q.peek_time() != Some(now) {
                    self.q.set_origin(self.ranks + self.net.origin(e));
                    self.net.handle(&mut self.q, now, e);
                    self.take_notices(now);
                }
            }
        }
        advance_clock(&mut self.last, self.q.now())?;
        Ok(())
    }

    /// The runtime reacts to the network's notices.
    #[inline(always)]
    fn take_notices(&mut self, now: Ps) {
        // Reacting to a notice may produce more (a same-node ack arrives at once).
        while !self.net.notices().is_empty() {
            std::mem::swap(&mut self.notices, self.net.notices());
            for n in self.notices.drain(..) {
                self.rt.on_notice(&mut self.q, &mut self.net, now, n);
            }
        }
    }
}

impl Partition for ProgramPart<PacketNetwork> {
    type Crossing = Handed;
    /// Events handled, ranks finished, and whether the run was interrupted.
    type Tally = (u64, u32, bool);

    fn next_time(&self) -> Option<Ps> {
        self.q.peek_time()
    }

    fn run_until(&mut self, end: Ps, out: &mut [Vec<Handed>]) -> Result<(), String> {
        self.run_events(end, u64::MAX)?;
        self.rt.take_mirrors(&mut self.mirrors_out);
        self.net.take_crossings(&mut self.packets_out);
        for (to, mail) in out.iter_mut().enumerate() {
            mail.extend(self.mirrors_out[to].drain(..).map(Handed::Mirror));
            mail.extend(self.packets_out[to].drain(..).map(Handed::Packet));
        }
        Ok(())
    }

    fn receive(&mut self, from: &mut Vec<Handed>) {
        let (mut packets, mut mirrors) = (Vec::new(), Vec::new());
        for h in from.drain(..) {
            match h {
                Handed::Packet(c) => packets.push(c),
                Handed::Mirror(m) => mirrors.push(m),
            }
        }
        self.rt.receive_mirrors(&mut mirrors);
        self.net.receive(&mut self.q, &mut packets);
    }

    fn tally(&self) -> (u64, u32, bool) {
        let interrupted = self
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed));
        (self.q.processed(), self.rt.ranks_finished(), interrupted)
    }
}

/// Makes `net` and `rt` record, keep and check what `options` ask.
pub(super) fn prepare<N: Network>(net: &mut N, rt: &mut Runtime, options: &Options) {
    if options.trace {
        rt.enable_trace();
        net.enable_trace();
    }
    if options.summary_only {
        rt.keep_no_records();
    }
    if options.check || cfg!(debug_assertions) {
        net.enable_checks();
        rt.enable_checks();
    }
}
