//! Dependency-graph programs (GOAL): an operation starts once its dependencies hold; each
//! of a rank's CPUs runs computations and send overheads one at a time, in the order they
//! became ready; receives (and sends without overhead) need no CPU.

use super::state::*;
use crate::engine::Schedule;
use crate::network::Network;
use crate::program::{source_rank, OpKind, RankDeps, NONE};
use crate::units::Ps;

/// What an operation waits for of another: its start (`irequires`) or its completion
/// (`requires`).
#[derive(Debug, Clone, Copy)]
enum Dependency {
    Start,
    Complete,
}

impl Dependency {
    /// The operations of a rank that wait for this of `op`.
    fn dependents(self, deps: &RankDeps, op: u32) -> &[u32] {
        match self {
            Dependency::Start => deps.after_start.of(op as usize),
            Dependency::Complete => deps.after_complete.of(op as usize),
        }
    }
}

impl Runtime {
    /// Runs a dependency-graph rank: the computations whose time is over complete, then
    /// ready operations start, each CPU taking its own in the order they became ready,
    /// until every free CPU is busy or nothing is ready.
    pub(super) fn run_dag<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        rank: u32,
    ) {
        let r = rank as usize;
        let Some(dag) = self.ranks[r].dag.as_mut() else {
            return;
        };
        // While this runs, new ready work is picked up by the loop below, not by a Resume.
        dag.wake_at = now;
        for c in 0..dag.cpus.len() {
            let Some(cpu) = self.ranks[r].dag.as_mut().map(|d| &mut d.cpus[c]) else {
                return;
            };
            if cpu.running != NONE && cpu.busy_until <= now {
                let op = std::mem::replace(&mut cpu.running, NONE);
                self.complete_op(q, now, rank, op);
            }
        }
        while let Some((op, cpu)) = self.next_ready(now, r) {
            self.start_dag_op(q, net, now, rank, op, cpu);
        }
        if let Some(dag) = self.ranks[r].dag.as_mut() {
            dag.wake_at = Ps::MAX;
        }
        self.check_dag_done(rank, now);
    }

    /// The next operation of rank `r` that can start now and the CPU it takes (`NONE`: it
    /// needs none).
    pub(super) fn next_ready(&mut self, now: Ps, r: usize) -> Option<(u32, u32)> {
        let dag = self.ranks[r].dag.as_mut()?;
        if let Some(op) = dag.instant.pop_front() {
            return Some((op, NONE));
        }
        dag.cpus
            .iter_mut()
            .enumerate()
            .filter(|(_, cpu)| cpu.busy_until <= now && cpu.running == NONE)
            .find_map(|(c, cpu)| cpu.ready.pop_front().map(|op| (op, c as u32)))
    }

    /// Starts operation `op` of a dependency-graph rank, on `cpu` if it needs one.
    pub(super) fn start_dag_op<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        rank: u32,
        op: u32,
        cpu: u32,
    ) {
        let r = rank as usize;
        let kind = self.program.ops[r][op as usize].kind;
        self.start_op(q, now, rank, op);
        match kind {
            OpKind::Compute { ps } if ps > 0 => {
                self.compute(q, rank, cpu, now, ps);
                let c = &mut self.ranks[r].dag.as_mut().expect("dag rank").cpus[cpu as usize];
                c.running = op;
                c.busy_until = now + ps;
            }
            OpKind::Send {
                dst,
                size,
                tag,
                comm,
            } => {
                let nic = self.program.deps.as_ref().map_or(NONE, |d| d[r].nic_of(op));
                let id = self.new_xfer(now, rank, XferKind::Msg, dst, size, tag, nic, comm, op);
                let overhead = self.p.send_overhead;
                if cpu != NONE && overhead > 0 {
                    let c = &mut self.ranks[r].dag.as_mut().expect("dag rank").cpus[cpu as usize];
                    c.busy_until = now + overhead;
                    self.pay_overhead(q, net, now, rank, cpu, id, overhead);
                } else {
                    self.submit(q, net, now, id);
                }
            }
            OpKind::Recv { src, tag, comm, .. } => {
                self.post_recv(q, net, now, rank, source_rank(src), tag, comm, op);
            }
            // Zero-time compute, and anything else the GOAL reader never produces.
            _ => self.complete_op(q, now, rank, op),
        }
    }

    /// Operation `op` of a dependency-graph rank has its dependencies: it waits for its CPU
    /// if it needs one, and a Resume looks at it now unless one is on its way.
    pub(super) fn make_ready(
        &mut self,
        q: &mut impl Schedule<RtEvent>,
        now: Ps,
        rank: u32,
        op: u32,
    ) {
        let r = rank as usize;
        let needs_cpu = match self.program.ops[r][op as usize].kind {
            OpKind::Compute { ps } => ps > 0,
            OpKind::Send { .. } => self.p.send_overhead > 0,
            _ => false,
        };
        let cpu = self.program.deps.as_ref().map_or(0, |d| d[r].cpu_of(op));
        let Some(dag) = self.ranks[r].dag.as_mut() else {
            return;
        };
        if needs_cpu {
            dag.cpus[cpu as usize].ready.push_back(op);
        } else {
            dag.instant.push_back(op);
        }
        if dag.wake_at != now {
            dag.wake_at = now;
            q.at(now, RtEvent::Resume { rank: rank.into() });
        }
    }

    /// Operation `op` started: the operations that `irequires` it lose a dependency.
    pub(super) fn start_op(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, rank: u32, op: u32) {
        if let Some(dag) = self.ranks[rank as usize].dag.as_mut() {
            dag.ops[op as usize].started = true;
            self.release(q, now, rank, op, Dependency::Start);
        }
    }

    /// Operation `op` completed: the operations that `require` it lose a dependency.
    pub(super) fn complete_op(
        &mut self,
        q: &mut impl Schedule<RtEvent>,
        now: Ps,
        rank: u32,
        op: u32,
    ) {
        if let Some(dag) = self.ranks[rank as usize].dag.as_mut() {
            dag.ops[op as usize].done = true;
            dag.completed += 1;
            self.release(q, now, rank, op, Dependency::Complete);
            self.check_dag_done(rank, now);
        }
    }

    /// The operations that depend on `op` starting (or completing) lose that dependency;
    /// those left with none are ready.
    fn release(
        &mut self,
        q: &mut impl Schedule<RtEvent>,
        now: Ps,
        rank: u32,
        op: u32,
        on: Dependency,
    ) {
        let r = rank as usize;
        let Some(deps) = self.program.deps.as_ref() else {
            return;
        };
        for i in 0..on.dependents(&deps[r], op).len() {
            let deps = self.program.deps.as_ref().expect("dag program");
            let d = on.dependents(&deps[r], op)[i] as usize;
            let dag = self.ranks[r].dag.as_mut().expect("dag rank");
            let need = &mut dag.ops[d].need;
            *need -= 1;
            if *need == 0 {
                self.make_ready(q, now, rank, d as u32);
            }
        }
    }

    pub(super) fn check_dag_done(&mut self, rank: u32, now: Ps) {
        let st = &self.ranks[rank as usize];
        if let Some(dag) = &st.dag {
            if st.finish.is_none() && dag.completed as usize == dag.ops.len() {
                self.done(rank, now);
            }
        }
    }
}
