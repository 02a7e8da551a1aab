//! The phases of linking, in order.

use crate::error::{Error, Result};
use crate::program::call_seqs::{DUP, SPLIT};
use crate::program::collective_defaults::CollectivesConfig;
use crate::program::link::collective_calls::{match_calls, match_sequences};
use crate::program::link::communicators::Communicators;
use crate::program::link::expand::expand;
use crate::program::link::world_ranks::to_world_ranks;
use crate::program::ops::{OpKind, Program};

/// Resolves and expands `prog` in place. `config` supplies the default algorithms.
pub fn link(prog: &mut Program, config: &CollectivesConfig) -> Result<()> {
    link_keeping(prog, config).map(|_| ())
}

/// `link`, returning the communicators of a program read as the run goes (its messages
/// are translated with them as the run reads them: `program::stream`); `None` for the
/// others, or when `prog` was linked before.
pub fn link_keeping(
    prog: &mut Program,
    config: &CollectivesConfig,
) -> Result<Option<Communicators>> {
    if prog.linked {
        return Ok(None);
    }
    let comms = Communicators::resolve(prog)?;
    if let Some(seqs) = &mut prog.call_seqs {
        seqs.done_reading();
        if let Some(matched) = match_sequences(prog, &comms, config) {
            // Each rank's collectives are put in place as the run reads them again.
            prog.collectives = matched.collectives;
            prog.coll_specs = matched.specs;
            prog.linked = true;
            prog.comms = comms.list.clone();
            return Ok(Some(comms));
        }
        // Something to report: the whole skeleton, linked as any program, says where.
        materialize(prog)?;
    }
    let calls = to_world_ranks(prog, &comms)?;
    let matched = match_calls(prog, &comms, &calls, config)?;
    expand(prog, &comms, &calls, &matched);
    drop(calls);
    prog.collectives = matched.collectives;
    prog.linked = true;
    if prog.stream.is_some() {
        prog.comms = comms.list.clone();
        return Ok(Some(comms));
    }
    prog.comms = comms.list;
    Ok(None)
}

/// Replaces a streamed program's call sequences by its whole skeleton: each rank's
/// collective calls and creations, in its order and with their locations, read again from
/// its stream (their calls are the sequences', in the same order).
fn materialize(prog: &mut Program) -> Result<()> {
    let (Some(seqs), Some(streamed)) = (prog.call_seqs.take(), prog.stream.clone()) else {
        return Ok(());
    };
    let mut window = Vec::new();
    let mut lists = Vec::new();
    for r in 0..prog.ranks as usize {
        let base = prog.job_ranks.map_or(r as u32, |k| r as u32 % k);
        let mut stream = streamed.source.open(base)?;
        let mut paths: Vec<(Vec<(u32, u32)>, usize)> = seqs.at[r]
            .iter()
            .map(|&n| (seqs.path(n, false), 0))
            .collect();
        let mut ops = Vec::new();
        while stream.next_ops(&mut window, &mut lists)? {
            for op in window.drain(..) {
                let (handle, creation) = match op.kind {
                    OpKind::Coll { call } => (call, false),
                    OpKind::CommSplit { parent, .. } | OpKind::CommDup { parent, .. } => {
                        (parent, true)
                    }
                    _ => continue,
                };
                let (path, next) = paths.get_mut(handle as usize).ok_or_else(|| {
                    Error::Internal(format!("rank {r} calls on a handle its skeleton lacks"))
                })?;
                let &(call, node) = path.get(*next).ok_or_else(|| {
                    Error::Internal(format!("rank {r} makes more calls than its skeleton"))
                })?;
                *next += 1;
                let mut op = op;
                if !creation {
                    let own = seqs.own(base, node).unwrap_or(call);
                    op.kind = match seqs.skip {
                        true => OpKind::Compute { ps: 0 },
                        false => OpKind::Coll { call: own },
                    };
                } else if call != SPLIT && call != DUP {
                    return Err(Error::Internal(format!(
                        "rank {r}'s creation is a collective call in its skeleton"
                    )));
                }
                ops.push(op);
            }
        }
        prog.ops[r] = ops;
    }
    Ok(())
}
