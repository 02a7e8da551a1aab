//! Point-to-point operations from communicator ranks to world ranks and message contexts,
//! and each rank's collective calls listed by communicator for matching.

use crate::error::Result;
use crate::program::link::communicators::Communicators;
use crate::program::ops::{CollCall, Message, OpKind, Program, SrcLoc, ANY};

/// One rank's collective call and where it stands.
#[derive(Clone)]
pub struct RankCall {
    pub rank: u32,
    pub op_index: usize,
    pub loc: SrcLoc,
    pub call: CollCall,
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
            OpKind::Coll { call } => {
                let call = prog.coll_calls[call as usize].clone();
                (call.comm, call)
            }
            OpKind::CommSplit { parent, .. } | OpKind::CommDup { parent, .. } => {
                (parent, creation_call(op.kind, parent))
            }
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

/// Creations cost what MPI libraries pay: an allgather (split) or an allreduce (dup) of 8
/// bytes on the parent.
fn creation_call(kind: OpKind, parent: u32) -> CollCall {
    let split = matches!(kind, OpKind::CommSplit { .. });
    CollCall {
        kind: if split { "allgather" } else { "allreduce" }.into(),
        algorithm: String::new(),
        transport: String::new(),
        size: 8,
        root: 0,
        segment: 0,
        comm: parent,
        sizes: Vec::new(),
    }
}
