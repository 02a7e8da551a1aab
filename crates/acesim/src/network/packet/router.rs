//! Routers: input FIFOs per VC, the pipeline, switch allocation (round-robin over inputs,
//! or oldest packet first),
//! VC allocation (the VC of the packet's class with the most room), and links sending one
//! packet at a time with cut-through.

use super::state::*;
use crate::engine::Schedule;
use crate::units::{transfer_time, Ps};

/// What `transmit` reads of the packet it sends.
pub(super) struct Sent {
    pub(super) bytes: u32,
    pub(super) port: u32,
    pub(super) vc: u8,
    pub(super) control: bool,
    pub(super) src_nic: u32,
    pub(super) tail_at: Ps,
    pub(super) ready_at: Ps,
    pub(super) fifo_next: u32,
}

/// VC allocation: of VCs `lo..hi`, the one with the most free space (the lowest of equals)
/// that fits a packet of `bytes`.
#[inline(always)]
fn pick_vc(credits: &[i64], lo: u8, hi: u8, bytes: u32) -> Option<u8> {
    let mut most = bytes as i64 - 1;
    let mut best = None;
    for vc in lo..hi {
        let c = credits[vc as usize];
        if c > most {
            most = c;
            best = Some(vc);
        }
    }
    best
}

/// What switch and VC allocation decide for a waiting packet.
pub(super) enum Allocation {
    Vc(u8),
    /// Its input is sending another packet across the crossbar.
    InputBusy,
    /// No VC of its class downstream has room for it.
    NoRoom,
}

impl PacketNetwork {
    /// A packet's head reached a router input one router delay ago (`head_at`): it joins
    /// its VC's FIFO. Found at the front, its pipeline is done now, as it would have been
    /// had it been at the front when it came; if the packet before it left the FIFO after
    /// the head came, the pipeline is done when that packet's tail has crossed (as when
    /// the head waited behind it, `transmit`).
    pub(super) fn on_head_arrive(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, pkt: u32) {
        let p = &mut self.packets[pkt as usize];
        p.fifo_next = NONE;
        let (port, vc, head_at) = (p.port, p.vc, p.head_at);
        if self.deterministic {
            // The route depends only on where the packet is and goes: computed now,
            // while the packet is at hand, and used when the pipeline is done.
            let (src, dst, dst_nic) = (p.src_router, p.dst_router, p.dst_nic);
            let router = self.inputs[port as usize].router;
            let hop = self.topo.route_between(router, src, dst, dst_nic);
            let p = &mut self.packets[pkt as usize];
            (p.next_port, p.next_class) = (hop.port, hop.class);
        }
        let fifo = self.fifo(port, vc);
        let tail = fifo.1;
        fifo.1 = pkt;
        if tail == NONE {
            fifo.0 = pkt;
            let ready = self.pipeline_done(port, vc, head_at, now);
            if ready == now {
                self.on_route_done(q, now, pkt);
            } else {
                q.at(ready, PacketEvent::RouteDone { pkt });
            }
        } else {
            self.packets[tail as usize].fifo_next = pkt;
        }
    }

    /// When the pipeline of a head that came at `head_at` to the empty VC `vc` of input
    /// `port` is done, `now` being a router delay after it came: now, unless the VC's last
    /// packet left after the head came; then when that packet's tail has crossed. Only the
    /// input's last packet can still be crossing: one of this VC that left earlier, or that
    /// a packet of another VC followed, has crossed by now.
    #[inline(always)]
    fn pipeline_done(&self, port: u32, vc: u8, head_at: Ps, now: Ps) -> Ps {
        let input = &self.inputs[port as usize];
        if input.xbar_free <= now || input.last_vc != vc {
            return now;
        }
        let left = if input.crossing == u32::MAX {
            // Every crossing that long was kept (none: as if it left long ago).
            self.long_crossings.get(&port).copied().unwrap_or(0)
        } else {
            input.xbar_free - input.crossing as Ps
        };
        if left >= head_at {
            input.xbar_free
        } else {
            now
        }
    }

    /// The router pipeline is done for the packet at the front of its input VC: it waits for its output.
    #[inline(always)]
    pub(super) fn on_route_done(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, pkt: u32) {
        let p = &self.packets[pkt as usize];
        let port = p.port;
        let hop = if self.deterministic {
            crate::machine::topology::Hop {
                port: p.next_port,
                class: p.next_class,
            }
        } else {
            let router = self.inputs[port as usize].router;
            self.route(q, router, pkt)
        };
        self.inputs[port as usize].routed += 1;
        let pm = &mut self.packets[pkt as usize];
        pm.out_class = hop.class;
        pm.ready_at = now;
        pm.out_link = hop.port;
        self.enqueue(q, now, hop.port, pkt);
    }

