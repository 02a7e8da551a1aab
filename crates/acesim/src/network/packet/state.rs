//! The state of the packet network, kept in flat arrays indexed by dense ids: packets,
//! messages, links (one per router port and one per NIC), router inputs and NICs. The
//! behaviour lives beside it, one concern a file (nic, router, credits, routing, checks).

use crate::machine::options::Routing;
use crate::machine::topology::Topology;
use crate::network::interface::{ModelEvent, NetStats, Notice};
pub(super) use crate::network::link_kinds::LinkKind;
use crate::rng::Rng;
use crate::units::Ps;
use crate::zero_pages::ZeroPages;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Packet is not in a router input buffer (it is in a NIC).
pub(super) const IN_NIC: u32 = u32::MAX;
/// `new_packet` payload that asks for a control packet.
pub(super) const CONTROL: u32 = u32::MAX;
pub(super) const NO_GROUP: u32 = u32::MAX;
/// End of a list of pending credits.
pub(super) const NO_CREDIT: u32 = u32::MAX;
/// `Link::stalled_since` when the link is not stalled.
pub(super) const NOT_STALLED: Ps = Ps::MAX;
/// VCs whose FIFOs an `Input` holds itself.
pub(super) const INLINE_VCS: usize = 4;
/// The end of a list of packets (and no packet, no link).
pub(super) use crate::ids::NONE;

