//! Point-to-point operations from communicator ranks to world ranks and message contexts,
//! and each rank's collective calls listed by communicator for matching.

use crate::error::Result;
use crate::program::call_seqs::{DUP, SPLIT};
use crate::program::link::communicators::Communicators;
use crate::program::ops::{CollCall, Message, OpKind, Program, SrcLoc, ANY};

/// One rank's collective call and where it stands (24 bytes: a trace's millions of calls
/// are listed at once).
#[derive(Clone)]
pub struct RankCall {
    pub rank: u32,
    /// `Program::coll_calls[call]`, or `SPLIT`/`DUP` for a communicator creation.
    call: u32,
    pub op_index: usize,
    pub loc: SrcLoc,
}

/// Creations cost what MPI libraries pay: an allgather (split) or an allreduce (dup) of 8
/// bytes on the parent.
static CREATIONS: std::sync::LazyLock<[CollCall; 2]> = std::sync::LazyLock::new(|| {
    ["allgather", "allreduce"].map(|kind| CollCall {
        kind: kind.into(),
        algorithm: String::new(),
        transport: String::new(),
        size: 8,
        root: 0,
        segment: 0,
        comm: 0,
        sizes: Vec::new(),
    })
});

impl RankCall {
    /// Call `call` (an index of `Program::coll_calls`, or `SPLIT`/`DUP`) of rank `rank`,
    /// at `loc`.
    pub fn new(rank: u32, call: u32, loc: SrcLoc) -> RankCall {
        RankCall {
            rank,
            call,
            op_index: 0,
            loc,
        }
    }

    /// The call as the rank made it (its `comm` is rank-local, and for a creation 0).
    pub fn call<'p>(&self, prog: &'p Program) -> &'p CollCall {
        match self.call {
            SPLIT => &CREATIONS[0],
            DUP => &CREATIONS[1],
            i => &prog.coll_calls[i as usize],
        }
    }
}

/// Per communicator, per world rank: its collective calls in program order.
pub type CallsByComm = Vec<Vec<Vec<RankCall>>>;

/// Rewrites the messages of `prog` to world ranks and contexts, and lists its collective
/// calls (communicator creations included, as the collective each costs).
pub fn to_world_ranks(prog: &mut Program, comms: &Communicators) -> Result<CallsByComm> {
    let n = prog.ranks as usize;
    let mut calls: CallsByComm = vec![vec![Vec::new(); n]; comms.list.len()];
    for r in 0..n {
        rank_to_world(prog, comms, r, &mut calls)?;
    }
    Ok(calls)
}

/// `to_world_ranks` for the operations of rank `r`.
fn rank_to_world(
    prog: &mut Program,
    comms: &Communicators,
    r: usize,
    calls: &mut CallsByComm,
) -> Result<()> {
    for i in 0..prog.ops[r].len() {
        let op = prog.ops[r][i];
        let (handle, call) = match op.kind {
            OpKind::Coll { call } => (prog.coll_calls[call as usize].comm, call),
            OpKind::CommSplit { parent, .. } => (parent, SPLIT),
            OpKind::CommDup { parent, .. } => (parent, DUP),
            kind => {
                if let Some(m) = kind.message() {
                    prog.ops[r][i].kind = to_world(prog, comms, r, m, op.loc)?.op();
                }
                continue;
            }
        };
        let c = comms.of(prog, r, handle, op.loc)?;
        calls[c as usize][r].push(RankCall {
            rank: r as u32,
            op_index: i,
            loc: op.loc,
            call,
        });
    }
    Ok(())
}

/// A message of rank `r` with its peer a world rank and its communicator a context.
pub(crate) fn to_world(
    prog: &Program,
    comms: &Communicators,
    r: usize,
    mut m: Message,
    loc: SrcLoc,
) -> Result<Message> {
    let c = comms.of(prog, r, m.comm, loc)?;
    if m.peer != ANY {
        let field = if m.send { "dst" } else { "src" };
        m.peer = i64::from(comms.world(prog, c, m.peer as u32, field, loc)?);
    }
    m.comm = 2 * c;
    Ok(m)
}
