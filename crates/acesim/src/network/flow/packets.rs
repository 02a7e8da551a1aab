//! One-packet messages cross the network as packets, not flows: each link of the route
//! and the receiver's DMA engine serve them first come, first served. A message of one
//! packet lives for a few hundred nanoseconds; as a flow, its start and its end would each
//! solve again the rates of every flow connected to it, which made small-message workloads
//! slower at flow level than at packet level.
//!
//! The packet takes one event per link, when its head reaches the link, so that each link
//! serves packets in the order they reach it; the receiving NIC, which only its last link
//! feeds, is served when that link sends the packet. Its times are one row of the pipeline
//! (`pipeline.rs`): cut-through, a head routed `sender_delay` after it arrives, its tail
//! leaving no earlier than it arrived plus that delay; alone, they are the packet model's to
//! the picosecond. One-packet messages and flows do not see each other (docs/flow.md says
//! what that costs).

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
    /// head reaches the injection link. The NIC's next message may start at once: the
    /// injection link keeps their packets in order.
    pub(super) fn send_packet(&mut self, q: &mut impl Schedule<FlowEvent>, now: Ps, m: u32) {
        let dma_end = self.messages[m as usize].started + self.packet_dma(m);
        let msg = &mut self.messages[m as usize];
        msg.activated = now;
        if !msg.tx_done {
            msg.tx_done = true;
            q.at(
                dma_end.max(now),
                FlowEvent::Deliver {
                    msg: m,
                    what: Milestone::TxDone,
                },
            );
        }
        q.at(dma_end.max(now), FlowEvent::Hop { msg: m, link: 0 });
    }

    /// The head of message `m`'s packet reaches the `j`-th link of its route (past the
    /// last, the receiving NIC: `reach_nic`).
    pub(super) fn on_hop(&mut self, q: &mut impl Schedule<FlowEvent>, now: Ps, m: u32, j: u32) {
        let msg = &self.messages[m as usize];
        let (at, len) = (msg.route_at as usize, msg.route_len as usize);
        let j = j as usize;
        if j == len {
            self.reach_nic(q, m, now);
            return;
        }
        let link = self.routes[at + j];
        let kind = self.kinds[self.topo.link_kind(link) as usize];
        let ser = transfer_time(msg.wire, kind.rate);
        let free = &mut self.link_free[link as usize];
        let start = now.max(*free);
        // Cut-through: the tail leaves no earlier than it arrived on the link before, plus
        // the delay (`up`) between the two links.
        let end = match j {
            0 => start + ser,
            _ => (start + ser).max(msg.tail + now - msg.head),
        };
        *free = end;
        if j == 0 {
            let inject = &mut self.inject_free[msg.src_nic as usize];
            *inject = (*inject).max(end);
        }
        let next = match self.routes.get(at + j + 1) {
            Some(&l) if j + 1 < len => {
                kind.latency + self.kinds[self.topo.link_kind(l) as usize].sender_delay
            }
            _ => kind.latency,
        };
        let msg = &mut self.messages[m as usize];
        // `head`/`tail`: when the head and tail leave this link, so that the next link's
        // tail bound is `tail + up` where its head arrives at `head + up`.
        (msg.head, msg.tail) = (start, end);
        if j == 0 {
            msg.activated = start;
        }
        let arrive = match j + 1 == len {
            true => end + kind.latency,
            false => start + next,
        };
        if j + 1 == len && self.stats.link_activity.is_none() {
            // The receiving NIC takes packets from this link alone, in the order the link
            // sends them: its DMA engine is reserved now, not in an event of its own. (A
            // traced run keeps the event: links' activity is recorded in time order.)
            self.reach_nic(q, m, arrive);
            return;
        }
        q.at(
            arrive,
            FlowEvent::Hop {
                msg: m,
                link: j as u32 + 1,
            },
        );
    }

    /// The packet of message `m` is in its receiving NIC at `at`: DMAed into memory after
    /// the packets before it.
    fn reach_nic(&mut self, q: &mut impl Schedule<FlowEvent>, m: u32, at: Ps) {
        let dma = self.packet_dma(m);
        let msg = &self.messages[m as usize];
        let (dst, first) = (msg.dst_nic as usize, msg.activated);
        let landed = at.max(self.rx_free[dst]) + dma;
        self.rx_free[dst] = landed;
        self.trace_activity(m, first, at);
        q.at(
            landed,
            FlowEvent::Deliver {
                msg: m,
                what: Milestone::Landed,
            },
        );
    }
}
