//! The state of the flow model: messages (each a flow while it moves data), the resources
//! they share (links, DMA engines, memory) with their max-min rates, and the statistics.

use super::maxmin::MaxMin;
use super::pipeline::Timing;
use crate::machine::options::Routing;
use crate::machine::topology::Topology;
use crate::network::interface::{LinkCounts, ModelEvent, NetStats, Notice};
use crate::network::link_kinds::LinkKind;
use crate::rng::Rng;
use crate::units::Ps;

/// The flow model's events.
#[derive(Debug, Clone, Copy)]
pub enum FlowEvent {
    /// Rates are solved again, once for every change at this picosecond: not queued, but
    /// handled when the picosecond's events are (`Network::at_picosecond_end`).
    Solve,
    /// Message `msg` reaches its next milestone of work (its send DMA is done, or its data
    /// has all crossed its bottleneck), unless its rate changed since (`version`).
    Reach { msg: u32, version: u32 },
    /// A milestone of message `msg` is due: its notice goes to the runtime.
    Deliver { msg: u32, what: Milestone },
    /// The packet of one-packet message `msg` is in its receiving NIC: scheduled only when
    /// links' activity is traced, which is recorded in time order (`packets`).
    Arrived { msg: u32 },
    /// The control packet in slot `slot` reaches its NIC (`control`).
    ControlArrived { slot: u32 },
}

impl ModelEvent for FlowEvent {}

/// What a message tells the runtime, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Milestone {
    /// The last packet left the sender's memory: the NIC may start its next message.
    TxDone,
    /// The last packet is in the receiver's memory.
    Landed,
}

/// What kind of message it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Data DMAed from memory to memory.
    Data,
    /// Synthetic traffic: packets in the NIC at once, no DMA.
    Injected,
}

/// A control packet on its way (`control`): what its arrival needs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Control {
    pub(super) token: u64,
    /// Its events are its sending NIC's (`Network::origin`).
    pub(super) src_nic: u32,
}

/// A message: waiting for its NIC, moving (a flow of the max-min solver), or delivering.
/// What its send-DMA-done and landing events read (most messages are one packet, which
/// read nothing else then) comes first, in 64 bytes (`repr(C)`: in declaration order);
/// what only a moving flow needs comes after.
#[derive(Debug, Clone)]
#[repr(C)]
pub(super) struct Message {
    pub(super) token: u64,
    pub(super) payload: u64,
    pub(super) packets: u64,
    /// Wire bytes (headers included).
    pub(super) wire: u64,
    pub(super) src_nic: u32,
    pub(super) dst_nic: u32,
    /// Its links, `route[route_at .. route_at + route_len]`.
    pub(super) route_at: u32,
    pub(super) route_len: u32,
    /// Router-to-router links on its route, and whether the route is minimal.
    pub(super) hops: u32,
    /// Its flow in the solver (`NONE` when it moves no data).
    pub(super) flow: u32,
    pub(super) kind: Kind,
    pub(super) minimal: bool,
    /// Its send DMA is done (the NIC may start the next message).
    pub(super) tx_done: bool,
    pub(super) version: u32,
    /// Alone on its route (from its first DMA): milestones and the work of its bottleneck.
    pub(super) timing: Timing,
    /// The rate it would have alone (bytes of the wire per ps) and the one it has.
    pub(super) alone: f64,
    pub(super) rate: f64,
    /// Work done (picoseconds of its bottleneck at the rate it would have alone), as of
    /// `updated`.
    pub(super) progress: f64,
    pub(super) updated: Ps,
    pub(super) started: Ps,
    /// When its flow started (its NIC's earlier message had left the network's way).
    pub(super) activated: Ps,
}

/// A message waiting for its NIC's send DMA engine: what it will be.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub(super) token: u64,
    pub(super) dst_nic: u32,
    pub(super) payload: u64,
    pub(super) kind: Kind,
}