    /// A link finished sending a tail: the next waiting packet may go.
    pub(super) fn on_link_free(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, link: u32) {
        self.links[link as usize].free_pending = false;
        self.try_send(q, now, link);
    }

    /// A router input finished sending a packet across the crossbar.
    pub(super) fn on_input_free(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, port: u32) {
        self.inputs[port as usize].free_pending = false;
        // Routed packets at the front of the input's other VCs may go now.
        for vc in 0..self.params.vcs {
            let front = self.fifo(port, vc).0;
            if front != NONE {
                let out = self.packets[front as usize].out_link;
                if out != IN_NIC {
                    self.try_send(q, now, out);
                }
            }
        }
    }

    /// Adds a routed packet to an output's waiting list, and makes sure an event will look
    /// at it: now if the link is idle, else the link's (or its input's) free event.
    #[inline(always)]
    pub(super) fn enqueue(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        link: u32,
        p: u32,
    ) {
        let was_empty = self.links[link as usize].wait_len == 0;
        if was_empty {
            // Credits back by now count for the packet.
            self.settle_credits(q, link, false);
            // An idle link, a free crossbar input and room downstream: the packet goes at
            // once, as switch allocation would send the only packet waiting.
            if self.links[link as usize].busy_until <= now {
                if let Allocation::Vc(vc) = self.allocate(link, p, now) {
                    self.links[link as usize].rr_last = self.packets[p as usize].port;
                    self.transmit(q, now, link, p, vc);
                    return;
                }
            }
        }
        // A list that fills and empties within this event was never seen filled.
        let emptied = if was_empty { self.emptied(link) } else { None };
        self.packets[p as usize].wait_next = NONE;
        let tail = self.links[link as usize].wait_tail;
        if tail == NONE {
            self.links[link as usize].wait_head = p;
        } else {
            self.packets[tail as usize].wait_next = p;
        }
        let l = &mut self.links[link as usize];
        l.wait_tail = p;
        l.wait_len += 1;
        if l.busy_until > now && !l.free_pending {
            l.free_pending = true;
            q.at_reserved(l.busy_until, l.free_seq, PacketEvent::LinkFree { link });
        }
        let port = self.packets[p as usize].port;
        if port != IN_NIC {
            let input = &mut self.inputs[port as usize];
            if input.xbar_free > now && !input.free_pending {
                input.free_pending = true;
                q.at_reserved(
                    input.xbar_free,
                    input.free_seq,
                    PacketEvent::InputFree { port },
                );
            }
        }
        self.try_send(q, now, link);
        if was_empty && self.links[link as usize].wait_len != 0 {
            // A packet waits: from now on the link's credits may wake it, so they are events.
            self.settle_credits(q, link, true);
        } else if was_empty {
            self.restore_emptied(link, emptied);
        }
    }

    /// The FIFO of input `port`'s VC `vc`.
    #[inline(always)]
    pub(super) fn fifo(&mut self, port: u32, vc: u8) -> &mut (u32, u32) {
        if self.fifos.is_empty() {
            &mut self.inputs[port as usize].fifo[vc as usize]
        } else {
            &mut self.fifos[(port * self.params.vcs as u32 + vc as u32) as usize]
        }
    }

