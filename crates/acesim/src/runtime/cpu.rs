//! A rank's CPUs: computations and library overheads, one at a time per CPU (checked when
//! checks are on).

use super::state::*;
use crate::engine::Schedule;
use crate::network::Network;
use crate::units::Ps;

impl Runtime {
    /// Computation of `ps` on `cpu` of `rank` from `now`; the rank resumes when it ends.
    pub(super) fn compute(
        &mut self,
        q: &mut impl Schedule<RtEvent>,
        rank: u32,
        cpu: u32,
        now: Ps,
        ps: Ps,
    ) {
        self.ranks[rank as usize].stats.compute_ps += ps;
        self.occupy_cpu(rank, cpu, now, now + ps);
        self.record(rank, TraceKind::Compute, now, now + ps);
        q.at(now + ps, RtEvent::Resume { rank: rank.into() });
    }

    /// Charges an issue overhead on the rank's CPU `cpu` before the transfer reaches the
    /// NIC. Returns true when the rank must wait for it (a Resume is scheduled).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pay_overhead<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        rank: u32,
        cpu: u32,
        xfer: u32,
        overhead: Ps,
    ) -> bool {
        if overhead == 0 {
            self.submit(q, net, now, xfer);
            return false;
        }
        self.ranks[rank as usize].stats.overhead_ps += overhead;
        self.occupy_cpu(rank, cpu, now, now + overhead);
        self.record(rank, TraceKind::Overhead, now, now + overhead);
        q.at(now + overhead, RtEvent::Submit { xfer: xfer.into() });
        q.at(now + overhead, RtEvent::Resume { rank: rank.into() });
        true
    }

    /// CPU `cpu` of `rank` is busy from `start` to `end` (checked: never twice at once).
    pub(super) fn occupy_cpu(&mut self, rank: u32, cpu: u32, start: Ps, end: Ps) {
        let Some(c) = &mut self.checks else {
            return;
        };
        let (r, k) = (rank as usize, cpu as usize);
        if start < c.free_at[r][k] && c.violation.is_none() {
            c.violation = Some(format!(
                "rank {rank}: CPU {cpu} starts work at {start} ps while busy until {} ps",
                c.free_at[r][k]
            ));
        }
        c.free_at[r][k] = end;
        c.busy[r][k] += end - start;
    }
}
