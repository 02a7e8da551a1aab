//! The ranks' states, indexed by world rank. A whole run holds every rank's; a partition of
//! a parallel run holds only its own, since a million-rank machine split in two would
//! otherwise build (and fault in) half a million states in each partition that it never
//! runs; a merged run keeps the partitions' blocks where they were made instead of moving
//! them into one array.

use crate::ids::NONE;
use std::ops::{Index, IndexMut};

/// Every rank's state (`S`), or a partition's own, by world rank.
#[derive(Debug)]
pub(super) struct Ranks<S> {
    /// A whole run's states, a partition's own in rank order and then one idle state, or
    /// partition 0's once merged.
    first: Vec<S>,
    /// Ranks `lo..lo + n` are `first[r - lo]`: every rank of a whole run, a block
    /// partition's own (`Place::Range`); none otherwise. The lookup the interpreter makes
    /// at every step (some fifty times a message of a fat-tree all-to-all) is that
    /// subtraction and one comparison, inlined; any other rank's goes through `place`,
    /// out of line.
    lo: u32,
    n: u32,
    place: Place<S>,
}

impl<S> Default for Ranks<S> {
    fn default() -> Self {
        Ranks {
            first: Vec::new(),
            lo: 0,
            n: 0,
            place: Place::Whole,
        }
    }
}

/// Where a rank's state is.
#[derive(Debug)]
enum Place<S> {
    /// Rank `r`'s is `first[r]`.
    Whole,
    /// A partition whose ranks are `Ranks::lo..lo + n` of `count` (a slab of a torus
    /// under block placement): `first[r - lo]`, every other rank reading the idle state
    /// `first[n]`, which nothing writes. No lookup: a rank's state is found as fast as
    /// in a whole run.
    Range { count: u32 },
    /// Any other partition: `first[at[r]]`, the idle state being last.
    Partition { at: Vec<u32> },
    /// Merged partitions: (block, index), block 0 being `first` and block `b` `rest[b - 1]`.
    Merged {
        at: Vec<(u32, u32)>,
        rest: Vec<Vec<S>>,
    },
}

impl<S> Ranks<S> {
    /// A whole run's ranks, `states[r]` being rank `r`'s.
    pub(super) fn whole(states: Vec<S>) -> Ranks<S> {
        Ranks {
            n: states.len() as u32,
            first: states,
            lo: 0,
            place: Place::Whole,
        }
    }

    /// A partition's ranks among `count`: `states[i]` is rank `ids[i]`'s, the ids
    /// increasing (as [`Ranks::into_own`] gives them); `idle` what every other rank reads.
    pub(super) fn from_own(count: u32, ids: &[u32], mut states: Vec<S>, idle: S) -> Ranks<S> {
        states.truncate(ids.len());
        let n = states.len() as u32;
        states.push(idle);
        let lo = ids.first().copied().unwrap_or(0);
        if ids.iter().zip(lo..).all(|(&r, want)| r == want)
            && lo.checked_add(n).is_some_and(|hi| hi <= count)
        {
            return Ranks {
                first: states,
                lo,
                n,
                place: Place::Range { count },
            };
        }
        let mut at = vec![n; count as usize];
        for (i, &r) in ids.iter().enumerate().take(n as usize) {
            if let Some(a) = at.get_mut(r as usize) {
                *a = i as u32;
            }
        }
        Ranks {
            first: states,
            lo: 0,
            n: 0,
            place: Place::Partition { at },
        }
    }

    /// The ranks of partitions `parts` (the partition of their index) as one run's: each
    /// rank's state is taken from the partition that holds it, where it lies.
    pub(super) fn merge(parts: Vec<Ranks<S>>) -> Ranks<S> {
        let count = parts.first().map_or(0, Ranks::count);
        let mut at = vec![(NONE, NONE); count as usize];
        let mut blocks = Vec::with_capacity(parts.len());
        for (k, p) in parts.into_iter().enumerate() {
            let k = k as u32;
            let Ranks {
                mut first,
                lo,
                n,
                place,
            } = p;
            let block = match place {
                Place::Whole => {
                    for (r, a) in at.iter_mut().enumerate() {
                        *a = (k, r as u32);
                    }
                    first
                }
                Place::Range { .. } => {
                    first.pop();
                    for (i, a) in at[lo as usize..(lo + n) as usize].iter_mut().enumerate() {
                        *a = (k, i as u32);
                    }
                    first
                }
                Place::Partition { at: own } => {
                    // The idle state is last, and no rank it holds points at it.
                    first.pop();
                    let held = first.len() as u32;
                    for (a, &i) in at.iter_mut().zip(&own) {
                        if i < held {
                            *a = (k, i);
                        }
                    }
                    first
                }
                place @ Place::Merged { .. } => {
                    let (ids, block) = (Ranks {
                        first,
                        lo: 0,
                        n: 0,
                        place,
                    })
                    .into_own();
                    for (i, &r) in ids.iter().enumerate() {
                        at[r as usize] = (k, i as u32);
                    }
                    block
                }
            };
            blocks.push(block);
        }
        let mut blocks = blocks.into_iter();
        let first = blocks.next().unwrap_or_default();
        Ranks {
            first,
            lo: 0,
            n: 0,
            place: Place::Merged {
                at,
                rest: blocks.collect(),
            },
        }
    }

