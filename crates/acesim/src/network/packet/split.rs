//! The packet network as one partition of a parallel run: it owns the routers of its
//! partition, their links and the NICs attached to them, and hands over what crosses to
//! another partition, always at least one link latency ahead:
//! - a packet whose head reaches a router of another partition, with what the receiving
//!   side needs of its message (token, packet count, whether it was DMA'd);
//! - a credit returned to a link sent on by another partition's router.
//!
//! Each crossing carries the key its event would have had in one queue, so the receiving
//! partition handles it exactly when a serial run would. Everything a partition counts is
//! summed with the others' at the end ([`NetStats::add`]).

use super::state::*;
use crate::engine::Schedule;
use crate::machine::topology::ports::LinkEnd;
use crate::network::interface::{LinkStats, NetCounters, NetStats, NicStats, SparseStats};
use crate::units::Ps;
use std::collections::HashMap;
use std::sync::Arc;

impl PacketNetwork {
    /// Makes this network partition `me` of a run whose routers are split by `of_router`.
    pub(super) fn make_partition(&mut self, me: u32, of_router: Arc<Vec<u32>>) {
        let parts = of_router.iter().max().map_or(1, |&p| p as usize + 1);
        self.split = Some(Box::new(Split {
            me,
            of_router,
            out: (0..parts).map(|_| Vec::new()).collect(),
            landing: HashMap::new(),
            next_remote: 0,
            transit: Vec::new(),
            // Zero pages until written: only the links this partition sends on are.
            emptied_at: bytemuck::zeroed_vec(self.links.len()),
        }));
    }

    /// Maps the counts of the links this partition sends on now: they start as zero pages,
    /// which counting reads before it writes, and on threads each such page cost a second
    /// fault and a message to the other cores.
    pub(super) fn map_own_counts(&mut self) {
        let mut counts = std::mem::take(&mut self.stats.links);
        crate::prefault::populate_where(&mut counts, |l| self.sends_on(l as u32));
        self.stats.links = counts;
    }

    /// What the windows of a run on this network end on (`engine::windows`): the
    /// smallest latency of a link between two routers, which no partitioning can
    /// undercut; without any, that of any link. At least 1 ps.
    pub fn window_grid(&self) -> Ps {
        let links = 0..self.topo.num_links();
        let between_routers = links
            .clone()
            .filter(|&l| matches!(self.topo.link_end(l), Some(LinkEnd::RouterIn(_))))
            .filter(|&l| l < self.topo.num_ports())
            .map(|l| self.kind_of(l).latency)
            .min();
        between_routers
            .or_else(|| links.map(|l| self.kind_of(l).latency).min())
            .unwrap_or(1)
            .max(1)
    }

    /// What this partition counted, for another's network to add (`NetStats::sparse`):
    /// links are counted by their sender, so only the links it sends on are read.
    pub fn take_sparse_stats(&mut self) -> SparseStats {
        let stats = std::mem::take(&mut self.stats);
        stats.sparse(|link| self.sends_on(link))
    }

    /// The events for other partitions since the last call, by partition.
    pub fn take_crossings(&mut self, out: &mut [Vec<Crossing>]) {
        if let Some(s) = &mut self.split {
            for (to, events) in s.out.iter_mut().enumerate() {
                out[to].append(events);
            }
        }
    }

    /// Link `l`'s kind from the topology (a partition's own array leaves out the links
    /// that neither leave nor enter its routers).
    fn kind_of(&self, l: u32) -> &LinkKind {
        &self.kinds[self.topo.link_kind(l) as usize]
    }

    /// Whether this network sends on link `link` (the whole network, or the partition
    /// of the router the link leaves): only then does it hold the link's sender state.
    #[inline]
    pub(super) fn sends_on(&self, link: u32) -> bool {
        self.elsewhere(self.topo.link_router(link)).is_none()
    }

    /// The partition of router `router`, if this network is one of several and it is not
    /// this one.
    #[inline]
    pub(super) fn elsewhere(&self, router: u32) -> Option<u32> {
        let s = self.split.as_ref()?;
        let p = s.of_router[router as usize];
        (p != s.me).then_some(p)
    }

