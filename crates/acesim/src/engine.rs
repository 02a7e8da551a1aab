//! The discrete-event queue: events ordered by (time, sequence number), so events at the
//! same picosecond run in the order they were scheduled and every run is deterministic.
//!
//! A sequence number can be reserved when an event *might* be needed and the event pushed
//! later, only if it is; it then sorts exactly where it would have had it been pushed at
//! reservation time.

use crate::units::Ps;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// A pending event: its sequence number and the event (the time is its group's).
type Entry<E> = (u64, E);

/// Adds an event to a list sorted by sequence number from `from` on. A new event has the
/// highest number and goes last, unless it was reserved earlier.
#[inline(always)]
fn insert_in_order<E>(list: &mut Vec<Entry<E>>, from: usize, seq: u64, event: E) {
    match list.last() {
        Some(&(last, _)) if last > seq => insert_reserved(list, from, seq, event),
        _ => list.push((seq, event)),
    }
}

/// Fills `out` with `sorted` and `late` merged in sequence order (`late` gets sorted).
fn merge_by_seq<E: Copy>(out: &mut Vec<Entry<E>>, sorted: &[Entry<E>], late: &mut [Entry<E>]) {
    late.sort_unstable_by_key(|e| e.0);
    out.reserve(sorted.len() + late.len());
    let (mut i, mut j) = (0, 0);
    while i < sorted.len() && j < late.len() {
        if sorted[i].0 < late[j].0 {
            out.push(sorted[i]);
            i += 1;
        } else {
            out.push(late[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&sorted[i..]);
    out.extend_from_slice(&late[j..]);
}

#[inline(never)]
fn insert_reserved<E>(list: &mut Vec<Entry<E>>, from: usize, seq: u64, event: E) {
    let at = from + list[from..].partition_point(|e| e.0 < seq);
    list.insert(at, (seq, event));
}

/// The events of one pending time: those pushed in sequence order, and those that came
/// late (a reserved number below the last pushed), which are sorted into place once, when
/// the time becomes current, rather than each moving the list on insertion.
struct Group<E> {
    events: Vec<Entry<E>>,
    late: Vec<Entry<E>>,
}

/// Hashes event times for `by_time` (a multiply and fold: times are often multiples of
/// a round number, whose low bits carry nothing).
#[derive(Default)]
struct TimeHasher(u64);

impl Hasher for TimeHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A future-event list for events that share their times. Models schedule most events a
/// fixed delay after another, so dozens to thousands of events fall on each picosecond that
/// has any: each pending time holds its events in a list sorted by sequence number (a new
/// event has the highest and is appended; one with an older reserved number waits aside
/// and is merged in when the time comes up), and only the times are kept in a heap. The
/// current time's events are popped in sequence order, so the order is exactly (time,
/// sequence).
pub struct EventQueue<E> {
    /// Events at the current time, sorted by sequence number from `head` on.
    current: Vec<Entry<E>>,
    head: usize,
    /// Pending times after the current one, earliest first, each once.
    times: BinaryHeap<Reverse<Ps>>,
    /// The group of each pending time (an index into `groups`).
    by_time: HashMap<Ps, u32, BuildHasherDefault<TimeHasher>>,
    /// The events of each pending time.
    groups: Vec<Group<E>>,
    free_groups: Vec<u32>,
    /// The time and group of the last push to a group: pushes come in runs to one time.
    last_push: (Ps, u32),
    seq: u64,
    now: Ps,
    /// Sequence number of the event popped last.
    now_seq: u64,
    processed: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            current: Vec::new(),
            head: 0,
            times: BinaryHeap::new(),
            by_time: HashMap::default(),
            groups: Vec::new(),
            free_groups: Vec::new(),
            last_push: (0, u32::MAX),
            seq: 0,
            now: 0,
            now_seq: 0,
            processed: 0,
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

    /// Schedules `event` with a sequence number from `reserve`: it sorts exactly where it
    /// would have had it been scheduled when the number was reserved. It must sort after
    /// the current event.
    #[inline]
    pub fn schedule_reserved(&mut self, time: Ps, seq: u64, event: E) {
        // A model bug, not an input error; release runs also catch a time going back
        // (sim.rs).
        debug_assert!(
            (time, seq) > (self.now, self.now_seq) || self.processed == 0,
            "event scheduled before the current event (time {time} < {})",
            self.now
        );
        if time == self.now {
            insert_in_order(&mut self.current, self.head, seq, event);
            return;
        }
        let g = if self.last_push.0 == time && self.last_push.1 != u32::MAX {
            self.last_push.1
        } else {
            let g = match self.by_time.get(&time) {
                Some(&g) => g,
                None => self.new_group(time),
            };
            self.last_push = (time, g);
            g
        };
        let group = &mut self.groups[g as usize];
        match group.events.last() {
            Some(&(last, _)) if last > seq => group.late.push((seq, event)),
            _ => group.events.push((seq, event)),
        }
    }

    #[cold]
    fn new_group(&mut self, time: Ps) -> u32 {
        let g = match self.free_groups.pop() {
            Some(g) => g,
            None => {
                self.groups.push(Group {
                    events: Vec::new(),
                    late: Vec::new(),
                });
                (self.groups.len() - 1) as u32
            }
        };
        self.by_time.insert(time, g);
        self.times.push(Reverse(time));
        g
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        if self.head == self.current.len() && !self.advance() {
            return None;
        }
        let (seq, event) = self.current[self.head];
        self.head += 1;
        self.now_seq = seq;
        self.processed += 1;
        Some((self.now, event))
    }

    /// Makes the earliest pending time the current one; false when nothing is pending.
    fn advance(&mut self) -> bool {
        let Some(Reverse(time)) = self.times.pop() else {
            return false;
        };
        let g = self
            .by_time
            .remove(&time)
            .expect("a pending time has a group");
        if self.last_push.1 == g {
            // The group is about to be reused for another time.
            self.last_push = (0, u32::MAX);
        }
        // The spent list goes back to the group, which is free again: lists are reused,
        // but a huge one (a burst of events at one time) does not keep its memory.
        self.current.clear();
        if self.current.capacity() > 1 << 16 {
            self.current.shrink_to(1 << 10);
        }
        let group = &mut self.groups[g as usize];
        if group.late.is_empty() {
            std::mem::swap(&mut self.current, &mut group.events);
        } else {
            merge_by_seq(&mut self.current, &group.events, &mut group.late);
            group.events.clear();
            group.late.clear();
            // The group is free now: a list that held a burst gives its memory back.
            for list in [&mut group.events, &mut group.late] {
                if list.capacity() > 1 << 16 {
                    list.shrink_to(1 << 10);
                }
            }
        }
        self.free_groups.push(g);
        self.head = 0;
        self.now = time;
        true
    }

    pub fn now(&self) -> Ps {
        self.now
    }
    /// Time and sequence number of the event popped last: an event reserved with a smaller
    /// key would already have run.
    pub fn current_key(&self) -> (Ps, u64) {
        (self.now, self.now_seq)
    }
    pub fn processed(&self) -> u64 {
        self.processed
    }
    pub fn is_empty(&self) -> bool {
        self.head == self.current.len() && self.times.is_empty()
    }
}

/// Lets a model schedule its own event type on a queue of a larger event type, so the
/// network and the runtime do not know about each other.
pub trait Schedule<E> {
    fn at(&mut self, time: Ps, event: E);
    /// Reserves a sequence number (see `EventQueue::reserve`).
    fn reserve(&mut self) -> u64;
    fn at_reserved(&mut self, time: Ps, seq: u64, event: E);
    /// Time and sequence number of the event being handled (`EventQueue::current_key`).
    fn current_key(&self) -> (Ps, u64);
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

        /// Reserved sequence numbers scheduled later (at any later time, the current one
        /// included) sort where they were reserved, among groups of equal times.
        #[test]
        fn reserved_events_sort_by_their_reservation(steps in prop::collection::vec((0u64..4, 0usize..3, any::<bool>(), 0usize..3), 1..400)) {
            let mut q = EventQueue::default();
            let mut reference = std::collections::BinaryHeap::new();
            let mut reserved: Vec<u64> = Vec::new();
            for &(delta, pops, reserve, release) in &steps {
                // Few distinct times, so that many events share one.
                let t = q.now() + delta * 1000;
                if reserve {
                    reserved.push(q.reserve());
                }
                let seq = q.reserve();
                q.schedule_reserved(t, seq, seq);
                reference.push(std::cmp::Reverse((t, seq)));
                for _ in 0..release.min(reserved.len()) {
                    let r = reserved.remove(0);
                    // After the current event: the current time only if reserved after it.
                    let after = q.processed() > 0 && r > q.current_key().1;
                    let t = q.now() + if after { delta * 1000 } else { 1 + delta * 1000 };
                    q.schedule_reserved(t, r, r);
                    reference.push(std::cmp::Reverse((t, r)));
                }
                for _ in 0..pops {
                    let want = reference.pop().map(|std::cmp::Reverse((t, s))| (t, s));
                    prop_assert_eq!(q.pop(), want);
                    if let Some((t, s)) = want {
                        prop_assert_eq!(q.current_key(), (t, s));
                    }
                }
            }
            while let Some(std::cmp::Reverse(want)) = reference.pop() {
                prop_assert_eq!(q.pop(), Some(want));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