    /// How many ranks the run has.
    pub(super) fn count(&self) -> u32 {
        match &self.place {
            Place::Whole => self.first.len() as u32,
            Place::Range { count, .. } => *count,
            Place::Partition { at } => at.len() as u32,
            Place::Merged { at, .. } => at.len() as u32,
        }
    }

    /// Where a partition's idle state is.
    fn idle_at(&self) -> Option<u32> {
        match self.place {
            Place::Range { .. } | Place::Partition { .. } => Some(self.first.len() as u32 - 1),
            _ => None,
        }
    }

    /// Whether rank `r`'s state is held here (its own, in a partition).
    fn holds(&self, r: usize) -> bool {
        match &self.place {
            Place::Whole => r < self.first.len(),
            Place::Range { .. } => (r as u32).wrapping_sub(self.lo) < self.n,
            Place::Partition { at } => Some(at[r]) != self.idle_at(),
            Place::Merged { at, .. } => at[r].0 != NONE,
        }
    }

    /// The ranks held, with their states, in rank order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, &S)> {
        (0..self.count() as usize)
            .filter(|&r| self.holds(r))
            .map(|r| (r, &self[r]))
    }

    /// The states held, in no particular order.
    pub(super) fn states_mut(&mut self) -> impl Iterator<Item = &mut S> {
        let own = self.first.len() - usize::from(self.idle_at().is_some());
        let rest = match &mut self.place {
            Place::Merged { rest, .. } => Some(rest.iter_mut().flatten()),
            _ => None,
        };
        self.first[..own]
            .iter_mut()
            .chain(rest.into_iter().flatten())
    }

    /// The ranks held, in rank order, and their states, taken out without a copy where
    /// they already lie in that order (a partition's).
    pub(super) fn into_own(mut self) -> (Vec<u32>, Vec<S>) {
        match self.place {
            Place::Whole => ((0..self.first.len() as u32).collect(), self.first),
            Place::Range { .. } => {
                self.first.pop();
                ((self.lo..self.lo + self.n).collect(), self.first)
            }
            Place::Partition { ref at } => {
                let idle = self.first.len() as u32 - 1;
                let ids = (0..).zip(at).filter(|&(_, &i)| i != idle).map(|(r, _)| r);
                let ids = ids.collect();
                self.first.pop();
                (ids, self.first)
            }
            // Not met in a run (a merged run is neither merged again nor sent), but whole.
            Place::Merged { at, rest } => {
                let mut blocks: Vec<Vec<Option<S>>> = std::iter::once(self.first)
                    .chain(rest)
                    .map(|b| b.into_iter().map(Some).collect())
                    .collect();
                (0..)
                    .zip(at)
                    .filter_map(|(r, (b, i))| {
                        let st = blocks.get_mut(b as usize)?.get_mut(i as usize)?.take()?;
                        Some((r, st))
                    })
                    .unzip()
            }
        }
    }
}

impl<S> Index<usize> for Ranks<S> {
    type Output = S;

    #[inline(always)]
    fn index(&self, r: usize) -> &S {
        let i = (r as u32).wrapping_sub(self.lo);
        if i < self.n {
            return &self.first[i as usize];
        }
        self.placed(r)
    }
}

impl<S> IndexMut<usize> for Ranks<S> {
    #[inline(always)]
    fn index_mut(&mut self, r: usize) -> &mut S {
        let i = (r as u32).wrapping_sub(self.lo);
        if i < self.n {
            return &mut self.first[i as usize];
        }
        self.placed_mut(r)
    }
}

