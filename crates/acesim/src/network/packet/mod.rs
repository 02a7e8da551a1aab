//! The packet-level network: NICs with DMA engines, pipelined virtual cut-through routers
//! with per-VC input buffers and credit flow control, and full-duplex links.
//!
//! Timing of one hop (DESIGN.md §2). A packet whose head reaches a router input at `h` and
//! whose tail arrives at `t` is routed after the pipeline delay `d` (routing + VC allocation +
//! switch allocation + switch latency), then waits for its output link and for a downstream
//! buffer with room for the whole packet (VCT). It leaves at `now`; its tail leaves at
//! `max(now + size/rate, t + d)`: cut-through when it does not wait, never faster than it
//! arrived. A link carries one packet per direction at a time. Buffer space is returned to
//! the upstream sender as a credit one cable latency after the tail has left.
//!
//! The runtime talks to it only through the [`Network`] interface.

use crate::engine::Schedule;
use crate::machine::config::MachineConfig;
use crate::machine::topology::{LinkClass, LinkEnd, PlannedSize, Topology};
use crate::network::interface::{LinkStats, ModelEvent, NetCounters, Network, NicStats, Notice};
use crate::units::{transfer_time, Ps};
use std::collections::VecDeque;

/// Packet is not in a router input buffer (it is in a NIC).
const IN_NIC: u32 = u32::MAX;
/// `new_packet` payload that asks for a control packet.
const CONTROL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub enum PacketEvent {
    /// A packet's head reached the router input `packet.port`.
    HeadArrive { pkt: u32 },
    /// The router pipeline is done for the packet at the front of its input VC.
    RouteDone { pkt: u32 },
    /// A link finished sending a tail.
    LinkFree { link: u32 },
    /// Buffer space came back to the sender of `link` (`bytes` below 64 KiB, which keeps
    /// events at 8 bytes).
    Credit { link: u32, vc: u8, bytes: u16 },
    /// The same for a larger packet: `big_credits[slot]` says which link, VC and bytes.
    BigCredit { slot: u32 },
    /// The tail of a packet reached its destination NIC.
    NicTailArrive { pkt: u32 },
    /// The send DMA engine of a NIC finished one packet.
    TxDmaDone { nic: u32 },
    /// A packet was written to the destination node's memory.
    RxDmaDone { pkt: u32 },
    /// A router input finished sending a packet across the crossbar.
    InputFree { port: u32 },
}

impl ModelEvent for PacketEvent {}

#[derive(Debug, Clone, Copy)]
struct Packet {
    msg: u32,
    src_nic: u32,
    dst_nic: u32,
    /// Routers of `src_nic` and `dst_nic`.
    src_router: u32,
    dst_router: u32,
    /// Bytes on the wire (header included).
    bytes: u32,
    /// Payload bytes (moved by DMA).
    payload: u32,
    /// Router input port holding it, or `IN_NIC`.
    port: u32,
    vc: u8,
    /// VC class chosen by routing for the next link.
    out_class: u8,
    control: bool,
    head_at: Ps,
    tail_at: Ps,
    /// When it started waiting for its output link.
    ready_at: Ps,
    /// Router-to-router links crossed.
    hops: u16,
    /// Routed minimally (false once Valiant or UGAL sends it through another group).
    minimal: bool,
    /// Dragonfly: intermediate group still to reach, or `NO_GROUP`.
    via: u32,
    /// Dragonfly: global links crossed (the VC class of its next hop).
    ghops: u8,
    /// Output link chosen by routing at the current router (`IN_NIC` before routing).
    out_link: u32,
    /// With deterministic routing, the output and VC class routing will choose at the
    /// current router, computed when the head arrives.
    next_port: u32,
    next_class: u8,
    /// Next packet in its input VC, and in its output's waiting list (`NONE` at the end).
    fifo_next: u32,
    wait_next: u32,
}

const NO_GROUP: u32 = u32::MAX;
/// End of a list of pending credits.
const NO_CREDIT: u32 = u32::MAX;

/// A credit on its way back to a link whose sender has nothing waiting: no event is needed
/// to wake the sender, so it is kept here and counted when the credits are next looked at
/// (or made an event, with the sequence number it was given, if a packet comes to wait).
#[derive(Debug, Clone, Copy)]
struct PendingCredit {
    time: Ps,
    seq: u64,
    bytes: u32,
    vc: u8,
    next: u32,
}

/// How packets choose their path on a dragonfly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Routing {
    Minimal,
    /// Through a random intermediate group.
    Valiant,
    /// At the source router: minimal or Valiant, whichever has less queued×hops.
    Ugal {
        threshold: f64,
    },
    /// Fat tree: a random up port at every router on the way up (BookSim2's `nca`).
    RandomUp,
}

#[derive(Debug, Clone)]
struct Message {
    dst_nic: u32,
    payload: u64,
    packets: u32,
    /// Packets whose send DMA has started.
    dma_next: u32,
    landed: u32,
    token: u64,
    /// False for synthetic traffic: packets appear in the NIC without a DMA.
    dma: bool,
    /// Router-to-router hops of its packets so far.
    hops: u32,
}

/// What a link's class fixes: rate, latency and the sender's pipeline delay (a handful of
/// classes, so a link keeps an index and its record stays one cache line).
#[derive(Debug, Clone, Copy, Default)]
struct LinkKind {
    /// Serialization rate in bytes/s.
    rate: u64,
    latency: Ps,
    /// Pipeline delay of the element that sends on this link (0 for a NIC).
    sender_delay: Ps,
}

