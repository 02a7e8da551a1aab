//! Linking an MPI program: resolve communicators, translate communicator ranks to world
//! ranks and message contexts, check that every rank makes the same collective calls, and
//! expand each collective into the point-to-point or put/poll steps of its algorithm.
//!
//! Contexts keep traffic apart as MPI does: communicator `c` uses context `2c` for user
//! messages and `2c + 1` for the messages of its collectives.

use crate::error::{Error, Location, Result};
use crate::program::collective_defaults::CollectivesConfig;
use crate::program::collectives::{self, CollKind, CollSpec, Step, Transport};
use crate::program::{Collective, Communicator, Op, OpKind, Program, SrcLoc, ANY, NONE, UNDEFINED};
use std::collections::HashMap;

/// Tags of collective puts live far below any user tag (and never equal `ANY`).
fn coll_put_tag(comm: u32, seq: u32, tag: u32) -> i64 {
    -(1i64 << 62) + ((comm as i64) << 44) + ((seq as i64) << 16) + tag as i64
}

fn loc_err(prog: &Program, loc: SrcLoc, field: &str, msg: String) -> Error {
    let text = prog.describe_loc(loc);
    let (file, line) = text
        .rsplit_once(':')
        .map_or((text.clone(), None), |(f, l)| {
            (f.to_string(), l.parse().ok())
        });
    let mut location = Location::file(file).with_field(field);
    location.line = line;
    Error::input(location, msg)
}

/// (key, index in the parent, world rank) of a rank joining a split communicator.
type SplitMember = (i64, usize, u32);

/// One rank's view of a collective call during linking.
#[derive(Clone)]
struct Call {
    rank: u32,
    op_index: usize,
    kind: String,
    algorithm: String,
    transport: String,
    size: u64,
    root: u32,
    segment: u64,
    loc: SrcLoc,
}