    /// Starts the first waiting packet that has buffer space downstream, if the link is idle.
    pub(super) fn try_send(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, link: u32) {
        let l = &self.links[link as usize];
        if l.busy_until > now || l.wait_len == 0 {
            return;
        }
        // Switch allocation is round-robin over the input ports: the first input after the
        // one served last that has a packet fitting downstream goes (oldest first within an
        // input). Each input gets its share, so a router's own injections cannot starve
        // through-traffic. It does not prevent throughput from falling past saturation
        // (docs/traffic.md, "Past saturation").
        // The chosen packet, the one before it in the list (`NONE` if first) and its VC.
        let (p, before, vc) = if l.wait_len == 1 {
            // One candidate (the common case): no ranking.
            let p = l.wait_head;
            match self.allocate(link, p, now) {
                Allocation::Vc(vc) => (p, NONE, vc),
                Allocation::InputBusy => return,
                Allocation::NoRoom => {
                    self.stall(link, now);
                    return;
                }
            }
        } else {
            let mut chosen: Option<(u32, u32, u8)> = None;
            let mut chosen_rank = (u64::MAX, u64::MAX);
            let oldest_first = self.params.oldest_first;
            let mut credit_blocked = false;
            let last = l.rr_last;
            let (mut prev, mut p) = (NONE, l.wait_head);
            while p != NONE {
                let pkt = &self.packets[p as usize];
                let (this, next) = (p, pkt.wait_next);
                let before = prev;
                prev = p;
                p = next;
                // Distance after the last served input, cyclically (u64: every rank is < MAX);
                // with age-based allocation, after the packet's age.
                let rr = pkt.port.wrapping_sub(last).wrapping_sub(1) as u64;
                let rank = (if oldest_first { pkt.born } else { rr }, rr);
                if rank >= chosen_rank {
                    continue;
                }
                match self.allocate(link, this, now) {
                    Allocation::Vc(vc) => {
                        chosen = Some((this, before, vc));
                        chosen_rank = rank;
                    }
                    Allocation::InputBusy => {}
                    Allocation::NoRoom => credit_blocked = true,
                }
            }
            match chosen {
                Some(c) => c,
                None => {
                    // Idle for want of downstream space is a stall (backpressure); idle
                    // because the candidates' inputs are busy is not.
                    if credit_blocked {
                        self.stall(link, now);
                    }
                    return;
                }
            }
        };
        let next = self.packets[p as usize].wait_next;
        if before == NONE {
            self.links[link as usize].wait_head = next;
        } else {
            self.packets[before as usize].wait_next = next;
        }
        let l = &mut self.links[link as usize];
        if next == NONE {
            l.wait_tail = before;
        }
        l.wait_len -= 1;
        l.rr_last = self.packets[p as usize].port;
        if l.wait_len == 0 {
            self.note_emptied(link, q.current_key());
        }
        self.transmit(q, now, link, p, vc);
    }

    /// Whether waiting packet `p` can go on `link` now (the link being free): its input
    /// must not be sending another packet across the crossbar, and a VC of its class must
    /// have room for it (VC allocation takes the one with the most).
    #[inline(always)]
    pub(super) fn allocate(&self, link: u32, p: u32, now: Ps) -> Allocation {
        let pkt = &self.packets[p as usize];
        if pkt.port != IN_NIC && self.inputs[pkt.port as usize].xbar_free > now {
            return Allocation::InputBusy;
        }
        let vcs = self.params.vcs as usize;
        let credits = &self.credits[link as usize * vcs..][..vcs];
        let (lo, hi) = self.class_range[pkt.out_class as usize];
        match pick_vc(credits, lo, hi, pkt.bytes) {
            Some(vc) => Allocation::Vc(vc),
            None => Allocation::NoRoom,
        }
    }

    /// The link idles from `now` for want of downstream buffer space.
    pub(super) fn stall(&mut self, link: u32, now: Ps) {
        let l = &mut self.links[link as usize];
        if l.stalled_since == NOT_STALLED {
            l.stalled_since = now;
        }
    }

