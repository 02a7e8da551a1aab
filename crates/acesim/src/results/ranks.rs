//! What each rank did: its time by kind, the requests it left pending, and (when traced)
//! its intervals.

use crate::results::rows::rows_on;
use crate::runtime::{Runtime, TraceKind, CATEGORIES};
use crate::units::Ps;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, Serialize)]
pub struct RankResult {
    pub rank: u32,
    pub node: u32,
    pub finish_ps: Ps,
    pub compute_ps: Ps,
    /// Library overheads paid on the CPU.
    pub overhead_ps: Ps,
    /// Time blocked, by call kind (inside a collective: the collective's kind).
    pub blocked_ps: BlockedTimes,
    /// For a replayed trace: the rank's window in the trace (first call's entry to last
    /// call's return), to set beside `finish_ps`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traced_ps: Option<Ps>,
}

/// A rank's time blocked, by call kind: every kind in place (a million-rank run made a
/// million small maps here, 170 MB of fresh pages on one core at its end). Written as a map
/// of the kinds it blocked in (time above 0), by name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockedTimes([Ps; CATEGORIES.len()]);

/// The kinds of `CATEGORIES` in the order of their names (a map's order in the JSON).
const BY_NAME: [usize; CATEGORIES.len()] = {
    let mut order = [0; CATEGORIES.len()];
    let mut i = 0;
    while i < order.len() {
        order[i] = i;
        i += 1;
    }
    // Insertion sort (a const fn cannot call the library's).
    let mut i = 1;
    while i < order.len() {
        let mut j = i;
        while j > 0 && name_before(CATEGORIES[order[j]], CATEGORIES[order[j - 1]]) {
            (order[j], order[j - 1]) = (order[j - 1], order[j]);
            j -= 1;
        }
        i += 1;
    }
    order
};

/// Whether `a` sorts before `b`, byte by byte (as `str`'s `Ord`).
const fn name_before(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

impl BlockedTimes {
    pub fn new(times: [Ps; CATEGORIES.len()]) -> BlockedTimes {
        BlockedTimes(times)
    }

    /// The time blocked in call kind `kind` (`None`: never, or no such kind).
    pub fn get(&self, kind: &str) -> Option<Ps> {
        let i = CATEGORIES.iter().position(|c| *c == kind)?;
        Some(self.0[i]).filter(|&t| t > 0)
    }

    /// The kinds blocked in (time above 0) and the time of each, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Ps)> + '_ {
        BY_NAME
            .iter()
            .map(|&i| (CATEGORIES[i], self.0[i]))
            .filter(|&(_, t)| t > 0)
    }

    /// Kinds blocked in.
    pub fn len(&self) -> usize {
        self.0.iter().filter(|&&t| t > 0).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::ops::Index<&str> for BlockedTimes {
    type Output = Ps;

    /// The time blocked in `kind`; like a map's, panics for a kind never blocked in.
    fn index(&self, kind: &str) -> &Ps {
        match CATEGORIES.iter().position(|c| *c == kind) {
            Some(i) if self.0[i] > 0 => &self.0[i],
            _ => panic!("no time blocked in {kind:?}"),
        }
    }
}

impl Serialize for BlockedTimes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (kind, t) in self.iter() {
            map.serialize_entry(kind, &t)?;
        }
        map.end()
    }
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

/// Every rank's times, made on up to `threads` threads; a rank that did not finish
/// finishes at `predicted`.
pub fn per_rank(rt: &Runtime, predicted: Ps, threads: usize) -> Vec<RankResult> {
    let (ends, node) = (rt.rank_ends(), &rt.placement.node);
    let windows = rt.program.traced_windows.as_deref();
    rows_on(rt.program.ranks as usize, threads, |r| {
        let r = r as u32;
        let (finish, st) = ends(r);
        RankResult {
            rank: r,
            node: node[r as usize],
            finish_ps: finish.unwrap_or(predicted),
            compute_ps: st.compute_ps,
            overhead_ps: st.overhead_ps,
            blocked_ps: BlockedTimes::new(st.blocked_ps),
            traced_ps: windows.and_then(|w| w.get(r as usize).copied()),
        }
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// The JSON is a map's: the kinds blocked in, by name, as a `BTreeMap` wrote them.
        #[test]
        fn blocked_times_write_as_a_map_by_name(times in proptest::array::uniform13(prop_oneof![Just(0u64), any::<u64>()])) {
            let b = BlockedTimes::new(times);
            let map: BTreeMap<&str, Ps> =
                CATEGORIES.iter().zip(times).filter(|(_, t)| *t > 0).map(|(c, t)| (*c, t)).collect();
            prop_assert_eq!(serde_json::to_string(&b).unwrap(), serde_json::to_string(&map).unwrap());
            prop_assert_eq!(b.len(), map.len());
            for c in CATEGORIES {
                prop_assert_eq!(b.get(c), map.get(c).copied());
            }
            prop_assert_eq!(b.iter().collect::<Vec<_>>(), map.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn blocked_kinds_are_ordered_by_name() {
        let names: Vec<&str> = BY_NAME.iter().map(|&i| CATEGORIES[i]).collect();
        let mut sorted = CATEGORIES.to_vec();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        let mut times = [0; CATEGORIES.len()];
        times[4] = 7; // recv
        let b = BlockedTimes::new(times);
        assert_eq!(b["recv"], 7);
        assert_eq!(b.get("send"), None);
        assert_eq!(b.get("no such kind"), None);
    }
}
