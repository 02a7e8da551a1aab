//! Each rank's collective calls (and communicator creations) marked as linked collectives:
//! the runtime generates their steps, round by round, as each rank reaches them.

use crate::program::link::collective_calls::Matched;
use crate::program::link::communicators::Communicators;
use crate::program::link::world_ranks::CallsByComm;
use crate::program::ops::{OpKind, Program, NONE};

/// Replaces every matched call (and communicator creation) of `prog` by its linked
/// collective: a member's call number `seq` on communicator `c` is collective
/// `matched.first[c] + seq`.
pub fn expand(prog: &mut Program, comms: &Communicators, calls: &CallsByComm, matched: &Matched) {
    // The ranks that made a call: only their operations can hold one (a million-rank
    // exchange with no collective is not read through again).
    let mut calling = vec![false; prog.ops.len()];
    for (c, per_rank) in calls.iter().enumerate() {
        for (r, rank_calls) in per_rank.iter().enumerate() {
            calling[r] |= !rank_calls.is_empty();
            for (seq, at) in rank_calls.iter().enumerate() {
                let op = &mut prog.ops[r][at.op_index];
                let call = match op.kind {
                    OpKind::Coll { call } => call,
                    _ => NONE,
                };
                let me = comms.rank_in(c as u32, r as u32);
                op.kind = OpKind::Collective {
                    id: matched.first[c] + seq as u32,
                    call,
                    me,
                };
            }
        }
    }
    // A call or creation not matched (never: each is a collective) is dropped.
    let unlinked = |kind: &OpKind| {
        matches!(
            kind,
            OpKind::Coll { .. } | OpKind::CommSplit { .. } | OpKind::CommDup { .. }
        )
    };
    for (ops, _) in prog.ops.iter_mut().zip(calling).filter(|(_, calls)| *calls) {
        if ops.iter().any(|o| unlinked(&o.kind)) {
            ops.retain(|o| !unlinked(&o.kind));
        }
    }
    prog.coll_specs = matched.specs.clone();
}
