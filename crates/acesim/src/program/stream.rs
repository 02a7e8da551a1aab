//! Programs too long to hold: a trace whose ranks are read as the run reaches them, so that
//! a replay holds the requests in flight rather than every call of the trace.
//!
//! Before the run the front end reads the trace once for its *skeleton*: each rank's
//! collective calls and communicator creations (`is_structural`), which are adjusted and
//! linked like any program's operations. During the run each rank's stream reads its
//! operations again, a window at a time; `StreamState::refill` puts the linked skeleton in
//! place of each structural operation and translates messages to world ranks and contexts
//! as linking does.

use crate::error::{Error, Result};
use crate::program::call_seqs::CallSeqs;
use crate::program::link::{to_world, Communicators};
pub use crate::program::ops::Streamed;
use crate::program::ops::{CollCall, Op, OpKind, Program, NONE};
pub use crate::program::ops::{RankStream, StreamSource};

/// The operations a skeleton keeps: those linking resolves across ranks.
pub fn is_structural(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Coll { .. } | OpKind::CommSplit { .. } | OpKind::CommDup { .. }
    )
}

/// A run's streams: each rank's open stream, its linked skeleton still to come, and the
/// request lists of its window.
pub struct StreamState {
    streamed: Streamed,
    comms: Communicators,
    skeleton: Vec<std::vec::IntoIter<Op>>,
    /// For a program linked from its call sequences: per rank, the calls it has made on
    /// each of its communicators.
    made: Vec<Vec<(u32, u32)>>,
    streams: Vec<Option<Box<dyn RankStream>>>,
    pub(crate) lists: Vec<Vec<u32>>,
    /// The first error a stream met (the run stops at the next look).
    pub(crate) error: Option<Error>,
}

impl StreamState {
    /// Takes the skeleton out of `program`, linked into `comms` (its operations become
    /// the ranks' windows, empty until the first refill).
    pub fn start(program: &mut Program, comms: Communicators) -> Option<StreamState> {
        let streamed = program.stream.clone()?;
        let n = program.ranks as usize;
        let skeleton = std::mem::replace(&mut program.ops, vec![Vec::new(); n]);
        Some(StreamState {
            streamed,
            comms,
            skeleton: skeleton.into_iter().map(Vec::into_iter).collect(),
            made: vec![Vec::new(); if program.call_seqs.is_some() { n } else { 0 }],
            streams: (0..n).map(|_| None).collect(),
            lists: vec![Vec::new(); n],
            error: None,
        })
    }

    /// Replaces rank `r`'s window by its next operations; false at its end (or on an
    /// error, kept in `error`).
    pub fn refill(&mut self, program: &Program, r: usize, window: &mut Vec<Op>) -> bool {
        match self.try_refill(program, r, window) {
            Ok(more) => more,
            Err(e) => {
                self.error.get_or_insert(e);
                window.clear();
                false
            }
        }
    }

    fn try_refill(&mut self, program: &Program, r: usize, window: &mut Vec<Op>) -> Result<bool> {
        if self.streams[r].is_none() {
            let base = program.job_ranks.map_or(r as u32, |k| r as u32 % k);
            self.streams[r] = Some(self.streamed.source.open(base)?);
        }
        let Some(stream) = self.streams[r].as_mut() else {
            return Ok(false);
        };
        if !stream.next_ops(window, &mut self.lists[r])? {
            self.streams[r] = None; // its file and buffers go at once
            return Ok(false);
        }
        let comms = &self.comms;
        for op in window.iter_mut() {
            if is_structural(&op.kind) {
                *op = match &program.call_seqs {
                    Some(seqs) => linked_call(program, seqs, comms, r, &mut self.made[r], *op)?,
                    None => self.skeleton[r].next().ok_or_else(|| {
                        Error::Internal(format!(
                            "rank {r} streams more collective calls than its skeleton holds"
                        ))
                    })?,
                };
            } else if let Some(mut m) = op.kind.message() {
                if let Some(cap) = self.streamed.cap {
                    m.size = m.size.min(cap);
                }
                op.kind = to_world(program, comms, r, m, op.loc)?.op();
            }
        }
        Ok(true)
    }
}

/// Rank `r`'s collective call or creation `op` as linked from the call sequences (its
/// call number on its communicator counted in `made`).
fn linked_call(
    program: &Program,
    seqs: &CallSeqs<CollCall>,
    comms: &Communicators,
    r: usize,
    made: &mut Vec<(u32, u32)>,
    mut op: Op,
) -> Result<Op> {
    let (handle, creation) = match op.kind {
        OpKind::Coll { call } => (call, false),
        OpKind::CommSplit { parent, .. } | OpKind::CommDup { parent, .. } => (parent, true),
        _ => return Ok(op),
    };
    if !creation && seqs.skip {
        op.kind = OpKind::Compute { ps: 0 };
        return Ok(op);
    }
    let c = comms.of(program, r, handle, op.loc)?;
    let seq = match made.iter_mut().find(|(comm, _)| *comm == c) {
        Some((_, n)) => {
            *n += 1;
            *n - 1
        }
        None => {
            made.push((c, 1));
            0
        }
    };
    let id = seqs.first[c as usize] + seq;
    let end = seqs
        .first
        .get(c as usize + 1)
        .copied()
        .unwrap_or(seqs.linked.len() as u32);
    let changed = || {
        program.error_at(
            op.loc,
            "collective",
            format!("rank {r} makes other collective calls than when the trace was first read (did its file change?)"),
        )
    };
    if id >= end {
        return Err(changed());
    }
    let (call, node) = seqs.linked[id as usize];
    if creation != (call == NONE) {
        return Err(changed());
    }
    let base = program.job_ranks.map_or(r as u32, |k| r as u32 % k);
    op.kind = OpKind::Collective {
        id,
        call: seqs.own(base, node).unwrap_or(call),
        me: comms.rank_in(c, r as u32),
    };
    Ok(op)
}
