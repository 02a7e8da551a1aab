//! What a run of a program will hold: the records of its transfers and receives (for the
//! memory estimate that admits or refuses a run before anything large is built).

use super::collective_steps::count_steps;
use super::state::*;
use crate::program::{OpKind, Program};

/// Rounds of collective steps whose records the memory estimate counts in flight per rank.
/// Measured (2026-11-26), every rank holds about one step's records at a time: 2,704 at
/// most in the 2,704-rank fat-tree all-to-all, 256 in the 16x16-torus all-to-alls, at both
/// levels; 8 rounds leave room for ranks that run ahead of their peers.
const ROUNDS_AHEAD: u64 = 8;

/// Records a run holds at most: the program's own transfers and receives (every one: they
/// are the results' operations), and of collective steps, per rank what `ROUNDS_AHEAD` of
/// its largest rounds issue, at most twice its largest call and at most all its steps (a
/// step's records are reused once both its ends have waited for it; a rank may run ahead
/// of its peers).
#[derive(Debug, Clone, Copy, Default)]
pub struct TransferCounts {
    pub xfers: u64,
    pub recvs: u64,
    pub step_xfers: u64,
    pub step_recvs: u64,
    /// Operations the ranks run: their programs', collective steps included.
    pub ops: u64,
}

impl Runtime {
    /// Transfer and receive records a run of `program` holds at most (`TransferCounts`).
    pub fn count_transfers(program: &Program) -> TransferCounts {
        let mut n = TransferCounts::default();
        for ops in &program.ops {
            let (mut largest, mut round) = ((0u64, 0u64), (0u64, 0u64));
            let (mut steps, mut step_recvs) = (0u64, 0u64);
            n.ops += ops.len() as u64;
            for op in ops {
                let (x, r) = match op.kind {
                    OpKind::Collective { id, call, me } => {
                        let c = count_steps(program, (id, call, me));
                        largest = (largest.0.max(c.call.0), largest.1.max(c.call.1));
                        round = (round.0.max(c.round.0), round.1.max(c.round.1));
                        (steps, step_recvs) = (steps + c.call.0, step_recvs + c.call.1);
                        n.ops += c.steps;
                        continue;
                    }
                    OpKind::Put { .. }
                    | OpKind::Get { .. }
                    | OpKind::Send { .. }
                    | OpKind::Isend { .. } => (1, 0),
                    OpKind::Recv { .. } | OpKind::Irecv { .. } => (0, 1),
                    _ => continue,
                };
                (n.xfers, n.recvs) = (n.xfers + x, n.recvs + r);
            }
            n.step_xfers += steps.min(2 * largest.0).min(ROUNDS_AHEAD * round.0);
            n.step_recvs += step_recvs.min(2 * largest.1).min(ROUNDS_AHEAD * round.1);
        }
        n
    }

    /// Bytes the runtime allocates for `program`: rank state, one record per transfer and
    /// receive, sequence numbers per communicating pair.
    pub fn estimate_bytes(program: &Program, n: &TransferCounts) -> u64 {
        use std::mem::size_of;
        let (xfers, recvs) = (n.xfers + n.step_xfers, n.recvs + n.step_recvs);
        let handles: u64 = program.handles.iter().map(|&h| h as u64).sum();
        program.ranks as u64 * (size_of::<RankState>() as u64 + 64)
            + handles * 4
            + xfers * (size_of::<Xfer>() as u64 + 2 * 48)
            + recvs * size_of::<RecvRecord>() as u64
    }
}
