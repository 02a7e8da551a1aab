//! NICs: messages cut into packets, the send and receive DMA engines (one message at a
//! time per NIC, memory bandwidth shared by a node's engines), injection and ejection.

use super::state::*;
use crate::engine::Schedule;
use crate::network::interface::Notice;
use crate::units::{transfer_time, Ps};

impl PacketNetwork {
    /// Queues a message on the send DMA engine of `src_nic`; `dma = false` makes its
    /// packets appear in the NIC at once (synthetic traffic: the network alone is measured).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_message(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        payload: u64,
        token: u64,
        dma: bool,
    ) {
        let packets = self.params.packets_for(payload) as u32;
        let id = self.new_message(Message {
            dst_nic,
            payload,
            packets,
            dma_next: 0,
            landed: 0,
            token,
            dma,
            hops: 0,
            remote: NO_REMOTE,
            crossed: 0,
            landing: false,
        });
        let nic = &mut self.nics[src_nic as usize];
        nic.tx_queue.push_back(id);
        if !nic.tx_busy && !nic.tx_stalled {
            self.start_tx_dma(q, now, src_nic);
        }
    }

    /// Sends a control packet (no DMA) from `src_nic` to `dst_nic`.
    pub(super) fn send_control_message(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        token: u64,
    ) {
        if self.topo.nic_node(src_nic) == self.topo.nic_node(dst_nic) {
            // The NIC acknowledges a same-node transfer internally.
            self.notices.push(Notice::ControlArrived { token });
            return;
        }
        let id = self.new_message(Message {
            dst_nic,
            payload: 0,
            packets: 1,
            dma_next: 1,
            landed: 0,
            token,
            dma: false,
            hops: 0,
            remote: NO_REMOTE,
            crossed: 0,
            landing: false,
        });
        let p = self.new_packet(id, src_nic, dst_nic, CONTROL, now);
        self.inject_packet(q, now, p);
    }

    /// A message slot, reused once a message has landed: memory follows the messages in
    /// flight, not all messages ever sent.
    pub(super) fn new_message(&mut self, m: Message) -> u32 {
        crate::ids::place(&mut self.messages, self.free_messages.pop(), m)
    }

    /// A packet that is complete in `src_nic` at `now`.
    pub(super) fn new_packet(
        &mut self,
        msg: u32,
        src_nic: u32,
        dst_nic: u32,
        payload: u32,
        now: Ps,
    ) -> u32 {
        let control = payload == u32::MAX;
        let (bytes, payload) = if control {
            (self.params.control as u32, 0)
        } else {
            ((payload as u64 + self.params.header) as u32, payload)
        };
        let pkt = Packet {
            msg,
            src_nic,
            dst_nic,
            src_router: self.topo.nic_router(src_nic),
            dst_router: self.topo.nic_router(dst_nic),
            bytes,
            payload,
            port: IN_NIC,
            vc: 0,
            out_class: 0,
            control,
            head_at: now,
            born: now,
            tail_at: now,
            ready_at: now,
            hops: 0,
            minimal: true,
            via: NO_GROUP,
            copy: 0,
            ghops: 0,
            out_link: IN_NIC,
            next_port: NONE,
            next_class: 0,
            fifo_next: NONE,
            wait_next: NONE,
        };
        self.adopt_packet(pkt)
    }

    /// A slot for packet `pkt`, made here or handed over by another partition.
    pub(super) fn adopt_packet(&mut self, pkt: Packet) -> u32 {
        self.live_packets += 1;
        let id = if let Some(i) = self.free_packets.pop() {
            self.packets[i as usize] = pkt;
            i
        } else {
            self.packets.push(pkt);
            (self.packets.len() - 1) as u32
        };
        if let Some(c) = &mut self.checks {
            if c.live.len() <= id as usize {
                c.live.resize(id as usize + 1, false);
            }
            if c.live[id as usize] {
                c.fail(|| format!("packet slot {id} reused while its packet is alive"));
            }
            c.live[id as usize] = true;
        }
        id
    }

    pub(super) fn free_packet(&mut self, p: u32) {
        if let Some(c) = &mut self.checks {
            if !c.live.get(p as usize).copied().unwrap_or(false) {
                c.fail(|| format!("packet {p} consumed twice (or never created)"));
            } else {
                c.live[p as usize] = false;
            }
        }
        self.live_packets = self.live_packets.saturating_sub(1);
        self.free_packets.push(p);
    }

    /// Time a DMA of `payload` bytes ends if it starts at `start` on `node`'s memory.
    pub(super) fn dma_end(&mut self, node: u32, start: Ps, payload: u64, dma: bool) -> Ps {
        if !dma {
            return start;
        }
        let end = start + transfer_time(payload, self.params.dma_rate);
        match self.params.memory_bandwidth {
            None => end,
            Some(m) => {
                let mem = &mut self.node_mem_free[node as usize];
                let mem_start = start.max(*mem);
                *mem = mem_start + transfer_time(payload, m);
                end.max(*mem)
            }
        }
    }

    pub(super) fn start_tx_dma(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, nic: u32) {
        let Some(&m) = self.nics[nic as usize].tx_queue.front() else {
            self.nics[nic as usize].tx_busy = false;
            return;
        };
        let msg = &mut self.messages[m as usize];
        let k = msg.dma_next as u64;
        msg.dma_next += 1;
        let maxp = self.params.max_payload;
        let payload = (msg.payload - k * maxp).min(maxp);
        if k == 0 {
            self.notices.push(Notice::TxStarted { token: msg.token });
        }
        let node = self.topo.nic_node(nic);
        let dma = msg.dma;
        let end = self.dma_end(node, now, payload, dma);
        let n = &mut self.nics[nic as usize];
        n.tx_busy = true;
        n.tx_payload = payload as u32;
        q.at(end, PacketEvent::TxDmaDone { nic });
    }

    /// Puts a packet that is complete in its NIC on the NIC's injection link.
    pub(super) fn inject_packet(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, p: u32) {
        let src = self.packets[p as usize].src_nic;
        let link = self.topo.num_ports() + src;
        self.stats.counters.bytes_injected += self.packets[p as usize].bytes as u64;
        self.enqueue(q, now, link, p);
    }

    pub(super) fn start_rx_dma(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, pkt: u32) {
        let p = self.packets[pkt as usize];
        let start = now.max(self.nics[p.dst_nic as usize].rx_free);
        let node = self.topo.nic_node(p.dst_nic);
        let dma = self.messages[p.msg as usize].dma;
        let end = self.dma_end(node, start, p.payload as u64, dma);
        self.nics[p.dst_nic as usize].rx_free = end;
        q.at(end, PacketEvent::RxDmaDone { pkt });
    }

    /// A packet left the NIC's input buffer: return its space to the last router.
    pub(super) fn release_nic_buffer(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        p: &Packet,
    ) {
        let link = self.topo.ports.nic_port[p.dst_nic as usize];
        let lat = self.kind(link).latency;
        self.return_credit(q, now + lat, link, p.vc, p.bytes);
    }

    /// The tail of a packet reached its destination NIC.
    pub(super) fn on_nic_tail_arrive(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        pkt: u32,
    ) {
        let p = self.packets[pkt as usize];
        if p.control {
            self.release_nic_buffer(q, now, &p);
            self.stats.counters.bytes_delivered += p.bytes as u64;
            let token = self.messages[p.msg as usize].token;
            self.release_message(p.msg);
            self.notices.push(Notice::ControlArrived { token });
            self.free_packet(pkt);
        } else {
            self.start_rx_dma(q, now, pkt);
        }
    }

    /// The send DMA engine of a NIC finished one packet.
    pub(super) fn on_tx_dma_done(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, nic: u32) {
        let m = *self.nics[nic as usize]
            .tx_queue
            .front()
            .expect("a DMA finished with no message queued");
        let payload = self.nics[nic as usize].tx_payload;
        let msg = &self.messages[m as usize];
        let (dst, token, last) = (msg.dst_nic, msg.token, msg.dma_next == msg.packets);
        let p = self.new_packet(m, nic, dst, payload, now);
        if self.topo.nic_node(nic) == self.topo.nic_node(dst) {
            // Same node: straight to the receive DMA engine, no network.
            self.start_rx_dma(q, now, p);
        } else {
            self.inject_packet(q, now, p);
        }
        if last {
            self.nics[nic as usize].tx_queue.pop_front();
            self.notices.push(Notice::TxDone { token });
        }
        let link = (self.topo.num_ports() + nic) as usize;
        if self.links[link].wait_len as usize >= self.params.injection_queue {
            // The NIC's send buffer is full (backpressure): the DMA engine waits.
            let n = &mut self.nics[nic as usize];
            n.tx_busy = false;
            n.tx_stalled = true;
        } else {
            self.start_tx_dma(q, now, nic);
        }
    }

    /// A packet was written to the destination node's memory.
    pub(super) fn on_rx_dma_done(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, pkt: u32) {
        let p = self.packets[pkt as usize];
        // Same-node packets never occupied a network buffer.
        if self.topo.nic_node(p.src_nic) != self.topo.nic_node(p.dst_nic) {
            self.release_nic_buffer(q, now, &p);
            self.stats.counters.bytes_delivered += p.bytes as u64;
        } else {
            self.stats.counters.bytes_local += p.payload as u64;
        }
        if self.topo.nic_node(p.src_nic) != self.topo.nic_node(p.dst_nic) {
            let st = &mut self.stats.nics[p.src_nic as usize];
            st.delivered_packets += 1;
            st.hops += p.hops as u64;
            st.minimal_packets += p.minimal as u64;
            self.stats.nics[p.dst_nic as usize].ejected_packets += 1;
        }
        if let Some(c) = &mut self.checks {
            let (max, ghops) = (self.topo.max_route_hops(), p.ghops);
            if p.hops as u32 > max || ghops > 2 || (p.minimal && ghops > 1) {
                c.fail(|| {
                    format!(
                        "a packet from NIC {} to NIC {} took {} hops ({ghops} global), more than a route can ({max})",
                        p.src_nic, p.dst_nic, p.hops
                    )
                });
            }
        }
        let msg = &mut self.messages[p.msg as usize];
        msg.hops += p.hops as u32;
        msg.landed += 1;
        if msg.landed > msg.packets {
            if let Some(c) = &mut self.checks {
                let (landed, packets) = (msg.landed, msg.packets);
                c.fail(|| format!("message {} landed {landed} packets of {packets}", p.msg));
            }
        }
        if msg.landed == msg.packets {
            self.notices.push(Notice::Landed {
                token: msg.token,
                hops: msg.hops,
            });
            // Every packet has been sent and written: nothing refers to it now.
            self.release_message(p.msg);
        }
        self.free_packet(pkt);
    }
}
