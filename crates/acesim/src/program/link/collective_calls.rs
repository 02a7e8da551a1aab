//! Collective calls matched across the ranks of each communicator: every member makes the
//! same calls in the same order; each call's algorithm is resolved once for all of them.

use crate::error::{Error, Result};
use crate::program::call_seqs::{DUP, SPLIT};
use crate::program::collective_defaults::CollectivesConfig;
use crate::program::collectives::{self, CollKind, CollSpec, Transport};
use crate::program::link::communicators::Communicators;
use crate::program::link::world_ranks::{CallsByComm, RankCall};
use crate::program::ops::{CollCall, Collective, Communicator, Program, SrcLoc, NONE};

/// The calls once matched: one `Collective` each, and the spec and algorithm it expands
/// with. The calls on communicator `c` are numbered from `first[c]` in their order.
pub struct Matched {
    pub collectives: Vec<Collective>,
    pub specs: Vec<(CollSpec, &'static str)>,
    pub first: Vec<u32>,
}

pub fn match_calls(
    prog: &Program,
    comms: &Communicators,
    calls: &CallsByComm,
    config: &CollectivesConfig,
) -> Result<Matched> {
    let mut matched = Matched {
        collectives: Vec::new(),
        specs: Vec::new(),
        first: Vec::with_capacity(calls.len()),
    };
    for (c, per_rank) in calls.iter().enumerate() {
        matched.first.push(matched.collectives.len() as u32);
        let comm = &comms.list[c];
        let Some(&first) = comm.members.first() else {
            continue;
        };
        check_agreement(prog, comm, per_rank)?;
        for (seq, at) in per_rank[first as usize].iter().enumerate() {
            matched.push(prog, config, at, (c as u32, seq as u32), comm)?;
        }
    }
    Ok(matched)
}

impl Matched {
    /// Adds call `seq` of communicator `c` as `at` makes it.
    fn push(
        &mut self,
        prog: &Program,
        config: &CollectivesConfig,
        at: &RankCall,
        (c, seq): (u32, u32),
        comm: &Communicator,
    ) -> Result<()> {
        let (spec, resolved) = resolve(prog, config, at, comm.members.len() as u32)?;
        let call = at.call(prog);
        self.collectives.push(Collective {
            kind: call.kind.clone(),
            algorithm: if spec.transport == Transport::Rdma {
                format!("{resolved} (rdma)")
            } else {
                resolved.to_string()
            },
            comm: c,
            size: call.size,
            root: call.root,
            seq,
        });
        self.specs.push((spec, resolved));
        Ok(())
    }
}

/// `match_calls` for a trace read as the run goes, from its call sequences
/// (`program::call_seqs`), filling in their `first` and `linked`. `None` where a rank
/// calls on a communicator it is not in, members' calls differ or a call does not
/// resolve: linking the whole skeleton then reports it where it is.
pub fn match_sequences(
    prog: &mut Program,
    comms: &Communicators,
    config: &CollectivesConfig,
) -> Option<Matched> {
    let seqs = prog.call_seqs.as_ref()?;
    for r in 0..prog.ranks as usize {
        let used = seqs.at[r].iter().enumerate().filter(|(_, &n)| n != 0);
        if used.into_iter().any(|(h, _)| !comms.names(r, h as u32)) {
            return None;
        }
    }
    let mut matched = Matched {
        collectives: Vec::new(),
        specs: Vec::new(),
        first: Vec::with_capacity(comms.list.len()),
    };
    let mut linked = Vec::new();
    for (c, comm) in comms.list.iter().enumerate() {
        matched.first.push(matched.collectives.len() as u32);
        let node = |m: u32| {
            comms
                .handle_in(m as usize, c as u32)
                .map_or(0, |h| seqs.node(m, h))
        };
        let Some(&first) = comm.members.first() else {
            continue;
        };
        let path = seqs.path(node(first), seqs.skip);
        let calls = |p: &[(u32, u32)]| p.iter().map(|&(call, _)| call).collect::<Vec<_>>();
        let reference = calls(&path);
        for &m in &comm.members {
            let n = node(m);
            if n != node(first) && (!seqs.skip || calls(&seqs.path(n, seqs.skip)) != reference) {
                return None;
            }
        }
        let base = prog.job_ranks.map_or(first, |k| first % k);
        for (seq, &(call, at)) in path.iter().enumerate() {
            // The first member's call, with its own sizes, as `match_calls` takes it.
            let own = seqs.own(base, at).unwrap_or(call);
            let rank_call = RankCall::new(first, own, SrcLoc::default());
            matched
                .push(prog, config, &rank_call, (c as u32, seq as u32), comm)
                .ok()?;
            let creation = call == SPLIT || call == DUP;
            linked.push((if creation { NONE } else { call }, at));
        }
    }
    let seqs = prog.call_seqs.as_mut()?;
    seqs.first = matched.first.clone();
    seqs.linked = linked;
    Some(matched)
}

/// Every member of `comm` makes the calls its first member makes.
fn check_agreement(prog: &Program, comm: &Communicator, per_rank: &[Vec<RankCall>]) -> Result<()> {
    let first = comm.members[0];
    let reference = &per_rank[first as usize];
    for &m in &comm.members {
        let mine = &per_rank[m as usize];
        for (seq, (a, b)) in reference.iter().zip(mine.iter()).enumerate() {
            let (ca, cb) = (a.call(prog), b.call(prog));
            if !same_call(ca, cb) {
                return Err(prog.error_at(b.loc, "collective", format!(
                    "mismatched collective calls on {}: call #{} is `{}` on rank {} but `{}` on rank {} ({})",
                    comm.name, seq + 1, describe(cb), b.rank, describe(ca), a.rank, prog.describe_loc(a.loc)
                )));
            }
        }
        if mine.len() != reference.len() {
            let (long_rank, long, short_rank, short) = if mine.len() > reference.len() {
                (m, mine, first, reference)
            } else {
                (first, reference, m, mine)
            };
            let extra = &long[short.len()];
            return Err(prog.error_at(extra.loc, "collective", format!(
                "mismatched collective calls on {}: rank {long_rank} makes {} calls but rank {short_rank} makes {}; call #{} (`{}`) has no partner",
                comm.name, long.len(), short.len(), short.len() + 1, describe(extra.call(prog))
            )));
        }
    }
    Ok(())
}

/// The same call on two ranks (their communicator handles are rank-local; the sizes of the
/// v-variants are each rank's own).
fn same_call(a: &CollCall, b: &CollCall) -> bool {
    let own_sizes = CollKind::parse(&a.kind).is_some_and(CollKind::has_rank_sizes);
    a.kind == b.kind
        && (a.size == b.size || own_sizes)
        && a.root == b.root
        && a.algorithm == b.algorithm
        && a.transport == b.transport
        && a.segment == b.segment
}

/// The spec of a call on a communicator of `p` ranks, with the machine's defaults for what
/// the call leaves out, and the algorithm it resolves to.
fn resolve(
    prog: &Program,
    config: &CollectivesConfig,
    at: &RankCall,
    p: u32,
) -> Result<(CollSpec, &'static str)> {
    let call = at.call(prog);
    let kind = CollKind::parse(&call.kind).ok_or_else(|| {
        prog.error_at(
            at.loc,
            "collective",
            format!("unknown collective `{}`", call.kind),
        )
    })?;
    let algorithm = if call.algorithm.is_empty() {
        config.algorithm(&call.kind).to_string()
    } else {
        call.algorithm.clone()
    };
    let transport_name = if call.transport.is_empty() {
        if kind == CollKind::Barrier {
            config.barrier_transport.clone()
        } else {
            "msg".into()
        }
    } else {
        call.transport.clone()
    };
    let transport = if transport_name == "rdma" {
        Transport::Rdma
    } else {
        Transport::Msg
    };
    if call.root >= p && kind.is_rooted() {
        return Err(prog.error_at(
            at.loc,
            "root",
            format!(
                "root {} is out of range: the communicator has {p} ranks",
                call.root
            ),
        ));
    }
    let spec = CollSpec {
        kind,
        algorithm,
        transport,
        size: call.size,
        root: call.root,
        segment: if call.segment == 0 {
            config.segment.0
        } else {
            call.segment
        },
    };
    let resolved = collectives::resolve(&spec, p).map_err(|m| algorithm_error(prog, at, m))?;
    Ok((spec, resolved))
}

fn algorithm_error(prog: &Program, at: &RankCall, m: String) -> Error {
    let call = at.call(prog);
    if call.algorithm.is_empty() {
        // The machine chose the algorithm; the call site says where it bites.
        let field = format!("collectives.{}", call.kind);
        prog.error_at(at.loc, &field, format!("{m} (the machine's {field})"))
    } else {
        prog.error_at(at.loc, "algo", m)
    }
}

/// A call as the mismatch messages show it.
fn describe(c: &CollCall) -> String {
    let mut s = c.kind.clone();
    if c.kind != "barrier" {
        s += &format!(" {} B", c.size);
    }
    if c.is_rooted() {
        s += &format!(" root={}", c.root);
    }
    if !c.algorithm.is_empty() {
        s += &format!(" algo={}", c.algorithm);
    }
    s
}