#[derive(Debug, Clone, Copy)]
pub enum PacketEvent {
    /// A packet's head reached the router input `packet.port` one router delay ago: it
    /// joins its VC's FIFO, and at the front its pipeline is done (or done when the packet
    /// it came behind has left). One event where a head's arrival and the end of its
    /// pipeline were two.
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

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(super) struct Packet {
    pub(super) msg: u32,
    pub(super) src_nic: u32,
    pub(super) dst_nic: u32,
    /// Routers of `src_nic` and `dst_nic`.
    pub(super) src_router: u32,
    pub(super) dst_router: u32,
    /// Bytes on the wire (header included).
    pub(super) bytes: u32,
    /// Payload bytes (moved by DMA).
    pub(super) payload: u32,
    /// Router input port holding it, or `IN_NIC`.
    pub(super) port: u32,
    pub(super) vc: u8,
    /// VC class chosen by routing for the next link.
    pub(super) out_class: u8,
    pub(super) control: bool,
    pub(super) head_at: Ps,
    /// When its NIC made it (age-based switch allocation).
    pub(super) born: Ps,
    pub(super) tail_at: Ps,
    /// When it started waiting for its output link.
    pub(super) ready_at: Ps,
    /// Router-to-router links crossed.
    pub(super) hops: u16,
    /// Routed minimally (false once Valiant or UGAL sends it through another group).
    pub(super) minimal: bool,
    /// Dragonfly: intermediate group still to reach, or `NO_GROUP`.
    pub(super) via: u32,
    /// Dragonfly: which of the parallel global links between two groups it takes (chosen
    /// at its source router). HyperX with DAL: the dimensions it derouted in, a bit each.
    pub(super) copy: u32,
    /// Dragonfly: global links crossed (the VC class of its next hop).
    pub(super) ghops: u8,
    /// Output link chosen by routing at the current router (`IN_NIC` before routing).
    pub(super) out_link: u32,
    /// With deterministic routing, the output and VC class routing will choose at the
    /// current router, computed when the head arrives.
    pub(super) next_port: u32,
    pub(super) next_class: u8,
    /// Next packet in its input VC, and in its output's waiting list (`NONE` at the end).
    pub(super) fifo_next: u32,
    pub(super) wait_next: u32,
}

/// A credit on its way back to a link whose sender has nothing waiting: no event is needed
/// to wake the sender, so it is kept here and counted when the credits are next looked at
/// (or made an event, with the sequence number it was given, if a packet comes to wait).
#[derive(Debug, Clone, Copy)]
pub(super) struct PendingCredit {
    pub(super) time: Ps,
    pub(super) seq: u64,
    pub(super) bytes: u32,
    pub(super) vc: u8,
    pub(super) next: u32,
}

#[derive(Debug, Clone)]
pub(super) struct Message {
    pub(super) dst_nic: u32,
    pub(super) payload: u64,
    pub(super) packets: u32,
    /// Packets whose send DMA has started.
    pub(super) dma_next: u32,
    pub(super) landed: u32,
    pub(super) token: u64,
    /// False for synthetic traffic: packets appear in the NIC without a DMA.
    pub(super) dma: bool,
    /// Router-to-router hops of its packets so far.
    pub(super) hops: u32,
    /// In a partition of a parallel run (`split.rs`): its id in every partition
    /// (`NO_REMOTE` until a packet of it leaves this one), how many of its packets left,
    /// and whether it is the landing record of a message sent from elsewhere.
    pub(super) remote: u64,
    pub(super) crossed: u32,
    pub(super) landing: bool,
}

/// A link's sender side as a hop reads and writes it: one cache line (its statistics and
/// credits are kept apart).
#[derive(Debug, Clone, bytemuck::Zeroable)]
#[repr(align(64))]
pub(super) struct Link {
    pub(super) busy_until: Ps,
    /// The LinkFree event of the current transmission: its sequence number is reserved
    /// when the transmission starts and the event is pushed only if a packet is waiting.
    pub(super) free_seq: u64,
    /// Since when the link has been idle for want of downstream space (`NOT_STALLED`).
    pub(super) stalled_since: Ps,
    /// The last packet size sent and its serialization time in ps, when that fits 32 bits:
    /// packets mostly have one size, and this saves a division per hop.
    pub(super) ser_memo: (u32, u32),
    /// Routed packets waiting for the link, oldest first (a list through
    /// `Packet::wait_next`), and how many.
    pub(super) wait_head: u32,
    pub(super) wait_tail: u32,
    pub(super) wait_len: u32,
    /// Input port served last (round-robin switch allocation).
    pub(super) rr_last: u32,
    /// Where it delivers: a router input port, or a NIC when `to_nic`.
    pub(super) to: u32,
    /// The first of its pending credits (`NO_CREDIT` for none). Only a link with no
    /// packet waiting has any.
    pub(super) pending_credit: u32,
    /// Index into `PacketNetwork::kinds`.
    pub(super) kind: u8,
    pub(super) free_pending: bool,
    pub(super) to_nic: bool,
    /// Router to router (counts as a hop).
    pub(super) network_hop: bool,
    /// A dragonfly global link.
    pub(super) global: bool,
}

/// A router input port as a hop reads and writes it (one cache line).
#[derive(Debug, Clone, bytemuck::Zeroable)]
#[repr(align(64))]
pub(super) struct Input {
    /// Its VCs' FIFOs (first and last packet, a list through `Packet::fifo_next`; `NONE`
    /// when empty) when there are at most `INLINE_VCS` VCs, else in `PacketNetwork::fifos`.
    pub(super) fifo: [(u32, u32); INLINE_VCS],
    /// When its crossbar port is free again: one packet at a time crosses from an input,
    /// whatever its VC.
    pub(super) xbar_free: Ps,
    /// The InputFree event, reserved like `Link::free_seq`.
    pub(super) free_seq: u64,
    pub(super) router: u32,
    /// The link that feeds it (`NONE` when unconnected).
    pub(super) upstream: u32,
    /// Routed packets at the front of its VCs, waiting for an output: whether another VC
    /// needs the input when one leaves.
    pub(super) routed: u8,
    pub(super) free_pending: bool,
    /// The VC of the last packet that crossed, and how long it took (`xbar_free` minus
    /// when it left; `u32::MAX` when longer, see `PacketNetwork::long_crossings`): a head
    /// that ends its pipeline at the front of that VC came behind it if it left after the
    /// head came (`PacketNetwork::on_head_arrive`). In the record's spare bytes.
    pub(super) last_vc: u8,
    pub(super) crossing: u32,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Nic {
    pub(super) tx_queue: VecDeque<u32>,
    pub(super) tx_busy: bool,
    /// The send DMA engine waits for room in the injection queue.
    pub(super) tx_stalled: bool,
    pub(super) tx_payload: u32,
    pub(super) rx_free: Ps,
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
    /// Switch allocation serves the oldest packet first (`router.switch_allocator = "age"`).
    pub oldest_first: bool,
}

pub struct PacketNetwork {
    pub topo: Topology,
    pub params: NetParams,
    pub(super) links: ZeroPages<Link>,
    /// Per `LinkClass`: rate, latency and sender delay.
    pub(super) kinds: Vec<LinkKind>,
    /// Credits (free bytes in the downstream buffer) per link and VC.
    pub(super) credits: Vec<i64>,
    pub(super) pending_credits: Vec<PendingCredit>,
    /// Link, VC and bytes of each `BigCredit` event in the queue, and free slots.
    pub(super) big_credits: Vec<(u32, u8, u32)>,
    pub(super) free_big_credits: Vec<u32>,
    /// The first free slot of `pending_credits`, a list through `PendingCredit::next`.
    pub(super) free_pending_credit: u32,
    /// Router input ports.
    pub(super) inputs: ZeroPages<Input>,
    /// Input FIFOs per router port and VC when there are more than `INLINE_VCS` VCs (see
    /// `Input::fifo`).
    pub(super) fifos: Vec<(u32, u32)>,
    /// When the packets that crossed from an input for longer than `Input::crossing`
    /// holds left, by input port (the last such packet of each: a 4 KiB packet would need
    /// a link of under 1 MB/s).
    pub(super) long_crossings: HashMap<u32, Ps>,
    /// VCs `lo..hi` of each VC class routing asks for (`class_vcs`).
    pub(super) class_range: [(u8, u8); 256],
    pub(super) nics: Vec<Nic>,
    pub(super) node_mem_free: Vec<Ps>,
    pub(super) packets: Vec<Packet>,
    pub(super) free_packets: Vec<u32>,
    pub(super) messages: Vec<Message>,
    pub(super) free_messages: Vec<u32>,
    pub notices: Vec<Notice>,
    /// Packets created and not yet consumed.
    pub live_packets: u64,
    /// What it counted: links, NICs, bytes in and out, link activity.
    pub stats: NetStats,
    /// Per router, the random draws of its routing decisions (empty when routing draws
    /// nothing).
    pub(super) rngs: Vec<Rng>,
    /// Model invariants checked as the run goes (`--check`, and always in debug builds).
    pub(super) checks: Option<Box<Checks>>,
    /// Every credit an event (`every_credit_an_event`).
    pub(super) eager_credits: bool,
    /// Routing depends only on the packet's router, source and destination (not on a
    /// random draw or on the network's state): all but the dragonfly.
    pub(super) deterministic: bool,
    /// Scratch for routing decisions that weigh many ports (DAL's candidates).
    pub(super) route_scratch: Vec<(u32, u8, bool)>,
    /// Where this network stands when it is one partition of a parallel run.
    pub(super) split: Option<Box<Split>>,
}

// What a partition of a parallel run keeps (its behaviour: split.rs).

/// No remote id yet.
pub(super) const NO_REMOTE: u64 = u64::MAX;

/// What a partition needs of a packet's message: landing it (at the destination NIC's
/// partition) or handing it on.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(super) struct MessageInfo {
    /// Names the message in every partition: its sender's partition and a count there.
    pub(super) remote: u64,
    pub(super) token: u64,
    pub(super) packets: u32,
    pub(super) dma: bool,
}

/// An event handed to another partition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Crossing(pub(super) Cross);

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) enum Cross {
    /// A packet's head reaches router input `packet.port` at `time`.
    Packet {
        time: Ps,
        key: u64,
        packet: Packet,
        message: MessageInfo,
    },
    /// Buffer space returns to the sender of `link` at `time`; `returned` is the time and
    /// key of the event that returned it.
    Credit {
        time: Ps,
        key: u64,
        link: u32,
        vc: u8,
        bytes: u32,
        returned: (Ps, u64),
    },
}