/// A link's sender side as a hop reads and writes it: one cache line (its statistics and
/// credits are kept apart).
#[derive(Debug, Clone)]
#[repr(align(64))]
struct Link {
    busy_until: Ps,
    /// The LinkFree event of the current transmission: its sequence number is reserved
    /// when the transmission starts and the event is pushed only if a packet is waiting.
    free_seq: u64,
    /// Since when the link has been idle for want of downstream space (`NOT_STALLED`).
    stalled_since: Ps,
    /// The last packet size sent and its serialization time in ps, when that fits 32 bits:
    /// packets mostly have one size, and this saves a division per hop.
    ser_memo: (u32, u32),
    /// Routed packets waiting for the link, oldest first (a list through
    /// `Packet::wait_next`), and how many.
    wait_head: u32,
    wait_tail: u32,
    wait_len: u32,
    /// Input port served last (round-robin switch allocation).
    rr_last: u32,
    /// Where it delivers: a router input port, or a NIC when `to_nic`.
    to: u32,
    /// The first of its pending credits (`NO_CREDIT` for none). Only a link with no
    /// packet waiting has any.
    pending_credit: u32,
    /// Index into `PacketNetwork::kinds`.
    kind: u8,
    free_pending: bool,
    to_nic: bool,
    /// Router to router (counts as a hop).
    network_hop: bool,
    /// A dragonfly global link.
    global: bool,
}

/// What `transmit` reads of the packet it sends.
struct Sent {
    bytes: u32,
    port: u32,
    vc: u8,
    control: bool,
    src_nic: u32,
    tail_at: Ps,
    ready_at: Ps,
    fifo_next: u32,
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
enum Allocation {
    Vc(u8),
    /// Its input is sending another packet across the crossbar.
    InputBusy,
    /// No VC of its class downstream has room for it.
    NoRoom,
}

/// `Link::stalled_since` when the link is not stalled.
const NOT_STALLED: Ps = Ps::MAX;

/// A router input port as a hop reads and writes it (one cache line).
#[derive(Debug, Clone)]
#[repr(align(64))]
struct Input {
    /// Its VCs' FIFOs (first and last packet, a list through `Packet::fifo_next`; `NONE`
    /// when empty) when there are at most `INLINE_VCS` VCs, else in `PacketNetwork::fifos`.
    fifo: [(u32, u32); INLINE_VCS],
    /// When its crossbar port is free again: one packet at a time crosses from an input,
    /// whatever its VC.
    xbar_free: Ps,
    /// The InputFree event, reserved like `Link::free_seq`.
    free_seq: u64,
    router: u32,
    /// The link that feeds it (`NONE` when unconnected).
    upstream: u32,
    /// Routed packets at the front of its VCs, waiting for an output: whether another VC
    /// needs the input when one leaves.
    routed: u8,
    free_pending: bool,
}

/// VCs whose FIFOs an `Input` holds itself.
const INLINE_VCS: usize = 4;

/// End of a list of packets.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
struct Nic {
    tx_queue: VecDeque<u32>,
    tx_busy: bool,
    /// The send DMA engine waits for room in the injection queue.
    tx_stalled: bool,
    tx_payload: u32,
    rx_free: Ps,
}

/// Parameters the network needs, resolved from the machine config.
#[derive(Debug, Clone)]
pub struct NetParams {
    pub router_delay: Ps,
    pub vcs: u8,
    /// Input buffer per VC in bytes, `None` for unbounded.
    pub buffer: Option<u64>,
    pub dma_rate: u64,
    pub memory_bandwidth: Option<u64>,
    pub max_payload: u64,
    pub header: u64,
    pub control: u64,
    /// Packets a NIC holds ready to send; its send DMA pauses when they fill it.
    pub injection_queue: usize,
    pub routing: Routing,
    pub routing_seed: u64,
}

impl NetParams {
    pub fn from_config(c: &MachineConfig) -> NetParams {
        let r = &c.router;
        NetParams {
            router_delay: r.routing_delay.0
                + r.vc_allocation_delay.0
                + r.switch_allocation_delay.0
                + r.switch_latency.0,
            vcs: r.vcs as u8,
            buffer: r.buffer_per_vc.limit().map(|s| s.0),
            dma_rate: c.nic.dma_rate.0,
            memory_bandwidth: c.node.memory_bandwidth.limit().map(|b| b.0),
            max_payload: c.nic.mtu.0 - c.nic.header.0,
            header: c.nic.header.0,
            control: c.nic.control_packet.0,
            injection_queue: c.nic.injection_queue as usize,
            routing: match c.router.routing.as_str() {
                "valiant" => Routing::Valiant,
                "ugal" => Routing::Ugal {
                    threshold: c.router.ugal_threshold,
                },
                "random" => Routing::RandomUp,
                _ => Routing::Minimal,
            },
            routing_seed: c.router.routing_seed,
        }
    }

