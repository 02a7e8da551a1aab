//! The interface every network model implements, at the NIC, and the statistics every
//! model keeps.

use crate::engine::Schedule;
use crate::machine::topology::Topology;
use crate::network::models::Model;
use crate::network::partition::Partitioning;
use crate::units::Ps;
use serde::{Deserialize, Serialize};

/// What the network tells the runtime. `token` is the runtime's own id for the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// The first DMA of a data message started.
    TxStarted { token: u64 },
    /// The last packet of a data message left the sender's memory.
    TxDone { token: u64 },
    /// The last packet of a data message is in the receiver's memory.
    Landed { token: u64, hops: u32 },
    /// A control packet reached its destination NIC.
    ControlArrived { token: u64 },
}

/// Counters of one NIC.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, bytemuck::Zeroable)]
pub struct NicStats {
    pub injected_packets: u64,
    pub ejected_packets: u64,
    /// Packets it injected that reached their destination (fewer than `injected_packets`
    /// in a run stopped early): what `hops` and `minimal_packets` count over.
    pub delivered_packets: u64,
    /// Router-to-router hops of the packets it injected, counted on delivery.
    pub hops: u64,
    /// Packets it injected that were routed minimally, counted on delivery.
    pub minimal_packets: u64,
}

/// What crossed one directed link and how long it sent: what every model counts. The flow
/// model keeps only these (24 bytes a link, not `LinkStats`' 40): a million-rank run
/// touches every link's row, and its 8 million rows were a fifth of its event time.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, bytemuck::Zeroable,
)]
pub struct LinkCounts {
    pub bytes: u64,
    pub packets: u64,
    /// Time the link was sending (head leaves to tail leaves).
    pub busy_ps: Ps,
}

/// Counters of one directed link, with the waits a model of packets and buffers measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, bytemuck::Zeroable)]
pub struct LinkStats {
    pub bytes: u64,
    pub packets: u64,
    /// Time the link was sending (head leaves to tail leaves).
    pub busy_ps: Ps,
    /// Time packets waited for this link after the router had routed them.
    pub wait_ps: Ps,
    /// Time the link sat idle while a packet waited for downstream buffer space.
    pub stall_ps: Ps,
}

/// Whole-network counters at the end of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetCounters {
    /// Link traversals (every link a packet crossed, NIC links included).
    pub packet_hops: u64,
    /// Bytes (headers included) that entered the network, and that left it.
    pub bytes_injected: u64,
    pub bytes_delivered: u64,
    /// Payload moved between NICs of one node (never on a link).
    pub bytes_local: u64,
}

/// The events of a network model (small and `Copy`: they live in the event queue).
pub trait ModelEvent: Copy + std::fmt::Debug {}

impl NetCounters {
    /// Every byte that entered the network left it (a finished run).
    pub fn check_conserved(&self) -> Result<(), String> {
        if self.bytes_injected != self.bytes_delivered {
            return Err(format!(
                "bytes injected ({}) != bytes delivered ({})",
                self.bytes_injected, self.bytes_delivered
            ));
        }
        Ok(())
    }
}

impl LinkStats {
    /// What crossed the link, without its waits.
    pub fn counts(&self) -> LinkCounts {
        LinkCounts {
            bytes: self.bytes,
            packets: self.packets,
            busy_ps: self.busy_ps,
        }
    }
}

/// Every link's counters at the end of a run, by link id, as the model kept them.
#[derive(Debug, Clone)]
pub enum LinkTotals {
    /// With the time packets waited for each link and the link stalled (the packet model).
    Waited(Vec<LinkStats>),
    /// What crossed each link only (the flow model).
    Counted(Vec<LinkCounts>),
}

impl Default for LinkTotals {
    fn default() -> Self {
        LinkTotals::Counted(Vec::new())
    }
}

impl LinkTotals {
    /// What crossed link `link`.
    pub fn counts(&self, link: u32) -> LinkCounts {
        match self {
            LinkTotals::Waited(v) => v[link as usize].counts(),
            LinkTotals::Counted(v) => v[link as usize],
        }
    }

    /// Link `link`'s waits and stalls, when the model measures them.
    pub fn waits(&self, link: u32) -> Option<(Ps, Ps)> {
        match self {
            LinkTotals::Waited(v) => Some((v[link as usize].wait_ps, v[link as usize].stall_ps)),
            LinkTotals::Counted(_) => None,
        }
    }
}

