//! What the runtime records and checks as a run goes: traced intervals, the CPU invariants,
//! and at the end what was left over (puts never polled, messages never matched).

use super::state::*;
use crate::units::Ps;
use std::collections::BTreeMap;

impl Runtime {
    /// Records per-rank intervals for timelines (costs memory per operation).
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    pub(super) fn record(&mut self, rank: u32, kind: TraceKind, start: Ps, end: Ps) {
        if let Some(t) = &mut self.trace {
            if end > start {
                t.push(TraceInterval {
                    rank,
                    kind,
                    start,
                    end,
                });
            }
        }
    }

    /// Checks the runtime's invariants as the run goes (`violation`, `check_end`).
    pub fn enable_checks(&mut self) {
        let cpus: Vec<usize> = (0..self.program.ranks as usize)
            .map(|r| {
                self.program
                    .deps
                    .as_ref()
                    .map_or(1, |d| d[r].cpus() as usize)
            })
            .collect();
        self.checks = Some(Box::new(CpuChecks {
            free_at: cpus.iter().map(|&n| vec![0; n]).collect(),
            busy: cpus.iter().map(|&n| vec![0; n]).collect(),
            violation: None,
        }));
    }

    /// The first broken invariant, if checks are on and one broke.
    pub fn violation(&self) -> Option<&str> {
        self.checks.as_ref().and_then(|c| c.violation.as_deref())
    }

    /// Invariants of a finished run: no rank finished before its CPUs' busy time.
    pub fn check_end(&self) -> Result<(), String> {
        let Some(c) = &self.checks else {
            return Ok(());
        };
        if let Some(v) = &c.violation {
            return Err(v.clone());
        }
        for (r, st) in self.ranks.iter() {
            let Some(finish) = st.finish else { continue };
            for (cpu, &busy) in c.busy[r].iter().enumerate() {
                if finish < busy {
                    return Err(format!(
                        "rank {r} finished at {finish} ps, before the {busy} ps its CPU {cpu} computed and paid overheads"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Puts that landed but were never polled, per (rank, tag); collective tags excluded.
    pub fn unpolled(&self) -> Vec<(u32, i64, u32)> {
        let mut v: Vec<(u32, i64, u32)> = self
            .ranks
            .iter()
            .flat_map(|(r, st)| {
                st.landed
                    .iter()
                    .filter(|(_, &n)| n > 0)
                    .map(move |(&t, &n)| (r as u32, t, n))
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// Messages that arrived but no receive matched: (src, dst, tag, count).
    pub fn unmatched_messages(&self) -> Vec<(u32, u32, i64, u32)> {
        let mut counts: BTreeMap<(u32, u32, i64), u32> = BTreeMap::new();
        for (_, st) in self.ranks.iter() {
            for &x in &st.unexpected {
                let x = &self.xfers[x as usize];
                *counts.entry((x.src_rank, x.dst_rank, x.tag)).or_insert(0) += 1;
            }
        }
        for m in self.early.values() {
            for &x in m.values() {
                let x = &self.xfers[x as usize];
                *counts.entry((x.src_rank, x.dst_rank, x.tag)).or_insert(0) += 1;
            }
        }
        counts
            .into_iter()
            .map(|((s, d, t), n)| (s, d, t, n))
            .collect()
    }

    /// Receives posted but never matched (a rank that finished with requests pending).
    pub fn unmatched_receives(&self) -> usize {
        self.ranks.iter().map(|(_, st)| st.posted.len()).sum()
    }
}

impl RankState {
    /// Whether the end of the run reads anything of this rank beyond its row: it did not
    /// finish, or it left over what the readers above count (puts never polled, messages or
    /// receives never matched), or a region, a collective call or a dependency graph open.
    /// A rank that leaves nothing over need not reach process 0 in a summary-only run
    /// (`Runtime::into_share`): a reader added above must be reflected here.
    pub(super) fn leaves_something_over(&self) -> bool {
        self.finish.is_none()
            || self.landed.values().any(|&n| n > 0)
            || !self.unexpected.is_empty()
            || !self.posted.is_empty()
            || !self.regions.is_empty()
            || self.in_coll.is_some()
            || self.dag.is_some()
    }
}