/// Where a partition stands among the others.
#[derive(Debug)]
pub(super) struct Split {
    pub(super) me: u32,
    /// The partition of every router.
    pub(super) of_router: Arc<Vec<u32>>,
    /// What goes to each partition, until the end of the window.
    pub(super) out: Vec<Vec<Crossing>>,
    /// Messages landing here that were sent from another partition (or left and came
    /// back), by remote id.
    pub(super) landing: HashMap<u64, u32>,
    /// Messages this partition sent that were given a remote id.
    pub(super) next_remote: u64,
    /// A packet passing through: its message, by packet slot.
    pub(super) transit: Vec<Option<MessageInfo>>,
    /// Per link, the time and key of the event that last emptied its waiting list: a
    /// credit returned before then found packets waiting (see `receive`).
    pub(super) emptied_at: Vec<(Ps, u64)>,
}

/// State for checking the model's invariants; the first broken one is kept.
#[derive(Debug, Default)]
pub(super) struct Checks {
    /// Per packet slot: in use (created and not yet consumed).
    pub(super) live: Vec<bool>,
    pub(super) violation: Option<String>,
}

impl Checks {
    pub(super) fn fail(&mut self, what: impl FnOnce() -> String) {
        if self.violation.is_none() {
            self.violation = Some(what());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Input;

    /// A router input is one cache line: its FIFOs, its crossbar's state and its last
    /// crossing (what a head at the end of its pipeline reads).
    #[test]
    fn an_input_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Input>(), 64);
    }
}