    /// Hands packet `p`, whose head reaches the router input `packet.port` at `time`, to
    /// partition `to`.
    pub(super) fn cross_packet(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        time: Ps,
        p: u32,
        to: u32,
    ) {
        let key = q.reserve(time);
        let packet = self.packets[p as usize];
        let message = self.message_info(p, &packet);
        self.free_packet(p);
        self.hand_over(
            to,
            Cross::Packet {
                time,
                key,
                packet,
                message,
            },
        );
    }

    /// Keeps `event` for partition `to` until the end of the window.
    fn hand_over(&mut self, to: u32, event: Cross) {
        if let Some(s) = &mut self.split {
            s.out[to as usize].push(Crossing(event));
        }
    }

    /// What the next partition needs of the message of packet `p`, which leaves this one.
    /// A message sent here is forgotten once its last packet has left, unless it lands
    /// here.
    fn message_info(&mut self, p: u32, packet: &Packet) -> MessageInfo {
        let me = self.split.as_ref().map_or(0, |s| s.me);
        if packet.msg == NONE {
            return self
                .split
                .as_mut()
                .and_then(|s| s.transit[p as usize].take())
                .expect("a packet in transit has its message");
        }
        let lands_here = self
            .elsewhere(self.topo.nic_router(packet.dst_nic))
            .is_none();
        let m = &mut self.messages[packet.msg as usize];
        if m.remote == NO_REMOTE {
            let s = self
                .split
                .as_mut()
                .expect("only a partition hands packets on");
            m.remote = (u64::from(me) << 40) | s.next_remote;
            s.next_remote += 1;
            if lands_here {
                s.landing.insert(m.remote, packet.msg);
            }
        }
        let info = MessageInfo {
            remote: m.remote,
            token: m.token,
            packets: m.packets,
            dma: m.dma,
        };
        if !m.landing && !lands_here {
            m.crossed += 1;
            if m.crossed == m.packets {
                self.free_messages.push(packet.msg);
            }
        }
        info
    }

    /// Returns a credit to `link`, sent on by partition `to`.
    pub(super) fn cross_credit(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        time: Ps,
        link: u32,
        (vc, bytes): (u8, u32),
        to: u32,
    ) {
        let key = q.reserve(time);
        let returned = q.current_key();
        self.hand_over(
            to,
            Cross::Credit {
                time,
                key,
                link,
                vc,
                bytes,
                returned,
            },
        );
    }

    /// Takes what other partitions handed over.
    pub fn receive(&mut self, q: &mut impl Schedule<PacketEvent>, crossings: &mut Vec<Crossing>) {
        for Crossing(c) in crossings.drain(..) {
            match c {
                Cross::Packet {
                    time,
                    key,
                    packet,
                    message,
                } => {
                    let p = self.adopt_packet(packet);
                    self.place_message(p, message);
                    q.at_reserved(time, key, PacketEvent::HeadArrive { pkt: p });
                }
                Cross::Credit {
                    time,
                    key,
                    link,
                    vc,
                    bytes,
                    returned,
                } => {
                    // One queue would have made the credit an event if the link had
                    // packets waiting when it was returned, or got some before it arrives
                    // (which wakes pending credits); else kept it pending.
                    let emptied = self
                        .split
                        .as_ref()
                        .map_or((0, 0), |s| s.emptied_at[link as usize]);
                    let waited = self.links[link as usize].wait_len != 0 || emptied > returned;
                    self.keep_credit(q, (time, key), link, (vc, bytes), waited);
                }
            }
        }
    }

    /// Gives packet `p`, just arrived, its message: the landing record when it lands in
    /// this partition (made with its first packet), else what it carries on.
    fn place_message(&mut self, p: u32, info: MessageInfo) {
        let dst = self.packets[p as usize].dst_nic;
        let lands_here = self.elsewhere(self.topo.nic_router(dst)).is_none();
        if !lands_here {
            self.packets[p as usize].msg = NONE;
            if let Some(s) = &mut self.split {
                if s.transit.len() <= p as usize {
                    s.transit.resize(p as usize + 1, None);
                }
                s.transit[p as usize] = Some(info);
            }
            return;
        }
        let known = self
            .split
            .as_ref()
            .and_then(|s| s.landing.get(&info.remote).copied());
        let m = match known {
            Some(m) => m,
            None => {
                let m = self.new_message(Message {
                    dst_nic: dst,
                    payload: 0,
                    packets: info.packets,
                    dma_next: info.packets,
                    landed: 0,
                    token: info.token,
                    dma: info.dma,
                    hops: 0,
                    remote: info.remote,
                    crossed: 0,
                    landing: true,
                });
                if let Some(s) = &mut self.split {
                    s.landing.insert(info.remote, m);
                }
                m
            }
        };
        self.packets[p as usize].msg = m;
    }

