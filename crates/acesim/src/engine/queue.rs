//! The discrete-event queue: events ordered by time, then by a key that does not depend on
//! how the simulated machine is split among threads or processes, so that every run is
//! deterministic and a partitioned run (issue 20) can order its events exactly as one
//! queue does.
//!
//! The key of an event scheduled while an event of entity `o` (a rank, a NIC, a router) is
//! handled is, from its high bits down:
//! - **when** it was scheduled: events scheduled earlier run first, as they would in a
//!   queue ordered by scheduling; for a delay from 1 ps to `MAX_DELAY` exactly, longer ones
//!   alike. An event at the current picosecond comes after all those, by its **depth** (one
//!   more than the event that made it), so it sorts after the event that made it;
//! - its **origin** `o`;
//! - `o`'s **counter** of the events it scheduled, which wraps around: it orders the events
//!   one origin schedules for one time in one picosecond.
//!
//! Each of these is known to the entity's own partition, unlike a sequence number over the
//! whole run.
//!
//! A key can be reserved when an event *might* be needed and the event pushed later, only
//! if it is; it then sorts exactly where it would have had it been pushed at reservation
//! time.

use crate::units::Ps;

use rustc_hash::FxHashMap as HashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A pending event: its key and the event (the time is its group's).
type Entry<E> = (u64, E);

/// An event at the current time that sorts before events already listed there, in a
/// min-heap by key (keys are unique: the key alone orders them).
struct Early<E>(u64, E);

impl<E> PartialEq for Early<E> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<E> Eq for Early<E> {}
impl<E> PartialOrd for Early<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Early<E> {
    /// Reversed: `BinaryHeap` is a max-heap, the lowest key must come out first.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.cmp(&self.0)
    }
}

/// An event that sorts this far or less from the end of the current time's list is
/// inserted there; one further in waits in a heap (`EventQueue::early`), so that a
/// picosecond with millions of events (a million ranks starting at once) does not move
/// the list at every insertion.
#[cfg(not(test))]
const INSERT_WITHIN: usize = 256;
/// Tests: both ways are taken on small lists.
#[cfg(test)]
const INSERT_WITHIN: usize = 2;

/// A list that held more events than this is big: once spent, it is kept for the next burst
/// (up to `SPARE_LISTS` of them) or gives its memory back. A burst of millions of events at
/// one time (a million NICs starting at once) would otherwise take fresh memory each time,
/// and each fresh page is a page fault: 1.6 to 4 µs each on a virtual machine, more than
/// the 170 events the page holds cost to handle.
#[cfg(not(test))]
const BIG_LIST: usize = 1 << 16;
const SPARE_LISTS: usize = 2;
/// A full list this long or longer moves into a larger spare one instead of growing.
#[cfg(not(test))]
const GROW_FROM_SPARE: usize = 1 << 14;
/// Tests: the spare lists are taken and given back on small runs.
#[cfg(test)]
const BIG_LIST: usize = 8;
#[cfg(test)]
const GROW_FROM_SPARE: usize = 4;

/// Appends `entry` to `list`; a long full list moves into a larger spare list first.
#[inline(always)]
fn push<E: Copy>(list: &mut Vec<Entry<E>>, spare: &mut Vec<Vec<Entry<E>>>, entry: Entry<E>) {
    if list.len() == list.capacity() {
        grow(list, spare);
    }
    list.push(entry);
}

/// Room for one more entry in full `list`: a spare list if it is long, else its own growth
/// (out of line, as the push's own would be).
#[cold]
#[inline(never)]
fn grow<E: Copy>(list: &mut Vec<Entry<E>>, spare: &mut Vec<Vec<Entry<E>>>) {
    if list.len() >= GROW_FROM_SPARE {
        take_spare(spare, list, list.len() + 1);
    }
    list.reserve(1);
}

/// Moves `list`'s entries into a spare list with room for `needed`, if one has it; the
/// list it leaves is kept spare if big.
fn take_spare<E: Copy>(spare: &mut Vec<Vec<Entry<E>>>, list: &mut Vec<Entry<E>>, needed: usize) {
    if let Some(i) = spare.iter().position(|s| s.capacity() >= needed) {
        let mut larger = spare.swap_remove(i);
        larger.extend_from_slice(list);
        let mut outgrown = std::mem::replace(list, larger);
        outgrown.clear();
        if outgrown.capacity() > BIG_LIST {
            keep_spare(spare, &mut outgrown);
        }
    }
}