    /// Packets needed for `payload` bytes (a zero-byte message still sends a header).
    pub fn packets_for(&self, payload: u64) -> u64 {
        payload.div_ceil(self.max_payload).max(1)
    }
}

pub struct PacketNetwork {
    pub topo: Topology,
    pub params: NetParams,
    links: Vec<Link>,
    /// Per `LinkClass`: rate, latency and sender delay.
    kinds: [LinkKind; 5],
    link_stats: Vec<LinkStats>,
    /// Credits (free bytes in the downstream buffer) per link and VC.
    credits: Vec<i64>,
    pending_credits: Vec<PendingCredit>,
    /// Link, VC and bytes of each `BigCredit` event in the queue, and free slots.
    big_credits: Vec<(u32, u8, u32)>,
    free_big_credits: Vec<u32>,
    free_pending_credits: Vec<u32>,
    /// Router input ports.
    inputs: Vec<Input>,
    /// Input FIFOs per router port and VC when there are more than `INLINE_VCS` VCs (see
    /// `Input::fifo`).
    fifos: Vec<(u32, u32)>,
    /// VCs `lo..hi` of each VC class routing asks for (`class_vcs`).
    class_range: [(u8, u8); 256],
    nics: Vec<Nic>,
    node_mem_free: Vec<Ps>,
    packets: Vec<Packet>,
    free_packets: Vec<u32>,
    messages: Vec<Message>,
    free_messages: Vec<u32>,
    pub notices: Vec<Notice>,
    /// Packets created and not yet consumed.
    pub live_packets: u64,
    /// Link traversals (every link a packet crossed, NIC links included).
    pub packet_hops: u64,
    pub bytes_injected: u64,
    pub bytes_delivered: u64,
    /// Payload moved between NICs of one node (never on a link).
    pub bytes_local: u64,
    /// Busy intervals of every link (back-to-back ones merged), when tracing.
    pub link_activity: Option<Vec<Vec<(Ps, Ps)>>>,
    pub nic_stats: Vec<NicStats>,
    rng: crate::rng::Rng,
    /// Model invariants checked as the run goes (`--check`, and always in debug builds).
    checks: Option<Box<Checks>>,
    /// Every credit an event (`every_credit_an_event`).
    eager_credits: bool,
    /// Routing depends only on the packet's router, source and destination (not on a
    /// random draw or on the network's state): all but the dragonfly.
    deterministic: bool,
}

/// State for checking the model's invariants; the first broken one is kept.
#[derive(Debug, Default)]
struct Checks {
    /// Per packet slot: in use (created and not yet consumed).
    live: Vec<bool>,
    violation: Option<String>,
}

impl Checks {
    fn fail(&mut self, what: impl FnOnce() -> String) {
        if self.violation.is_none() {
            self.violation = Some(what());
        }
    }
}

impl PacketNetwork {
    pub fn new(topo: Topology, config: &MachineConfig) -> PacketNetwork {
        let params = NetParams::from_config(config);
        let nl = topo.num_links();
        let switch = config.router.switch_throughput;
        let net_rate = switch.output(config.link.bandwidth.0);
        let nic_link = config.nic_link();
        let mut kinds = [LinkKind::default(); 5];
        for class in [
            LinkClass::Network,
            LinkClass::Local,
            LinkClass::Global,
            LinkClass::Injection,
            LinkClass::Ejection,
        ] {
            kinds[class as usize] = match class {
                LinkClass::Network | LinkClass::Local => LinkKind {
                    rate: net_rate,
                    latency: config.link.latency.0,
                    sender_delay: params.router_delay,
                },
                LinkClass::Global => LinkKind {
                    rate: switch.output(config.global_link().bandwidth.0),
                    latency: config.global_link().latency.0,
                    sender_delay: params.router_delay,
                },
                LinkClass::Ejection => LinkKind {
                    rate: switch.output(nic_link.bandwidth.0),
                    latency: nic_link.latency.0,
                    sender_delay: params.router_delay,
                },
                LinkClass::Injection => LinkKind {
                    rate: nic_link.bandwidth.0,
                    latency: nic_link.latency.0,
                    sender_delay: 0,
                },
            };
        }
        let mut links = Vec::with_capacity(nl as usize);
        for l in 0..nl {
            let class = topo.link_class(l);
            let (to, to_nic) = match topo.link_end(l) {
                Some(LinkEnd::RouterIn(port)) => (port, false),
                Some(LinkEnd::NicIn(nic)) => (nic, true),
                None => (NONE, false),
            };
            links.push(Link {
                busy_until: 0,
                free_seq: 0,
                stalled_since: NOT_STALLED,
                ser_memo: (0, 0),
                wait_head: NONE,
                wait_tail: NONE,
                wait_len: 0,
                rr_last: u32::MAX,
                to,
                pending_credit: NO_CREDIT,
                kind: class as u8,
                free_pending: false,
                to_nic,
                network_hop: l < topo.num_ports() && !to_nic && to != NONE,
                global: class == LinkClass::Global,
            });
        }
        let vcs = params.vcs as usize;
        let credits = vec![params.buffer.map_or(i64::MAX, |b| b as i64); nl as usize * vcs];
        let fifos = if vcs > INLINE_VCS {
            vec![(NONE, NONE); topo.num_ports() as usize * vcs]
        } else {
            Vec::new()
        };
        let inputs = (0..topo.num_ports())
            .map(|port| Input {
                fifo: [(NONE, NONE); INLINE_VCS],
                xbar_free: 0,
                free_seq: 0,
                router: topo.port_router[port as usize],
                upstream: topo.link_into_port(port).unwrap_or(NONE),
                routed: 0,
                free_pending: false,
            })
            .collect();
        let nics = vec![Nic::default(); topo.num_nics() as usize];
        let topo_nics = topo.num_nics() as usize;
        let params_seed = params.routing_seed;
        let deterministic = !matches!(
            topo.shape,
            crate::machine::topology::Shape::Dragonfly { .. }
        ) && params.routing != Routing::RandomUp;
        let node_mem_free = vec![0; topo.num_nodes as usize];
        let mut net = PacketNetwork {
            topo,
            params,
            links,
            kinds,
            link_stats: vec![LinkStats::default(); nl as usize],
            credits,
            class_range: [(0, 0); 256],
            pending_credits: Vec::new(),
            big_credits: Vec::new(),
            free_big_credits: Vec::new(),
            free_pending_credits: Vec::new(),
            inputs,
            fifos,
            nics,
            node_mem_free,
            packets: Vec::new(),
            free_packets: Vec::new(),
            messages: Vec::new(),
            free_messages: Vec::new(),
            notices: Vec::new(),
            live_packets: 0,
            packet_hops: 0,
            bytes_injected: 0,
            bytes_delivered: 0,
            bytes_local: 0,
            link_activity: None,
            nic_stats: vec![NicStats::default(); topo_nics],
            rng: crate::rng::Rng::new(params_seed),
            checks: None,
            eager_credits: false,
            deterministic,
        };
        net.fill_class_ranges();
        net
    }

