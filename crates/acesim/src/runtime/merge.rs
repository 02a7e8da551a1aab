//! The partitions' runtimes of a parallel run made into one, as a serial run would have
//! left it: every rank's state from its partition, every record renumbered into one list,
//! what a mirror learnt of a transfer (when it landed, which receive it matched) written
//! into the issuer's record, and the program's operations and receives in the order one
//! queue would have made them.

use super::partition::{owner, LOCAL};
use super::ranks::Ranks;
use super::state::*;
use crate::ids::NONE;

/// Where one partition's records start in the merged lists, and where each of its transfer
/// records goes among its own when its free slots are left behind (`kept`).
#[derive(Clone, Copy)]
struct Offsets<'a> {
    xfers: u32,
    recvs: u32,
    kept: Option<&'a [u32]>,
}

impl Offsets<'_> {
    fn xfer(self, id: u32) -> u32 {
        match (id, self.kept) {
            (NONE, _) => NONE,
            // A free slot is named by nothing; were it named, it would name nothing.
            (id, Some(kept)) => match kept[id as usize] {
                NONE => NONE,
                k => k + self.xfers,
            },
            (id, None) => id + self.xfers,
        }
    }

    fn recv(self, id: u32) -> u32 {
        if id == NONE {
            NONE
        } else {
            id + self.recvs
        }
    }

    /// An encoded request (a transfer id, or a receive id with `RECV_BIT`).
    fn request(self, e: u32) -> u32 {
        match e {
            NONE => NONE,
            e if e & RECV_BIT != 0 => self.recv(e & !RECV_BIT) | RECV_BIT,
            e => self.xfer(e),
        }
    }
}

/// Merges the runtimes of the partitions of one run (in partition order) into one (`None`
/// for no partition).
pub fn merge(mut parts: Vec<Runtime>) -> Option<Runtime> {
    if parts.len() == 1 {
        let mut one = parts.pop()?;
        one.split = None;
        return Some(one);
    }
    let kept: Vec<Option<Vec<u32>>> = parts.iter().map(kept_slots).collect();
    let offsets: Vec<Offsets> = parts
        .iter()
        .zip(&kept)
        .scan((0, 0), |next, (p, kept)| {
            let at = Offsets {
                xfers: next.0,
                recvs: next.1,
                kept: kept.as_deref(),
            };
            next.0 += match kept {
                Some(kept) => kept.iter().filter(|&&k| k != NONE).count() as u32,
                None => p.xfers.len() as u32,
            };
            next.1 += p.recvs.len() as u32;
            Some(at)
        })
        .collect();
    for (p, &off) in parts.iter_mut().zip(&offsets) {
        renumber(p, off);
    }
    teach_issuers(&mut parts);
    let (ops, receives) = in_run_order(&parts, &offsets);
    for (p, kept) in parts.iter_mut().zip(&kept) {
        if let Some(kept) = kept {
            leave_free_slots(p, kept);
        }
    }
    // Each partition's ranks stay where they were made.
    let ranks = parts
        .iter_mut()
        .map(|p| std::mem::take(&mut p.ranks))
        .collect();
    let mut rest = parts.into_iter();
    let mut all = rest.next()?;
    all.ranks = Ranks::merge(ranks);
    all.split = None;
    for mut p in rest {
        all.xfers.append(&mut p.xfers);
        all.recvs.append(&mut p.recvs);
        all.regions.append(&mut p.regions);
        for (a, b) in all.colls.iter_mut().zip(&p.colls) {
            a.first_begin = a.first_begin.min(b.first_begin);
            a.last_end = a.last_end.max(b.last_end);
            a.sum_ps += b.sum_ps;
            a.ranks += b.ranks;
            a.messages += b.messages;
            a.bytes += b.bytes;
        }
        all.early.extend(p.early);
        all.last_activity = all.last_activity.max(p.last_activity);
        if let (Some(t), Some(mut u)) = (&mut all.trace, p.trace) {
            t.append(&mut u);
        }
        all.unfinished.append(&mut p.unfinished);
        all.program_transfers += p.program_transfers;
        all.finished += p.finished;
    }
    all.merged = Some(Box::new((ops, receives)));
    Some(all)
}

/// Where each transfer record of partition `p` goes among its own in the merged list, in a
/// run that keeps no records: its free slots (the records of finished ranks, most of them)
/// are left behind, since nothing names them, and the others close up in their order.
/// `None` in a run that keeps records: the results read every one.
fn kept_slots(p: &Runtime) -> Option<Vec<u32>> {
    if !p.summary_only {
        return None;
    }
    let mut kept = vec![0u32; p.xfers.len()];
    for &id in &p.free_xfers {
        kept[id as usize] = NONE;
    }
    let mut next = 0;
    for k in &mut kept {
        if *k != NONE {
            *k = next;
            next += 1;
        }
    }
    Some(kept)
}