/// Keeps big empty `list`'s memory as a spare list (the larger ones, up to `SPARE_LISTS`);
/// `list` keeps a small one.
fn keep_spare<E>(spare: &mut Vec<Vec<Entry<E>>>, list: &mut Vec<Entry<E>>) {
    debug_assert!(list.is_empty());
    if spare.len() < SPARE_LISTS {
        spare.push(std::mem::take(list));
    } else if let Some(smallest) = spare.iter_mut().min_by_key(|s| s.capacity()) {
        if smallest.capacity() < list.capacity() {
            std::mem::swap(smallest, list);
        }
    }
    list.shrink_to(1 << 10);
}

/// Late events from which a time's list sorts them by radix rather than by comparison.
/// Their keys come in short ascending runs (a clocked network's time: hundreds of late
/// events in runs of about 3), where a comparison sort mispredicts its branches; keys
/// are unique, so both sorts give the same order.
#[cfg(not(test))]
const RADIX_FROM: usize = 64;
/// Tests: both sorts are taken on small lists.
#[cfg(test)]
const RADIX_FROM: usize = 3;

/// Fills `out` with `sorted` and `late` merged in key order (`late` gets sorted).
fn merge_by_key<E: Copy>(out: &mut Vec<Entry<E>>, sorted: &[Entry<E>], late: &mut [Entry<E>]) {
    if late.len() >= RADIX_FROM {
        radsort::sort_by_key(late, |e| e.0);
    } else {
        late.sort_unstable_by_key(|e| e.0);
    }
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

/// The events of one pending time: those pushed in key order, and those that came
/// late (a key below the last pushed), which are sorted into place once, when
/// the time becomes current, rather than each moving the list on insertion.
struct Group<E> {
    time: Ps,
    /// The next group of the same calendar slot, or the next free group.
    next: u32,
    events: Vec<Entry<E>>,
    late: Vec<Entry<E>>,
}

/// Calendar slots are `1 << SLOT_BITS` ps wide (256 ps) and there are `SLOTS` of them
/// (about 2.1 µs ahead of the current time); times further out wait in `far`. Chosen by
/// replaying the queue operations of the benchmark runs (docs/performance.md).
const SLOT_BITS: u32 = 8;
const SLOTS: usize = 8192;
const NO_GROUP: u32 = u32::MAX;

/// A future-event list for events that share their times. Models schedule most events a
/// fixed delay after another, so dozens to thousands of events fall on each picosecond that
/// has any: each pending time holds its events in a group, a list sorted by key (an event
/// whose key is above the last is appended; any other waits aside and is merged in when the
/// time comes up). The current time's events are popped in key order, so the order is
/// exactly (time, key).
///
/// A time's group is found through a calendar: a ring of slots, each a short list of the
/// pending times it covers, with a bitmap of the slots in use to find the next time. Times
/// beyond the ring's reach (rare: long computations) are kept in a hash map and a heap and
/// move into the ring as it comes near them. No hashing on the common path, and no heap.
pub struct EventQueue<E> {
    /// Events at the current time, sorted by key from `head` on, and those that sort far
    /// before its end (see `INSERT_WITHIN`): the next event is the lower of the two firsts.
    current: Vec<Entry<E>>,
    head: usize,
    /// Spent lists of past bursts, empty, kept for the next (see `BIG_LIST`).
    spare: Vec<Vec<Entry<E>>>,
    early: BinaryHeap<Early<E>>,
    groups: Vec<Group<E>>,
    /// First free group (a list through `Group::next`).
    free: u32,
    /// Per calendar slot, its first group (`NO_GROUP` when empty); slot of time t is
    /// `(t >> SLOT_BITS) % SLOTS`. The ring holds the times of slots `base_slot ..
    /// base_slot + SLOTS`, `base_slot` being the current time's.
    ring: Vec<u32>,
    /// A bit per slot: it has a group.
    occupied: Vec<u64>,
    base_slot: u64,
    /// Times beyond the ring: their groups, and the times, earliest first (a flow-level
    /// run puts most of its events there: a cheap hash, not SipHash).
    far: HashMap<Ps, u32>,
    far_times: BinaryHeap<Reverse<Ps>>,
    /// Pending times other than the current one.
    pending_times: usize,
    /// The time and group of the last push to a group: pushes come in runs to one time.
    last_push: (Ps, u32),
    /// The entity whose event is being handled: what is scheduled now has it as origin.
    origin: u32,
    /// The origin as it sits in a key, above the counter.
    origin_field: u64,
    /// Per entity, the events it has scheduled (the low field of their keys, wrapping);
    /// the current origin's count is kept in `count` meanwhile.
    counters: Vec<u64>,
    count: u64,
    /// Width of the counter field; the origin field sits above it.
    counter_bits: u32,
    counter_mask: u64,
    /// What outgrew its field of the key, if anything did (see `overflow`).
    overflow: Option<&'static str>,
    now: Ps,
    /// The earliest pending time, when the current time's events are all taken and it was
    /// looked up (a partition asks once per window).
    peeked: Option<Ps>,
    /// Key of the event popped last.
    now_key: u64,
    processed: u64,
}

/// Width of the "when" field, at the top of a key: delays `1..MAX_DELAY` ps take values
/// `MAX_DELAY - delay` (a longer delay, an earlier scheduling, sorts first), zero-delay
/// events of depth `d >= 1` take `MAX_DELAY - 1 + d`. A deeper chain of zero-delay events
/// at one picosecond than the field holds is reported (`EventQueue::overflow`).
const WHEN_BITS: u32 = 24;
const WHEN_SHIFT: u32 = 64 - WHEN_BITS;
const MAX_DELAY: u64 = 1 << (WHEN_BITS - 1);
const MAX_WHEN: u64 = (1 << WHEN_BITS) - 1;
/// Bits left below the "when" field for the origin and the counter; the counter keeps at
/// least `MIN_COUNTER_BITS`.
const ORIGIN_AND_COUNTER_BITS: u32 = 64 - WHEN_BITS;
const MIN_COUNTER_BITS: u32 = 8;

impl<E: Copy> Default for EventQueue<E> {
    /// A queue for one entity.
    fn default() -> Self {
        Self::new(1)
    }
}

impl<E: Copy> EventQueue<E> {
    /// A queue for events of `entities` entities (origins `0..entities`).
    pub fn new(entities: u32) -> Self {
        let origin_bits = u32::BITS - entities.max(2).saturating_sub(1).leading_zeros();
        // An origin takes the bits it needs (at most 32), the counter the rest of 40.
        let counter_bits = ORIGIN_AND_COUNTER_BITS
            .saturating_sub(origin_bits)
            .max(MIN_COUNTER_BITS);
        EventQueue {
            current: Vec::new(),
            spare: Vec::new(),
            head: 0,
            early: BinaryHeap::new(),
            groups: Vec::new(),
            free: NO_GROUP,
            ring: vec![NO_GROUP; SLOTS],
            occupied: vec![0; SLOTS / 64],
            base_slot: 0,
            far: HashMap::default(),
            far_times: BinaryHeap::new(),
            pending_times: 0,
            last_push: (0, NO_GROUP),
            origin: 0,
            origin_field: 0,
            counters: vec![0; entities.max(1) as usize],
            count: 0,
            counter_bits,
            counter_mask: (1 << counter_bits) - 1,
            overflow: None,
            now: 0,
            peeked: None,
            now_key: 0,
            processed: 0,
        }
    }

    /// The entity whose event is handled next: what is scheduled from now on is its. A
    /// queue made for one entity ignores origins: its events keep the order they were
    /// scheduled in.
    #[inline]
    pub fn set_origin(&mut self, origin: u32) {
        if self.counters.len() > 1 && origin != self.origin {
            debug_assert!(
                (origin as usize) < self.counters.len(),
                "origin {origin} out of range"
            );
            self.counters[self.origin as usize] = self.count;
            self.count = self.counters[origin as usize];
            self.origin = origin;
            // Below the "when" field: an origin has at most 32 bits, and the counter takes
            // the rest of 40 (`new`).
            self.origin_field = u64::from(origin) << self.counter_bits;
        }
    }

    /// Schedules `event` at `time`, which must not be in the past.
    #[inline]
    pub fn schedule(&mut self, time: Ps, event: E) {
        let key = self.reserve(time);
        self.schedule_reserved(time, key, event);
    }

    /// The key of an event at `time` that may be scheduled later (`schedule_reserved`, at
    /// that same time).
    #[inline]
    pub fn reserve(&mut self, time: Ps) -> u64 {
        let delay = time - self.now;
        let when = if delay > 0 {
            MAX_DELAY.saturating_sub(delay)
        } else {
            self.zero_delay_when()
        };
        let count = self.count & self.counter_mask;
        self.count = self.count.wrapping_add(1);
        when << WHEN_SHIFT | self.origin_field | count
    }

    /// The "when" field of an event at the current picosecond: one level deeper than the
    /// current event (the first level before the first event).
    #[cold]
    fn zero_delay_when(&mut self) -> u64 {
        let depth = if self.processed == 0 {
            0
        } else {
            (self.now_key >> WHEN_SHIFT).saturating_sub(MAX_DELAY - 1)
        };
        let when = MAX_DELAY + depth;
        if when > MAX_WHEN {
            self.overflow.get_or_insert(
                "more zero-delay events followed one another at one picosecond than the event keys hold (8,388,607)",
            );
        }
        when.min(MAX_WHEN)
    }

    /// The origin that scheduled the event of key `key`.
    pub fn origin_of(&self, key: u64) -> u32 {
        ((key & ((1 << WHEN_SHIFT) - 1)) >> self.counter_bits) as u32
    }

    /// How long before its time the event of key `key` was scheduled: `Some(0)` for the
    /// current picosecond, `None` for `MAX_DELAY` or more.
    pub fn delay_of(key: u64) -> Option<Ps> {
        match key >> WHEN_SHIFT {
            0 => None,
            when if when < MAX_DELAY => Some(MAX_DELAY - when),
            _ => Some(0),
        }
    }

    /// Why the order of events may be wrong, if it may: a key field outgrew its bits.
    pub fn overflow(&self) -> Option<&'static str> {
        self.overflow
    }

    /// Schedules `event` with a key from `reserve`: it sorts exactly where it would have
    /// had it been scheduled when the key was reserved. It must sort after the current
    /// event.
    #[inline]
    pub fn schedule_reserved(&mut self, time: Ps, key: u64, event: E) {
        // A model bug, not an input error; release runs also catch a time going back
        // (sim.rs).
        debug_assert!(
            (time, key) > (self.now, self.now_key) || self.processed == 0,
            "event scheduled before the current event (time {time} < {})",
            self.now
        );
        if time == self.now {
            self.insert_current(key, event);
            return;
        }
        let g = if self.last_push.0 == time && self.last_push.1 != NO_GROUP {
            self.last_push.1
        } else {
            let g = self.group_of(time);
            self.last_push = (time, g);
            g
        };
        let group = &mut self.groups[g as usize];
        match group.events.last() {
            Some(&(last, _)) if last > key => push(&mut group.late, &mut self.spare, (key, event)),
            _ => push(&mut group.events, &mut self.spare, (key, event)),
        }
    }

    /// The group of pending time `time` (after the current one), made if there is none.
    /// A slot's groups are kept in time order, so the walk stops at the first time not
    /// before `time` and the slot's earliest time is its first group.
    #[inline]
    fn group_of(&mut self, time: Ps) -> u32 {
        let slot = time >> SLOT_BITS;
        if slot >= self.base_slot + SLOTS as u64 {
            return self.far_group(time);
        }
        let at = slot as usize % SLOTS;
        let (mut prev, mut g) = (NO_GROUP, self.ring[at]);
        while g != NO_GROUP {
            let group = &self.groups[g as usize];
            if group.time >= time {
                if group.time == time {
                    return g;
                }
                break;
            }
            (prev, g) = (g, group.next);
        }
        let new = self.new_group(time);
        self.link_after(at, prev, new);
        new
    }

    #[cold]
    fn far_group(&mut self, time: Ps) -> u32 {
        if let Some(&g) = self.far.get(&time) {
            return g;
        }
        let g = self.new_group(time);
        self.far.insert(time, g);
        self.far_times.push(Reverse(time));
        g
    }

    #[inline(always)]
    fn new_group(&mut self, time: Ps) -> u32 {
        let g = if self.free != NO_GROUP {
            let g = self.free;
            self.free = self.groups[g as usize].next;
            g
        } else {
            self.groups.push(Group {
                time: 0,
                next: NO_GROUP,
                events: Vec::new(),
                late: Vec::new(),
            });
            (self.groups.len() - 1) as u32
        };
        self.groups[g as usize].time = time;
        self.pending_times += 1;
        // A time that has a group is no earlier than the earliest pending: only a new one
        // can be earlier.
        if let Some(p) = &mut self.peeked {
            *p = (*p).min(time);
        }
        g
    }

    /// Puts group `g` in calendar slot `at` after group `prev` (first when `NO_GROUP`).
    #[inline(always)]
    fn link_after(&mut self, at: usize, prev: u32, g: u32) {
        if prev == NO_GROUP {
            self.groups[g as usize].next = self.ring[at];
            self.ring[at] = g;
            self.occupied[at / 64] |= 1 << (at % 64);
        } else {
            self.groups[g as usize].next = self.groups[prev as usize].next;
            self.groups[prev as usize].next = g;
        }
    }

    /// Puts group `g` in calendar slot `at`, in time order.
    fn link(&mut self, at: usize, g: u32) {
        let time = self.groups[g as usize].time;
        let (mut prev, mut p) = (NO_GROUP, self.ring[at]);
        while p != NO_GROUP && self.groups[p as usize].time < time {
            (prev, p) = (p, self.groups[p as usize].next);
        }
        self.link_after(at, prev, g);
    }

    /// The first slot in use at or after `from`, going round the ring once.
    fn next_occupied(&self, from: usize) -> Option<usize> {
        let words = SLOTS / 64;
        let (w0, b0) = (from / 64, from % 64);
        let first = self.occupied[w0] & (!0u64 << b0);
        if first != 0 {
            return Some(w0 * 64 + first.trailing_zeros() as usize);
        }
        for k in 1..=words {
            let w = (w0 + k) % words;
            // Back at the first word: only the bits before `from` are left.
            let bits = if k == words {
                self.occupied[w] & !(!0u64 << b0)
            } else {
                self.occupied[w]
            };
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
        }
        None
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, E)> {
        if self.current_done() && !self.advance_until(Ps::MAX) {
            return None;
        }
        Some(self.take())
    }

    /// Takes the next event of the current time.
    #[inline(always)]
    fn take(&mut self) -> (Ps, E) {
        // The event always comes out of the list, from one place: the heap's events that
        // are due first are put back in the list's slots already taken (out of line).
        // Two sources merged here made the compiler pass the event through memory in
        // pieces of other widths than it reads them: a stall on every event.
        if !self.early.is_empty() {
            self.early_to_list();
        }
        let (key, event) = self.take_listed();
        self.now_key = key;
        self.processed += 1;
        (self.now, event)
    }

    /// The heap's first events, as long as they sort before the list's next, become the
    /// list's next ones, in the slots already taken (a burst's events mostly come from the
    /// heap: a batch a call).
    #[inline(never)]
    fn early_to_list(&mut self) {
        const BATCH: usize = 32;
        let mut batch = [None; BATCH];
        let room = self.head.min(BATCH);
        let mut moved = 0;
        while moved < room.max(1) {
            let due = self.early.peek().is_some_and(|early| {
                self.head == self.current.len() || early.0 < self.current[self.head].0
            });
            if !due {
                break;
            }
            batch[moved] = self.early.pop().map(|Early(key, event)| (key, event));
            moved += 1;
        }
        if moved == 0 {
            return;
        }
        if room == 0 {
            // Nothing taken yet at this time: the one event goes in front.
            if let Some(entry) = batch[0] {
                self.current.insert(0, entry);
            }
            return;
        }
        self.head -= moved;
        for (slot, entry) in self.current[self.head..].iter_mut().zip(&batch[..moved]) {
            if let Some(entry) = *entry {
                *slot = entry;
            }
        }
    }

    /// The current picosecond's event `ahead` places after the next (0: the next one) as
    /// its list holds them, if there is one. Events still in the heap (`early`) are not
    /// looked at, so this is a hint of what comes, not the order: the event loop asks the
    /// memory for what these events read before it handles them.
    #[inline(always)]
    pub fn upcoming(&self, ahead: usize) -> Option<&E> {
        self.current.get(self.head + ahead).map(|e| &e.1)
    }

    #[inline(always)]
    fn take_listed(&mut self) -> Entry<E> {
        let entry = self.current[self.head];
        self.head += 1;
        entry
    }

    /// Whether every event of the current time was taken.
    #[inline(always)]
    fn current_done(&self) -> bool {
        self.head == self.current.len() && self.early.is_empty()
    }

    /// Adds an event at the current time. A new event mostly has the highest key and goes
    /// last.
    #[inline(always)]
    fn insert_current(&mut self, key: u64, event: E) {
        match self.current.last() {
            Some(&(last, _)) if last > key => self.insert_current_early(key, event),
            _ => push(&mut self.current, &mut self.spare, (key, event)),
        }
    }

    #[inline(never)]
    fn insert_current_early(&mut self, key: u64, event: E) {
        let list = &mut self.current;
        let at = self.head + list[self.head..].partition_point(|e| e.0 < key);
        if list.len() - at <= INSERT_WITHIN {
            list.insert(at, (key, event));
        } else {
            self.early.push(Early(key, event));
        }
    }

    /// Removes the earliest event if it is due before `end`.
    #[inline]
    pub fn pop_before(&mut self, end: Ps) -> Option<(Ps, E)> {
        if self.current_done() && (end == 0 || !self.advance_until(end - 1)) {
            return None;
        }
        Some(self.take())
    }

    /// Makes the earliest pending time the current one if it is `last` or before; false
    /// when nothing is pending by then.
    fn advance_until(&mut self, last: Ps) -> bool {
        // The earliest time in the ring: the least of the first slot in use.
        let in_ring = self
            .next_occupied(self.base_slot as usize % SLOTS)
            .map(|at| {
                let g = self.ring[at];
                (self.groups[g as usize].time, at, g)
            });
        let far = self.far_times.peek().map(|r| r.0);
        let earliest = match (in_ring, far) {
            (Some((t, ..)), Some(f)) => t.min(f),
            (Some((t, ..)), None) => t,
            (None, Some(f)) => f,
            (None, None) => return false,
        };
        if earliest > last {
            self.peeked = Some(earliest);
            return false;
        }
        self.peeked = None;
        let (time, g) = match (in_ring, far) {
            // A time is in the ring or far, never both: `t < f` when both are there.
            (Some((t, at, g)), f) if f.is_none_or(|f| t < f) => {
                // The slot's first group: the earliest.
                let next = self.groups[g as usize].next;
                self.ring[at] = next;
                if next == NO_GROUP {
                    self.occupied[at / 64] &= !(1 << (at % 64));
                }
                (t, g)
            }
            (_, Some(f)) => {
                self.far_times.pop();
                let g = self.far.remove(&f).expect("a far time has a group");
                (f, g)
            }
            (_, None) => return false,
        };
        self.pending_times -= 1;
        if self.last_push.1 == g {
            // The group is about to be reused for another time.
            self.last_push = (0, NO_GROUP);
        }
        // The spent list goes back to the group, which is free again: lists are reused.
        self.current.clear();
        let group = &mut self.groups[g as usize];
        if group.late.is_empty() {
            std::mem::swap(&mut self.current, &mut group.events);
        } else {
            let needed = group.events.len() + group.late.len();
            if self.current.capacity() < needed {
                take_spare(&mut self.spare, &mut self.current, needed);
            }
            merge_by_key(&mut self.current, &group.events, &mut group.late);
            group.events.clear();
            group.late.clear();
        }
        // A list that held a burst (millions of events at one time) is kept for the next
        // burst or gives its memory back.
        for list in [&mut group.events, &mut group.late] {
            if list.capacity() > BIG_LIST {
                keep_spare(&mut self.spare, list);
            }
        }
        group.next = self.free;
        self.free = g;
        self.head = 0;
        self.now = time;
        self.base_slot = time >> SLOT_BITS;
        // Far times the ring reaches now move into it.
        while let Some(&Reverse(f)) = self.far_times.peek() {
            if f >> SLOT_BITS >= self.base_slot + SLOTS as u64 {
                break;
            }
            self.far_times.pop();
            let fg = self.far.remove(&f).expect("a far time has a group");
            self.link((f >> SLOT_BITS) as usize % SLOTS, fg);
        }
        true
    }

    pub fn now(&self) -> Ps {
        self.now
    }

    /// The time of the earliest pending event, without making it current: a partition
    /// of a parallel run asks before each window, and events from other partitions may
    /// still arrive before that time.
    pub fn peek_time(&self) -> Option<Ps> {
        if !self.current_done() {
            return Some(self.now);
        }
        if self.peeked.is_some() {
            return self.peeked;
        }
        let in_ring = self
            .next_occupied(self.base_slot as usize % SLOTS)
            .map(|at| self.groups[self.ring[at] as usize].time);
        let far = self.far_times.peek().map(|r| r.0);
        match (in_ring, far) {
            (Some(t), Some(f)) => Some(t.min(f)),
            (t, f) => t.or(f),
        }
    }
    /// Time and key of the event popped last: an event reserved with a smaller key would
    /// already have run.
    pub fn current_key(&self) -> (Ps, u64) {
        (self.now, self.now_key)
    }
    pub fn processed(&self) -> u64 {
        self.processed
    }
    pub fn is_empty(&self) -> bool {
        self.current_done() && self.pending_times == 0
    }
}