/// Parameters of the flow model, from the machine.
#[derive(Debug, Clone)]
pub(super) struct FlowParams {
    pub(super) dma_rate: u64,
    pub(super) memory_bandwidth: Option<u64>,
    pub(super) max_payload: u64,
    pub(super) header: u64,
    pub(super) control: u64,
    pub(super) injection_queue: u64,
    pub(super) routing: Routing,
}

pub struct FlowNetwork {
    pub(super) topo: Topology,
    pub(super) params: FlowParams,
    /// Per link class: rate, latency, sender delay.
    pub(super) kinds: Vec<LinkKind>,
    pub(super) solver: MaxMin,
    /// Solver resource of each link, NIC send engine, NIC receive engine and node memory
    /// (`NONE` until a message uses it).
    pub(super) link_resource: Vec<u32>,
    /// Scratch for routing decisions that weigh many ports (DAL's candidates).
    pub(super) route_scratch: Vec<(u32, u8, bool)>,
    pub(super) tx_resource: Vec<u32>,
    pub(super) rx_resource: Vec<u32>,
    pub(super) memory_resource: Vec<u32>,
    pub(super) messages: Vec<Message>,
    pub(super) free_messages: Vec<u32>,
    /// Control packets on their way, and their free slots (`control`).
    pub(super) controls: Vec<Control>,
    pub(super) free_controls: Vec<u32>,
    /// Links of every message's route, in message slots' order of use.
    pub(super) routes: Vec<u32>,
    /// Freed route slots, by length.
    pub(super) free_routes: Vec<Vec<u32>>,
    /// Per NIC: whether its send DMA engine is busy, and the requests waiting for it.
    pub(super) tx_busy: Vec<bool>,
    pub(super) tx_queue: super::queues::Queues<Pending>,
    /// Per NIC: the message whose flow moves (`NONE`: none), those whose DMA started and
    /// that wait for it (a NIC sends its messages' packets in order), and when its
    /// injection link is free of them, alone.
    pub(super) moving: Vec<u32>,
    pub(super) waiting: super::queues::Queues<u32>,
    pub(super) inject_free: Vec<Ps>,
    /// One-packet messages (`packets`): when each link, and each NIC's receive DMA engine
    /// (numbered after the links), is taken by those reserved so far.
    pub(super) reserved: super::reservations::Reservations,
    /// Flow id -> message.
    pub(super) flow_message: Vec<u32>,
    /// A solve is due once the events of this time are all handled.
    pub(super) solve_due: bool,
    pub(super) changed: Vec<u32>,
    /// Timings alone, by shape and route kinds; scratch for a route's links and a flow's
    /// resources (a message then allocates nothing).
    pub(super) timings: super::timings::Timings,
    /// A link's busy time for a message, by link kind and shape (`count_route`).
    pub(super) busy_times: super::timings::BusyTimes,
    pub(super) route_links: Vec<u32>,
    pub(super) uses: Vec<(u32, f64)>,
    pub(super) notices: Vec<Notice>,
    pub(super) active: u64,
    pub(super) rng: Rng,
    pub(super) stats: NetStats,
    /// What crossed each link (`stats.links` stays empty: it has room for the packet
    /// model's waits, 40 bytes a link where these are 24).
    pub(super) link_counts: Vec<LinkCounts>,
    pub(super) checks: bool,
    pub(super) violation: Option<String>,
    /// How its solves would tie partitions together, when measured (`--partitions`).
    pub(super) coupling: Option<super::coupling::Coupling>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a message's delivery reads is its first 64 bytes, and the record stays 144.
    #[test]
    fn a_message_delivers_from_its_first_64_bytes() {
        assert_eq!(std::mem::offset_of!(Message, version) + 4, 64);
        assert_eq!(std::mem::offset_of!(Message, timing), 64);
        assert_eq!(std::mem::size_of::<Message>(), 144);
    }
}
