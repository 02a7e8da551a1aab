//! One row per collective call: who took part, how long it took, and the messages its
//! algorithm sent.

use crate::runtime::Runtime;
use crate::units::Ps;
use serde::Serialize;

/// One collective call.
#[derive(Debug, Clone, Serialize)]
pub struct CollectiveResult {
    pub kind: String,
    pub algorithm: String,
    pub comm: String,
    pub size: u64,
    pub root: u32,
    pub ranks: u32,
    /// First rank in, last rank out.
    pub start_ps: Ps,
    pub end_ps: Ps,
    pub duration_ps: Ps,
    /// Mean time a rank spent in the call.
    pub mean_rank_ps: f64,
    /// Messages (or puts) its algorithm sent, and their bytes.
    pub messages: u64,
    pub bytes: u64,
    /// Every member left the call (false in a run stopped early).
    #[serde(skip)]
    pub finished: bool,
}

/// Every collective call of the program, in program order.
pub fn collectives(rt: &Runtime) -> Vec<CollectiveResult> {
    rt.program
        .collectives
        .iter()
        .zip(&rt.colls)
        .map(|(c, rec)| {
            // A call no rank entered has no start and no duration.
            let (start_ps, duration_ps, mean_rank_ps) = if rec.ranks == 0 {
                (0, 0, 0.0)
            } else {
                (
                    rec.first_begin,
                    rec.last_end.saturating_sub(rec.first_begin),
                    rec.sum_ps as f64 / rec.ranks as f64,
                )
            };
            let members = rt.program.comms.get(c.comm as usize);
            CollectiveResult {
                finished: members.is_some_and(|m| rec.ranks as usize == m.members.len()),
                kind: c.kind.clone(),
                algorithm: c.algorithm.clone(),
                comm: rt
                    .program
                    .comms
                    .get(c.comm as usize)
                    .map_or_else(String::new, |m| m.name.clone()),
                size: c.size,
                root: c.root,
                ranks: rec.ranks,
                start_ps,
                end_ps: rec.last_end,
                duration_ps,
                mean_rank_ps,
                messages: rec.messages,
                bytes: rec.bytes,
            }
        })
        .collect()
}
