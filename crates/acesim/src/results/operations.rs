//! The user's own transfers: every put and get, and every receive with the message it
//! matched (the steps of collectives are summarised per call in `collectives`).

use crate::program::NONE;
use crate::runtime::Runtime;
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

/// The transfers outside collectives, in the order they were issued.
pub fn operations(rt: &Runtime) -> Vec<OperationResult> {
    rt.xfers
        .iter()
        .filter(|x| x.coll == NONE)
        .map(|x| {
            let (dma_start, landed, complete) =
                (x.dma_start.get(), x.landed.get(), x.complete.get());
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
        })
        .collect()
}

/// The receives of user messages (even contexts), in the order they were posted.
pub fn receives(rt: &Runtime) -> Vec<ReceiveResult> {
    rt.recvs
        .iter()
        .filter(|rv| rv.ctx % 2 == 0)
        .map(|rv| {
            let x = rt.xfers.get(rv.xfer as usize);
            ReceiveResult {
                rank: rv.rank,
                src: x.map(|x| x.src_rank),
                tag: x.map(|x| x.tag),
                size: x.map(|x| x.size),
                protocol: x.map(|x| if x.rendezvous { "rendezvous" } else { "eager" }),
                posted_ps: rv.posted,
                landed_ps: x.and_then(|x| x.landed.get()),
                complete_ps: rv.complete.get(),
            }
        })
        .collect()
}
