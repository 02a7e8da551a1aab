//! Each rank's collective calls (and communicator creations) marked as linked collectives:
//! the runtime generates their steps, round by round, as each rank reaches them.

use crate::program::link::collective_calls::Matched;
use crate::program::link::communicators::Communicators;
use crate::program::ops::{OpKind, Program, NONE};

/// Replaces every matched call (and communicator creation) of `prog` by its linked
/// collective.
pub fn expand(prog: &mut Program, comms: &Communicators, matched: &Matched) {
    for r in 0..prog.ranks as usize {
        for (&i, &id) in &matched.expand_at[r] {
            let op = &mut prog.ops[r][i];
            let call = match op.kind {
                OpKind::Coll { call } => call,
                _ => NONE,
            };
            let comm = matched.collectives[id as usize].comm;
            let me = comms.rank_in(comm, r as u32);
            op.kind = OpKind::Collective { id, call, me };
        }
        // A call or creation not matched (never: each is a collective) is dropped.
        let unlinked = |kind: &OpKind| {
            matches!(
                kind,
                OpKind::Coll { .. } | OpKind::CommSplit { .. } | OpKind::CommDup { .. }
            )
        };
        if prog.ops[r].iter().any(|o| unlinked(&o.kind)) {
            prog.ops[r].retain(|o| !unlinked(&o.kind));
        }
    }
    prog.coll_specs = matched.specs.clone();
}
