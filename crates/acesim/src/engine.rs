//! The discrete-event queue: events ordered by (time, sequence number), so events at the
//! same picosecond run in the order they were scheduled and every run is deterministic.
//!
//! Keys are one `u128` (time in the high 64 bits, sequence in the low). A sequence number
//! can be reserved when an event *might* be needed and the event pushed later, only if it
//! is; it then sorts exactly where it would have had it been pushed at reservation time.

use crate::units::Ps;

#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

/// Buckets of the radix heap: bucket 0 holds keys equal to the last popped key, bucket
/// b > 0 those whose highest bit differing from it is bit b - 1.
const BUCKETS: usize = 129;

/// A future-event list: a radix heap. Event times never go back (an event is scheduled no
/// earlier than the current time, and a reserved one strictly later), so keys only grow
/// and a pushed key is placed by its highest bit that differs from the last popped key:
/// constant time, and popping redistributes one bucket now and then. Keys are unique
/// (sequence numbers), so the order is exactly (time, sequence).
pub struct EventQueue<E> {
    buckets: Vec<Vec<Entry<E>>>,
    last: u128,
    len: usize,
    seq: u64,
    now: Ps,
    processed: u64,
    peak: usize,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            last: 0,
            len: 0,
            seq: 0,
            now: 0,
            processed: 0,
            peak: 0,
        }
    }
}

#[inline]
fn bucket(key: u128, last: u128) -> usize {
    (128 - (key ^ last).leading_zeros()) as usize
}

impl<E: Copy> EventQueue<E> {
    /// Schedules `event` at `time`, which must not be in the past.
    #[inline]
    pub fn schedule(&mut self, time: Ps, event: E) {
        let seq = self.reserve();
        self.schedule_reserved(time, seq, event);
    }

    /// A sequence number for an event that may be scheduled later (`schedule_reserved`).
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    /// Schedules `event` with a sequence number from `reserve`. A reserved event must be
    /// scheduled strictly after the current time (it would otherwise sort before events
    /// already popped).
    #[inline]
    pub fn schedule_reserved(&mut self, time: Ps, seq: u64, event: E) {
        let key = ((time as u128) << 64) | seq as u128;
        assert!(
            key >= self.last,
            "event scheduled before the current event (time {time} < {})",
            self.now
        );
        self.buckets[bucket(key, self.last)].push(Entry { key, event });
        self.len += 1;
        self.peak = self.peak.max(self.len);
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            // The first non-empty bucket holds the next key: make it the new reference and
            // spread the bucket over the lower ones.
            let i = self
                .buckets
                .iter()
                .position(|b| !b.is_empty())
                .expect("len > 0");
            let moved = std::mem::take(&mut self.buckets[i]);
            self.last = moved.iter().map(|e| e.key).min().expect("non-empty");
            for e in &moved {
                self.buckets[bucket(e.key, self.last)].push(*e);
            }
            // Give the allocation back for reuse.
            let mut moved = moved;
            moved.clear();
            if self.buckets[i].is_empty() {
                self.buckets[i] = moved;
            }
        }
        let top = self.buckets[0].pop().expect("the minimum is in bucket 0");
        self.len -= 1;
        let time = (top.key >> 64) as Ps;
        self.now = time;
        self.processed += 1;
        Some((time, top.event))
    }

    pub fn now(&self) -> Ps {
        self.now
    }
    pub fn processed(&self) -> u64 {
        self.processed
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Most events ever pending at once.
    pub fn peak(&self) -> usize {
        self.peak
    }
}

/// Lets a model schedule its own event type on a queue of a larger event type, so the
/// network and the runtime do not know about each other.
pub trait Schedule<E> {
    fn at(&mut self, time: Ps, event: E);
    /// Reserves a sequence number (see `EventQueue::reserve`).
    fn reserve(&mut self) -> u64;
    fn at_reserved(&mut self, time: Ps, seq: u64, event: E);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(5, 'a');
        q.schedule(3, 'b');
        q.schedule(5, 'c');
        q.schedule(3, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.now(), 5);
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn a_reserved_event_sorts_where_it_was_reserved() {
        let mut q = EventQueue::default();
        let early = q.reserve();
        q.schedule(7, "second");
        q.schedule_reserved(7, early, "first");
        assert_eq!(q.pop().unwrap().1, "first");
        assert_eq!(q.pop().unwrap().1, "second");
    }

    proptest! {
        #[test]
        fn matches_a_sort_by_time_and_sequence(times in prop::collection::vec(0u64..50, 0..300)) {
            let mut q = EventQueue::default();
            for (i, &t) in times.iter().enumerate() {
                q.schedule(t, i);
            }
            let mut want: Vec<(u64, usize)> = times.iter().enumerate().map(|(i, &t)| (t, i)).collect();
            want.sort();
            let got: Vec<(u64, usize)> = std::iter::from_fn(|| q.pop()).collect();
            prop_assert_eq!(got, want);
        }

        /// Pushes between pops (never before the current time), against a sorted heap.
        #[test]
        fn interleaved_pushes_and_pops_keep_the_order(steps in prop::collection::vec((0u64..1 << 40, 0usize..4), 1..400)) {
            let mut q = EventQueue::default();
            let mut reference = std::collections::BinaryHeap::new();
            for (seq, &(delta, pops)) in steps.iter().enumerate() {
                let t = q.now() + delta % (1 << (delta % 41));
                q.schedule(t, seq);
                reference.push(std::cmp::Reverse((t, seq)));
                for _ in 0..pops {
                    let want = reference.pop().map(|std::cmp::Reverse(x)| x);
                    prop_assert_eq!(q.pop(), want);
                }
            }
            while let Some(std::cmp::Reverse(want)) = reference.pop() {
                prop_assert_eq!(q.pop(), Some(want));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
