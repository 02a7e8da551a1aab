//! One-packet messages cross the network as packets, not flows: each link of the route
//! and the receiver's DMA engine serve them one at a time. A message of one packet lives
//! for a few hundred nanoseconds; as a flow, its start and its end would each solve again
//! the rates of every flow connected to it, which made small-message workloads slower at
//! flow level than at packet level.
//!
//! A packet reserves its whole way when it leaves its NIC, in one step and no event: each
//! link, then the receiver's DMA engine, gives it the first time it is free from when the
//! head gets there (`reservations.rs`). Its times are one row of the pipeline
//! (`pipeline.rs`): cut-through, a head routed `sender_delay` after it arrives, its tail
//! leaving no earlier than it arrived plus that delay; alone, they are the packet model's
//! to the picosecond. Several packets at one place are served in the order they were
//! reserved, where the packet model serves them in the order they arrive; a packet that
//! arrives first takes the gap before one reserved earlier when the gap holds it
//! (docs/flow.md measures what the order costs). One-packet messages and flows do not see
//! each other.

use super::state::*;
use crate::engine::Schedule;
use crate::units::{transfer_time, Ps};

impl FlowNetwork {
    /// Whether message `m` moves as one packet (data of at most one packet's payload).
    pub(super) fn is_one_packet(&self, m: u32) -> bool {
        let msg = &self.messages[m as usize];
        msg.packets == 1 && msg.route_len > 0
    }

    /// The payload's DMA time at each end (none for synthetic traffic).
    fn packet_dma(&self, m: u32) -> Ps {
        let msg = &self.messages[m as usize];
        match msg.kind {
            Kind::Data => transfer_time(msg.payload, self.dma_rate()),
            Kind::Injected => 0,
        }
    }

    /// Message `m`, of one packet, starts now: its DMA out ends as it would alone, then its
    /// head reaches the injection link, and it reserves its way (the NIC's next message may
    /// start at once: the injection link keeps their packets in order). Its milestones are
    /// then known: the send DMA's end and the landing.
    pub(super) fn send_packet(&mut self, q: &mut impl Schedule<FlowEvent>, now: Ps, m: u32) {
        let dma = self.packet_dma(m);
        let msg = &mut self.messages[m as usize];
        let dma_end = (msg.started + dma).max(now);
        if !msg.tx_done {
            msg.tx_done = true;
            q.at(
                dma_end,
                FlowEvent::Deliver {
                    msg: m,
                    what: Milestone::TxDone,
                },
            );
        }
        let (at, len, wire, src, dst) = (
            msg.route_at as usize,
            msg.route_len as usize,
            msg.wire,
            msg.src_nic,
            msg.dst_nic,
        );
        // `arrive`: when the head reaches the next place; `head`, `tail`: when they left
        // the link before, so that a link's tail leaves no earlier than `tail` plus the
        // delay between the two links (the head's, `arrive - head`).
        let (mut arrive, mut head, mut tail) = (dma_end, 0, 0);
        // The serialization time of the last link kind seen (the network's links come in
        // a run).
        let mut ser_of: Option<(u64, Ps)> = None;
        let kind_of = |link: u32| self.kinds[self.topo.link_kind(link) as usize];
        // Each link's kind is looked up once (its delay is the hop before's).
        let mut kind = kind_of(self.routes[at]);
        for j in 0..len {
            let link = self.routes[at + j];
            let ser = match ser_of {
                Some((rate, ser)) if rate == kind.rate => ser,
                _ => {
                    let ser = transfer_time(wire, kind.rate);
                    ser_of = Some((kind.rate, ser));
                    ser
                }
            };
            let until = match j {
                0 => 0,
                _ => tail + arrive - head,
            };
            let (start, end) = self.reserved.take(link, now, arrive, ser, until);
            if j == 0 {
                let inject = &mut self.inject_free[src as usize];
                *inject = (*inject).max(end);
                self.messages[m as usize].activated = start;
            }
            (head, tail) = (start, end);
            arrive = match j + 1 < len {
                true => {
                    let next = kind_of(self.routes[at + j + 1]);
                    let head_at = start + kind.latency + next.sender_delay;
                    kind = next;
                    head_at
                }
                // The last link: the whole packet is in the NIC when its tail gets there.
                false => end + kind.latency,
            };
        }
        let rx = self.topo.num_links() + dst;
        let (_, landed) = self.reserved.take(rx, now, arrive, dma, 0);
        if self.stats.link_activity.is_some() {
            // Links' activity is recorded in time order: when the packet is in its NIC.
            q.at(arrive, FlowEvent::Arrived { msg: m });
        }
        q.at(
            landed,
            FlowEvent::Deliver {
                msg: m,
                what: Milestone::Landed,
            },
        );
    }

    /// The packet of message `m` is in its receiving NIC (a traced run): its links were
    /// active from when it took the first.
    pub(super) fn on_arrived(&mut self, now: Ps, m: u32) {
        let first = self.messages[m as usize].activated;
        self.trace_activity(m, first, now);
    }
}