impl Runtime {
    /// A partition's free transfer slots, left behind where it ran rather than in the
    /// merge (`kept_slots`): the other records close up, and what names them is renumbered
    /// (`names`, `by_name` and `xfer_order` too). The merge then finds none free. Done by
    /// each process of a run across processes before it sends its share (process 0 before
    /// the merge), a million-rank run's millions of free slots are neither sent nor made
    /// again as vacant records in process 0's fresh memory (`share.rs`). (Partitions on
    /// threads leave them to the merge, which drops them in place.)
    pub fn leave_free_slots(&mut self) {
        if self.free_xfers.is_empty() {
            return;
        }
        let Some(kept) = kept_slots(self) else {
            return;
        };
        let closed_up = Offsets {
            xfers: 0,
            recvs: 0,
            kept: Some(&kept),
        };
        renumber(self, closed_up);
        if let Some(s) = self.split.as_deref_mut() {
            retain_kept(&mut s.names, &kept);
            retain_kept(&mut s.xfer_order, &kept);
            s.by_name.retain(|_, id| kept[*id as usize] != NONE);
            s.by_name
                .values_mut()
                .for_each(|id| *id = kept[*id as usize]);
        }
        leave_free_slots(self, &kept);
    }
}

/// The entries of a list by transfer slot (which may stop short of the last slot) whose
/// slots `kept` gives a place.
fn retain_kept<T>(by_slot: &mut Vec<T>, kept: &[u32]) {
    let mut slot = 0;
    by_slot.retain(|_| {
        slot += 1;
        kept[slot - 1] != NONE
    });
}

/// Drops the free slots of partition `p`'s transfer records, those `kept` (`kept_slots`)
/// gives no place.
fn leave_free_slots(p: &mut Runtime, kept: &[u32]) {
    retain_kept(&mut p.xfers, kept);
    p.free_xfers.clear();
}

/// Writes into each issuer's record what the mirror of it learnt: when its data started
/// and landed (at the other end), and the receive it matched (renumbered already).
fn teach_issuers(parts: &mut [Runtime]) {
    let mut learnt = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        let Some(s) = &p.split else { continue };
        for (id, &name) in s.names.iter().enumerate() {
            if name != LOCAL && owner(name) as usize != k {
                let x = &p.xfers[id];
                learnt.push((name, x.dma_start, x.landed, x.recv));
            }
        }
    }
    for (name, dma_start, landed, recv) in learnt {
        let p = &mut parts[owner(name) as usize];
        let Some(id) = p.split.as_ref().and_then(|s| s.by_name.get(&name).copied()) else {
            continue; // the issuer retired its record: the results do not show it
        };
        let x = &mut p.xfers[id as usize];
        if let Some(t) = dma_start.get() {
            x.dma_start.set_once(t);
        }
        if let Some(t) = landed.get() {
            x.landed.set_once(t);
        }
        if recv != NONE {
            x.recv = recv;
        }
    }
}

/// The program's own transfers (issuers' records) and receives of every partition, in the
/// order one queue would have made them, as their slots in the merged lists (partition
/// `k`'s records start at `offsets[k]`). The places are sorted, not the records (a place
/// and its record's slot are a sixth of a record's bytes), by a stable sort, which merges
/// the runs in which each partition made its records in linear time; the records stay
/// where they are (copying millions of them into run order took a run's largest block of
/// fresh memory).
fn in_run_order(parts: &[Runtime], offsets: &[Offsets]) -> (Vec<u32>, Vec<u32>) {
    let mut ops: Vec<(Order, u32)> = Vec::new();
    let mut receives: Vec<(Order, u32)> = Vec::new();
    for (k, p) in parts.iter().enumerate() {
        let Some(s) = &p.split else { continue };
        if p.summary_only {
            continue;
        }
        for (id, x) in p.xfers.iter().enumerate() {
            let name = s.names.get(id).copied().unwrap_or(LOCAL);
            let issued_here = name == LOCAL || owner(name) as usize == k;
            if x.coll == NONE && issued_here {
                ops.push((order(&s.xfer_order, id), offsets[k].xfer(id as u32)));
            }
        }
        for (id, rv) in p.recvs.iter().enumerate() {
            if rv.ctx.is_multiple_of(2) {
                receives.push((order(&s.recv_order, id), offsets[k].recv(id as u32)));
            }
        }
    }
    ops.sort();
    receives.sort();
    (
        ops.into_iter().map(|(_, at)| at).collect(),
        receives.into_iter().map(|(_, at)| at).collect(),
    )
}

/// Renumbers a partition's records and the ids its ranks hold by `off`.
fn renumber(p: &mut Runtime, off: Offsets) {
    for x in &mut p.xfers {
        x.recv = off.recv(x.recv);
    }
    for rv in &mut p.recvs {
        rv.xfer = off.xfer(rv.xfer);
    }
    for st in p.ranks.states_mut() {
        if let Wait::Req(e) = st.wait {
            st.wait = Wait::Req(off.request(e));
        }
        st.inflight = off.request(st.inflight);
        st.handles.iter_mut().for_each(|e| *e = off.request(*e));
        st.unexpected.iter_mut().for_each(|x| *x = off.xfer(*x));
        st.posted.iter_mut().for_each(|r| *r = off.recv(*r));
    }
    for m in p.early.values_mut() {
        m.values_mut().for_each(|x| *x = off.xfer(*x));
    }
}

/// The place of record `id` in the run's order (records made before it was kept have none:
/// first).
fn order(orders: &[Order], id: usize) -> Order {
    orders.get(id).copied().unwrap_or_default()
}
