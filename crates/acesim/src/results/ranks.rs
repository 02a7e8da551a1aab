//! What each rank did: its time by kind, the requests it left pending, and (when traced)
//! its intervals.

use crate::runtime::{Runtime, TraceKind, CATEGORIES};
use crate::units::Ps;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize)]
pub struct RankResult {
    pub rank: u32,
    pub node: u32,
    pub finish_ps: Ps,
    pub compute_ps: Ps,
    /// Library overheads paid on the CPU.
    pub overhead_ps: Ps,
    /// Time blocked, by call kind (inside a collective: the collective's kind).
    pub blocked_ps: BTreeMap<&'static str, Ps>,
    /// For a replayed trace: the rank's window in the trace (first call's entry to last
    /// call's return), to set beside `finish_ps`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traced_ps: Option<Ps>,
}

/// A rank that reached its end with requests (isend/irecv, put, get) not complete.
#[derive(Debug, Clone, Serialize)]
pub struct UnfinishedResult {
    pub rank: u32,
    pub count: u32,
    /// What the first pending request waits for.
    pub first: String,
}

/// One interval of a rank's time (present when the run was traced).
#[derive(Debug, Clone, Serialize)]
pub struct TraceEntry {
    pub rank: u32,
    /// `compute`, `overhead`, `blocked`, `region` or `collective`.
    pub kind: &'static str,
    /// What it was: the call kind for `blocked`, the region or collective name.
    pub name: String,
    pub start_ps: Ps,
    pub end_ps: Ps,
}

/// Every rank's times; a rank that did not finish finishes at `predicted`.
pub fn per_rank(rt: &Runtime, predicted: Ps) -> Vec<RankResult> {
    (0..rt.program.ranks)
        .map(|r| {
            let st = rt.rank_stats(r);
            RankResult {
                rank: r,
                node: rt.placement.node[r as usize],
                finish_ps: rt.rank_finish(r).unwrap_or(predicted),
                compute_ps: st.compute_ps,
                overhead_ps: st.overhead_ps,
                blocked_ps: CATEGORIES
                    .iter()
                    .zip(&st.blocked_ps)
                    .filter(|(_, &t)| t > 0)
                    .map(|(c, &t)| (*c, t))
                    .collect(),
                traced_ps: rt
                    .program
                    .traced_windows
                    .as_ref()
                    .and_then(|w| w.get(r as usize).copied()),
            }
        })
        .collect()
}

/// The ranks that finished with requests pending, by rank (the order of a run on any
/// number of threads).
pub fn unfinished(rt: &Runtime) -> Vec<UnfinishedResult> {
    let mut v: Vec<UnfinishedResult> = rt
        .unfinished
        .iter()
        .map(|u| UnfinishedResult {
            rank: u.rank,
            count: u.count,
            first: u.first.clone(),
        })
        .collect();
    v.sort_by_key(|u| u.rank);
    v
}

/// The intervals of a traced run, regions included, by rank and start (an interval before
/// those it contains).
pub fn trace(rt: &Runtime) -> Option<Vec<TraceEntry>> {
    let intervals = rt.trace.as_ref()?;
    let mut v: Vec<TraceEntry> = intervals
        .iter()
        .map(|i| {
            let (kind, name) = match i.kind {
                TraceKind::Compute => ("compute", "compute".to_string()),
                TraceKind::Overhead => ("overhead", "overhead".to_string()),
                TraceKind::Blocked(c) => ("blocked", CATEGORIES[c as usize].to_string()),
                TraceKind::Collective(c) => {
                    let call = &rt.program.collectives[c as usize];
                    ("collective", format!("{} ({})", call.kind, call.algorithm))
                }
            };
            TraceEntry {
                rank: i.rank,
                kind,
                name,
                start_ps: i.start,
                end_ps: i.end,
            }
        })
        .collect();
    v.extend(rt.regions.iter().map(|r| TraceEntry {
        rank: r.rank,
        kind: "region",
        name: rt.program.regions[r.region as usize].clone(),
        start_ps: r.begin,
        end_ps: r.end,
    }));
    v.sort_by_key(|e| (e.rank, e.start_ps, std::cmp::Reverse(e.end_ps)));
    Some(v)
}
