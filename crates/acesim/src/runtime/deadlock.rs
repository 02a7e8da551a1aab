//! Why a program can never finish: the ranks blocked forever, what each waits for (which
//! rank could unblock it, and where in its program) and the circle they wait in.

use super::collective_steps::collective_puts;
use super::state::*;
use crate::error::{BlockedRank, DeadlockReport};
use crate::network::Network;
use crate::program::{OpKind, RankDeps, ANY, NONE};
use crate::units::Ps;
use std::collections::HashMap;

impl Runtime {
    /// `Some(report)` if some rank has not finished.
    pub fn deadlock(&self, now: Ps, net: &impl Network) -> Option<DeadlockReport> {
        self.deadlock_report(now, net.in_flight(), net.stuck_summary())
    }

    /// `Some(report)` if some rank has not finished or something is still `in_flight` in
    /// the network (`stuck` says what).
    pub fn deadlock_report(
        &self,
        now: Ps,
        in_flight: bool,
        stuck: Option<String>,
    ) -> Option<DeadlockReport> {
        let mut blocked = Vec::new();
        for (r, st) in self.ranks.iter() {
            if st.finish.is_some() {
                continue;
            }
            if let (Some(dag), Some(deps)) = (&st.dag, &self.program.deps) {
                blocked.push(self.blocked_dag(r, dag, &deps[r]));
                continue;
            }
            let op = self.current_op(r);
            let (mut op_text, location) = op.map_or(("(end)".to_string(), "-".to_string()), |o| {
                (
                    self.program.describe_op(&o),
                    self.program.describe_loc(o.loc),
                )
            });
            // A collective's puts carry tags made from its communicator and call: the
            // report names them by what they are, not by that number.
            let in_coll = st.collective().is_some();
            if let (true, Some(crate::program::OpKind::Poll { .. })) = (in_coll, op.map(|o| o.kind))
            {
                op_text = "poll for a put of the call".to_string();
            }
            if let Some(call) = st.collective() {
                let c = &self.program.collectives[call as usize];
                op_text = format!(
                    "{} {} ({}), in its step `{op_text}`",
                    c.kind, c.size, c.algorithm
                );
            }
            let pending: Vec<u32> = match st.wait {
                Wait::Req(e) => vec![e],
                Wait::All | Wait::Any => self
                    .current_list(r)
                    .iter()
                    .map(|&h| st.handles[h as usize])
                    .filter(|&e| !self.req_done(e))
                    .collect(),
                Wait::Tag(_) | Wait::No => vec![],
            };
            let putter = match st.wait {
                Wait::Tag(t) => self.later_putter(r as u32, t),
                _ => None,
            };
            let waits_for = match (st.wait, &putter) {
                (Wait::Tag(_), Some((who, at))) if in_coll => format!("a put of this call that rank {who} issues only later in its program, at {at}"),
                (Wait::Tag(_), None) if in_coll => "a put of this call that never lands (no rank's remaining program puts it here)".to_string(),
                (Wait::Tag(t), Some((who, at))) => format!("a put with tag {t} that rank {who} issues only later in its program, at {at}"),
                (Wait::Tag(t), None) => format!("a put with tag {t} that never lands (no rank's remaining program puts it here, or an earlier poll consumed it)"),
                (Wait::No, _) => "an event that never came".to_string(),
                _ => pending
                    .iter()
                    .map(|&e| self.describe_req(e))
                    .collect::<Vec<_>>()
                    .join("; "),
            };
            let mut waits_on: Vec<u32> = pending.iter().filter_map(|&e| self.waits_on(e)).collect();
            waits_on.extend(putter.map(|(who, _)| who));
            waits_on.dedup();
            blocked.push(BlockedRank {
                rank: r as u32,
                op: op_text,
                location,
                waits_for,
                waits_on,
            });
        }
        if blocked.is_empty() && !in_flight {
            return None;
        }
        Some(DeadlockReport {
            time: now,
            cycle: find_cycle(&blocked),
            blocked,
            network: stuck,
            model: None,
            note: None,
        })
    }

    /// The first unfinished rank whose remaining program puts `tag` to rank `dst`, and where
    /// (a poll's deadlock report then names it and can close a circle). Looks at most at a
    /// bounded number of operations, so that a huge program's report stays quick.
    pub(super) fn later_putter(&self, dst: u32, tag: i64) -> Option<(u32, String)> {
        let mut budget: u64 = 10_000_000;
        let found = |q: usize, loc| Some((q as u32, self.program.describe_loc(loc)));
        for (q, st) in self.ranks.iter() {
            if st.finish.is_some() || st.dag.is_some() {
                continue;
            }
            // The rest of its collective (this round's operations, then its later rounds),
            // then of its program, collectives' steps included.
            let (round, next) = match st.in_coll.as_deref() {
                Some(c) => (c.ops.get(c.at..).unwrap_or(&[]), st.pc + 1),
                None => (&[][..], st.pc),
            };
            for op in round {
                if matches!(op.kind, OpKind::Put { dst: d, tag: t, .. } if d == dst && t == tag) {
                    return found(q, op.loc);
                }
            }
            if let Some(c) = st.in_coll.as_deref() {
                if self.later_rounds_put(c, (dst, tag), &mut budget) {
                    return found(q, c.loc);
                }
            }
            for op in self.program.ops[q].get(next..).unwrap_or(&[]) {
                let puts = match op.kind {
                    OpKind::Put { dst: d, tag: t, .. } => d == dst && t == tag,
                    OpKind::Collective { id, call, me } => {
                        collective_puts(&self.program, (id, call, me), (dst, tag), &mut budget)
                    }
                    _ => false,
                };
                if puts {
                    return found(q, op.loc);
                }
                budget = budget.saturating_sub(1);
                if budget == 0 {
                    return None;
                }
            }
        }
        None
    }

