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
use crate::program::link::{to_world, Communicators};
use crate::program::ops::{Op, OpKind, Program};
use std::sync::Arc;

/// One rank's operations, read as the run goes.
pub trait RankStream: Send {
    /// Replaces `ops` and `lists` by the rank's next operations and the request lists they
    /// index; false once the rank has none left.
    fn next_ops(&mut self, ops: &mut Vec<Op>, lists: &mut Vec<u32>) -> Result<bool>;
}

/// Opens the streams of a program's ranks when a run starts (a program is run more than
/// once by `compare-models`).
pub trait StreamSource: Send + Sync {
    /// The stream of rank `rank` of the program as read (of one job, when repeated).
    fn open(&self, rank: u32) -> Result<Box<dyn RankStream>>;
}

/// The operations a skeleton keeps: those linking resolves across ranks.
pub fn is_structural(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Coll { .. } | OpKind::CommSplit { .. } | OpKind::CommDup { .. }
    )
}

/// What a streamed program carries besides its skeleton (`Program::ops` until the run).
#[derive(Clone)]
pub struct Streamed {
    pub(crate) source: Arc<dyn StreamSource>,
    /// Messages capped at this size (`adjust::cap_messages`).
    pub(crate) cap: Option<u64>,
    /// The communicators, once linked.
    pub(crate) comms: Option<Arc<Communicators>>,
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamed").field("cap", &self.cap).finish()
    }
}

impl Streamed {
    pub fn new(source: Arc<dyn StreamSource>) -> Streamed {
        Streamed {
            source,
            cap: None,
            comms: None,
        }
    }
}

/// A run's streams: each rank's open stream, its linked skeleton still to come, and the
/// request lists of its window.
pub struct StreamState {
    streamed: Streamed,
    skeleton: Vec<std::vec::IntoIter<Op>>,
    streams: Vec<Option<Box<dyn RankStream>>>,
    pub(crate) lists: Vec<Vec<u32>>,
    /// The first error a stream met (the run stops at the next look).
    pub(crate) error: Option<Error>,
}

impl StreamState {
    /// Takes the skeleton out of a linked `program` (its operations become the ranks'
    /// windows, empty until the first refill).
    pub fn start(program: &mut Program) -> Option<StreamState> {
        let streamed = program.stream.clone()?;
        let n = program.ranks as usize;
        let skeleton = std::mem::replace(&mut program.ops, vec![Vec::new(); n]);
        Some(StreamState {
            streamed,
            skeleton: skeleton.into_iter().map(Vec::into_iter).collect(),
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
        let comms =
            self.streamed.comms.as_deref().ok_or_else(|| {
                Error::Internal("a streamed program runs before it is linked".into())
            })?;
        for op in window.iter_mut() {
            if is_structural(&op.kind) {
                *op = self.skeleton[r].next().ok_or_else(|| {
                    Error::Internal(format!(
                        "rank {r} streams more collective calls than its skeleton holds"
                    ))
                })?;
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
