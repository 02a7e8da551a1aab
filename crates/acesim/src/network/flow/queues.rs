//! First-in-first-out queues, one per NIC, in one shared array: a million NICs holding a
//! few entries each would otherwise be a million small heap blocks, each allocated, grown
//! and freed on its own (and each a fresh page now and then).

use crate::ids::NONE;

/// An entry and the one after it in its queue (`NONE`: the last), or the next free slot.
#[derive(Debug, Clone, Copy)]
struct Slot<T> {
    item: T,
    next: u32,
}

#[derive(Debug)]
pub(super) struct Queues<T> {
    /// Per queue: its first and last slot (`NONE` when empty).
    ends: Vec<(u32, u32)>,
    slots: Vec<Slot<T>>,
    /// Slots whose entry has left, linked through `next`.
    free: u32,
}

impl<T: Copy> Queues<T> {
    /// `queues` empty queues.
    pub(super) fn new(queues: usize) -> Self {
        Queues {
            ends: vec![(NONE, NONE); queues],
            slots: Vec::new(),
            free: NONE,
        }
    }

    pub(super) fn push_back(&mut self, queue: u32, item: T) {
        let entry = Slot { item, next: NONE };
        let slot = if self.free != NONE {
            let slot = self.free;
            self.free = self.slots[slot as usize].next;
            self.slots[slot as usize] = entry;
            slot
        } else {
            crate::ids::place(&mut self.slots, None, entry)
        };
        let (head, tail) = &mut self.ends[queue as usize];
        if *tail == NONE {
            *head = slot;
        } else {
            self.slots[*tail as usize].next = slot;
        }
        *tail = slot;
    }

    pub(super) fn pop_front(&mut self, queue: u32) -> Option<T> {
        let (head, tail) = &mut self.ends[queue as usize];
        if *head == NONE {
            return None;
        }
        let slot = *head;
        let Slot { item, next } = self.slots[slot as usize];
        *head = next;
        if next == NONE {
            *tail = NONE;
        }
        self.slots[slot as usize].next = self.free;
        self.free = slot;
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    proptest! {
        /// Any mix of pushes and pops on a few queues gives what one `VecDeque` a queue
        /// gives, and slots are reused: the array never holds more than the most entries
        /// queued at once.
        #[test]
        fn queues_are_fifos(ops in proptest::collection::vec((0u32..4, any::<bool>(), any::<u16>()), 0..400)) {
            let mut queues = Queues::new(4);
            let mut model = vec![VecDeque::new(); 4];
            let (mut queued, mut most) = (0usize, 0usize);
            for (q, push, x) in ops {
                if push {
                    queues.push_back(q, x);
                    model[q as usize].push_back(x);
                    queued += 1;
                    most = most.max(queued);
                } else {
                    let got = queues.pop_front(q);
                    prop_assert_eq!(got, model[q as usize].pop_front());
                    queued -= usize::from(got.is_some());
                }
                prop_assert!(queues.slots.len() <= most);
            }
            for (q, m) in model.iter_mut().enumerate() {
                while let Some(x) = m.pop_front() {
                    prop_assert_eq!(queues.pop_front(q as u32), Some(x));
                }
                prop_assert_eq!(queues.pop_front(q as u32), None);
            }
        }
    }
}