impl<S> Ranks<S> {
    /// Rank `r`'s state when it is not among `lo..lo + n`.
    #[inline(never)]
    fn placed(&self, r: usize) -> &S {
        match &self.place {
            Place::Whole => &self.first[r],
            // Another partition's rank: the idle state.
            Place::Range { .. } => &self.first[self.n as usize],
            Place::Partition { at } => &self.first[at[r] as usize],
            Place::Merged { at, rest } => match at[r] {
                (0, i) => &self.first[i as usize],
                (b, i) => &rest[b as usize - 1][i as usize],
            },
        }
    }

    #[inline(never)]
    fn placed_mut(&mut self, r: usize) -> &mut S {
        match &mut self.place {
            Place::Whole => &mut self.first[r],
            Place::Range { .. } => {
                debug_assert!(false, "rank {r} is not run here");
                &mut self.first[self.n as usize]
            }
            Place::Partition { at } => {
                let i = at[r] as usize;
                debug_assert!(i + 1 < self.first.len(), "rank {r} is not run here");
                &mut self.first[i]
            }
            Place::Merged { at, rest } => match at[r] {
                (0, i) => &mut self.first[i as usize],
                (b, i) => &mut rest[b as usize - 1][i as usize],
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state that is its rank plus one, so that a lookup shows whose it found; the idle
    /// state is 0.
    fn state(r: u32) -> usize {
        r as usize + 1
    }

    fn partition(count: u32, own: &[u32]) -> Ranks<usize> {
        Ranks::from_own(count, own, own.iter().map(|&r| state(r)).collect(), 0)
    }

    #[test]
    fn a_partition_holds_its_own_ranks_and_reads_idle_for_the_others() {
        // A slab (3..6 of 8) is found by subtraction, scattered ranks through the map.
        for (own, range) in [(vec![3, 4, 5], true), (vec![0, 2, 7], false)] {
            let mut p = partition(8, &own);
            assert_eq!(matches!(p.place, Place::Range { .. }), range);
            assert_eq!(p.count(), 8);
            assert_eq!(
                p.first.len(),
                own.len() + 1,
                "only its own ranks and the idle one"
            );
            for r in 0..8 {
                let expected = if own.contains(&r) { r as usize + 1 } else { 0 };
                assert_eq!(p[r as usize], expected, "rank {r}");
            }
            p[own[1] as usize] = 100;
            let held: Vec<(usize, usize)> = p.iter().map(|(r, st)| (r, *st)).collect();
            let mut expected: Vec<(usize, usize)> =
                own.iter().map(|&r| (r as usize, r as usize + 1)).collect();
            expected[1].1 = 100;
            assert_eq!(held, expected);
            assert_eq!(
                p.states_mut().count(),
                own.len(),
                "the idle state is not held"
            );
            let taken: Vec<u32> = p.into_own().0;
            assert_eq!(taken, own);
        }
    }

    #[test]
    fn merged_partitions_find_every_rank_where_its_partition_made_it() {
        let parts = vec![
            partition(8, &[0, 1, 2]),
            partition(8, &[3, 5, 7]),
            partition(8, &[4, 6]),
        ];
        let mut all = Ranks::merge(parts);
        assert_eq!(all.count(), 8);
        for r in 0..8 {
            assert_eq!(all[r], r + 1, "rank {r}");
        }
        all[6] = 70;
        assert_eq!(
            all.iter().map(|(r, _)| r).collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>()
        );
        assert_eq!(all.states_mut().count(), 8);
        let (ids, states) = all.into_own();
        let held: Vec<(u32, usize)> = ids.into_iter().zip(states).collect();
        let expected: Vec<(u32, usize)> = (0..8)
            .map(|r| (r, if r == 6 { 70 } else { r as usize + 1 }))
            .collect();
        assert_eq!(held, expected);
    }

    #[test]
    fn a_partition_taken_apart_is_built_again_as_it_was() {
        for own in [vec![3u32, 4, 5], vec![0, 2, 7], vec![]] {
            let (ids, states) = partition(8, &own).into_own();
            assert_eq!(ids, own);
            assert_eq!(states.len(), own.len(), "the idle state stays behind");
            let again = Ranks::from_own(8, &ids, states, 0);
            for r in 0..8 {
                let expected = if own.contains(&r) { r as usize + 1 } else { 0 };
                assert_eq!(again[r as usize], expected, "rank {r} of {own:?}");
            }
        }
    }
}