/// Resolves and expands `prog` in place. `config` supplies the default algorithms.
pub fn link(prog: &mut Program, config: &CollectivesConfig) -> Result<()> {
    if prog.linked {
        return Ok(());
    }
    let n = prog.ranks;
    // --- Communicators -------------------------------------------------------------
    let mut comms = vec![Communicator {
        name: "world".into(),
        members: (0..n).collect(),
    }];
    // Rank-local handle -> global communicator (NONE: not a member / not yet created).
    let mut local: Vec<Vec<u32>> = (0..n as usize)
        .map(|r| {
            let mut v = vec![NONE; prog.comm_handles[r] as usize];
            v[0] = 0;
            v
        })
        .collect();
    // Communicator creations per rank, in program order.
    let creations: Vec<Vec<usize>> = prog
        .ops
        .iter()
        .map(|ops| {
            ops.iter()
                .enumerate()
                .filter(|(_, o)| {
                    matches!(o.kind, OpKind::CommSplit { .. } | OpKind::CommDup { .. })
                })
                .map(|(i, _)| i)
                .collect()
        })
        .collect();
    let mut next = vec![0usize; n as usize];
    // Each creation is collective over its parent: it happens once every member of the
    // parent has reached it. Repeat until no rank has creations left.
    loop {
        let mut progressed = false;
        let mut pending = false;
        for r in 0..n as usize {
            let Some(&i) = creations[r].get(next[r]) else {
                continue;
            };
            pending = true;
            let op = prog.ops[r][i];
            let parent_local = match op.kind {
                OpKind::CommSplit { parent, .. } | OpKind::CommDup { parent, .. } => parent,
                _ => unreachable!("only creations are listed"),
            };
            let parent = local[r][parent_local as usize];
            if parent == NONE {
                return Err(loc_err(
                    prog,
                    op.loc,
                    "comm",
                    format!("rank {r} is not a member of this communicator"),
                ));
            }
            let members = comms[parent as usize].members.clone();
            // Every member must be at a creation on the same parent.
            let ready = members.iter().all(|&m| {
                creations[m as usize]
                    .get(next[m as usize])
                    .is_some_and(|&j| {
                        let pk = match prog.ops[m as usize][j].kind {
                            OpKind::CommSplit { parent, .. } | OpKind::CommDup { parent, .. } => {
                                parent
                            }
                            _ => NONE,
                        };
                        local[m as usize][pk as usize] == parent
                    })
            });
            if !ready {
                continue;
            }
            // Same kind of creation on every member.
            let is_split = |k: &OpKind| matches!(k, OpKind::CommSplit { .. });
            for &m in &members {
                let o = prog.ops[m as usize][creations[m as usize][next[m as usize]]];
                if is_split(&o.kind) != is_split(&op.kind) {
                    return Err(loc_err(
                        prog,
                        o.loc,
                        "comm",
                        format!(
                        "rank {m} calls {} while rank {r} calls {} on the same communicator ({})",
                        if is_split(&o.kind) { "comm_split" } else { "comm_dup" },
                        if is_split(&op.kind) { "comm_split" } else { "comm_dup" },
                        prog.describe_loc(op.loc)
                    ),
                    ));
                }
            }
            if is_split(&op.kind) {
                // Group by color, order by (key, rank in parent).
                let mut groups: Vec<(i64, Vec<SplitMember>)> = Vec::new();
                for (pi, &m) in members.iter().enumerate() {
                    let o = prog.ops[m as usize][creations[m as usize][next[m as usize]]];
                    let OpKind::CommSplit { color, key, .. } = o.kind else {
                        unreachable!()
                    };
                    if color == UNDEFINED {
                        continue;
                    }
                    match groups.iter_mut().find(|g| g.0 == color) {
                        Some(g) => g.1.push((key, pi, m)),
                        None => groups.push((color, vec![(key, pi, m)])),
                    }
                }
                groups.sort_by_key(|g| g.0);
                for (color, mut g) in groups {
                    g.sort_unstable();
                    let id = comms.len() as u32;
                    comms.push(Communicator {
                        name: format!("split of {} (color {color})", comms[parent as usize].name),
                        members: g.iter().map(|x| x.2).collect(),
                    });
                    for &(_, _, m) in &g {
                        let o = prog.ops[m as usize][creations[m as usize][next[m as usize]]];
                        let OpKind::CommSplit { result, .. } = o.kind else {
                            unreachable!()
                        };
                        local[m as usize][result as usize] = id;
                    }
                }
            } else {
                let id = comms.len() as u32;
                comms.push(Communicator {
                    name: format!("dup of {}", comms[parent as usize].name),
                    members: members.clone(),
                });
                for &m in &members {
                    let o = prog.ops[m as usize][creations[m as usize][next[m as usize]]];
                    let OpKind::CommDup { result, .. } = o.kind else {
                        unreachable!()
                    };
                    local[m as usize][result as usize] = id;
                }
            }
            for &m in &members {
                next[m as usize] += 1;
            }
            progressed = true;
        }
        if !pending {
            break;
        }
        if !progressed {
            let r = (0..n as usize)
                .find(|&r| next[r] < creations[r].len())
                .unwrap_or(0);
            let op = prog.ops[r][creations[r][next[r]]];
            return Err(loc_err(prog, op.loc, "comm", format!(
                "rank {r} creates a communicator that the other ranks of its parent never create in the same order"
            )));
        }
    }
    if comms.len() > 1 << 17 {
        return Err(Error::input(
            Location::file("program"),
            "more than 2^17 communicators",
        ));
    }
    // Communicator rank -> world rank.
    let index: Vec<HashMap<u32, u32>> = comms
        .iter()
        .map(|c| {
            c.members
                .iter()
                .enumerate()
                .map(|(i, &m)| (m, i as u32))
                .collect()
        })
        .collect();

    // --- Point-to-point translation and collective sequences ---------------------------
    let mut calls: Vec<Vec<Vec<Call>>> = vec![vec![Vec::new(); n as usize]; comms.len()];
    for r in 0..n as usize {
        for i in 0..prog.ops[r].len() {
            let op = prog.ops[r][i];
            let comm_of = |h: u32| -> Result<u32> {
                let c = local[r].get(h as usize).copied().unwrap_or(NONE);
                if c == NONE {
                    return Err(loc_err(
                        prog,
                        op.loc,
                        "comm",
                        format!("rank {r} is not a member of this communicator"),
                    ));
                }
                Ok(c)
            };
            let world = |c: u32, rank: u32, field: &str| -> Result<u32> {
                comms[c as usize]
                    .members
                    .get(rank as usize)
                    .copied()
                    .ok_or_else(|| {
                        loc_err(
                            prog,
                            op.loc,
                            field,
                            format!(
                                "rank {rank} is out of range: the communicator has {} ranks",
                                comms[c as usize].members.len()
                            ),
                        )
                    })
            };
            let world_src = |c: u32, src: i64| -> Result<i64> {
                if src == ANY {
                    Ok(ANY)
                } else {
                    world(c, src as u32, "src").map(|w| w as i64)
                }
            };
            prog.ops[r][i].kind = match op.kind {
                OpKind::Send {
                    dst,
                    size,
                    tag,
                    comm,
                } => {
                    let c = comm_of(comm)?;
                    OpKind::Send {
                        dst: world(c, dst, "dst")?,
                        size,
                        tag,
                        comm: 2 * c,
                    }
                }
                OpKind::Recv {
                    src,
                    size,
                    tag,
                    comm,
                } => {
                    let c = comm_of(comm)?;
                    OpKind::Recv {
                        src: world_src(c, src)?,
                        size,
                        tag,
                        comm: 2 * c,
                    }
                }
                OpKind::Isend {
                    dst,
                    size,
                    tag,
                    comm,
                    req,
                } => {
                    let c = comm_of(comm)?;
                    OpKind::Isend {
                        dst: world(c, dst, "dst")?,
                        size,
                        tag,
                        comm: 2 * c,
                        req,
                    }
                }
                OpKind::Irecv {
                    src,
                    size,
                    tag,
                    comm,
                    req,
                } => {
                    let c = comm_of(comm)?;
                    OpKind::Irecv {
                        src: world_src(c, src)?,
                        size,
                        tag,
                        comm: 2 * c,
                        req,
                    }
                }
                OpKind::Coll { call } => {
                    let k = prog.coll_calls[call as usize].clone();
                    let c = comm_of(k.comm)?;
                    calls[c as usize][r].push(Call {
                        rank: r as u32,
                        op_index: i,
                        kind: k.kind,
                        algorithm: k.algorithm,
                        transport: k.transport,
                        size: k.size,
                        root: k.root,
                        segment: k.segment,
                        loc: op.loc,
                    });
                    op.kind
                }
                // Creations cost what MPI libraries pay: an allgather (split) or an
                // allreduce (dup) of 8 bytes on the parent.
                OpKind::CommSplit { parent, .. } | OpKind::CommDup { parent, .. } => {
                    let c = comm_of(parent)?;
                    let split = matches!(op.kind, OpKind::CommSplit { .. });
                    calls[c as usize][r].push(Call {
                        rank: r as u32,
                        op_index: i,
                        kind: if split { "allgather" } else { "allreduce" }.into(),
                        algorithm: String::new(),
                        transport: String::new(),
                        size: 8,
                        root: 0,
                        segment: 0,
                        loc: op.loc,
                    });
                    op.kind
                }
                other => other,
            };
        }
    }

    // --- Collectives: check agreement, resolve algorithms ------------------------------
    // (rank, op index) -> global collective id
    let mut expand_at: Vec<HashMap<usize, u32>> = vec![HashMap::new(); n as usize];
    let mut collectives: Vec<Collective> = Vec::new();
    let mut specs: Vec<(CollSpec, &'static str)> = Vec::new();
    for (c, per_rank) in calls.iter().enumerate() {
        let members = &comms[c].members;
        let Some(&first) = members.first() else {
            continue;
        };
        let reference = &per_rank[first as usize];
        for &m in members {
            let mine = &per_rank[m as usize];
            for (seq, (a, b)) in reference.iter().zip(mine.iter()).enumerate() {
                let same = a.kind == b.kind
                    && a.size == b.size
                    && a.root == b.root
                    && a.algorithm == b.algorithm
                    && a.transport == b.transport
                    && a.segment == b.segment;
                if !same {
                    return Err(loc_err(prog, b.loc, "collective", format!(
                        "mismatched collective calls on {}: call #{} is `{}` on rank {} but `{}` on rank {} ({})",
                        comms[c].name, seq + 1, describe(b), b.rank, describe(a), a.rank, prog.describe_loc(a.loc)
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
                return Err(loc_err(prog, extra.loc, "collective", format!(
                    "mismatched collective calls on {}: rank {long_rank} makes {} calls but rank {short_rank} makes {}; call #{} (`{}`) has no partner",
                    comms[c].name, long.len(), short.len(), short.len() + 1, describe(extra)
                )));
            }
        }
        for (seq, call) in reference.iter().enumerate() {
            let kind = CollKind::parse(&call.kind).ok_or_else(|| {
                loc_err(
                    prog,
                    call.loc,
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
            let p = members.len() as u32;
            if call.root >= p
                && matches!(
                    kind,
                    CollKind::Bcast | CollKind::Reduce | CollKind::Gather | CollKind::Scatter
                )
            {
                return Err(loc_err(
                    prog,
                    call.loc,
                    "root",
                    format!(
                        "root {} is out of range: the communicator has {p} ranks",
                        call.root
                    ),
                ));
            }
            let spec = CollSpec {
                kind,
                algorithm: algorithm.clone(),
                transport,
                size: call.size,
                root: call.root,
                segment: if call.segment == 0 {
                    config.segment.0
                } else {
                    call.segment
                },
            };
            let resolved = collectives::resolve(&spec, p).map_err(|m| {
                if call.algorithm.is_empty() {
                    // The machine chose the algorithm; the call site says where it bites.
                    let field = format!("collectives.{}", call.kind);
                    loc_err(
                        prog,
                        call.loc,
                        &field,
                        format!("{m} (the machine's {field})"),
                    )
                } else {
                    loc_err(prog, call.loc, "algo", m)
                }
            })?;
            let id = collectives.len() as u32;
            collectives.push(Collective {
                kind: call.kind.clone(),
                algorithm: if transport == Transport::Rdma {
                    format!("{resolved} (rdma)")
                } else {
                    resolved.to_string()
                },
                comm: c as u32,
                size: call.size,
                root: call.root,
                seq: seq as u32,
            });
            specs.push((spec, resolved));
            for &m in members {
                expand_at[m as usize].insert(per_rank[m as usize][seq].op_index, id);
            }
        }
    }

    // --- Expansion -----------------------------------------------------------------------
    let reduce_ps = config.reduce_time_per_byte.0;
    for r in 0..n as usize {
        let old = std::mem::take(&mut prog.ops[r]);
        let mut ops = Vec::with_capacity(old.len());
        for (i, op) in old.into_iter().enumerate() {
            let Some(&id) = expand_at[r].get(&i) else {
                ops.push(op);
                continue;
            };
            let (spec, algorithm) = &specs[id as usize];
            let coll = collectives[id as usize].clone();
            let members = &comms[coll.comm as usize].members;
            let me = index[coll.comm as usize][&(r as u32)];
            let ctx = 2 * coll.comm + 1;
            let at = |kind| Op { kind, loc: op.loc };
            ops.push(at(OpKind::CollBegin { call: id }));
            let mut pending: Vec<u32> = Vec::new();
            let mut puts: Vec<u32> = Vec::new();
            for step in collectives::expand(spec, algorithm, members.len() as u32, me) {
                let tag = |t: u32| ((coll.seq as i64) << 16) | t as i64;
                match step {
                    Step::Send { to, bytes, tag: t } => {
                        let req = prog.new_handle(r as u32);
                        pending.push(req);
                        ops.push(at(OpKind::Isend {
                            dst: members[to as usize],
                            size: bytes,
                            tag: tag(t),
                            comm: ctx,
                            req,
                        }));
                    }
                    Step::Recv {
                        from,
                        bytes,
                        tag: t,
                    } => {
                        let req = prog.new_handle(r as u32);
                        pending.push(req);
                        ops.push(at(OpKind::Irecv {
                            src: members[from as usize] as i64,
                            size: bytes,
                            tag: tag(t),
                            comm: ctx,
                            req,
                        }));
                    }
                    Step::WaitAll => {
                        if !pending.is_empty() {
                            let list = prog.req_list(&pending);
                            ops.push(at(OpKind::WaitAll {
                                list,
                                count: pending.len() as u32,
                            }));
                            pending.clear();
                        }
                    }
                    Step::Put { to, bytes, tag: t } => {
                        let handle = prog.new_handle(r as u32);
                        puts.push(handle);
                        ops.push(at(OpKind::Put {
                            dst: members[to as usize],
                            size: bytes,
                            tag: coll_put_tag(coll.comm, coll.seq, t),
                            handle,
                            nic: NONE,
                        }));
                    }
                    Step::Poll { tag: t } => ops.push(at(OpKind::Poll {
                        tag: coll_put_tag(coll.comm, coll.seq, t),
                    })),
                    Step::CompleteAll => {
                        if !puts.is_empty() {
                            let list = prog.req_list(&puts);
                            ops.push(at(OpKind::WaitAll {
                                list,
                                count: puts.len() as u32,
                            }));
                            puts.clear();
                        }
                    }
                    Step::Reduce { bytes } => {
                        let ps = bytes.saturating_mul(reduce_ps);
                        if ps > 0 {
                            ops.push(at(OpKind::Compute { ps }));
                        }
                    }
                }
            }
            // Whatever the algorithm left outstanding is finished before the call returns.
            if !pending.is_empty() {
                let list = prog.req_list(&pending);
                ops.push(at(OpKind::WaitAll {
                    list,
                    count: pending.len() as u32,
                }));
            }
            if !puts.is_empty() {
                let list = prog.req_list(&puts);
                ops.push(at(OpKind::WaitAll {
                    list,
                    count: puts.len() as u32,
                }));
            }
            ops.push(at(OpKind::CollEnd { call: id }));
        }
        // Creations that were not expanded (never: each is a collective) are dropped.
        ops.retain(|o| {
            !matches!(
                o.kind,
                OpKind::Coll { .. } | OpKind::CommSplit { .. } | OpKind::CommDup { .. }
            )
        });
        prog.ops[r] = ops;
    }
    prog.comms = comms;
    prog.collectives = collectives;
    prog.linked = true;
    Ok(())
}

fn describe(c: &Call) -> String {
    let mut s = c.kind.clone();
    if c.kind != "barrier" {
        s += &format!(" {} B", c.size);
    }
    if matches!(c.kind.as_str(), "bcast" | "reduce" | "gather" | "scatter") {
        s += &format!(" root={}", c.root);
    }
    if !c.algorithm.is_empty() {
        s += &format!(" algo={}", c.algorithm);
    }
    s
}