/// Lets a model schedule its own event type on a queue of a larger event type, so the
/// network and the runtime do not know about each other.
pub trait Schedule<E> {
    fn at(&mut self, time: Ps, event: E);
    /// Reserves a key for an event at `time` (see `EventQueue::reserve`).
    fn reserve(&mut self, time: Ps) -> u64;
    fn at_reserved(&mut self, time: Ps, key: u64, event: E);
    /// Time and key of the event being handled (`EventQueue::current_key`).
    fn current_key(&self) -> (Ps, u64);
    /// The entity in whose name events are scheduled from now on: the driver sets it
    /// before each event, and start-up code for each entity it starts.
    fn set_origin(&mut self, origin: u32);
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
    fn peeking_finds_the_next_time_without_moving_the_clock() {
        let mut q = EventQueue::default();
        assert_eq!(q.peek_time(), None);
        q.schedule(1 << 40, 'f');
        q.schedule(900, 'b');
        q.schedule(900, 'c');
        assert_eq!(q.peek_time(), Some(900));
        assert_eq!(q.now(), 0);
        // An event earlier than the peeked time may still be scheduled.
        q.schedule(500, 'a');
        assert_eq!(q.pop(), Some((500, 'a')));
        assert_eq!(q.peek_time(), Some(900));
        q.pop();
        assert_eq!(q.peek_time(), Some(900));
        q.pop();
        assert_eq!(q.peek_time(), Some(1 << 40));
    }