    pub(super) fn transmit(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        link: u32,
        p: u32,
        vc: u8,
    ) {
        let vcs = self.params.vcs as u32;
        // The fields used, not a copy of the whole packet.
        let pkt = {
            let x = &self.packets[p as usize];
            Sent {
                bytes: x.bytes,
                port: x.port,
                vc: x.vc,
                control: x.control,
                src_nic: x.src_nic,
                tail_at: x.tail_at,
                ready_at: x.ready_at,
                fifo_next: x.fifo_next,
            }
        };
        if let Some(c) = &mut self.checks {
            let busy = self.links[link as usize].busy_until;
            let credit = self.credits[(link * vcs + vc as u32) as usize];
            if busy > now {
                c.fail(|| {
                    format!(
                        "link {} starts a packet at {now} ps while busy until {busy} ps",
                        self.topo.link_name(link)
                    )
                });
            }
            if credit < pkt.bytes as i64 {
                c.fail(|| {
                    format!(
                        "link {} sends {} B on VC {vc} with only {credit} B of credit at {now} ps",
                        self.topo.link_name(link),
                        pkt.bytes
                    )
                });
            }
        }
        let l = &mut self.links[link as usize];
        let kind = self.kinds[l.kind as usize];
        let ser = if l.ser_memo.0 == pkt.bytes {
            l.ser_memo.1 as Ps
        } else {
            let ser = transfer_time(pkt.bytes as u64, kind.rate);
            if let Ok(short) = u32::try_from(ser) {
                l.ser_memo = (pkt.bytes, short);
            }
            ser
        };
        let tail_out = (now + ser).max(pkt.tail_at + kind.sender_delay);
        l.busy_until = tail_out;
        let stats = &mut self.stats.links[link as usize];
        if l.stalled_since != NOT_STALLED {
            stats.stall_ps += now - l.stalled_since;
            l.stalled_since = NOT_STALLED;
        }
        stats.bytes += pkt.bytes as u64;
        stats.packets += 1;
        stats.busy_ps += tail_out - now;
        stats.wait_ps += now - pkt.ready_at;
        if let Some(act) = &mut self.stats.link_activity {
            let a = &mut act[link as usize];
            match a.last_mut() {
                Some(last) if last.1 == now => last.1 = tail_out,
                _ => a.push((now, tail_out)),
            }
        }
        let latency = kind.latency;
        l.free_seq = q.reserve(tail_out);
        l.free_pending = l.wait_len != 0;
        if l.free_pending {
            q.at_reserved(tail_out, l.free_seq, PacketEvent::LinkFree { link });
        }
        let (to, to_nic, network_hop, global) = (l.to, l.to_nic, l.network_hop, l.global);
        self.credits[(link * vcs + vc as u32) as usize] -= pkt.bytes as i64;
        self.stats.counters.packet_hops += 1;

        if pkt.port == IN_NIC {
            // Leaving the NIC: room in its send buffer for a stalled DMA engine.
            let n = &mut self.nics[pkt.src_nic as usize];
            if n.tx_stalled {
                n.tx_stalled = false;
                self.start_tx_dma(q, now, pkt.src_nic);
            }
            if !pkt.control {
                self.stats.nics[pkt.src_nic as usize].injected_packets += 1;
            }
        } else {
            self.leave_input(q, now, p, &pkt, tail_out);
        }

        let pm = &mut self.packets[p as usize];
        pm.hops += network_hop as u16;
        pm.out_link = IN_NIC;
        pm.ghops += global as u8;
        pm.vc = vc;
        pm.head_at = now + latency;
        pm.tail_at = tail_out + latency;
        if to_nic {
            pm.port = IN_NIC;
            q.at(tail_out + latency, PacketEvent::NicTailArrive { pkt: p });
        } else {
            debug_assert!(to != NONE, "routing chose an unconnected port");
            pm.port = to;
            match self.elsewhere(self.topo.ports.port_router[to as usize]) {
                // The head's arrival and its router pipeline are one event, at the
                // pipeline's end.
                None => q.at(
                    now + latency + self.params.router_delay,
                    PacketEvent::HeadArrive { pkt: p },
                ),
                Some(part) => {
                    self.cross_packet(q, now + latency + self.params.router_delay, p, part)
                }
            }
        }
    }

    /// A packet `p` starts across the crossbar from its router input (its tail crossed at
    /// `tail_out`): the input is busy until then, its buffer space goes back upstream, and
    /// the next packet of its VC is routed.
    #[inline(always)]
    fn leave_input(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        p: u32,
        pkt: &Sent,
        tail_out: Ps,
    ) {
        let input = &mut self.inputs[pkt.port as usize];
        input.xbar_free = tail_out;
        input.free_seq = q.reserve(tail_out);
        // Needed now only if another VC of this input has a routed packet waiting.
        input.routed -= 1;
        input.free_pending = input.routed > 0;
        if input.free_pending {
            q.at_reserved(
                tail_out,
                input.free_seq,
                PacketEvent::InputFree { port: pkt.port },
            );
        }
        input.last_vc = pkt.vc;
        input.crossing = u32::try_from(tail_out - now).unwrap_or(u32::MAX);
        let up = input.upstream;
        if input.crossing == u32::MAX {
            self.long_crossings.insert(pkt.port, now);
        }
        // Leaving a router input buffer: free it and let the next packet be routed.
        let fifo = self.fifo(pkt.port, pkt.vc);
        debug_assert_eq!(fifo.0, p, "packet left from behind the head of its VC");
        let next = pkt.fifo_next;
        fifo.0 = next;
        if next == NONE {
            fifo.1 = NONE;
        }
        if up != NONE {
            let up_lat = self.kind(up).latency;
            self.return_credit(q, tail_out + up_lat, up, pkt.vc, pkt.bytes);
        }
        if next != NONE {
            let ready =
                (self.packets[next as usize].head_at + self.params.router_delay).max(tail_out);
            q.at(ready, PacketEvent::RouteDone { pkt: next });
        }
    }
}