    /// The rank whose action a pending request needs, if one particular rank can.
    pub(super) fn waits_on(&self, e: u32) -> Option<u32> {
        if e & RECV_BIT != 0 {
            let rv = &self.recvs[(e & !RECV_BIT) as usize];
            return (rv.src != ANY && rv.xfer == NONE).then_some(rv.src as u32);
        }
        let x = &self.xfers[e as usize];
        // A rendezvous send waits for its receiver to post the matching receive.
        (x.kind == XferKind::Msg && x.rendezvous && x.recv == NONE).then_some(x.dst_rank)
    }

    pub(super) fn describe_req(&self, e: u32) -> String {
        if e & RECV_BIT != 0 {
            return self.describe_recv_wait(e & !RECV_BIT);
        }
        let x = &self.xfers[e as usize];
        match x.kind {
            XferKind::Msg if x.rendezvous => format!(
                "a receive matching its {} B message to rank {} (rendezvous)",
                x.size, x.dst_rank
            ),
            XferKind::Msg => format!("its message to rank {} to leave memory", x.dst_rank),
            XferKind::Put => format!("its put to rank {} to complete", x.dst_rank),
            XferKind::Get => format!("its get from rank {} to complete", x.src_rank),
        }
    }

    pub(super) fn describe_recv_wait(&self, rv: u32) -> String {
        let rv = &self.recvs[rv as usize];
        let any = |v: i64| {
            if v == ANY {
                "any".to_string()
            } else {
                v.to_string()
            }
        };
        let comm = self
            .program
            .comms
            .get((rv.ctx / 2) as usize)
            .map_or("world".to_string(), |c| c.name.clone());
        let what = if rv.ctx % 2 == 1 {
            " (collective traffic)"
        } else {
            ""
        };
        format!(
            "a message from rank {} with tag {} on {comm}{what} that is never sent",
            any(rv.src),
            any(rv.tag)
        )
    }

    pub(super) fn blocked_dag(&self, r: usize, dag: &DagRank, deps: &RankDeps) -> BlockedRank {
        // The first operation that has not completed.
        let op = dag.ops.iter().position(|o| !o.done).unwrap_or(0);
        let o = &self.program.ops[r][op];
        let label = deps.labels.get(op).cloned().unwrap_or_default();
        let mut waits_on = Vec::new();
        let waits_for =
            if dag.ops[op].started {
                match self.recvs.iter().position(|rv| {
                    rv.rank as usize == r && rv.op == op as u32 && rv.complete.is_none()
                }) {
                    Some(id) => {
                        waits_on.extend(self.waits_on(id as u32 | RECV_BIT));
                        self.describe_recv_wait(id as u32)
                    }
                    None => "its data to leave memory".to_string(),
                }
            } else {
                let mut missing: Vec<String> = Vec::new();
                for (i, after) in deps.after_complete.lists().enumerate() {
                    if after.contains(&(op as u32)) && !dag.ops[i].done {
                        missing.push(format!("{} to complete", deps.labels[i]));
                    }
                }
                for (i, after) in deps.after_start.lists().enumerate() {
                    if after.contains(&(op as u32)) && !dag.ops[i].started {
                        missing.push(format!("{} to start", deps.labels[i]));
                    }
                }
                missing.join(", ")
            };
        BlockedRank {
            rank: r as u32,
            op: format!("{label}: {}", self.program.describe_op(o)),
            location: self.program.describe_loc(o.loc),
            waits_for,
            waits_on,
        }
    }
}

/// A circle in the wait-for graph among blocked ranks, found in rank order so the report
/// is deterministic.
fn find_cycle(blocked: &[BlockedRank]) -> Option<Vec<u32>> {
    let index: HashMap<u32, usize> = blocked
        .iter()
        .enumerate()
        .map(|(i, b)| (b.rank, i))
        .collect();
    // 0: unseen, 1: on the current path, 2: finished.
    let mut state = vec![0u8; blocked.len()];
    for start in 0..blocked.len() {
        if state[start] != 0 {
            continue;
        }
        // Iterative depth-first search: (node, next edge to try).
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&mut (node, ref mut edge)) = path.last_mut() {
            let next = blocked[node].waits_on.get(*edge).copied();
            *edge += 1;
            match next {
                None => {
                    state[node] = 2;
                    path.pop();
                }
                Some(rank) => {
                    let Some(&to) = index.get(&rank) else {
                        continue;
                    };
                    match state[to] {
                        0 => {
                            state[to] = 1;
                            path.push((to, 0));
                        }
                        1 => {
                            let from = path.iter().position(|&(n, _)| n == to).unwrap_or(0);
                            return Some(
                                path[from..].iter().map(|&(n, _)| blocked[n].rank).collect(),
                            );
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    None
}