    /// The VCs of every class, computed once (see `class_vcs`).
    fn fill_class_ranges(&mut self) {
        for class in 0..=255u8 {
            self.class_range[class as usize] = self.class_vcs(class);
        }
    }

    /// Bytes `PacketNetwork::new` allocates for `topo` with `vcs` VCs, and per message sent.
    pub fn estimate_bytes(size: &PlannedSize, vcs: u64, messages: u64) -> u64 {
        use std::mem::size_of;
        size.links() * (size_of::<Link>() + size_of::<LinkStats>()) as u64
            + size.links() * vcs * 8
            + size.ports * size_of::<Input>() as u64
            + if vcs > INLINE_VCS as u64 {
                size.ports * vcs * 8
            } else {
                0
            }
            + size.nics * (size_of::<Nic>() + size_of::<NicStats>()) as u64
            + size.nodes * 8
            + messages * size_of::<Message>() as u64
    }

    /// Makes every returned credit an event, even one that wakes nothing: the plain
    /// schedule that keeping such credits off the queue must reproduce exactly (tests).
    #[doc(hidden)]
    pub fn every_credit_an_event(&mut self) {
        self.eager_credits = true;
    }

    fn kind(&self, link: u32) -> &LinkKind {
        &self.kinds[self.links[link as usize].kind as usize]
    }

