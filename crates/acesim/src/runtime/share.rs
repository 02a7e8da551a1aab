//! A partition's runtime sent to process 0 when a run across processes ends, to be merged
//! there with the others (`merge.rs`) as the runtimes of threads are: every field the merge,
//! the results and a deadlock report read. A rank inside a collective call sends where it
//! is in the call; its step generator, which holds the algorithm's functions, is made
//! again from the program and run up to the same round.

use super::collective_steps::step_gen_at;
use super::ranks::Ranks;
use super::state::*;
use crate::ids::NONE;
use crate::program::{Op, SrcLoc};
use crate::units::Ps;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What process 0 needs of another process's runtime.
#[derive(Serialize, Deserialize)]
pub struct RuntimeShare {
    /// The partition's own ranks, in increasing order, and their states.
    rank_ids: Vec<u32>,
    ranks: Vec<RankState>,
    /// The collective call of each rank in one: (rank, where it is).
    in_colls: Vec<(u32, CollPlace)>,
    xfers: Records,
    recvs: Vec<RecvRecord>,
    regions: Vec<RegionRecord>,
    colls: Vec<CollRecord>,
    early: HashMap<(u32, u32, u32), BTreeMap<u32, u32>>,
    last_activity: Ps,
    trace: Option<Vec<TraceInterval>>,
    unfinished: Vec<UnfinishedRequests>,
    program_transfers: u64,
    finished: u32,
    summary_only: bool,
    names: Vec<u64>,
    by_name: HashMap<u64, u32>,
    xfer_order: Vec<Order>,
    recv_order: Vec<Order>,
}

/// Where a rank is in a collective call (`InCollective` without its generator).
#[derive(Serialize, Deserialize)]
struct CollPlace {
    id: u32,
    call: u32,
    me: u32,
    rounds_done: u64,
    begin: Ps,
    loc: SrcLoc,
    ops: Vec<Op>,
    at: usize,
    lists: Vec<u32>,
    messages: Vec<u32>,
    puts: Vec<u32>,
    spare: Vec<u32>,
}

impl Runtime {
    /// This partition's runtime as process 0 needs it (its own ranks; the others idle).
    /// `without_finished`: a run whose every rank finished and whose results read no rank's
    /// row (a summary-only run) leaves out the ranks that finished with nothing left over
    /// (no landed put unpolled, no message or receive unmatched, no region open): only a
    /// rank's row would read them, and process 0 then holds no state for them.
    pub fn into_share(mut self, without_finished: bool) -> RuntimeShare {
        self.leave_free_slots();
        let split = self.split.map(|s| *s).unwrap_or_default();
        // A partition holds its own ranks only, in rank order: they go as they lie.
        let (mut rank_ids, mut ranks) = self.ranks.into_own();
        if without_finished {
            (rank_ids, ranks) = rank_ids
                .into_iter()
                .zip(ranks)
                .filter(|(_, st)| st.leaves_something_over())
                .unzip();
        }
        let mut in_colls = Vec::new();
        for (&r, st) in rank_ids.iter().zip(&mut ranks) {
            if let Some(c) = st.in_coll.take() {
                in_colls.push((r, CollPlace::of(*c)));
            }
        }
        RuntimeShare {
            rank_ids,
            ranks,
            in_colls,
            xfers: Records {
                xfers: self.xfers,
                // A run that keeps records reads them all when it merges (a free slot's
                // record included, by its kind), so it sends them whole, as they are.
                free: match self.summary_only {
                    true => self.free_xfers,
                    false => Vec::new(),
                },
            },
            recvs: self.recvs,
            regions: self.regions,
            colls: self.colls,
            early: self.early,
            last_activity: self.last_activity,
            trace: self.trace,
            unfinished: self.unfinished,
            program_transfers: self.program_transfers,
            finished: self.finished,
            summary_only: self.summary_only,
            names: split.names,
            by_name: split.by_name,
            xfer_order: split.xfer_order,
            recv_order: split.recv_order,
        }
    }

