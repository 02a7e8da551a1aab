//! When each place a one-packet message passes (a link, a NIC's receive DMA engine) is
//! taken by the packets reserved on it so far: its busy intervals, in time order.
//!
//! A packet reserves its whole way when it leaves its NIC (`packets.rs`), so packets are
//! reserved in the order they leave, not in the order they reach each place: one that
//! arrives at a place before a packet reserved earlier takes the gap in front of it if the
//! gap holds it, else the first gap after. Intervals that ended before now are forgotten:
//! nothing reserved from now on arrives anywhere before now.

use crate::units::Ps;

/// No interval (a place's list of earlier intervals is empty, or an interval is its
/// list's last).
const END: u32 = 0;

/// A busy interval of a place, and the next one of the same place.
#[derive(Debug, Clone, Copy)]
struct Interval {
    start: Ps,
    end: Ps,
    next: u32,
}

/// A place's intervals. The last one is held here: most places hold one interval still to
/// come, or none, and then a reservation reads and writes this row alone. Those before it
/// are a list of `Interval`s, from `first` to `tail` (`first_end` is the first one's end).
/// All zero when untouched (the last interval is `0..0`, over at any time), so the pages of
/// places no packet crosses are never written.
#[derive(Debug, Clone, Copy, Default, bytemuck::Zeroable)]
struct Place {
    first: u32,
    tail: u32,
    first_end: Ps,
    last_start: Ps,
    last_end: Ps,
}

#[derive(Debug, Clone)]
pub(super) struct Reservations {
    places: Vec<Place>,
    /// The intervals before each place's last, linked in time order; slot `END` is never
    /// used. Forgotten ones are linked from `free`.
    intervals: Vec<Interval>,
    free: u32,
}

impl Reservations {
    pub(super) fn new(places: usize) -> Reservations {
        Reservations {
            // Zeroed by the system, not written: a run without one-packet messages (a
            // million-node machine has nine million places) touches none of it.
            places: bytemuck::zeroed_vec(places),
            intervals: vec![Interval {
                start: 0,
                end: 0,
                next: END,
            }],
            free: END,
        }
    }

    /// Takes `place` from the first time at or after `arrive` at which it is free for
    /// `len` and until at least `until` (a packet's tail cannot leave before it came in),
    /// without overlapping what is reserved already: the interval taken, `(start, end)`.
    /// `now` is the time of the reservation; nothing taken from now on arrives before it.
    pub(super) fn take(&mut self, place: u32, now: Ps, arrive: Ps, len: Ps, until: Ps) -> (Ps, Ps) {
        let mut pl = self.places[place as usize];
        if pl.last_end <= now {
            // All over: the list before the last is forgotten at once.
            if pl.first != END {
                self.intervals[pl.tail as usize].next = self.free;
                self.free = pl.first;
                pl.first = END;
            }
        } else if pl.first != END && pl.first_end <= now {
            // Forget one interval for each one reserved: the list stays as long as what is
            // still to come.
            let first = pl.first as usize;
            let next = self.intervals[first].next;
            self.intervals[first].next = self.free;
            self.free = pl.first;
            pl.first = next;
            pl.first_end = self.intervals[next as usize].end;
        }
        let taken = if pl.last_start <= arrive {
            // Most packets arrive after every one reserved before them has started: no gap
            // before the last one can hold them, they go after it.
            let start = arrive.max(pl.last_end);
            let end = (start + len).max(until);
            if end > start {
                self.append(&mut pl, now, start, end);
            }
            (start, end)
        } else {
            self.insert(&mut pl, now, arrive, len, until)
        };
        self.places[place as usize] = pl;
        taken
    }

    /// `start..end`, at or after the place's last interval, becomes its last.
    #[inline(always)]
    fn append(&mut self, pl: &mut Place, now: Ps, start: Ps, end: Ps) {
        if start == pl.last_end && pl.last_end > now {
            // Right behind the last one (a queue): one busy interval, no gap.
            pl.last_end = end;
            return;
        }
        if pl.last_end > now {
            // The last one is still to come: it joins the list.
            let id = self.slot(pl.last_start, pl.last_end, END);
            match pl.first {
                END => (pl.first, pl.first_end) = (id, pl.last_end),
                _ => self.intervals[pl.tail as usize].next = id,
            }
            pl.tail = id;
        }
        (pl.last_start, pl.last_end) = (start, end);
    }