    /// Frees message `m`, whose last packet landed.
    pub(super) fn release_message(&mut self, m: u32) {
        let remote = self.messages[m as usize].remote;
        if remote != NO_REMOTE {
            if let Some(s) = &mut self.split {
                s.landing.remove(&remote);
            }
        }
        self.free_messages.push(m);
    }

    /// Link `link`'s waiting list emptied in the event being handled.
    #[inline]
    pub(super) fn note_emptied(&mut self, link: u32, at: (Ps, u64)) {
        if let Some(s) = &mut self.split {
            s.emptied_at[link as usize] = at;
        }
    }

    /// When link `link`'s waiting list last emptied (a partition's only).
    #[inline]
    pub(super) fn emptied(&self, link: u32) -> Option<(Ps, u64)> {
        self.split.as_ref().map(|s| s.emptied_at[link as usize])
    }

    /// Restores when link `link`'s list last emptied (`emptied`), for a list that filled
    /// and emptied within one event: no other event saw it filled.
    #[inline]
    pub(super) fn restore_emptied(&mut self, link: u32, at: Option<(Ps, u64)>) {
        if let (Some(s), Some(at)) = (&mut self.split, at) {
            s.emptied_at[link as usize] = at;
        }
    }

    /// Adds what partition `part` of the same run counted (its network's counts, taken
    /// whole) to this network's. A link is counted only by its sender, so only the links
    /// `part` sends on are read: the rest of its arrays may be zero pages never written.
    pub fn add_counts_of(&mut self, part: u32, other: &NetStats) {
        let Some(split) = &self.split else {
            return self.stats.add(other);
        };
        let of_router = &split.of_router;
        let stats = &mut self.stats;
        for link in 0..stats.links.len().min(other.links.len()) {
            if of_router[self.topo.link_router(link as u32) as usize] != part {
                continue; // `part` does not send on it: it counted nothing there
            }
            stats.links[link].add(&other.links[link]);
            if let (Some(mine), Some(theirs)) = (&mut stats.link_activity, &other.link_activity) {
                mine[link].extend_from_slice(&theirs[link]);
            }
        }
        for (a, b) in stats.nics.iter_mut().zip(&other.nics) {
            a.add(b);
        }
        stats.counters.add(&other.counters);
    }

    /// Bytes of the packets alive in this partition that are in the network (between two
    /// nodes), after checking the packets alive against their count and the links'
    /// busy times against `end`: the partition's share of `check_stopped`.
    pub fn in_network_bytes(&self, end: Ps) -> Result<Option<u64>, String> {
        self.checked_in_flight(end)
    }
}

impl NetStats {
    /// Adds what another partition counted: each link and NIC is counted by the
    /// partitions that saw it, so the sums are the run's.
    pub fn add(&mut self, other: &NetStats) {
        for (a, b) in self.links.iter_mut().zip(&other.links) {
            a.add(b);
        }
        for (a, b) in self.nics.iter_mut().zip(&other.nics) {
            a.add(b);
        }
        self.counters.add(&other.counters);
        if let (Some(mine), Some(theirs)) = (&mut self.link_activity, &other.link_activity) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.extend_from_slice(b);
            }
        }
    }
}

impl LinkStats {
    pub fn add(&mut self, b: &LinkStats) {
        self.bytes += b.bytes;
        self.packets += b.packets;
        self.busy_ps += b.busy_ps;
        self.wait_ps += b.wait_ps;
        self.stall_ps += b.stall_ps;
    }
}

impl NicStats {
    pub fn add(&mut self, b: &NicStats) {
        self.injected_packets += b.injected_packets;
        self.ejected_packets += b.ejected_packets;
        self.delivered_packets += b.delivered_packets;
        self.hops += b.hops;
        self.minimal_packets += b.minimal_packets;
    }
}

impl NetCounters {
    pub fn add(&mut self, o: &NetCounters) {
        self.packet_hops += o.packet_hops;
        self.bytes_injected += o.bytes_injected;
        self.bytes_delivered += o.bytes_delivered;
        self.bytes_local += o.bytes_local;
    }
}