/// What every model counts: per link, per NIC, over the whole network, and (when tracing)
/// when each link was busy.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct NetStats {
    /// The packet model's link counters (the flow model keeps its own `LinkCounts`, and
    /// leaves this empty).
    pub links: Vec<LinkStats>,
    pub nics: Vec<NicStats>,
    pub counters: NetCounters,
    /// Busy intervals of every link (back-to-back ones merged), when tracing.
    pub link_activity: Option<Vec<Vec<(Ps, Ps)>>>,
}

/// The entries of a per-link (or per-NIC) array that one partition counted and that are not
/// zero, as runs of consecutive indices. Made from the array itself, which it keeps: a
/// process's half of the links of the million-rank torus is 4 million entries, and copying
/// them into (index, entry) pairs was most of its end. Sent as the runs and their entries
/// end to end, and received so.
#[derive(Debug, Clone, Default)]
struct Counted<T> {
    /// (first index, how many).
    runs: Vec<(u32, u32)>,
    values: Vec<T>,
    /// Whether `values` is the whole array, or the runs' entries end to end.
    whole: bool,
}

impl<T: Copy + Default + PartialEq> Counted<T> {
    /// The entries of `v` that are not zero, looking only at the indices `may_count`
    /// allows (the others are known to be zero, and may be zero pages never written,
    /// which reading would map).
    fn of(v: Vec<T>, may_count: impl Fn(u32) -> bool) -> Counted<T> {
        let zero = T::default();
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for i in 0..v.len() as u32 {
            if may_count(i) && v[i as usize] != zero {
                match runs.last_mut() {
                    Some((first, n)) if *first + *n == i => *n += 1,
                    _ => runs.push((i, 1)),
                }
            }
        }
        Counted {
            runs,
            values: v,
            whole: true,
        }
    }
}

impl<T> Counted<T> {
    /// The entries, with their indices, in ascending order.
    fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        let (values, whole) = (&self.values, self.whole);
        let mut packed = 0usize;
        self.runs.iter().flat_map(move |&(first, n)| {
            let at = if whole { first as usize } else { packed };
            packed += n as usize;
            (0..n).map(move |k| (first + k, &values[at + k as usize]))
        })
    }

    fn len(&self) -> usize {
        self.runs.iter().map(|&(_, n)| n as usize).sum()
    }
}

impl<T: Serialize> Serialize for Counted<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeSeq, SerializeTuple};
        struct Entries<'a, T>(&'a Counted<T>);
        impl<T: Serialize> Serialize for Entries<'_, T> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for (_, v) in self.0.iter() {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
        }
        let mut t = s.serialize_tuple(2)?;
        t.serialize_element(&self.runs)?;
        t.serialize_element(&Entries(self))?;
        t.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Counted<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Counted<T>, D::Error> {
        let (runs, values) = <(Vec<(u32, u32)>, Vec<T>)>::deserialize(d)?;
        let c = Counted {
            runs,
            values,
            whole: false,
        };
        if c.len() != c.values.len() {
            return Err(serde::de::Error::custom(format!(
                "{} counts for runs of {}",
                c.values.len(),
                c.len()
            )));
        }
        Ok(c)
    }
}

/// What one partition counted, without the links and NICs it did not see (those of the
/// other partitions): what it sends to be added to the others' counts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SparseStats {
    links: usize,
    nics: usize,
    link_counts: Counted<LinkStats>,
    nic_counts: Counted<NicStats>,
    counters: NetCounters,
    link_activity: Option<Vec<(u32, Busy)>>,
}

/// A link's busy intervals.
type Busy = Vec<(Ps, Ps)>;

impl NetStats {
    /// These counts without the links and NICs that counted nothing; of the links, only
    /// those `counted_on` says this network counts at (a partition: those it sends on).
    pub fn sparse(self, counted_on: impl Fn(u32) -> bool) -> SparseStats {
        SparseStats {
            links: self.links.len(),
            nics: self.nics.len(),
            link_counts: Counted::of(self.links, counted_on),
            nic_counts: Counted::of(self.nics, |_| true),
            counters: self.counters,
            link_activity: self.link_activity.map(|a| {
                a.into_iter()
                    .enumerate()
                    .filter(|(_, v)| !v.is_empty())
                    .map(|(i, v)| (i as u32, v))
                    .collect()
            }),
        }
    }

    /// The whole network's totals alone, without any link's or NIC's counts: what a
    /// partition of a run that makes no tables (`Options::no_tables`) sends.
    pub fn totals(&self) -> SparseStats {
        SparseStats {
            counters: self.counters,
            ..Default::default()
        }
    }