    /// `take` when the packet arrives before the last interval starts (which is then still
    /// to come): the first gap that holds it, from the place's first interval on.
    fn insert(&mut self, pl: &mut Place, now: Ps, arrive: Ps, len: Ps, until: Ps) -> (Ps, Ps) {
        // `prev` and the one before it, `cur` the first interval not before the packet.
        let (mut before_prev, mut prev, mut cur, mut start) = (END, END, pl.first, arrive);
        let mut end = (start + len).max(until);
        while cur != END {
            let i = self.intervals[cur as usize];
            if end <= i.start {
                break;
            }
            start = start.max(i.end);
            end = (start + len).max(until);
            (before_prev, prev, cur) = (prev, cur, i.next);
        }
        if cur == END && end > pl.last_start {
            // No gap before the last one holds it.
            let start = start.max(pl.last_end);
            let end = (start + len).max(until);
            if end > start {
                self.append(pl, now, start, end);
            }
            return (start, end);
        }
        if end <= start {
            return (start, end);
        }
        // Busy intervals that touch are kept as one: no gap lies between them. The next
        // one is `cur`, or the place's last when `cur` is `END`.
        let joins_prev = prev != END && self.intervals[prev as usize].end == start;
        let next_start = match cur {
            END => pl.last_start,
            _ => self.intervals[cur as usize].start,
        };
        let joins_next = next_start == end;
        match (joins_prev, joins_next, cur) {
            (true, true, END) => {
                // `prev`, the list's tail, joins the last one.
                pl.last_start = self.intervals[prev as usize].start;
                match before_prev {
                    END => pl.first = END,
                    _ => {
                        self.intervals[before_prev as usize].next = END;
                        pl.tail = before_prev;
                    }
                }
                self.intervals[prev as usize].next = self.free;
                self.free = prev;
            }
            (true, true, _) => {
                let next = self.intervals[cur as usize];
                let p = &mut self.intervals[prev as usize];
                (p.end, p.next) = (next.end, next.next);
                self.intervals[cur as usize].next = self.free;
                self.free = cur;
                if pl.tail == cur {
                    pl.tail = prev;
                }
            }
            (true, false, _) => self.intervals[prev as usize].end = end,
            (false, true, END) => pl.last_start = start,
            (false, true, _) => self.intervals[cur as usize].start = start,
            (false, false, _) => {
                let id = self.slot(start, end, cur);
                match prev {
                    END => pl.first = id,
                    _ => self.intervals[prev as usize].next = id,
                }
                if cur == END {
                    pl.tail = id;
                }
            }
        }
        if pl.first != END {
            pl.first_end = self.intervals[pl.first as usize].end;
        }
        (start, end)
    }

    /// A slot for a new interval: a forgotten one, else a new one.
    fn slot(&mut self, start: Ps, end: Ps, next: u32) -> u32 {
        let new = Interval { start, end, next };
        match self.free {
            END => {
                self.intervals.push(new);
                (self.intervals.len() - 1) as u32
            }
            id => {
                self.free = self.intervals[id as usize].next;
                self.intervals[id as usize] = new;
                id
            }
        }
    }

