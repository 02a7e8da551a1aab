//! Each rank's collective calls expanded into the steps of their algorithms: messages on
//! the communicator's collective context, or puts and polls.

use crate::program::collectives::{self, CollSpec, Step};
use crate::program::link::collective_calls::Matched;
use crate::program::link::communicators::Communicators;
use crate::program::ops::{Message, Op, OpKind, Program, SrcLoc, NONE};
use rustc_hash::FxHashMap as HashMap;

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
        let creates = |o: &Op| {
            matches!(
                o.kind,
                OpKind::Coll { .. } | OpKind::CommSplit { .. } | OpKind::CommDup { .. }
            )
        };
        // A rank without collectives keeps its operations where they are.
        if matched.expand_at[r].is_empty() && !prog.ops[r].iter().any(creates) {
            continue;
        }
        let old = std::mem::take(&mut prog.ops[r]);
        let mut ops = Vec::with_capacity(old.len());
        let mut requests = StepRequests::default();
        for (i, op) in old.into_iter().enumerate() {
            match matched.expand_at[r].get(&i) {
                Some(&id) => expander.call(prog, r, id, op, &mut ops, &mut requests),
                None => ops.push(op),
            }
        }
        // Creations that were not expanded (never: each is a collective) are dropped.
        ops.retain(|o| !creates(o));
        prog.ops[r] = ops;
    }
}

struct Expander<'a> {
    comms: &'a Communicators,
    matched: &'a Matched,
    reduce_ps: u64,
}

impl Expander<'_> {
    /// The size of collective `id`'s communicator.
    fn members_of(&self, id: u32) -> u32 {
        let coll = &self.matched.collectives[id as usize];
        self.comms.members(coll.comm).len() as u32
    }

    /// Rank `r`'s index in collective `id`'s communicator.
    fn me(&self, id: u32, r: usize) -> u32 {
        let coll = &self.matched.collectives[id as usize];
        self.comms.rank_in(coll.comm, r as u32)
    }

    /// The steps of collective `id` for rank `r` (its call `op`), between its begin and end
    /// marks. The v-variants expand with the rank's own sizes.
    fn call(
        &self,
        prog: &mut Program,
        r: usize,
        id: u32,
        op: Op,
        ops: &mut Vec<Op>,
        requests: &mut StepRequests,
    ) {
        let loc = op.loc;
        let (spec, algorithm) = &self.matched.specs[id as usize];
        let own = match op.kind {
            OpKind::Coll { call } if spec.kind.has_rank_sizes() => {
                let c = &prog.coll_calls[call as usize];
                Some((
                    CollSpec {
                        size: c.size,
                        ..spec.clone()
                    },
                    c.sizes.clone(),
                ))
            }
            _ => None,
        };
        let steps = match &own {
            Some((spec, sizes)) => collectives::expand_with(
                spec,
                sizes,
                algorithm,
                self.members_of(id),
                self.me(id, r),
            ),
            None => collectives::expand(spec, algorithm, self.members_of(id), self.me(id, r)),
        };
        let coll = &self.matched.collectives[id as usize];
        let members = self.comms.members(coll.comm);
        let ctx = 2 * coll.comm + 1;
        let tag = |t: u32| ((coll.seq as i64) << 16) | t as i64;
        let put_tag = |t: u32| coll_put_tag(coll.comm, coll.seq, t);
        let mut e = Emit {
            prog,
            ops,
            rank: r as u32,
            loc,
            messages: Vec::new(),
            puts: Vec::new(),
            steps: requests,
        };
        e.push(OpKind::CollBegin { call: id });
        for step in steps {
            match step {
                Step::Send { to, bytes, tag: t } => {
                    e.message(true, members[to as usize], bytes, tag(t), ctx)
                }
                Step::Recv {
                    from,
                    bytes,
                    tag: t,
                } => e.message(false, members[from as usize], bytes, tag(t), ctx),
                Step::WaitAll => e.wait_messages(),
                Step::Put { to, bytes, tag: t } => e.put(members[to as usize], bytes, put_tag(t)),
                Step::Poll { tag: t } => e.push(OpKind::Poll { tag: put_tag(t) }),
                Step::CompleteAll => e.wait_puts(),
                Step::Reduce { bytes } => {
                    let ps = bytes.saturating_mul(self.reduce_ps);
                    if ps > 0 {
                        e.push(OpKind::Compute { ps });
                    }
                }
            }
        }
        // Whatever the algorithm left outstanding is finished before the call returns.
        e.wait_messages();
        e.wait_puts();
        e.push(OpKind::CollEnd { call: id });
    }
}

/// A rank's requests for collective steps, reused from one step to the next: a step's
/// requests are consumed when the wait that follows it passes (the runtime clears their
/// handles), so the next step can take the same handles, and its wait the same list. A
/// rank's handles and lists then number what its steps have in flight at once, not every
/// message of every collective (7.3 million in a 2,704-rank all-to-all), and the few the
/// runtime touches stay in the cache.
#[derive(Default)]
struct StepRequests {
    /// Handles free for the next step, the next to take last.
    spare: Vec<u32>,
    /// Request lists already stored, by their handles.
    lists: HashMap<Vec<u32>, u32>,
}

/// The operations of one rank's call as they are emitted, with the requests of its
/// messages and puts not yet waited for.
struct Emit<'e> {
    prog: &'e mut Program,
    ops: &'e mut Vec<Op>,
    rank: u32,
    loc: SrcLoc,
    messages: Vec<u32>,
    puts: Vec<u32>,
    steps: &'e mut StepRequests,
}

impl Emit<'_> {
    fn push(&mut self, kind: OpKind) {
        self.ops.push(Op {
            kind,
            loc: self.loc,
        });
    }

    /// A handle for a step's request: a spare one, else a new one.
    fn handle(&mut self) -> u32 {
        match self.steps.spare.pop() {
            Some(h) => h,
            None => self.prog.new_handle(self.rank),
        }
    }

    /// A non-blocking send to (or receive from) world rank `peer` in context `comm`.
    fn message(&mut self, send: bool, peer: u32, size: u64, tag: i64, comm: u32) {
        let req = self.handle();
        self.messages.push(req);
        let m = Message {
            send,
            peer: i64::from(peer),
            size,
            tag,
            comm,
            req: Some(req),
        };
        self.push(m.op());
    }

    fn put(&mut self, dst: u32, size: u64, tag: i64) {
        let handle = self.handle();
        self.puts.push(handle);
        self.push(OpKind::Put {
            dst,
            size,
            tag,
            handle,
            nic: NONE,
        });
    }

    fn wait_messages(&mut self) {
        self.wait_all(false);
    }

    fn wait_puts(&mut self) {
        self.wait_all(true);
    }

    /// A wait for the outstanding puts (or messages), if there are any.
    fn wait_all(&mut self, puts: bool) {
        let reqs = if puts {
            &mut self.puts
        } else {
            &mut self.messages
        };
        if reqs.is_empty() {
            return;
        }
        let list = match self.steps.lists.get(reqs.as_slice()) {
            Some(&list) => list,
            None => {
                let list = self.prog.req_list(reqs);
                self.steps.lists.insert(reqs.clone(), list);
                list
            }
        };
        let count = reqs.len() as u32;
        // Waited for, they are free for the next step (taken again in the same order).
        self.steps.spare.extend(reqs.drain(..).rev());
        self.ops.push(Op {
            kind: OpKind::WaitAll { list, count },
            loc: self.loc,
        });
    }
}