    /// Adds another partition's counts (`add`, for sparse counts).
    pub fn add_sparse(&mut self, other: &SparseStats) {
        self.counters.add(&other.counters);
        for (i, b) in other.link_counts.iter() {
            if let Some(a) = self.links.get_mut(i as usize) {
                a.add(b);
            }
        }
        for (i, b) in other.nic_counts.iter() {
            if let Some(a) = self.nics.get_mut(i as usize) {
                a.add(b);
            }
        }
        if let (Some(mine), Some(theirs)) = (&mut self.link_activity, &other.link_activity) {
            for (i, b) in theirs {
                if let Some(a) = mine.get_mut(*i as usize) {
                    a.extend_from_slice(b);
                }
            }
        }
    }

    pub fn new(links: usize, nics: usize) -> NetStats {
        NetStats {
            // Zero pages until counted: a partition of a parallel run counts only its links.
            links: bytemuck::zeroed_vec(links),
            // Zero pages too: a partition counts only its own NICs.
            nics: bytemuck::zeroed_vec(nics),
            ..Default::default()
        }
    }

    /// Starts recording every link's busy intervals (for timelines).
    pub fn enable_trace(&mut self, links: usize) {
        self.link_activity = Some(vec![Vec::new(); links]);
    }
}

/// A network model, at the NIC. Every method that can add events takes the queue the run
/// goes on; the model's events come back to it through [`Network::handle`].
pub trait Network {
    /// The model's own events.
    type Event: ModelEvent;

    /// Queues a data message of `payload` bytes on the send DMA engine of `src_nic` (one
    /// message at a time per NIC, in order). Messages between NICs of one node go through
    /// the DMA engines and never enter the network.
    fn send_data(
        &mut self,
        q: &mut impl Schedule<Self::Event>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        payload: u64,
        token: u64,
    );

    /// Like `send_data`, but the packets are in the NIC at once, without a DMA: synthetic
    /// traffic measures the network alone.
    fn inject(
        &mut self,
        q: &mut impl Schedule<Self::Event>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        payload: u64,
        token: u64,
    );

    /// Sends a control message (no payload, no DMA) from `src_nic` to `dst_nic`.
    fn send_control(
        &mut self,
        q: &mut impl Schedule<Self::Event>,
        now: Ps,
        src_nic: u32,
        dst_nic: u32,
        token: u64,
    );

    /// The entities that handle the model's events (routers, NICs...), numbered
    /// `0..entities()`.
    fn entities(&self) -> u32;

    /// The entity that handles `ev`: the events it schedules meanwhile are keyed by it (the
    /// origin of `engine::queue`), which keeps their order independent of how a run is
    /// split.
    fn origin(&self, ev: Self::Event) -> u32;

    /// The router entity `entity` lives at (a partitioned run keeps them together), or
    /// `None` for a model that is not split by routers.
    fn entity_router(&self, entity: u32) -> Option<u32>;

    /// How the model's network splits into `parts` partitions of a parallel run (`source`
    /// names where the count came from, for errors).
    fn partition(&self, parts: u32, source: &str) -> crate::error::Result<Partitioning>;

    /// For `--partitions`: measures how the model's own solving would tie `parts`
    /// partitions together (the flow model: `network::flow::coupling`); false when the
    /// run's events are counted by partition instead (the packet model).
    fn measure_coupling(&mut self, _parts: u32, _source: &str) -> crate::error::Result<bool> {
        Ok(false)
    }

    /// What `measure_coupling` measured.
    fn coupling(&self) -> Option<crate::network::flow::CouplingReport> {
        None
    }

    /// Handles one of the model's own events.
    fn handle(&mut self, q: &mut impl Schedule<Self::Event>, now: Ps, ev: Self::Event);

    /// Asks the memory for what `ev` will read, `ahead` (2 or 1) events before it is
    /// handled: at 2 the first record it reads (a packet, a link), at 1 what that record
    /// leads to, so that the handler does not wait on them. A hint only: it changes no
    /// state and no result.
    #[inline(always)]
    fn prefetch(&self, _ev: &Self::Event, _ahead: usize) {}

    /// An event the model wants handled once every other event of the current picosecond
    /// is (the flow model solves its rates once for all of a picosecond's changes), or
    /// `None`. The driver hands it to `handle` when the picosecond's last event is done;
    /// handling it clears it.
    fn at_picosecond_end(&self) -> Option<Self::Event> {
        None
    }