    #[test]
    fn upcoming_names_the_current_times_next_events_without_taking_them() {
        let mut q = EventQueue::default();
        for (t, e) in [(5, 'a'), (5, 'b'), (5, 'c'), (9, 'd')] {
            q.schedule(t, e);
        }
        assert_eq!(q.pop(), Some((5, 'a')));
        assert_eq!((q.upcoming(0), q.upcoming(1)), (Some(&'b'), Some(&'c')));
        // Only the current picosecond's list is looked at.
        assert_eq!(q.upcoming(2), None);
        assert_eq!(q.pop(), Some((5, 'b')));
        assert_eq!(q.upcoming(0), Some(&'c'));
        assert_eq!(q.processed(), 2);
    }

    #[test]
    fn a_reserved_event_sorts_where_it_was_reserved() {
        let mut q = EventQueue::default();
        let early = q.reserve(7);
        q.schedule(7, "second");
        q.schedule_reserved(7, early, "first");
        assert_eq!(q.pop().unwrap().1, "first");
        assert_eq!(q.pop().unwrap().1, "second");
    }

    #[test]
    fn a_chain_too_deep_for_its_field_is_reported() {
        let mut q = EventQueue::default();
        q.schedule(0, 0);
        let deepest = MAX_WHEN - MAX_DELAY;
        for depth in 0..=deepest {
            assert_eq!(q.pop(), Some((0, depth)));
            assert!(q.overflow().is_none(), "reported at depth {depth}");
            q.schedule(0, depth + 1);
        }
        assert!(q.overflow().is_some());
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

        /// The calendar's edges: several times in one slot, times just inside and just
        /// beyond the ring's reach (which wait far and move in as the clock nears them),
        /// times a whole ring apart (same slot, different rounds), and events with
        /// reserved keys pushed later at such times, against a sorted heap.
        #[test]
        fn calendar_edges_keep_the_order(steps in prop::collection::vec((0usize..5, 0u64..1000, 0usize..4, any::<bool>()), 1..400)) {
            let span = (SLOTS as u64) << SLOT_BITS;
            let delta = |kind: usize, jitter: u64| match kind {
                0 => jitter % 300,              // within a slot or two
                1 => span - 300 + jitter % 600, // at the ring's reach
                2 => span + jitter,             // a round ahead: same slot
                3 => 3 * span + jitter * 997,   // far
                _ => 0,                         // the current time
            };
            let mut q = EventQueue::default();
            let mut reference = std::collections::BinaryHeap::new();
            // Reserved keys and the times they are for.
            let mut held: Vec<(u64, u64)> = Vec::new();
            for &(kind, jitter, pops, reserve) in &steps {
                if reserve {
                    let t = q.now() + delta((kind + 1) % 4, jitter / 2);
                    held.push((q.reserve(t), t));
                }
                let t = q.now() + delta(kind, jitter);
                let key = q.reserve(t);
                q.schedule_reserved(t, key, key);
                reference.push(std::cmp::Reverse((t, key)));
                if held.len() > 2 || (!reserve && !held.is_empty()) {
                    let (r, t) = held.remove(0);
                    // Pushed only if it still sorts after the current event, as a model
                    // pushes a reserved event only while it is due.
                    if q.processed() == 0 || (t, r) > q.current_key() {
                        q.schedule_reserved(t, r, r);
                        reference.push(std::cmp::Reverse((t, r)));
                    }
                }
                for _ in 0..pops {
                    let want = reference.pop().map(|std::cmp::Reverse(x)| x);
                    prop_assert_eq!(q.pop(), want);
                }
                prop_assert_eq!(q.is_empty(), reference.is_empty());
            }
            while let Some(std::cmp::Reverse(want)) = reference.pop() {
                prop_assert_eq!(q.pop(), Some(want));
            }
            prop_assert!(q.pop().is_none());
            prop_assert!(q.is_empty());
        }

        /// Reserved keys scheduled later (the current time included) sort where they were
        /// reserved, among groups of equal times.
        #[test]
        fn reserved_events_sort_by_their_reservation(steps in prop::collection::vec((0u64..4, 0usize..3, any::<bool>(), 0usize..3), 1..400)) {
            let mut q = EventQueue::default();
            let mut reference = std::collections::BinaryHeap::new();
            let mut reserved: Vec<(u64, u64)> = Vec::new();
            for &(delta, pops, reserve, release) in &steps {
                // Few distinct times, so that many events share one.
                let t = q.now() + delta * 1000;
                if reserve {
                    reserved.push((q.reserve(t), t));
                }
                let key = q.reserve(t);
                q.schedule_reserved(t, key, key);
                reference.push(std::cmp::Reverse((t, key)));
                for _ in 0..release.min(reserved.len()) {
                    let (r, t) = reserved.remove(0);
                    if q.processed() == 0 || (t, r) > q.current_key() {
                        q.schedule_reserved(t, r, r);
                        reference.push(std::cmp::Reverse((t, r)));
                    }
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

        /// Events of several origins pop in the order of their keys, computed here as a
        /// tuple: (time, scheduled earlier, zero-delay depth, origin, counter). An event
        /// at the current time comes after the one that scheduled it whatever their
        /// origins, and one origin's events keep their order.
        #[test]
        fn origins_order_events_by_scheduling_origin_and_counter(steps in prop::collection::vec((0u32..5, 0u64..3, 0usize..3), 1..400)) {
            let mut q = EventQueue::new(5);
            let mut reference = std::collections::BinaryHeap::new();
            let mut counters = [0u64; 5];
            // Depth of the event popped last (0 unless it was scheduled at its own time).
            let mut depth = 0;
            for (n, &(origin, delta, pops)) in steps.iter().enumerate() {
                q.set_origin(origin);
                let delay = delta * 100;
                let t = q.now() + delay;
                // A longer delay sorts first; a zero delay after every positive one.
                let (zero, rank) = if delay > 0 { (false, u64::MAX - delay) } else { (true, depth + u64::from(q.processed() > 0)) };
                let d = if zero { rank } else { 0 };
                reference.push(std::cmp::Reverse((t, zero, rank, origin, counters[origin as usize], n, d)));
                counters[origin as usize] += 1;
                q.schedule(t, (n, d));
                for _ in 0..pops {
                    let want = reference.pop().map(|std::cmp::Reverse((t, .., n, d))| (t, (n, d)));
                    let got = q.pop();
                    prop_assert_eq!(got, want);
                    if let Some((_, (_, d))) = got {
                        depth = d;
                    }
                }
            }
            while let Some(std::cmp::Reverse((t, .., n, d))) = reference.pop() {
                prop_assert_eq!(q.pop(), Some((t, (n, d))));
            }
            prop_assert!(q.overflow().is_none());
        }
    }
}