    /// Queues a message on the send DMA engine of `src_nic`; `dma = false` makes its
    /// packets appear in the NIC at once (synthetic traffic: the network alone is measured).
    #[allow(clippy::too_many_arguments)]
    fn send_message(
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
        });
        let nic = &mut self.nics[src_nic as usize];
        nic.tx_queue.push_back(id);
        if !nic.tx_busy && !nic.tx_stalled {
            self.start_tx_dma(q, now, src_nic);
        }
    }

    /// A message slot, reused once a message has landed: memory follows the messages in
    /// flight, not all messages ever sent.
    fn new_message(&mut self, m: Message) -> u32 {
        match self.free_messages.pop() {
            Some(id) => {
                self.messages[id as usize] = m;
                id
            }
            None => {
                self.messages.push(m);
                (self.messages.len() - 1) as u32
            }
        }
    }

    /// A packet that is complete in `src_nic` at `now`.
    fn new_packet(&mut self, msg: u32, src_nic: u32, dst_nic: u32, payload: u32, now: Ps) -> u32 {
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
            tail_at: now,
            ready_at: now,
            hops: 0,
            minimal: true,
            via: NO_GROUP,
            ghops: 0,
            out_link: IN_NIC,
            next_port: NONE,
            next_class: 0,
            fifo_next: NONE,
            wait_next: NONE,
        };
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

    fn free_packet(&mut self, p: u32) {
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
    fn dma_end(&mut self, node: u32, start: Ps, payload: u64, dma: bool) -> Ps {
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

    fn start_tx_dma(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, nic: u32) {
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
    fn inject(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, p: u32) {
        let src = self.packets[p as usize].src_nic;
        let link = self.topo.num_ports() + src;
        self.bytes_injected += self.packets[p as usize].bytes as u64;
        self.enqueue(q, now, link, p);
    }

    /// Adds a routed packet to an output's waiting list, and makes sure an event will look
    /// at it: now if the link is idle, else the link's (or its input's) free event.
    fn enqueue(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, link: u32, p: u32) {
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
        }
    }

    /// The FIFO of input `port`'s VC `vc`.
    #[inline(always)]
    fn fifo(&mut self, port: u32, vc: u8) -> &mut (u32, u32) {
        if self.fifos.is_empty() {
            &mut self.inputs[port as usize].fifo[vc as usize]
        } else {
            &mut self.fifos[(port * self.params.vcs as u32 + vc as u32) as usize]
        }
    }

    fn start_rx_dma(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, pkt: u32) {
        let p = self.packets[pkt as usize];
        let start = now.max(self.nics[p.dst_nic as usize].rx_free);
        let node = self.topo.nic_node(p.dst_nic);
        let dma = self.messages[p.msg as usize].dma;
        let end = self.dma_end(node, start, p.payload as u64, dma);
        self.nics[p.dst_nic as usize].rx_free = end;
        q.at(end, PacketEvent::RxDmaDone { pkt });
    }

    /// A packet left the NIC's input buffer: return its space to the last router.
    fn release_nic_buffer(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, p: &Packet) {
        let link = self.topo.nic_port[p.dst_nic as usize];
        let lat = self.kind(link).latency;
        self.return_credit(q, now + lat, link, p.vc, p.bytes);
    }

    /// Buffer space reaches the sender of `link` at `time`. It wakes the sender only if a
    /// packet waits for the link: else it is kept pending, with the sequence number its
    /// event would have had, so it counts exactly when that event would have run.
    fn return_credit(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        time: Ps,
        link: u32,
        vc: u8,
        bytes: u32,
    ) {
        let seq = q.reserve();
        if self.eager_credits || self.links[link as usize].wait_len != 0 {
            let event = self.credit_event(link, vc, bytes);
            q.at_reserved(time, seq, event);
            return;
        }
        let c = PendingCredit {
            time,
            seq,
            bytes,
            vc,
            next: self.links[link as usize].pending_credit,
        };
        let i = match self.free_pending_credits.pop() {
            Some(i) => {
                self.pending_credits[i as usize] = c;
                i
            }
            None => {
                self.pending_credits.push(c);
                (self.pending_credits.len() - 1) as u32
            }
        };
        self.links[link as usize].pending_credit = i;
    }

    /// The event that returns `bytes` of buffer space on `link`'s VC `vc`.
    fn credit_event(&mut self, link: u32, vc: u8, bytes: u32) -> PacketEvent {
        if let Ok(bytes) = u16::try_from(bytes) {
            return PacketEvent::Credit { link, vc, bytes };
        }
        let slot = match self.free_big_credits.pop() {
            Some(slot) => {
                self.big_credits[slot as usize] = (link, vc, bytes);
                slot
            }
            None => {
                self.big_credits.push((link, vc, bytes));
                (self.big_credits.len() - 1) as u32
            }
        };
        PacketEvent::BigCredit { slot }
    }

    /// Counts the pending credits of `link` whose events would have run by now; the others
    /// stay pending or, with `wake`, become events.
    #[inline]
    fn settle_credits(&mut self, q: &mut impl Schedule<PacketEvent>, link: u32, wake: bool) {
        if self.links[link as usize].pending_credit == NO_CREDIT {
            return;
        }
        self.count_credits_before(link, q.current_key());
        if !wake {
            return;
        }
        let mut i = std::mem::replace(&mut self.links[link as usize].pending_credit, NO_CREDIT);
        while i != NO_CREDIT {
            let c = self.pending_credits[i as usize];
            let (vc, bytes) = (c.vc, c.bytes);
            let event = self.credit_event(link, vc, bytes);
            q.at_reserved(c.time, c.seq, event);
            self.free_pending_credits.push(i);
            i = c.next;
        }
    }

    /// Counts the pending credits of `link` whose (time, sequence) is before `key`, keeps
    /// the others pending, and returns the latest time counted (0 if none).
    fn count_credits_before(&mut self, link: u32, key: (Ps, u64)) -> Ps {
        let mut i = self.links[link as usize].pending_credit;
        let (mut keep, mut latest) = (NO_CREDIT, 0);
        while i != NO_CREDIT {
            let c = self.pending_credits[i as usize];
            if (c.time, c.seq) < key {
                self.add_credit(c.time, link, c.vc, c.bytes);
                latest = latest.max(c.time);
                self.free_pending_credits.push(i);
            } else {
                self.pending_credits[i as usize].next = keep;
                keep = i;
            }
            i = c.next;
        }
        self.links[link as usize].pending_credit = keep;
        latest
    }

    #[inline]
    fn add_credit(&mut self, now: Ps, link: u32, vc: u8, bytes: u32) {
        let i = (link * self.params.vcs as u32 + vc as u32) as usize;
        self.credits[i] += bytes as i64;
        if let (Some(c), Some(cap)) = (&mut self.checks, self.params.buffer) {
            if self.credits[i] > cap as i64 {
                c.fail(|| {
                    format!(
                        "link {} VC {vc} holds {} credits at {now} ps, more than its {cap} B buffer",
                        self.topo.link_name(link),
                        self.credits[i]
                    )
                });
            }
        }
    }

    /// The next hop of packet `p` at `router`. On a dragonfly the source router picks the
    /// path (minimal, Valiant or UGAL) and the VC class is the number of global links
    /// crossed, which keeps local-global-local(-global-local) paths deadlock-free. Other
    /// topologies route when the head arrives (`deterministic`); they only fall through here.
    fn route(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        router: u32,
        p: u32,
    ) -> crate::machine::topology::Hop {
        let crate::machine::topology::Shape::Dragonfly { g, .. } = self.topo.shape else {
            let pkt = &self.packets[p as usize];
            let mut hop =
                self.topo
                    .route_between(router, pkt.src_router, pkt.dst_router, pkt.dst_nic);
            if let (
                Routing::RandomUp,
                crate::machine::topology::Shape::FatTree { k, n, per_level },
            ) = (self.params.routing, &self.topo.shape)
            {
                // Up ports are the last k of a switch below the top level: going up, draw
                // one of them (the level reached, and so the path's length, is the same).
                let base = self.topo.port_base[router as usize];
                let ports = self.topo.port_base[router as usize + 1] - base;
                let going_up = router / per_level + 1 < *n && hop.port >= base + ports - k;
                if going_up {
                    hop.port = base + ports - k + self.rng.below(*k as u64) as u32;
                }
            }
            return hop;
        };
        let pkt = self.packets[p as usize];
        let here = self.topo.group_of(router);
        let dst_group = self.topo.group_of(pkt.dst_router);
        let mut via = pkt.via;
        if pkt.hops == 0 && here != dst_group && g > 2 && self.params.routing != Routing::Minimal {
            // A random intermediate group, neither the source's nor the destination's.
            let mut v = self.rng.below(g as u64 - 2) as u32;
            for skip in {
                let mut s = [here.min(dst_group), here.max(dst_group)];
                s.sort_unstable();
                s
            } {
                if v >= skip {
                    v += 1;
                }
            }
            via = match self.params.routing {
                Routing::Valiant => v,
                Routing::Ugal { threshold } => {
                    let min_port = self
                        .topo
                        .route_dragonfly(router, pkt.dst_nic, NO_GROUP)
                        .port;
                    let nm_port = self.topo.route_dragonfly(router, pkt.dst_nic, v).port;
                    // Credits back by now count, whether or not they woke anything.
                    self.settle_credits(q, min_port, false);
                    self.settle_credits(q, nm_port, false);
                    // The packet's own bytes count on both paths, so that with empty queues
                    // the shorter path wins.
                    let own = pkt.bytes as u64;
                    let (qm, qn) = (
                        self.occupancy(min_port) + own,
                        self.occupancy(nm_port) + own,
                    );
                    let (hm, hn) = (
                        self.dragonfly_hops(router, pkt.dst_nic, NO_GROUP),
                        self.dragonfly_hops(router, pkt.dst_nic, v),
                    );
                    if (qm * hm) as f64 > threshold * (qn * hn) as f64 {
                        v
                    } else {
                        NO_GROUP
                    }
                }
                Routing::Minimal | Routing::RandomUp => NO_GROUP,
            };
        }
        if via == here {
            via = NO_GROUP; // reached the intermediate group: now minimal to the destination
        }
        let pm = &mut self.packets[p as usize];
        if via != NO_GROUP {
            pm.minimal = false;
        }
        pm.via = via;
        let mut hop = self.topo.route_dragonfly(router, pkt.dst_nic, via);
        hop.class = pm.ghops;
        hop
    }

    /// Router-to-router hops from `router` to the destination's router along a path.
    fn dragonfly_hops(&self, mut router: u32, dst_nic: u32, mut via: u32) -> u64 {
        let dst_router = self.topo.nic_router(dst_nic);
        let mut n = 0;
        while router != dst_router && n < 8 {
            if via != NO_GROUP && self.topo.group_of(router) == via {
                via = NO_GROUP;
            }
            let hop = self.topo.route_dragonfly(router, dst_nic, via);
            match self.topo.peer[hop.port as usize] {
                crate::machine::topology::Peer::Router(p) => {
                    router = self.inputs[p as usize].router
                }
                _ => break,
            }
            n += 1;
        }
        n.max(1)
    }

    /// Bytes queued for an output port: waiting for it, plus held in the buffers it feeds.
    fn occupancy(&self, link: u32) -> u64 {
        let mut waiting = 0u64;
        let mut p = self.links[link as usize].wait_head;
        while p != NONE {
            waiting += self.packets[p as usize].bytes as u64;
            p = self.packets[p as usize].wait_next;
        }
        let held: u64 = match self.params.buffer {
            Some(cap) => (0..self.params.vcs as u32)
                .map(|vc| {
                    (cap as i64 - self.credits[(link * self.params.vcs as u32 + vc) as usize])
                        .max(0) as u64
                })
                .sum(),
            None => 0,
        };
        waiting + held
    }

    /// VCs of a class: the VCs are split evenly between the classes routing needs.
    fn class_vcs(&self, class: u8) -> (u8, u8) {
        let vcs = self.params.vcs;
        let classes = self.topo.vc_classes.min(vcs);
        let class = class.min(classes - 1);
        let per = vcs / classes;
        let lo = class * per;
        let hi = if class + 1 == classes { vcs } else { lo + per };
        (lo, hi)
    }

    /// Starts the first waiting packet that has buffer space downstream, if the link is idle.
    fn try_send(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, link: u32) {
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
            let mut chosen_rank = u64::MAX;
            let mut credit_blocked = false;
            let last = l.rr_last;
            let (mut prev, mut p) = (NONE, l.wait_head);
            while p != NONE {
                let pkt = &self.packets[p as usize];
                let (this, next) = (p, pkt.wait_next);
                let before = prev;
                prev = p;
                p = next;
                // Distance after the last served input, cyclically (u64: every rank is < MAX).
                let rank = pkt.port.wrapping_sub(last).wrapping_sub(1) as u64;
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
        self.transmit(q, now, link, p, vc);
    }

    /// Whether waiting packet `p` can go on `link` now (the link being free): its input
    /// must not be sending another packet across the crossbar, and a VC of its class must
    /// have room for it (VC allocation takes the one with the most).
    #[inline(always)]
    fn allocate(&self, link: u32, p: u32, now: Ps) -> Allocation {
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
    fn stall(&mut self, link: u32, now: Ps) {
        let l = &mut self.links[link as usize];
        if l.stalled_since == NOT_STALLED {
            l.stalled_since = now;
        }
    }

    fn transmit(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, link: u32, p: u32, vc: u8) {
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
        let stats = &mut self.link_stats[link as usize];
        if l.stalled_since != NOT_STALLED {
            stats.stall_ps += now - l.stalled_since;
            l.stalled_since = NOT_STALLED;
        }
        stats.bytes += pkt.bytes as u64;
        stats.packets += 1;
        stats.busy_ps += tail_out - now;
        stats.wait_ps += now - pkt.ready_at;
        if let Some(act) = &mut self.link_activity {
            let a = &mut act[link as usize];
            match a.last_mut() {
                Some(last) if last.1 == now => last.1 = tail_out,
                _ => a.push((now, tail_out)),
            }
        }
        let latency = kind.latency;
        l.free_seq = q.reserve();
        l.free_pending = l.wait_len != 0;
        if l.free_pending {
            q.at_reserved(tail_out, l.free_seq, PacketEvent::LinkFree { link });
        }
        let (to, to_nic, network_hop, global) = (l.to, l.to_nic, l.network_hop, l.global);
        self.credits[(link * vcs + vc as u32) as usize] -= pkt.bytes as i64;
        self.packet_hops += 1;

        if pkt.port == IN_NIC {
            // Leaving the NIC: room in its send buffer for a stalled DMA engine.
            let n = &mut self.nics[pkt.src_nic as usize];
            if n.tx_stalled {
                n.tx_stalled = false;
                self.start_tx_dma(q, now, pkt.src_nic);
            }
            if !pkt.control {
                self.nic_stats[pkt.src_nic as usize].injected_packets += 1;
            }
        } else {
            let input = &mut self.inputs[pkt.port as usize];
            input.xbar_free = tail_out;
            input.free_seq = q.reserve();
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
            let up = input.upstream;
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
            q.at(now + latency, PacketEvent::HeadArrive { pkt: p });
        }
    }
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

    /// Sends a control packet (no DMA) from `src_nic` to `dst_nic`.
    fn send_control(
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
        });
        let p = self.new_packet(id, src_nic, dst_nic, CONTROL, now);
        self.inject(q, now, p);
    }

    fn handle(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, ev: PacketEvent) {
        match ev {
            PacketEvent::HeadArrive { pkt } => {
                let p = &mut self.packets[pkt as usize];
                p.fifo_next = NONE;
                let (port, vc) = (p.port, p.vc);
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
                    q.at(
                        now + self.params.router_delay,
                        PacketEvent::RouteDone { pkt },
                    );
                } else {
                    self.packets[tail as usize].fifo_next = pkt;
                }
            }
            PacketEvent::RouteDone { pkt } => {
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
            PacketEvent::LinkFree { link } => {
                self.links[link as usize].free_pending = false;
                self.try_send(q, now, link);
            }
            PacketEvent::InputFree { port } => {
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
            PacketEvent::Credit { link, vc, bytes } => {
                self.add_credit(now, link, vc, bytes as u32);
                self.try_send(q, now, link);
            }
            PacketEvent::BigCredit { slot } => {
                let (link, vc, bytes) = self.big_credits[slot as usize];
                self.free_big_credits.push(slot);
                self.add_credit(now, link, vc, bytes);
                self.try_send(q, now, link);
            }
            PacketEvent::NicTailArrive { pkt } => {
                let p = self.packets[pkt as usize];
                if p.control {
                    self.release_nic_buffer(q, now, &p);
                    self.bytes_delivered += p.bytes as u64;
                    let token = self.messages[p.msg as usize].token;
                    self.free_messages.push(p.msg);
                    self.notices.push(Notice::ControlArrived { token });
                    self.free_packet(pkt);
                } else {
                    self.start_rx_dma(q, now, pkt);
                }
            }
            PacketEvent::TxDmaDone { nic } => {
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
                    self.inject(q, now, p);
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
            PacketEvent::RxDmaDone { pkt } => {
                let p = self.packets[pkt as usize];
                // Same-node packets never occupied a network buffer.
                if self.topo.nic_node(p.src_nic) != self.topo.nic_node(p.dst_nic) {
                    self.release_nic_buffer(q, now, &p);
                    self.bytes_delivered += p.bytes as u64;
                } else {
                    self.bytes_local += p.payload as u64;
                }
                if self.topo.nic_node(p.src_nic) != self.topo.nic_node(p.dst_nic) {
                    let st = &mut self.nic_stats[p.src_nic as usize];
                    st.hops += p.hops as u64;
                    st.minimal_packets += p.minimal as u64;
                    self.nic_stats[p.dst_nic as usize].ejected_packets += 1;
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
                        c.fail(|| {
                            format!("message {} landed {landed} packets of {packets}", p.msg)
                        });
                    }
                }
                if msg.landed == msg.packets {
                    self.notices.push(Notice::Landed {
                        token: msg.token,
                        hops: msg.hops,
                    });
                    // Every packet has been sent and written: nothing refers to it now.
                    self.free_messages.push(p.msg);
                }
                self.free_packet(pkt);
            }
        }
    }

    fn notices(&mut self) -> &mut Vec<Notice> {
        &mut self.notices
    }

    fn topology(&self) -> &Topology {
        &self.topo
    }

    fn in_flight(&self) -> bool {
        self.live_packets != 0
    }

    /// Describes packets stuck in the network (for a deadlock report).
    fn stuck_summary(&self) -> Option<String> {
        if self.live_packets == 0 {
            return None;
        }
        let waiting: usize = self.links.iter().map(|l| l.wait_len as usize).sum();
        let mut buffered = 0usize;
        let inline = self.inputs.iter().flat_map(|i| i.fifo.iter());
        for &(mut p, _) in inline.chain(self.fifos.iter()) {
            while p != NONE {
                buffered += 1;
                p = self.packets[p as usize].fifo_next;
            }
        }
        Some(format!(
            "{} packets stuck in the network ({} in router buffers, {} waiting for a link with no downstream buffer space)",
            self.live_packets, buffered, waiting
        ))
    }

    /// Counts every credit still pending (the run is over) and returns the time of the
    /// latest, 0 if none: the run's last event would have been that credit's.
    fn settle(&mut self) -> Ps {
        (0..self.links.len() as u32)
            .map(|link| self.count_credits_before(link, (Ps::MAX, u64::MAX)))
            .max()
            .unwrap_or(0)
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

    /// Invariants of a finished run at time `end`: nothing left in flight, every byte that
    /// entered the network left it, no link busy for longer than the run.
    fn check_end(&self, end: Ps) -> Result<(), String> {
        if let Some(v) = self.violation() {
            return Err(v.to_string());
        }
        if self.bytes_injected != self.bytes_delivered {
            return Err(format!(
                "bytes injected ({}) != bytes delivered ({})",
                self.bytes_injected, self.bytes_delivered
            ));
        }
        if self.checks.is_some() {
            if self.live_packets != 0 {
                return Err(format!("{} packets were never consumed", self.live_packets));
            }
            if let Some((i, l)) = self
                .link_stats
                .iter()
                .enumerate()
                .find(|(_, l)| l.busy_ps > end)
            {
                return Err(format!(
                    "link {} was busy {} ps in a run of {end} ps",
                    self.topo.link_name(i as u32),
                    l.busy_ps
                ));
            }
        }
        Ok(())
    }

    /// Invariants of a run stopped at `end` with packets possibly still in the network
    /// (synthetic traffic stops once its measured packets have arrived, or at its drain
    /// limit): every byte injected was delivered or is in a packet still in the network,
    /// the packets alive are the ones counted, and no link was busy for longer than it had
    /// been running (until `end`, or until the end of the packet it is sending). Needs the
    /// checks on (`enable_checks`) to know which packets are alive; without them only the
    /// invariants checked as the run went are looked at.
    fn check_stopped(&self, end: Ps) -> Result<(), String> {
        if let Some(v) = self.violation() {
            return Err(v.to_string());
        }
        let Some(c) = &self.checks else {
            return Ok(());
        };
        let (mut alive, mut in_network) = (0u64, 0u64);
        for (id, _) in c.live.iter().enumerate().filter(|(_, &l)| l) {
            let p = &self.packets[id];
            alive += 1;
            // Packets between two NICs of one node never enter the network.
            if self.topo.nic_node(p.src_nic) != self.topo.nic_node(p.dst_nic) {
                in_network += p.bytes as u64;
            }
        }
        if alive != self.live_packets {
            return Err(format!(
                "{alive} packets are alive but {} are counted",
                self.live_packets
            ));
        }
        if self.bytes_injected != self.bytes_delivered + in_network {
            return Err(format!(
                "bytes injected ({}) != bytes delivered ({}) + bytes still in the network ({in_network})",
                self.bytes_injected, self.bytes_delivered
            ));
        }
        let over = self
            .link_stats
            .iter()
            .enumerate()
            .find(|&(i, l)| l.busy_ps > end.max(self.links.get(i).map_or(0, |k| k.busy_until)));
        if let Some((i, l)) = over {
            return Err(format!(
                "link {} was busy {} ps in a run stopped at {end} ps",
                self.topo.link_name(i as u32),
                l.busy_ps
            ));
        }
        Ok(())
    }

    /// Records every link's busy intervals (for timelines).
    fn enable_trace(&mut self) {
        self.link_activity = Some(vec![Vec::new(); self.links.len()]);
    }

    /// Frees what only a running network needs (packets, messages, input FIFOs) once the
    /// run is over, so that collecting the results does not add to it: the peak memory
    /// of large runs is at the end.
    fn release_run_state(&mut self) {
        self.packets = Vec::new();
        self.free_packets = Vec::new();
        self.messages = Vec::new();
        self.free_messages = Vec::new();
        self.fifos = Vec::new();
        self.inputs = Vec::new();
        self.links = Vec::new();
        self.notices = Vec::new();
        self.pending_credits = Vec::new();
        self.free_pending_credits = Vec::new();
    }

    fn link_stats(&self, link: u32) -> &LinkStats {
        &self.link_stats[link as usize]
    }

    fn link_rate(&self, link: u32) -> u64 {
        self.kinds[self.topo.link_class(link) as usize].rate
    }

    fn nic_stats(&self) -> &[NicStats] {
        &self.nic_stats
    }

    fn counters(&self) -> NetCounters {
        NetCounters {
            packet_hops: self.packet_hops,
            bytes_injected: self.bytes_injected,
            bytes_delivered: self.bytes_delivered,
            bytes_local: self.bytes_local,
        }
    }

    fn link_activity(&self) -> Option<&[Vec<(Ps, Ps)>]> {
        self.link_activity.as_deref()
    }
}