    /// Partition `me` of a run across processes, as process `me` left it (`share`): a
    /// partition on a thread (`partition_of`) holding the share's ranks.
    pub fn from_share(
        program: Arc<crate::program::Program>,
        p: RtParams,
        placement: crate::machine::placement::Placement,
        (me, of_rank): (u32, Arc<Vec<u32>>),
        share: RuntimeShare,
    ) -> Runtime {
        let ranks = Ranks::from_own(program.ranks, &share.rank_ids, share.ranks, idle_rank());
        let mut rt = Runtime::partition_with(program, p, placement, (me, of_rank), ranks);
        for (r, place) in share.in_colls {
            let gen = step_gen_at(
                &rt.program,
                place.id,
                place.call,
                place.me,
                place.rounds_done,
            );
            rt.ranks[r as usize].in_coll = Some(Box::new(InCollective {
                id: place.id,
                call: place.call,
                begin: place.begin,
                gen,
                loc: place.loc,
                steps: Vec::new(),
                ops: place.ops,
                at: place.at,
                lists: place.lists,
                messages: place.messages,
                puts: place.puts,
                spare: place.spare,
            }));
        }
        rt.xfers = share.xfers.xfers;
        rt.free_xfers = share.xfers.free;
        rt.recvs = share.recvs;
        rt.regions = share.regions;
        rt.colls = share.colls;
        rt.early = share.early;
        rt.last_activity = share.last_activity;
        rt.trace = share.trace;
        rt.unfinished = share.unfinished;
        rt.program_transfers = share.program_transfers;
        rt.finished = share.finished;
        rt.summary_only = share.summary_only;
        if let Some(s) = rt.split.as_deref_mut() {
            s.names = share.names;
            s.by_name = share.by_name;
            s.xfer_order = share.xfer_order;
            s.recv_order = share.recv_order;
        }
        rt
    }
}

impl CollPlace {
    fn of(c: InCollective) -> CollPlace {
        CollPlace {
            id: c.id,
            call: c.call,
            me: c.gen.me(),
            rounds_done: c.gen.rounds_done(),
            begin: c.begin,
            loc: c.loc,
            ops: c.ops,
            at: c.at,
            lists: c.lists,
            messages: c.messages,
            puts: c.puts,
            spare: c.spare,
        }
    }
}

/// A partition's transfer records without the contents of its free slots: a run that keeps
/// no records frees those of finished ranks, most of them (`nn-1m`: 3.2 million a process),
/// and sends each as one byte. Process 0 holds a vacant record in each, and knows it free.
/// (Nothing reads a free slot of such a run: the merge and the results read the records
/// that ranks, early arrivals and mirrors name.)
struct Records {
    xfers: Vec<Xfer>,
    free: Vec<u32>,
}

impl Serialize for Records {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut free = vec![false; self.xfers.len()];
        for &id in &self.free {
            free[id as usize] = true;
        }
        s.collect_seq(self.xfers.iter().zip(free).map(|(x, f)| (!f).then_some(x)))
    }
}

impl<'de> Deserialize<'de> for Records {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Records, D::Error> {
        struct Slots;
        impl<'de> serde::de::Visitor<'de> for Slots {
            type Value = Records;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of transfer records and free slots")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Records, A::Error> {
                let mut xfers = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                let mut free = Vec::new();
                while let Some(slot) = seq.next_element::<Option<Xfer>>()? {
                    if slot.is_none() {
                        free.push(xfers.len() as u32);
                    }
                    xfers.push(slot.unwrap_or_else(Xfer::vacant));
                }
                // In ascending order, not the sender's: no slot is taken after the run.
                Ok(Records { xfers, free })
            }
        }
        d.deserialize_seq(Slots)
    }
}

impl Xfer {
    /// What a free slot holds on process 0: no transfer (nothing refers to it).
    fn vacant() -> Xfer {
        Xfer {
            kind: XferKind::Put,
            rank: NONE,
            src_rank: NONE,
            dst_rank: NONE,
            size: 0,
            tag: 0,
            src_nic: NONE,
            dst_nic: NONE,
            issue: 0,
            dma_start: Stamp::NOT_YET,
            landed: Stamp::NOT_YET,
            complete: Stamp::NOT_YET,
            ctx: 0,
            seq: 0,
            rendezvous: false,
            recv: NONE,
            op: NONE,
            coll: NONE,
            sender_waited: false,
            receiver_waited: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bincode::Options;

    fn xfer(rank: u32) -> Xfer {
        Xfer {
            rank,
            size: 4096,
            ..Xfer::vacant()
        }
    }

    /// Free slots travel as one byte each and arrive free; the others arrive whole, in
    /// their slots.
    #[test]
    fn free_records_are_sent_as_one_byte_each() {
        let coder = bincode::DefaultOptions::new();
        let all_free = Records {
            xfers: (0..1000).map(xfer).collect(),
            free: (0..1000).rev().collect(),
        };
        let bytes = coder.serialize(&all_free).expect("encodes");
        assert!(bytes.len() <= 1003, "{} bytes", bytes.len());
        let kept: Vec<u32> = vec![3, 500, 999];
        let some = Records {
            xfers: (0..1000).map(xfer).collect(),
            free: (0..1000).filter(|i| !kept.contains(i)).collect(),
        };
        let back: Records = coder
            .deserialize(&coder.serialize(&some).expect("encodes"))
            .expect("decodes");
        assert_eq!(back.xfers.len(), 1000);
        assert_eq!(back.free, some.free);
        for (i, x) in back.xfers.iter().enumerate() {
            let want = if kept.contains(&(i as u32)) {
                i as u32
            } else {
                NONE
            };
            assert_eq!(x.rank, want, "slot {i}");
        }
    }
}
