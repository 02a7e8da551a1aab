//! The runtime as one partition of a parallel run: it runs the ranks whose nodes hang on its
//! routers, and knows of the others only through the network.
//!
//! A transfer between ranks of two partitions has a record in each: the issuer's, and a
//! **mirror** in the partition of the other end, handed over when the transfer is made (its
//! first packet or control message takes at least a window to cross, so the mirror is
//! always there first). Both records share a **name**, unique in the run, which is the
//! token the network carries for it; each side moves its own half of the protocol on its
//! own record, and each retires its record once its side is done. When the run ends, the
//! partitions' runtimes are merged into one (`merge`), which the results and the deadlock
//! report read as they read a serial run's.

use super::state::*;
use crate::ids::NONE;
use crate::units::Ps;
use std::sync::Arc;

/// The name of a transfer with both ends in one partition.
pub(super) const LOCAL: u64 = 0;

/// Set in the name (and so the token) of a transfer between partitions.
const CROSS: u64 = 1 << 63;

/// The issuing partition sits above this bit of a name; a count below it (above the two
/// bits of the token's leg).
const OWNER_SHIFT: u32 = 44;

impl Runtime {
    /// Makes this runtime partition `me` of a run whose ranks live in `of_rank`: it starts
    /// and runs only its own ranks.
    pub fn make_partition(&mut self, me: u32, of_rank: Arc<Vec<u32>>) {
        let parts = of_rank.iter().max().map_or(1, |&p| p as usize + 1);
        self.split = Some(Box::new(RtSplit {
            me,
            of_rank,
            out: (0..parts).map(|_| Vec::new()).collect(),
            ..Default::default()
        }));
    }

    /// Whether rank `rank` runs here.
    #[inline]
    pub(super) fn runs_here(&self, rank: u32) -> bool {
        self.split
            .as_ref()
            .is_none_or(|s| s.of_rank[rank as usize] == s.me)
    }

    /// The event about to be handled has time and key `at` (partitions only: records made
    /// in it are placed in the run's order by it).
    #[inline]
    pub fn at_event(&mut self, at: (Ps, u64)) {
        if let Some(s) = &mut self.split {
            s.event = at;
        }
    }

    /// The token the network carries for leg `part` of transfer `xfer`.
    #[inline]
    pub(super) fn token_of(&self, xfer: u32, part: u64) -> u64 {
        match &self.split {
            Some(s) if s.names[xfer as usize] != LOCAL => s.names[xfer as usize] | part,
            _ => token(xfer, part),
        }
    }

    /// The transfer slot of a token, and its leg.
    #[inline]
    pub(super) fn resolve(&self, tok: u64) -> (u32, u64) {
        let part = tok & 3;
        if tok & CROSS == 0 {
            return ((tok >> 2) as u32, part);
        }
        let slot = self
            .split
            .as_ref()
            .and_then(|s| s.by_name.get(&(tok & !3)).copied());
        (slot.unwrap_or(NONE), part)
    }

    /// Transfer `id` was just made by a rank of this partition: names it, and hands a
    /// mirror to the partition of its other end if that is another one.
    pub(super) fn placed_xfer(&mut self, id: u32) {
        let kept = self.keeps(id);
        let Some(s) = self.split.as_deref_mut() else {
            return;
        };
        let x = &self.xfers[id as usize];
        let other = if x.rank == x.src_rank {
            x.dst_rank
        } else {
            x.src_rank
        };
        let there = s.of_rank[other as usize];
        let name = if there == s.me {
            LOCAL
        } else {
            let name = CROSS | u64::from(s.me) << OWNER_SHIFT | s.next_name << 2;
            s.next_name += 1;
            s.by_name.insert(name, id);
            let mut xfer = x.clone();
            xfer.op = NONE;
            s.out[there as usize].push(Mirror { name, xfer });
            name
        };
        set_slot(&mut s.names, id, name, LOCAL);
        if kept {
            let order = (s.event.0, s.event.1, s.made);
            s.made += 1;
            set_slot(&mut s.xfer_order, id, order, (0, 0, 0));
        }
    }

    /// Receive `id` was just posted by a rank of this partition.
    pub(super) fn placed_recv(&mut self, id: u32) {
        let kept = self.recvs[id as usize].ctx.is_multiple_of(2) && !self.summary_only;
        if let (Some(s), true) = (self.split.as_deref_mut(), kept) {
            let order = (s.event.0, s.event.1, s.made);
            s.made += 1;
            set_slot(&mut s.recv_order, id, order, (0, 0, 0));
        }
    }

    /// Whether transfer `id` is a record the results keep (the program's own, when records
    /// are kept): it is never retired.
    pub(super) fn keeps(&self, id: u32) -> bool {
        self.xfers[id as usize].coll == crate::program::NONE && !self.summary_only
    }

    /// The name of transfer `id` (`LOCAL` in a serial run).
    #[inline]
    pub(super) fn name_of(&self, id: u32) -> u64 {
        self.split.as_ref().map_or(LOCAL, |s| s.names[id as usize])
    }

    /// Whether transfer `id` is a mirror of one issued in another partition.
    #[inline]
    pub(super) fn is_mirror(&self, id: u32) -> bool {
        let name = self.name_of(id);
        name != LOCAL && self.split.as_ref().is_some_and(|s| owner(name) != s.me)
    }

    /// Frees the slot of transfer `id` between partitions (its side is done with it).
    pub(super) fn retire_named(&mut self, id: u32) {
        if let Some(s) = &mut self.split {
            let name = std::mem::replace(&mut s.names[id as usize], LOCAL);
            s.by_name.remove(&name);
        }
        self.free_xfers.push(id);
    }

    /// The mirrors for other partitions since the last call, by partition.
    pub fn take_mirrors(&mut self, out: &mut [Vec<Mirror>]) {
        if let Some(s) = &mut self.split {
            for (to, mirrors) in s.out.iter_mut().enumerate() {
                out[to].append(mirrors);
            }
        }
    }

    /// Takes the mirrors other partitions made of transfers whose other end is here.
    pub fn receive_mirrors(&mut self, mirrors: &mut Vec<Mirror>) {
        for Mirror { name, xfer } in mirrors.drain(..) {
            let free = self.free_xfers.pop();
            let id = crate::ids::place(&mut self.xfers, free, xfer);
            if let Some(s) = &mut self.split {
                set_slot(&mut s.names, id, name, LOCAL);
                s.by_name.insert(name, id);
            }
        }
    }
}

/// The partition that issued the transfer named `name`.
#[inline]
pub(super) fn owner(name: u64) -> u32 {
    ((name & !CROSS) >> OWNER_SHIFT) as u32
}

/// Sets `v[i]`, growing `v` with `fill` up to it.
fn set_slot<T: Copy>(v: &mut Vec<T>, i: u32, value: T, fill: T) {
    let i = i as usize;
    if v.len() <= i {
        v.resize(i + 1, fill);
    }
    v[i] = value;
}
