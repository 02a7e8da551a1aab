//! Where a front end's operations go (`Sink`): the whole program, read at once
//! (`Program`); only its skeleton, the operations linking resolves across ranks
//! (`Skeleton`); or the window of one rank read as the run goes (`Window`,
//! `program::stream`). A front end writes to a `Sink`, so that both readings of a streamed
//! trace are the same code.

use crate::program::call_seqs::{CallSeqs, DUP, SPLIT};
use crate::program::collectives::CollKind;
use crate::program::ops::{intern, CollCall, Op, OpKind, Program};

pub trait Sink {
    fn push(&mut self, rank: u32, op: Op);
    /// Stores a request list, returning where it starts.
    fn req_list(&mut self, reqs: &[u32]) -> u32;
    fn new_handle(&mut self, rank: u32) -> u32;
    /// Stores a collective call, returning its index.
    fn coll_call(&mut self, call: CollCall) -> u32;
    fn new_comm_handle(&mut self, rank: u32) -> u32;
    /// The id of source file `name` in the operations' locations.
    fn file_id(&mut self, name: &str) -> u32;
}

impl Sink for Program {
    fn push(&mut self, rank: u32, op: Op) {
        self.ops[rank as usize].push(op);
    }
    fn req_list(&mut self, reqs: &[u32]) -> u32 {
        Program::req_list(self, reqs)
    }
    fn new_handle(&mut self, rank: u32) -> u32 {
        Program::new_handle(self, rank)
    }
    fn coll_call(&mut self, call: CollCall) -> u32 {
        self.coll_calls.push(call);
        self.coll_calls.len() as u32 - 1
    }
    fn new_comm_handle(&mut self, rank: u32) -> u32 {
        let h = self.comm_handles[rank as usize];
        self.comm_handles[rank as usize] += 1;
        h
    }
    fn file_id(&mut self, name: &str) -> u32 {
        intern(&mut self.files, name)
    }
}

impl<T: Sink + ?Sized> Sink for &mut T {
    fn push(&mut self, rank: u32, op: Op) {
        (**self).push(rank, op)
    }
    fn req_list(&mut self, reqs: &[u32]) -> u32 {
        (**self).req_list(reqs)
    }
    fn new_handle(&mut self, rank: u32) -> u32 {
        (**self).new_handle(rank)
    }
    fn coll_call(&mut self, call: CollCall) -> u32 {
        (**self).coll_call(call)
    }
    fn new_comm_handle(&mut self, rank: u32) -> u32 {
        (**self).new_comm_handle(rank)
    }
    fn file_id(&mut self, name: &str) -> u32 {
        (**self).file_id(name)
    }
}

/// Keeps what linking needs (collective calls, once per distinct call, and communicator
/// creations: `program::call_seqs`) and counts the handles; drops the rest, which the run
/// reads again.
pub struct Skeleton<'a>(pub &'a mut Program);

impl Skeleton<'_> {
    fn seqs(&mut self) -> &mut CallSeqs<CollCall> {
        let ranks = self.0.ranks;
        self.0.call_seqs.get_or_insert_with(|| CallSeqs::new(ranks))
    }
}

impl Sink for Skeleton<'_> {
    fn push(&mut self, rank: u32, op: Op) {
        let (handle, call) = match op.kind {
            OpKind::Coll { call } => (self.0.coll_calls[call as usize].comm, call),
            OpKind::CommSplit { parent, .. } => (parent, SPLIT),
            OpKind::CommDup { parent, .. } => (parent, DUP),
            _ => return,
        };
        self.seqs().append(rank, handle, call);
        if call == SPLIT || call == DUP {
            self.0.ops[rank as usize].push(op);
        }
    }
    fn req_list(&mut self, _reqs: &[u32]) -> u32 {
        0
    }
    fn new_handle(&mut self, rank: u32) -> u32 {
        self.0.new_handle(rank)
    }
    fn coll_call(&mut self, call: CollCall) -> u32 {
        // Calls match whatever their ranks' own sizes (`link::collective_calls`): a call
        // with sizes of its own is kept beside the shared one it matches as.
        let rank_sized = CollKind::parse(&call.kind).is_some_and(CollKind::has_rank_sizes);
        let mut shared = call.clone();
        shared.sizes.clear();
        if rank_sized {
            shared.size = 0;
        }
        let own = (rank_sized || !call.sizes.is_empty()).then_some(call);
        let ranks = self.0.ranks;
        let seqs = self.0.call_seqs.get_or_insert_with(|| CallSeqs::new(ranks));
        seqs.call(&mut self.0.coll_calls, shared, own)
    }
    fn new_comm_handle(&mut self, rank: u32) -> u32 {
        self.0.new_comm_handle(rank)
    }
    fn file_id(&mut self, name: &str) -> u32 {
        self.0.file_id(name)
    }
}

/// One rank's window: its operations and the request lists they index. Handles and
/// communicator handles are numbered as the skeleton's reading numbered them (the same
/// calls in the same order); collective calls are replaced by the linked skeleton.
pub struct Window {
    pub ops: Vec<Op>,
    pub lists: Vec<u32>,
    handles: u32,
    comm_handles: u32,
    file_id: u32,
}

impl Window {
    /// The window of a rank whose source file has id `file_id`.
    pub fn new(file_id: u32) -> Window {
        Window {
            ops: Vec::new(),
            lists: Vec::new(),
            handles: 0,
            comm_handles: 1, // 0 is the world, as in `Program::new`
            file_id,
        }
    }

    /// Gives the window's operations and lists to the run (swapped with `ops` and
    /// `lists`, whose old contents are dropped).
    pub fn hand_over(&mut self, ops: &mut Vec<Op>, lists: &mut Vec<u32>) {
        std::mem::swap(&mut self.ops, ops);
        std::mem::swap(&mut self.lists, lists);
        self.ops.clear();
        self.lists.clear();
    }
}

impl Sink for Window {
    fn push(&mut self, _rank: u32, op: Op) {
        self.ops.push(op);
    }
    fn req_list(&mut self, reqs: &[u32]) -> u32 {
        self.lists.extend_from_slice(reqs);
        (self.lists.len() - reqs.len()) as u32
    }
    fn new_handle(&mut self, _rank: u32) -> u32 {
        self.handles += 1;
        self.handles - 1
    }
    fn coll_call(&mut self, call: CollCall) -> u32 {
        call.comm // the run puts the linked call in its place, found by its communicator
    }
    fn new_comm_handle(&mut self, _rank: u32) -> u32 {
        self.comm_handles += 1;
        self.comm_handles - 1
    }
    fn file_id(&mut self, _name: &str) -> u32 {
        self.file_id
    }
}
