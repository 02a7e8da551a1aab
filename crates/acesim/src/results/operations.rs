//! The user's own transfers: every put and get, and every receive with the message it
//! matched (the steps of collectives are summarised per call in `collectives`).

use crate::program::NONE;
use crate::runtime::{RecvRecord, Stamp, Xfer};
use crate::units::{Ps, PS_PER_S};
use serde::Serialize;

/// One put or get. Times are picoseconds from the start of the run.
#[derive(Debug, Clone, Serialize)]
pub struct OperationResult {
    pub kind: &'static str,
    /// The rank that issued it.
    pub rank: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub tag: i64,
    pub issue_ps: Ps,
    /// First DMA of the data starts.
    pub dma_start_ps: Option<Ps>,
    /// Last byte in the destination's memory (`T_end`).
    pub landed_ps: Option<Ps>,
    pub complete_ps: Option<Ps>,
    /// `complete - issue`: what the rank waited, including the issue overhead and any wait
    /// for the NIC's DMA engine.
    pub latency_ps: Option<Ps>,
    /// `complete - dma_start`: from the first DMA of the data (the 2015 paper's `T_start`)
    /// to completion, without the wait for a busy DMA engine. The paper's put latency
    /// `T_pp + (T_end - T_start) + T_control + T_pp` is this plus the issue overhead.
    pub network_latency_ps: Option<Ps>,
    /// `size / (complete - issue)`, bytes per second.
    pub bandwidth_bytes_per_s: Option<f64>,
}

/// One receive and the message it matched.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiveResult {
    pub rank: u32,
    /// The sender of the matched message and its tag (absent if it never matched).
    pub src: Option<u32>,
    pub tag: Option<i64>,
    pub size: Option<u64>,
    pub protocol: Option<&'static str>,
    pub posted_ps: Ps,
    /// Its data in memory.
    pub landed_ps: Option<Ps>,
    pub complete_ps: Option<Ps>,
}

/// The user's puts, gets and messages, in the order they were issued: the runtime's own
/// records, moved here when the run ends (not copied: a run of millions of operations holds
/// them once), each made into an [`OperationResult`] when read.
#[derive(Debug, Clone, Default)]
pub struct Operations {
    xfers: Vec<Xfer>,
}

impl Operations {
    /// The transfers outside collectives among `xfers` (the steps of collectives are
    /// summarised per call).
    pub fn new(mut xfers: Vec<Xfer>) -> Operations {
        xfers.retain(|x| x.coll == NONE);
        xfers.shrink_to_fit();
        Operations { xfers }
    }

    pub fn len(&self) -> usize {
        self.xfers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.xfers.is_empty()
    }

    /// The `i`-th operation.
    pub fn get(&self, i: usize) -> Option<OperationResult> {
        self.xfers.get(i).map(operation)
    }

    /// The `i`-th operation; panics past the end, like indexing (for tests and callers that
    /// checked `len`).
    pub fn row(&self, i: usize) -> OperationResult {
        operation(&self.xfers[i])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = OperationResult> + '_ {
        self.xfers.iter().map(operation)
    }

    pub fn to_vec(&self) -> Vec<OperationResult> {
        self.iter().collect()
    }
}

impl Serialize for Operations {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// What a result says of one transfer.
fn operation(x: &Xfer) -> OperationResult {
    let (dma_start, landed, complete) = (x.dma_start.get(), x.landed.get(), x.complete.get());
    let latency = complete.map(|c| c - x.issue);
    OperationResult {
        kind: x.kind.name(),
        rank: x.rank,
        src: x.src_rank,
        dst: x.dst_rank,
        size: x.size,
        tag: x.tag,
        issue_ps: x.issue,
        dma_start_ps: dma_start,
        landed_ps: landed,
        complete_ps: complete,
        latency_ps: latency,
        network_latency_ps: complete.zip(dma_start).map(|(c, d)| c.saturating_sub(d)),
        bandwidth_bytes_per_s: latency
            .filter(|&l| l > 0)
            .map(|l| x.size as f64 * PS_PER_S as f64 / l as f64),
    }
}

/// A receive of a user message as a result keeps it: 56 bytes where a [`ReceiveResult`]
/// takes 104.
#[derive(Debug, Clone, Copy)]
pub struct ReceiveRow {
    rank: u32,
    /// The matched message's sender (`NONE`: it never matched).
    src: u32,
    tag: i64,
    size: u64,
    posted: Ps,
    landed: Stamp,
    complete: Stamp,
    rendezvous: bool,
}

/// The receives of user messages (even contexts), in the order they were posted, each
/// made into a [`ReceiveResult`] when read.
#[derive(Debug, Clone, Default)]
pub struct Receives {
    rows: Vec<ReceiveRow>,
}

impl Receives {
    /// The user receives of `recvs`, with what they learn of the message they matched in
    /// `xfers`.
    pub fn new(recvs: &[RecvRecord], xfers: &[Xfer]) -> Receives {
        let rows = recvs
            .iter()
            .filter(|rv| rv.ctx % 2 == 0)
            .map(|rv| {
                let x = xfers.get(rv.xfer as usize);
                ReceiveRow {
                    rank: rv.rank,
                    src: x.map_or(NONE, |x| x.src_rank),
                    tag: x.map_or(0, |x| x.tag),
                    size: x.map_or(0, |x| x.size),
                    posted: rv.posted,
                    landed: x.map_or(Stamp::NOT_YET, |x| x.landed),
                    complete: rv.complete,
                    rendezvous: x.is_some_and(|x| x.rendezvous),
                }
            })
            .collect();
        Receives { rows }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<ReceiveResult> {
        self.rows.get(i).map(receive)
    }

    /// The `i`-th receive; panics past the end, like indexing.
    pub fn row(&self, i: usize) -> ReceiveResult {
        receive(&self.rows[i])
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = ReceiveResult> + '_ {
        self.rows.iter().map(receive)
    }
}

impl Serialize for Receives {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

fn receive(r: &ReceiveRow) -> ReceiveResult {
    let matched = r.src != NONE;
    ReceiveResult {
        rank: r.rank,
        src: matched.then_some(r.src),
        tag: matched.then_some(r.tag),
        size: matched.then_some(r.size),
        protocol: matched.then_some(if r.rendezvous { "rendezvous" } else { "eager" }),
        posted_ps: r.posted,
        landed_ps: r.landed.get(),
        complete_ps: r.complete.get(),
    }
}

impl<'a> IntoIterator for &'a Operations {
    type Item = OperationResult;
    type IntoIter = std::iter::Map<std::slice::Iter<'a, Xfer>, fn(&Xfer) -> OperationResult>;

    fn into_iter(self) -> Self::IntoIter {
        self.xfers
            .iter()
            .map(operation as fn(&Xfer) -> OperationResult)
    }
}

impl<'a> IntoIterator for &'a Receives {
    type Item = ReceiveResult;
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, ReceiveRow>, fn(&ReceiveRow) -> ReceiveResult>;

    fn into_iter(self) -> Self::IntoIter {
        self.rows
            .iter()
            .map(receive as fn(&ReceiveRow) -> ReceiveResult)
    }
}
