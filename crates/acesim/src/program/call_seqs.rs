//! The collective calls of a trace read as the run goes, kept without a copy per rank.
//!
//! Linking needs every rank's sequence of collective calls on each communicator (every
//! member must make the same calls), but a trace's ranks make the same calls: a thousand
//! ranks making a million allreduces are a million calls, not a billion. So each distinct
//! call is stored once (`Program::coll_calls`), and each (rank, communicator handle)
//! sequence is a node of a trie whose paths are call sequences: ranks that make the same
//! calls share one path, and two sequences are equal exactly when their nodes are. The
//! run puts each collective's linked operation in place as it reads the call again
//! (`program::stream`). The sizes of the v-variants (`alltoallv`...) are each rank's own:
//! those calls are kept per rank, beside the shared one they match as.

use crate::ids::NONE;
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::hash::Hash;

/// A communicator creation in a sequence (the collective it costs on its parent), where
/// a call index would be.
pub const SPLIT: u32 = u32::MAX;
pub const DUP: u32 = u32::MAX - 1;

#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u32,
    call: u32,
}

/// The sequences of calls of type `C` (`CollCall`; generic so that this file needs no
/// more of the program than its calls' equality).
#[derive(Debug, Clone)]
pub struct CallSeqs<C> {
    /// Node 0 is the empty sequence.
    nodes: Vec<Node>,
    children: FxHashMap<(u32, u32), u32>,
    /// Per rank, per communicator handle: the node of its calls so far.
    pub at: Vec<Vec<u32>>,
    /// (rank, node) to the rank's own call where it differs from the shared one (the
    /// sizes of a v-variant).
    own: FxHashMap<(u32, u32), u32>,
    /// Each distinct call's index, while reading.
    distinct: HashMap<C, u32>,
    /// A rank's own call waiting for its `append`, with the shared one it matches as.
    pending_own: FxHashMap<u32, u32>,
    /// Collective calls are skipped (`adjust::skip_collectives`): only creations count.
    pub skip: bool,
    /// After linking: the first collective of each communicator, and per collective its
    /// shared call (`NONE` for a creation) and its node.
    pub first: Vec<u32>,
    pub linked: Vec<(u32, u32)>,
}

impl<C: Clone + Eq + Hash> CallSeqs<C> {
    pub fn new(ranks: u32) -> Self {
        CallSeqs {
            nodes: vec![Node {
                parent: NONE,
                call: NONE,
            }],
            children: FxHashMap::default(),
            at: vec![vec![0]; ranks as usize],
            own: FxHashMap::default(),
            distinct: HashMap::new(),
            pending_own: FxHashMap::default(),
            skip: false,
            first: Vec::new(),
            linked: Vec::new(),
        }
    }

    /// Stores a call made as `shared` (what it matches other ranks' calls as), returning
    /// the index its operation refers to in `calls`: the shared call's, or when the rank's
    /// call `own` differs from it (its own sizes) a new one.
    pub fn call(&mut self, calls: &mut Vec<C>, shared: C, own: Option<C>) -> u32 {
        let id = *self.distinct.entry(shared).or_insert_with_key(|k| {
            calls.push(k.clone());
            calls.len() as u32 - 1
        });
        let Some(call) = own else {
            return id;
        };
        calls.push(call);
        let own = calls.len() as u32 - 1;
        self.pending_own.insert(own, id);
        own
    }

    /// Rank `rank`'s next call on its communicator handle `handle`: a call index from
    /// `call`, or `SPLIT`/`DUP`.
    pub fn append(&mut self, rank: u32, handle: u32, call: u32) {
        let shared = self.pending_own.remove(&call);
        let at = &mut self.at[rank as usize];
        if at.len() <= handle as usize {
            at.resize(handle as usize + 1, 0);
        }
        let from = at[handle as usize];
        let next = self.nodes.len() as u32;
        let node = *self
            .children
            .entry((from, shared.unwrap_or(call)))
            .or_insert(next);
        if node == next {
            self.nodes.push(Node {
                parent: from,
                call: shared.unwrap_or(call),
            });
        }
        self.at[rank as usize][handle as usize] = node;
        if shared.is_some() {
            self.own.insert((rank, node), call);
        }
    }

    /// The node of rank `rank`'s calls on handle `handle`.
    pub fn node(&self, rank: u32, handle: u32) -> u32 {
        self.at[rank as usize]
            .get(handle as usize)
            .copied()
            .unwrap_or(0)
    }

    /// The calls (and nodes) from the empty sequence to `node`, without the collective
    /// calls when `skip`.
    pub fn path(&self, mut node: u32, skip: bool) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        while node != 0 {
            let n = self.nodes[node as usize];
            if !skip || n.call == SPLIT || n.call == DUP {
                out.push((n.call, node));
            }
            node = n.parent;
        }
        out.reverse();
        out
    }

    /// Rank `rank`'s own call at `node`, if it has one.
    pub fn own(&self, rank: u32, node: u32) -> Option<u32> {
        self.own.get(&(rank, node)).copied()
    }

    /// What reading needed and linking does not.
    pub fn done_reading(&mut self) {
        self.distinct = HashMap::new();
        self.pending_own = FxHashMap::default();
        self.children = FxHashMap::default();
    }

    /// The sequences of `jobs` copies of a program of `ranks` ranks (own calls are looked
    /// up by the rank of one job).
    pub fn repeat(&mut self, jobs: u32) {
        let one = self.at.clone();
        self.at = (0..jobs).flat_map(|_| one.iter().cloned()).collect();
    }
}