    /// Intervals kept (tests): the list, then the last one unless the place is untouched.
    #[cfg(test)]
    fn kept(&self, place: u32) -> Vec<(Ps, Ps)> {
        let pl = self.places[place as usize];
        let mut out = Vec::new();
        let mut cur = pl.first;
        while cur != END {
            let i = self.intervals[cur as usize];
            out.push((i.start, i.end));
            cur = i.next;
        }
        if pl.last_end > 0 {
            out.push((pl.last_start, pl.last_end));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn in_order_arrivals_queue_first_come_first_served() {
        let mut r = Reservations::new(1);
        assert_eq!(r.take(0, 0, 10, 5, 0), (10, 15));
        assert_eq!(r.take(0, 0, 12, 5, 0), (15, 20));
        assert_eq!(r.take(0, 0, 30, 5, 0), (30, 35));
        // A queue is one busy interval.
        assert_eq!(r.kept(0), vec![(10, 20), (30, 35)]);
    }

    #[test]
    fn an_earlier_arrival_takes_the_gap_in_front_when_it_fits() {
        let mut r = Reservations::new(1);
        assert_eq!(r.take(0, 0, 100, 10, 0), (100, 110));
        // Fits before: 20..30.
        assert_eq!(r.take(0, 0, 20, 10, 0), (20, 30));
        // 95..105 would overlap 100..110: after it.
        assert_eq!(r.take(0, 0, 95, 10, 0), (110, 120));
        assert_eq!(r.kept(0), vec![(20, 30), (100, 120)]);
        // Exactly fills 30..100's end: 90..100, joining what follows.
        assert_eq!(r.take(0, 0, 90, 10, 0), (90, 100));
        assert_eq!(r.kept(0), vec![(20, 30), (90, 120)]);
        // Fills 30..90 whole: one interval, its slot and the other's given back.
        assert_eq!(r.take(0, 0, 25, 60, 0), (30, 90));
        assert_eq!(r.kept(0), vec![(20, 120)]);
        assert_eq!(r.take(0, 0, 0, 5, 0), (0, 5));
        assert_eq!(r.intervals.len(), 2, "a slot given back is taken again");
    }

    #[test]
    fn a_tail_bound_stretches_the_interval() {
        let mut r = Reservations::new(1);
        assert_eq!(r.take(0, 0, 10, 5, 40), (10, 40));
        assert_eq!(r.take(0, 0, 0, 5, 0), (0, 5));
        assert_eq!(r.take(0, 0, 5, 5, 12), (40, 45));
    }

    #[test]
    fn past_intervals_are_forgotten_and_their_slots_reused() {
        let mut r = Reservations::new(2);
        r.take(0, 0, 0, 10, 0);
        r.take(1, 0, 0, 10, 0);
        assert_eq!(r.take(0, 10, 10, 10, 0), (10, 20));
        assert_eq!(r.kept(0), vec![(10, 20)]);
        assert_eq!(
            r.intervals.len(),
            1,
            "a place's last interval takes no slot"
        );
        assert_eq!(r.kept(1), vec![(0, 10)], "other places keep theirs");
    }

    /// `intervals` sorted, those that touch joined.
    fn merged(mut intervals: Vec<(Ps, Ps)>) -> Vec<(Ps, Ps)> {
        intervals.sort_unstable();
        let mut out: Vec<(Ps, Ps)> = Vec::new();
        for (a, b) in intervals {
            match out.last_mut() {
                Some(last) if last.1 == a => last.1 = b,
                _ => out.push((a, b)),
            }
        }
        out
    }

    /// What every reservation must give: `(s, e)` for a packet of `len` arriving at
    /// `arrive` starts no earlier, lasts `len`, overlaps none of `before` (what is still
    /// ahead on its place), and no earlier start would fit.
    fn fits_first(
        before: &[(Ps, Ps)],
        arrive: Ps,
        len: Ps,
        (s, e): (Ps, Ps),
    ) -> Result<(), TestCaseError> {
        prop_assert!(s >= arrive);
        prop_assert_eq!(e - s, len);
        for &(a, b) in before {
            prop_assert!(e <= a || s >= b, "{:?} overlaps {:?}", (s, e), (a, b));
        }
        for t in arrive..s {
            prop_assert!(before.iter().any(|&(a, b)| t < b && t + len > a));
        }
        Ok(())
    }

    proptest! {
        /// Whatever the order of reservations: every interval starts no earlier than its
        /// arrival, lasts its length, and no two overlap; each is the earliest that fits.
        #[test]
        fn intervals_never_overlap_and_start_as_early_as_they_fit(
            asks in proptest::collection::vec((0u64..200, 1u64..20), 1..40)
        ) {
            let mut r = Reservations::new(1);
            let mut taken: Vec<(Ps, Ps)> = Vec::new();
            for (arrive, len) in asks {
                let (s, e) = r.take(0, 0, arrive, len, 0);
                fits_first(&taken, arrive, len, (s, e))?;
                taken.push((s, e));
            }
            prop_assert_eq!(r.kept(0), merged(taken));
        }

        /// As time goes on and intervals are forgotten, on several places: the same rules
        /// against every interval that is not over yet.
        #[test]
        fn forgetting_the_past_changes_nothing_ahead(
            asks in proptest::collection::vec((0u64..3, 0u64..30, 0u64..100, 1u64..20), 1..60)
        ) {
            let mut r = Reservations::new(3);
            let mut taken: Vec<Vec<(Ps, Ps)>> = vec![Vec::new(); 3];
            let mut now = 0;
            for (place, step, ahead, len) in asks {
                now += step;
                let arrive = now + ahead;
                let (s, e) = r.take(place as u32, now, arrive, len, 0);
                let live: Vec<(Ps, Ps)> =
                    taken[place as usize].iter().copied().filter(|&(_, b)| b > now).collect();
                fits_first(&live, arrive, len, (s, e))?;
                taken[place as usize].push((s, e));
                let kept = r.kept(place as u32);
                prop_assert!(kept.windows(2).all(|w| w[0].1 < w[1].0), "apart, in time order");
                for &(a, b) in &live {
                    prop_assert!(
                        kept.iter().any(|&(c, d)| c <= a && b <= d),
                        "{:?} ahead is kept", (a, b)
                    );
                }
            }
        }
    }
}