    /// Notices produced since they were last taken: the driver empties this list.
    fn notices(&mut self) -> &mut Vec<Notice>;

    /// Which model this is.
    fn model(&self) -> Model;

    /// The topology the model runs on.
    fn topology(&self) -> &Topology;

    /// Something is still in the network (a deadlock report then says what).
    fn in_flight(&self) -> bool;

    /// What is stuck in the network, for a deadlock report.
    fn stuck_summary(&self) -> Option<String>;

    /// Accounts for what happened after the last event without being one (the packet
    /// model's credits that woke nothing) and returns when the last of it happened, 0 if
    /// nothing did. Called once, when the queue is empty.
    fn settle(&mut self) -> Ps;

    /// Checks the model's invariants as the run goes (`--check`, debug builds).
    fn enable_checks(&mut self);

    /// The first broken invariant, if checks are on and one broke.
    fn violation(&self) -> Option<&str>;

    /// Invariants of a run that finished at `end`: nothing left in flight, every byte that
    /// entered the network left it, no link busier than the run was long.
    fn check_end(&self, end: Ps) -> Result<(), String>;

    /// Invariants of a run stopped at `end` with traffic possibly still in flight.
    fn check_stopped(&self, end: Ps) -> Result<(), String>;

    /// Records every link's busy intervals (for timelines).
    fn enable_trace(&mut self);

    /// Frees what only a running network needs, before the results are collected.
    fn release_run_state(&mut self);

    /// The rate in bytes/s of each kind of link (`Topology::link_kind`): a link class's,
    /// or a graph link's own.
    fn kind_rates(&self) -> Vec<u64>;

    /// Everything the model counted.
    fn stats(&self) -> &NetStats;

    /// Every link's statistics, moved out (the results' link table keeps them): the model
    /// has no link counts left after this.
    fn take_link_stats(&mut self) -> LinkTotals;

    /// Statistics of every NIC, by NIC id.
    fn nic_stats(&self) -> &[NicStats] {
        &self.stats().nics
    }

    /// Whole-network counters.
    fn counters(&self) -> NetCounters {
        self.stats().counters
    }

    /// Busy intervals of every link, when tracing.
    fn link_activity(&self) -> Option<&[Vec<(Ps, Ps)>]> {
        self.stats().link_activity.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bincode::Options;

    fn link(bytes: u64) -> LinkStats {
        LinkStats {
            bytes,
            packets: bytes / 64,
            ..Default::default()
        }
    }

    /// A partition's counts travel as runs of the links it counted that are not zero, and
    /// add up on the other side to the counts of both.
    #[test]
    fn sparse_counts_add_up_after_a_round_trip() {
        // Links 0..10: this partition counts the even ones; 4 counted nothing; 7 is the
        // other partition's (not looked at, though not zero here).
        let mut mine = NetStats::new(10, 3);
        for l in [0u32, 2, 6, 8] {
            mine.links[l as usize] = link(64 * (l as u64 + 1));
        }
        mine.links[7] = link(999 * 64);
        mine.nics[2].injected_packets = 5;
        mine.counters.bytes_injected = 77;
        let sparse = mine.sparse(|l| l % 2 == 0);
        let coder = bincode::DefaultOptions::new();
        let back: SparseStats = coder
            .deserialize(&coder.serialize(&sparse).expect("encodes"))
            .expect("decodes");
        let got: Vec<(u32, u64)> = back.link_counts.iter().map(|(i, s)| (i, s.bytes)).collect();
        assert_eq!(got, vec![(0, 64), (2, 192), (6, 448), (8, 576)]);
        let mut all = NetStats::new(10, 3);
        all.links[1] = link(640);
        all.links[2] = link(64);
        all.add_sparse(&back);
        let bytes: Vec<u64> = all.links.iter().map(|s| s.bytes).collect();
        assert_eq!(bytes, vec![64, 640, 256, 0, 0, 0, 448, 0, 576, 0]);
        assert_eq!(all.nics[2].injected_packets, 5);
        assert_eq!(all.counters.bytes_injected, 77);
        // Runs that do not add up to their counts are refused, not read past.
        let bad = coder
            .serialize(&(10usize, 3usize, (vec![(0u32, 3u32)], vec![link(64)])))
            .expect("encodes");
        assert!(coder.deserialize::<SparseStats>(&bad).is_err());
    }
}
