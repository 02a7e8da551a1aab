//! The discrete-event queue: events ordered by (time, insertion sequence), so events at the
//! same picosecond run in the order they were scheduled and every run is deterministic.

use crate::units::Ps;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: Ps,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we pop the earliest event.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// A future-event list.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Ps,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
            now: 0,
            processed: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at `time`, which must not be in the past.
    #[inline]
    pub fn schedule(&mut self, time: Ps, event: E) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let seq = self.seq;
        self.seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        let e = self.heap.pop()?;
        self.now = e.time;
        self.processed += 1;
        Some((e.time, e.event))
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
}

/// Lets a model schedule its own event type on a queue of a larger event type, so the
/// network and the runtime do not know about each other.
pub trait Schedule<E> {
    fn at(&mut self, time: Ps, event: E);
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
