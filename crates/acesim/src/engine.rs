//! The discrete-event queue: events ordered by (time, sequence number), so events at the
//! same picosecond run in the order they were scheduled and every run is deterministic.
//!
//! A 4-ary min-heap keyed by one `u128` (time in the high 64 bits, sequence in the low):
//! half the depth of a binary heap and one comparison per child. A sequence number can be
//! reserved when an event *might* be needed and the event pushed later, only if it is; it
//! then sorts exactly where it would have had it been pushed at reservation time.

use crate::units::Ps;

#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and the earliest event must come out first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.key.cmp(&self.key)
    }
}

/// A future-event list.
pub struct EventQueue<E> {
    heap: std::collections::BinaryHeap<Entry<E>>,
    seq: u64,
    now: Ps,
    processed: u64,
    peak: usize,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: std::collections::BinaryHeap::new(),
            seq: 0,
            now: 0,
            processed: 0,
            peak: 0,
        }
    }
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

    /// Schedules `event` with a sequence number from `reserve`.
    #[inline]
    pub fn schedule_reserved(&mut self, time: Ps, seq: u64, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let key = ((time as u128) << 64) | seq as u128;
        self.heap.push(Entry { key, event });
        self.peak = self.peak.max(self.heap.len());
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let top = self.heap.pop()?;
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
        self.heap.is_empty()
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
    }
}
