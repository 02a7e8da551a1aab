//! A rank inside a collective call: the steps of the call's algorithm, generated a round at
//! a time as the rank reaches them, and run as operations (non-blocking messages on the
//! communicator's collective context, or puts and polls, and the waits that end each
//! phase). A rank then holds the operations of its current round, not of every call of its
//! program: a 2,704-rank all-to-all is 14.6 million operations materialised, 20,000
//! allreduces in a loop 20,000 calls' worth.

use super::state::*;
use crate::program::collectives::{Step, StepGen};
use crate::program::{Message, Op, OpKind, Program, SrcLoc, NONE};
use crate::units::Ps;

/// Tags of collective puts live far below any user tag (and never equal `ANY`).
fn coll_put_tag(comm: u32, seq: u32, tag: u32) -> i64 {
    -(1i64 << 62) + ((comm as i64) << 44) + ((seq as i64) << 16) + tag as i64
}

impl InCollective {
    /// The operation the rank is at, if the round has one left.
    pub(super) fn current(&self) -> Option<Op> {
        self.ops.get(self.at).copied()
    }
}

/// The generator of the steps of rank `me` (of its communicator) in collective `id`.
fn step_gen(program: &Program, id: u32, me: u32) -> StepGen {
    let coll = &program.collectives[id as usize];
    let (spec, algorithm) = &program.coll_specs[id as usize];
    let members = program.comms[coll.comm as usize].members.len() as u32;
    StepGen::new(spec, algorithm, members, me)
}

/// `step_gen` after it generated `rounds` rounds of the rank's call `call`.
pub(super) fn step_gen_at(program: &Program, id: u32, call: u32, me: u32, rounds: u64) -> StepGen {
    let mut gen = step_gen(program, id, me);
    let mut scratch = Vec::new();
    for _ in 0..rounds {
        scratch.clear();
        gen.next_round(rank_sizes(program, id, call), &mut scratch);
    }
    gen
}

/// The sizes per rank of a rank's call `call` of collective `id`, if its kind has them.
fn rank_sizes(program: &Program, id: u32, call: u32) -> &[u64] {
    match program.coll_calls.get(call as usize) {
        Some(c) if program.coll_specs[id as usize].0.kind.has_rank_sizes() => &c.sizes,
        _ => &[],
    }
}

/// What a rank's steps in one collective call number.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct StepCounts {
    /// Transfers (sends and puts) and receives, in the call and in its largest round.
    pub(super) call: (u64, u64),
    pub(super) round: (u64, u64),
    /// Every step (waits and reductions too).
    pub(super) steps: u64,
}

/// The steps of linked collective `op` (`OpKind::Collective`), counted round by round.
pub(super) fn count_steps(program: &Program, (id, call, me): (u32, u32, u32)) -> StepCounts {
    let mut n = StepCounts::default();
    each_round(program, id, call, step_gen(program, id, me), |steps| {
        n.steps += steps.len() as u64;
        let mut round = (0, 0);
        for step in steps {
            match step {
                Step::Send { .. } | Step::Put { .. } => round.0 += 1,
                Step::Recv { .. } => round.1 += 1,
                _ => {}
            }
        }
        n.call = (n.call.0 + round.0, n.call.1 + round.1);
        n.round = (n.round.0.max(round.0), n.round.1.max(round.1));
        true
    });
    n
}

/// Calls `f` with the steps of each round `gen` has yet to give, until it returns false.
fn each_round(
    program: &Program,
    id: u32,
    call: u32,
    mut gen: StepGen,
    mut f: impl FnMut(&[Step]) -> bool,
) {
    let sizes = rank_sizes(program, id, call);
    let mut steps = Vec::new();
    while gen.next_round(sizes, &mut steps) {
        if !f(&steps) {
            return;
        }
        steps.clear();
    }
}

/// Whether the steps of a rank's linked collective `op` (`OpKind::Collective`) put `tag` to
/// world rank `dst` (a deadlock report looks for the put a poll waits for). Each step
/// looked at costs one of `budget`.
pub(super) fn collective_puts(
    program: &Program,
    (id, call, me): (u32, u32, u32),
    put: (u32, i64),
    budget: &mut u64,
) -> bool {
    rounds_put(program, id, call, step_gen(program, id, me), put, budget)
}

/// Whether the rounds `gen` has yet to give put `tag` to world rank `dst`.
fn rounds_put(
    program: &Program,
    id: u32,
    call: u32,
    gen: StepGen,
    (dst, tag): (u32, i64),
    budget: &mut u64,
) -> bool {
    let coll = &program.collectives[id as usize];
    let members = &program.comms[coll.comm as usize].members;
    let mut found = false;
    each_round(program, id, call, gen, |steps| {
        *budget = budget.saturating_sub(steps.len() as u64);
        found = steps.iter().any(|step| {
            matches!(*step, Step::Put { to, tag: t, .. }
                if members[to as usize] == dst && coll_put_tag(coll.comm, coll.seq, t) == tag)
        });
        !found && *budget > 0
    });
    found
}

impl Runtime {
    /// Whether the rounds of collective `c` not generated yet put `tag` to world rank
    /// `dst` (see `collective_puts`).
    pub(super) fn later_rounds_put(
        &self,
        c: &InCollective,
        put: (u32, i64),
        budget: &mut u64,
    ) -> bool {
        rounds_put(&self.program, c.id, c.call, c.gen.clone(), put, budget)
    }

