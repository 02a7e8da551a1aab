//! Each rank's collective calls expanded into the steps of their algorithms: messages on
//! the communicator's collective context, or puts and polls.

use crate::program::collectives::{self, Step};
use crate::program::link::collective_calls::Matched;
use crate::program::link::communicators::Communicators;
use crate::program::ops::{Op, OpKind, Program, SrcLoc, NONE};

/// Tags of collective puts live far below any user tag (and never equal `ANY`).
fn coll_put_tag(comm: u32, seq: u32, tag: u32) -> i64 {
    -(1i64 << 62) + ((comm as i64) << 44) + ((seq as i64) << 16) + tag as i64
}

/// Replaces every matched call (and communicator creation) of `prog` by its steps;
/// `reduce_ps` is the compute time charged per reduced byte.
pub fn expand(prog: &mut Program, comms: &Communicators, matched: &Matched, reduce_ps: u64) {
    let expander = Expander {
        comms,
        matched,
        reduce_ps,
    };
    for r in 0..prog.ranks as usize {
        let old = std::mem::take(&mut prog.ops[r]);
        let mut ops = Vec::with_capacity(old.len());
        for (i, op) in old.into_iter().enumerate() {
            match matched.expand_at[r].get(&i) {
                Some(&id) => expander.call(prog, r, id, op.loc, &mut ops),
                None => ops.push(op),
            }
        }
        // Creations that were not expanded (never: each is a collective) are dropped.
        ops.retain(|o| {
            !matches!(
                o.kind,
                OpKind::Coll { .. } | OpKind::CommSplit { .. } | OpKind::CommDup { .. }
            )
        });
        prog.ops[r] = ops;
    }
}

struct Expander<'a> {
    comms: &'a Communicators,
    matched: &'a Matched,
    reduce_ps: u64,
}

impl Expander<'_> {
    /// The steps of collective `id` for rank `r`, between its begin and end marks.
    fn call(&self, prog: &mut Program, r: usize, id: u32, loc: SrcLoc, ops: &mut Vec<Op>) {
        let (spec, algorithm) = &self.matched.specs[id as usize];
        let coll = &self.matched.collectives[id as usize];
        let members = self.comms.members(coll.comm);
        let me = self.comms.rank_in(coll.comm, r as u32);
        let ctx = 2 * coll.comm + 1;
        let at = |kind| Op { kind, loc };
        let tag = |t: u32| ((coll.seq as i64) << 16) | t as i64;
        ops.push(at(OpKind::CollBegin { call: id }));
        // Requests of messages and puts not yet waited for.
        let mut pending: Vec<u32> = Vec::new();
        let mut puts: Vec<u32> = Vec::new();
        for step in collectives::expand(spec, algorithm, members.len() as u32, me) {
            match step {
                Step::Send { to, bytes, tag: t } => {
                    let req = prog.new_handle(r as u32);
                    pending.push(req);
                    ops.push(at(OpKind::Isend {
                        dst: members[to as usize],
                        size: bytes,
                        tag: tag(t),
                        comm: ctx,
                        req,
                    }));
                }
                Step::Recv {
                    from,
                    bytes,
                    tag: t,
                } => {
                    let req = prog.new_handle(r as u32);
                    pending.push(req);
                    ops.push(at(OpKind::Irecv {
                        src: members[from as usize] as i64,
                        size: bytes,
                        tag: tag(t),
                        comm: ctx,
                        req,
                    }));
                }
                Step::WaitAll => wait_all(prog, &mut pending, ops, loc),
                Step::Put { to, bytes, tag: t } => {
                    let handle = prog.new_handle(r as u32);
                    puts.push(handle);
                    ops.push(at(OpKind::Put {
                        dst: members[to as usize],
                        size: bytes,
                        tag: coll_put_tag(coll.comm, coll.seq, t),
                        handle,
                        nic: NONE,
                    }));
                }
                Step::Poll { tag: t } => ops.push(at(OpKind::Poll {
                    tag: coll_put_tag(coll.comm, coll.seq, t),
                })),
                Step::CompleteAll => wait_all(prog, &mut puts, ops, loc),
                Step::Reduce { bytes } => {
                    let ps = bytes.saturating_mul(self.reduce_ps);
                    if ps > 0 {
                        ops.push(at(OpKind::Compute { ps }));
                    }
                }
            }
        }
        // Whatever the algorithm left outstanding is finished before the call returns.
        wait_all(prog, &mut pending, ops, loc);
        wait_all(prog, &mut puts, ops, loc);
        ops.push(at(OpKind::CollEnd { call: id }));
    }
}

/// A wait for the requests in `reqs`, if there are any; `reqs` is emptied.
fn wait_all(prog: &mut Program, reqs: &mut Vec<u32>, ops: &mut Vec<Op>, loc: SrcLoc) {
    if reqs.is_empty() {
        return;
    }
    let list = prog.req_list(reqs);
    ops.push(Op {
        kind: OpKind::WaitAll {
            list,
            count: reqs.len() as u32,
        },
        loc,
    });
    reqs.clear();
}
