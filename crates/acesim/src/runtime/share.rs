//! A partition's runtime sent to process 0 when a run across processes ends, to be merged
//! there with the others (`merge.rs`) as the runtimes of threads are: every field the merge,
//! the results and a deadlock report read. A rank inside a collective call sends where it
//! is in the call; its step generator, which holds the algorithm's functions, is made
//! again from the program and run up to the same round.

use super::collective_steps::step_gen_at;
use super::state::*;
use crate::program::{Op, SrcLoc};
use crate::units::Ps;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What process 0 needs of another process's runtime.
#[derive(Serialize, Deserialize)]
pub struct RuntimeShare {
    /// The partition's own ranks (the others are idle here).
    ranks: Vec<(u32, RankState)>,
    /// The collective call of each rank in one: (rank, where it is).
    in_colls: Vec<(u32, CollPlace)>,
    xfers: Vec<Xfer>,
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
    pub fn into_share(self) -> RuntimeShare {
        let split = self.split.map(|s| *s).unwrap_or_default();
        let of_rank = split.of_rank.clone();
        let mine = |r: usize| of_rank.get(r).is_none_or(|&p| p == split.me);
        let mut ranks = Vec::new();
        let mut in_colls = Vec::new();
        for (r, mut st) in self.ranks.into_iter().enumerate().filter(|(r, _)| mine(*r)) {
            if let Some(c) = st.in_coll.take() {
                in_colls.push((r as u32, CollPlace::of(*c)));
            }
            ranks.push((r as u32, st));
        }
        RuntimeShare {
            ranks,
            in_colls,
            xfers: self.xfers,
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

    /// Partition `me` of a run across processes, as process `me` left it (`share`): built
    /// like a partition on a thread (`partition_of`), then given its state.
    pub fn from_share(
        program: Arc<crate::program::Program>,
        p: RtParams,
        placement: crate::machine::placement::Placement,
        (me, of_rank): (u32, Arc<Vec<u32>>),
        share: RuntimeShare,
    ) -> Runtime {
        let mut rt = Runtime::partition_of(program, p, placement, (me, of_rank));
        for (r, st) in share.ranks {
            rt.ranks[r as usize] = st;
        }
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
        rt.xfers = share.xfers;
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
