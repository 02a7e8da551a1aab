//! Credit flow control: buffer space returned upstream one cable latency after a tail has
//! left. A credit that wakes nobody is kept off the event queue and counted when the link is
//! next looked at, with the sequence number its event would have had.

use super::state::*;
use crate::engine::Schedule;
use crate::units::Ps;

impl PacketNetwork {
    /// Buffer space came back to the sender of `link`.
    pub(super) fn on_credit(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        now: Ps,
        link: u32,
        vc: u8,
        bytes: u16,
    ) {
        self.add_credit(now, link, vc, bytes as u32);
        self.try_send(q, now, link);
    }

    /// The same, for a packet of 64 KiB or more.
    pub(super) fn on_big_credit(&mut self, q: &mut impl Schedule<PacketEvent>, now: Ps, slot: u32) {
        let (link, vc, bytes) = self.big_credits[slot as usize];
        self.free_big_credits.push(slot);
        self.add_credit(now, link, vc, bytes);
        self.try_send(q, now, link);
    }

    /// Buffer space reaches the sender of `link` at `time`. It wakes the sender only if a
    /// packet waits for the link: else it is kept pending, with the sequence number its
    /// event would have had, so it counts exactly when that event would have run.
    #[inline(always)]
    pub(super) fn return_credit(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        time: Ps,
        link: u32,
        vc: u8,
        bytes: u32,
    ) {
        if let Some(&router) = self.topo.ports.port_router.get(link as usize) {
            if let Some(part) = self.elsewhere(router) {
                self.cross_credit(q, time, link, (vc, bytes), part);
                return;
            }
        }
        let seq = q.reserve(time);
        let waiting = self.links[link as usize].wait_len != 0;
        self.keep_credit(q, (time, seq), link, (vc, bytes), waiting);
    }

    /// A credit due at `time` with key `seq`: an event if every credit is one or
    /// packets wait for the link, else kept pending.
    #[inline(always)]
    pub(super) fn keep_credit(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        (time, seq): (Ps, u64),
        link: u32,
        (vc, bytes): (u8, u32),
        waiting: bool,
    ) {
        if self.eager_credits || waiting {
            let event = self.credit_event(link, vc, bytes);
            q.at_reserved(time, seq, event);
            return;
        }
        let c = PendingCredit {
            time,
            seq,
            bytes,
            vc,
            next: self.links[link as usize].pending_credit,
        };
        let mut i = self.free_pending_credit;
        if i == NO_CREDIT {
            i = self.pending_credits.len() as u32;
            self.pending_credits.push(c);
        } else {
            self.free_pending_credit = self.pending_credits[i as usize].next;
            self.pending_credits[i as usize] = c;
        }
        self.links[link as usize].pending_credit = i;
    }

    /// The event that returns `bytes` of buffer space on `link`'s VC `vc`.
    pub(super) fn credit_event(&mut self, link: u32, vc: u8, bytes: u32) -> PacketEvent {
        if let Ok(bytes) = u16::try_from(bytes) {
            return PacketEvent::Credit { link, vc, bytes };
        }
        let slot = match self.free_big_credits.pop() {
            Some(slot) => {
                self.big_credits[slot as usize] = (link, vc, bytes);
                slot
            }
            None => {
                self.big_credits.push((link, vc, bytes));
                (self.big_credits.len() - 1) as u32
            }
        };
        PacketEvent::BigCredit { slot }
    }

    /// Counts the pending credits of `link` whose events would have run by now; the others
    /// stay pending or, with `wake`, become events.
    #[inline]
    pub(super) fn settle_credits(
        &mut self,
        q: &mut impl Schedule<PacketEvent>,
        link: u32,
        wake: bool,
    ) {
        if self.links[link as usize].pending_credit == NO_CREDIT {
            return;
        }
        self.count_credits_before(link, q.current_key());
        if !wake {
            return;
        }
        let mut i = std::mem::replace(&mut self.links[link as usize].pending_credit, NO_CREDIT);
        while i != NO_CREDIT {
            let c = self.pending_credits[i as usize];
            let (vc, bytes) = (c.vc, c.bytes);
            let event = self.credit_event(link, vc, bytes);
            q.at_reserved(c.time, c.seq, event);
            self.pending_credits[i as usize].next = self.free_pending_credit;
            self.free_pending_credit = i;
            i = c.next;
        }
    }

    /// Counts the pending credits of `link` whose (time, sequence) is before `key` and
    /// keeps the others pending. Without branches on which: a link's list mixes credits
    /// due and not yet due (2.06 entries a walk, 1.05 counted, on BookSim2's 16x16 torus),
    /// so a branch on each guessed wrong about one time in five (cachegrind).
    #[inline]
    pub(super) fn count_credits_before(&mut self, link: u32, key: (Ps, u64)) {
        let key = ((key.0 as u128) << 64) | key.1 as u128;
        let base = link as usize * self.params.vcs as usize;
        let (mut keep, mut free) = (NO_CREDIT, self.free_pending_credit);
        let mut i = self.links[link as usize].pending_credit;
        while i != NO_CREDIT {
            let c = self.pending_credits[i as usize];
            let due = (((c.time as u128) << 64) | c.seq as u128) < key;
            self.credits[base + c.vc as usize] += c.bytes as i64 * due as i64;
            if self.checks.is_some() && due {
                self.check_credit(c.time, link, c.vc);
            }
            // A counted slot joins the free list, a kept one the link's list.
            self.pending_credits[i as usize].next = if due { free } else { keep };
            (free, keep) = if due { (i, keep) } else { (free, i) };
            i = c.next;
        }
        self.links[link as usize].pending_credit = keep;
        self.free_pending_credit = free;
    }

    /// Counts every credit still pending (the run is over) and returns the time of the
    /// latest, 0 if none: the run's last event would have been that credit's. The counted
    /// slots are not listed for reuse, as `count_credits_before` lists them: a
    /// million-router run has millions pending, and listing them faulted in fresh pages on
    /// every partition's thread at its end. All are let go at once.
    pub(super) fn settle_all_credits(&mut self) -> Ps {
        let mut latest = 0;
        for link in 0..self.links.len() as u32 {
            // A partition keeps only the credits of the links it sends on (a link it does
            // not hold is zeros, not a list).
            if !self.sends_on(link) {
                continue;
            }
            let mut i = std::mem::replace(&mut self.links[link as usize].pending_credit, NO_CREDIT);
            while i != NO_CREDIT {
                let c = self.pending_credits[i as usize];
                self.add_credit(c.time, link, c.vc, c.bytes);
                latest = latest.max(c.time);
                i = c.next;
            }
        }
        self.pending_credits.clear();
        self.free_pending_credit = NO_CREDIT;
        latest
    }

    #[inline(always)]
    pub(super) fn add_credit(&mut self, now: Ps, link: u32, vc: u8, bytes: u32) {
        let i = (link * self.params.vcs as u32 + vc as u32) as usize;
        self.credits[i] += bytes as i64;
        if self.checks.is_some() {
            self.check_credit(now, link, vc);
        }
    }

    /// `--check`: a link's VC never holds more credit than its buffer.
    #[cold]
    fn check_credit(&mut self, now: Ps, link: u32, vc: u8) {
        let i = (link * self.params.vcs as u32 + vc as u32) as usize;
        if let (Some(c), Some(cap)) = (&mut self.checks, self.params.buffer) {
            if self.credits[i] > cap as i64 {
                c.fail(|| {
                    format!(
                        "link {} VC {vc} holds {} credits at {now} ps, more than its {cap} B buffer",
                        self.topo.link_name(link),
                        self.credits[i]
                    )
                });
            }
        }
    }
}