    /// Rank `r` enters collective `id` (its call `call`, as rank `me` of the communicator,
    /// at `loc`) at `now`.
    pub(super) fn enter_collective(&mut self, r: usize, op: (u32, u32, u32), loc: SrcLoc, now: Ps) {
        let (id, call, me) = op;
        let gen = step_gen(&self.program, id, me);
        self.ranks[r].in_coll = Some(Box::new(InCollective {
            id,
            call,
            begin: now,
            gen,
            loc,
            steps: Vec::new(),
            ops: Vec::new(),
            at: 0,
            lists: Vec::new(),
            messages: Vec::new(),
            puts: Vec::new(),
            spare: Vec::new(),
        }));
    }

    /// Generates the operations of the next round of rank `r`'s collective; false when the
    /// call has no more (every request it issued has been waited for).
    pub(super) fn next_round(&mut self, r: usize) -> bool {
        let st = &mut self.ranks[r];
        let Some(c) = st.in_coll.as_deref_mut() else {
            return false;
        };
        let coll = &self.program.collectives[c.id as usize];
        let sizes = rank_sizes(&self.program, c.id, c.call);
        c.steps.clear();
        c.ops.clear();
        c.lists.clear();
        c.at = 0;
        let more = c.gen.next_round(sizes, &mut c.steps);
        let mut e = Emit {
            c,
            handles: &mut st.handles,
            members: &self.program.comms[coll.comm as usize].members,
            ctx: 2 * coll.comm + 1,
            comm: coll.comm,
            seq: coll.seq,
            reduce_ps: self.p.reduce_ps,
        };
        if more {
            for i in 0..e.c.steps.len() {
                let step = e.c.steps[i];
                e.step(step);
            }
        } else {
            // Whatever the algorithm left outstanding is finished before the call returns.
            e.wait_all(false);
            e.wait_all(true);
        }
        !e.c.ops.is_empty() || more
    }

    /// Rank `r` leaves its collective at `now`: the call's record, and the handles of its
    /// steps (all consumed by its waits) given back.
    pub(super) fn leave_collective(&mut self, now: Ps, r: usize) {
        let st = &mut self.ranks[r];
        st.handles.truncate(self.program.handles[r] as usize);
        st.pc += 1;
        if let Some(InCollective { id, begin, .. }) = st.in_coll.take().map(|c| *c) {
            self.record(r as u32, TraceKind::Collective(id), begin, now);
            let c = &mut self.colls[id as usize];
            c.first_begin = c.first_begin.min(begin);
            c.last_end = c.last_end.max(now);
            c.sum_ps += now - begin;
            c.ranks += 1;
        }
    }
}

/// The operations of one round as they are emitted.
struct Emit<'e> {
    c: &'e mut InCollective,
    /// The rank's request table: step handles are taken past the program's own.
    handles: &'e mut Vec<u32>,
    /// The communicator's members (world ranks) and its collective context.
    members: &'e [u32],
    ctx: u32,
    comm: u32,
    seq: u32,
    reduce_ps: u64,
}

impl Emit<'_> {
    fn step(&mut self, step: Step) {
        let tag = |t: u32| ((self.seq as i64) << 16) | t as i64;
        match step {
            Step::Send { to, bytes, tag: t } => {
                self.message(true, self.members[to as usize], bytes, tag(t))
            }
            Step::Recv {
                from,
                bytes,
                tag: t,
            } => self.message(false, self.members[from as usize], bytes, tag(t)),
            Step::WaitAll => self.wait_all(false),
            Step::Put { to, bytes, tag: t } => {
                let handle = self.handle();
                self.c.puts.push(handle);
                self.push(OpKind::Put {
                    dst: self.members[to as usize],
                    size: bytes,
                    tag: coll_put_tag(self.comm, self.seq, t),
                    handle,
                    nic: NONE,
                });
            }
            Step::Poll { tag: t } => self.push(OpKind::Poll {
                tag: coll_put_tag(self.comm, self.seq, t),
            }),
            Step::CompleteAll => self.wait_all(true),
            Step::Reduce { bytes } => {
                let ps = bytes.saturating_mul(self.reduce_ps);
                if ps > 0 {
                    self.push(OpKind::Compute { ps });
                }
            }
        }
    }

    fn push(&mut self, kind: OpKind) {
        let loc = self.c.loc;
        self.c.ops.push(Op { kind, loc });
    }

    /// A handle for a step's request: a spare one, else a new one.
    fn handle(&mut self) -> u32 {
        self.c.spare.pop().unwrap_or_else(|| {
            self.handles.push(NONE);
            self.handles.len() as u32 - 1
        })
    }

    /// A non-blocking send to (or receive from) world rank `peer`.
    fn message(&mut self, send: bool, peer: u32, size: u64, tag: i64) {
        let req = self.handle();
        self.c.messages.push(req);
        let m = Message {
            send,
            peer: i64::from(peer),
            size,
            tag,
            comm: self.ctx,
            req: Some(req),
        };
        self.push(m.op());
    }

    /// A wait for the outstanding puts (or messages), if there are any.
    fn wait_all(&mut self, puts: bool) {
        let c = &mut *self.c;
        let reqs = if puts { &mut c.puts } else { &mut c.messages };
        if reqs.is_empty() {
            return;
        }
        let list = c.lists.len() as u32;
        let count = reqs.len() as u32;
        c.lists.extend_from_slice(reqs);
        // Waited for, they are free for the next steps (taken again in the same order).
        c.spare.extend(reqs.drain(..).rev());
        let loc = c.loc;
        c.ops.push(Op {
            kind: OpKind::WaitAll { list, count },
            loc,
        });
    }
}
