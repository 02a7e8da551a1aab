//! Ranks executing their programs against the network.
//!
//! **RDMA** (NSIM-ACE). A put: the rank pays the library overhead `T_pp`, then the NIC DMAs
//! the data out (FIFO, one message per NIC at a time) and the packets cross the network;
//! when the last packet is in the target's memory (`T_end`) the put has *landed* (a `poll`
//! there may return) and the target NIC sends a control packet back; the put *completes*
//! `T_pp` after that control packet arrives. A get: after `T_pp` the requester's NIC sends a
//! control packet; on arrival the remote NIC DMAs the data out and sends it; the get
//! completes `T_pp` after its last packet is in the requester's memory.
//!
//! **Messages** (eager, until the MPI layer lands). A send pays `T_pp` and completes when its
//! data has left memory; a receive completes `T_pp` after a matching message has landed.
//! Matching follows MPI: the earliest posted matching receive takes the earliest landed
//! matching message (source and tag, with wildcards).
//!
//! **Execution.** A sequential program runs one operation after another: non-blocking ones
//! cost the overhead and return, blocking ones suspend the rank. A dependency-graph program
//! (GOAL) starts an operation once its dependencies hold; the rank's CPU runs compute and
//! send overheads one at a time in the order operations became ready.

use crate::engine::EventQueue;
use crate::network::{Network, Notice};
use crate::program::{OpKind, Program, RankDeps, ANY, NONE};
use crate::sim::Event;
use crate::units::Ps;
use std::collections::{HashMap, VecDeque};
use std::fmt;

type Queue = EventQueue<Event>;

#[derive(Debug, Clone, Copy)]
pub enum RtEvent {
    /// A rank's compute or overhead is over (or its CPU has new work): go on.
    Resume { rank: u32 },
    /// The library overhead of a transfer is paid: hand it to the NIC.
    Submit { xfer: u32 },
    /// The completion overhead of a put/get is paid.
    Finish { xfer: u32 },
    /// The completion overhead of a receive is paid.
    RecvDone { recv: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XferKind {
    Put,
    Get,
    /// An eager message (send/recv).
    Msg,
}

impl XferKind {
    pub fn name(self) -> &'static str {
        match self {
            XferKind::Put => "put",
            XferKind::Get => "get",
            XferKind::Msg => "send",
        }
    }
}

/// One put, get or message, and the times of its phases (picoseconds).
#[derive(Debug, Clone)]
pub struct Xfer {
    pub kind: XferKind,
    /// The rank that issued it.
    pub rank: u32,
    /// Source and destination of the data.
    pub src_rank: u32,
    pub dst_rank: u32,
    pub size: u64,
    pub tag: i64,
    pub src_nic: u32,
    pub dst_nic: u32,
    pub issue: Ps,
    pub dma_start: Option<Ps>,
    /// Last byte in the destination's memory (`T_end`).
    pub landed: Option<Ps>,
    /// Completion at the issuing rank (a send: its data has left memory).
    pub complete: Option<Ps>,
    /// Dependency-graph operation it belongs to, or `NONE`.
    op: u32,
}

/// A posted receive.
#[derive(Debug, Clone)]
pub struct RecvRecord {
    pub rank: u32,
    pub src: i64,
    pub tag: i64,
    pub posted: Ps,
    /// The message it matched, or `NONE`.
    pub xfer: u32,
    pub complete: Option<Ps>,
    op: u32,
}

// Token parts: which leg of a transfer a network message is.
const DATA: u64 = 0;
const PUT_ACK: u64 = 1;
const GET_REQUEST: u64 = 2;
const GET_DATA: u64 = 3;

fn token(xfer: u32, part: u64) -> u64 {
    ((xfer as u64) << 2) | part
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Running, or waiting for a scheduled Resume.
    No,
    Tag(i64),
    Xfer(u32),
    Recv(u32),
}

/// A blocking operation already started by a sequential rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inflight {
    None,
    Xfer(u32),
    Recv(u32),
}

/// Dependency-graph state of one rank.
#[derive(Debug, Clone, Default)]
struct DagRank {
    need_requires: Vec<u32>,
    need_irequires: Vec<u32>,
    started: Vec<bool>,
    done: Vec<bool>,
    ready: VecDeque<u32>,
    /// A Resume is scheduled (the CPU is busy or about to look at `ready`).
    cpu_busy: bool,
    /// Compute operation occupying the CPU, or `NONE`.
    running: u32,
    completed: u32,
}

#[derive(Debug, Clone)]
struct RankState {
    pc: usize,
    wait: Wait,
    inflight: Inflight,
    finish: Option<Ps>,
    nic_next: u32,
    /// Handle index -> transfer id.
    handles: Vec<u32>,
    /// Landed puts not yet consumed by a poll, by tag.
    landed: HashMap<i64, u32>,
    regions: Vec<(u32, Ps)>,
    /// Receives not yet matched, in posting order.
    posted: Vec<u32>,
    /// Landed messages not yet matched, in landing order.
    unexpected: Vec<u32>,
    dag: Option<DagRank>,
}

/// A closed region on one rank.
#[derive(Debug, Clone)]
pub struct RegionRecord {
    pub rank: u32,
    pub region: u32,
    pub begin: Ps,
    pub end: Ps,
}

/// Why a run could not finish.
#[derive(Debug, Clone)]
pub struct DeadlockReport {
    pub time: Ps,
    /// (rank, operation, source location, what it waits for)
    pub blocked: Vec<BlockedRank>,
    pub network: Option<String>,
}

#[derive(Debug, Clone)]
pub struct BlockedRank {
    pub rank: u32,
    pub op: String,
    pub location: String,
    pub waits_for: String,
}

impl fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "deadlock: the program can never finish ({} ranks blocked at {})",
            self.blocked.len(),
            crate::units::format_time(self.time)
        )?;
        for b in self.blocked.iter().take(50) {
            writeln!(
                f,
                "  rank {}: `{}` at {} waits for {}",
                b.rank, b.op, b.location, b.waits_for
            )?;
        }
        if self.blocked.len() > 50 {
            writeln!(f, "  ... and {} more ranks", self.blocked.len() - 50)?;
        }
        if let Some(n) = &self.network {
            writeln!(f, "  network: {n}")?;
        }
        Ok(())
    }
}

pub struct Runtime {
    pub program: Program,
    overhead: Ps,
    nics_per_node: u32,
    ranks: Vec<RankState>,
    pub xfers: Vec<Xfer>,
    pub recvs: Vec<RecvRecord>,
    pub regions: Vec<RegionRecord>,
    /// Node of each rank (one rank per node in this version).
    rank_node: Vec<u32>,
    pub last_activity: Ps,
}

impl Runtime {
    pub fn new(program: Program, overhead: Ps, nics_per_node: u32) -> Runtime {
        let ranks = (0..program.ranks as usize)
            .map(|r| RankState {
                pc: 0,
                wait: Wait::No,
                inflight: Inflight::None,
                finish: None,
                nic_next: 0,
                handles: vec![NONE; program.handles[r] as usize],
                landed: HashMap::new(),
                regions: Vec::new(),
                posted: Vec::new(),
                unexpected: Vec::new(),
                dag: program.deps.as_ref().map(|d| {
                    let d = &d[r];
                    let n = d.requires.len();
                    DagRank {
                        need_requires: d.requires.clone(),
                        need_irequires: d.irequires.clone(),
                        started: vec![false; n],
                        done: vec![false; n],
                        running: NONE,
                        ..Default::default()
                    }
                }),
            })
            .collect();
        let rank_node = (0..program.ranks).collect();
        Runtime {
            program,
            overhead,
            nics_per_node,
            ranks,
            xfers: Vec::new(),
            recvs: Vec::new(),
            regions: Vec::new(),
            rank_node,
            last_activity: 0,
        }
    }

    pub fn rank_finish(&self, rank: u32) -> Option<Ps> {
        self.ranks[rank as usize].finish
    }

    /// Starts every rank at time 0.
    pub fn start(&mut self, q: &mut Queue) {
        for rank in 0..self.program.ranks {
            let r = rank as usize;
            if let Some(dag) = &mut self.ranks[r].dag {
                for op in 0..dag.need_requires.len() as u32 {
                    if dag.need_requires[op as usize] == 0 && dag.need_irequires[op as usize] == 0 {
                        dag.ready.push_back(op);
                    }
                }
                dag.cpu_busy = true;
            }
            q.schedule(0, Event::Rt(RtEvent::Resume { rank }));
        }
    }

    pub fn handle(&mut self, q: &mut Queue, net: &mut Network, now: Ps, ev: RtEvent) {
        match ev {
            RtEvent::Resume { rank } => {
                if self.ranks[rank as usize].dag.is_some() {
                    self.run_dag(q, net, now, rank)
                } else {
                    self.run(q, net, now, rank)
                }
            }
            RtEvent::Submit { xfer } => self.submit(q, net, now, xfer),
            RtEvent::Finish { xfer } => self.finish_xfer(q, now, xfer),
            RtEvent::RecvDone { recv } => self.finish_recv(q, now, recv),
        }
    }

    fn nic_of(&self, rank: u32, index: u32) -> u32 {
        self.rank_node[rank as usize] * self.nics_per_node + index
    }

    fn done(&mut self, rank: u32, now: Ps) {
        self.ranks[rank as usize].finish = Some(now);
        self.last_activity = self.last_activity.max(now);
    }

    /// Runs a sequential rank from its current operation until it blocks, computes or ends.
    fn run(&mut self, q: &mut Queue, net: &mut Network, now: Ps, rank: u32) {
        let r = rank as usize;
        loop {
            let Some(op) = self.program.ops[r].get(self.ranks[r].pc).copied() else {
                self.done(rank, now);
                return;
            };
            match op.kind {
                OpKind::Compute { ps } => {
                    self.ranks[r].pc += 1;
                    if ps > 0 {
                        q.schedule(now + ps, Event::Rt(RtEvent::Resume { rank }));
                        return;
                    }
                }
                OpKind::Put {
                    dst,
                    size,
                    tag,
                    handle,
                    nic,
                } => {
                    self.ranks[r].pc += 1;
                    let id = self.new_xfer(now, rank, XferKind::Put, dst, size, tag, nic, NONE);
                    if handle != NONE {
                        self.ranks[r].handles[handle as usize] = id;
                    }
                    if self.pay_overhead(q, net, now, rank, id) {
                        return;
                    }
                }
                OpKind::Get {
                    src,
                    size,
                    handle,
                    nic,
                } => {
                    self.ranks[r].pc += 1;
                    let id = self.new_xfer(now, rank, XferKind::Get, src, size, 0, nic, NONE);
                    if handle != NONE {
                        self.ranks[r].handles[handle as usize] = id;
                    }
                    if self.pay_overhead(q, net, now, rank, id) {
                        return;
                    }
                }
                OpKind::Poll { tag } => {
                    let st = &mut self.ranks[r];
                    match st.landed.get_mut(&tag) {
                        Some(n) if *n > 0 => {
                            *n -= 1;
                            st.pc += 1;
                        }
                        _ => {
                            st.wait = Wait::Tag(tag);
                            return;
                        }
                    }
                }
                OpKind::Complete { handle } => {
                    let x = self.ranks[r].handles[handle as usize];
                    if self.xfers[x as usize].complete.is_some() {
                        self.ranks[r].pc += 1;
                    } else {
                        self.ranks[r].wait = Wait::Xfer(x);
                        return;
                    }
                }
                OpKind::Send { dst, size, tag } => {
                    // Blocking: issue once, then wait for local completion.
                    if self.ranks[r].inflight == Inflight::None {
                        let id =
                            self.new_xfer(now, rank, XferKind::Msg, dst, size, tag, NONE, NONE);
                        self.ranks[r].inflight = Inflight::Xfer(id);
                        if self.pay_overhead(q, net, now, rank, id) {
                            return;
                        }
                    }
                    let Inflight::Xfer(id) = self.ranks[r].inflight else {
                        unreachable!()
                    };
                    if self.xfers[id as usize].complete.is_none() {
                        self.ranks[r].wait = Wait::Xfer(id);
                        return;
                    }
                    self.ranks[r].inflight = Inflight::None;
                    self.ranks[r].pc += 1;
                }
                OpKind::Recv { src, tag, .. } => {
                    if self.ranks[r].inflight == Inflight::None {
                        let id = self.post_recv(q, now, rank, src, tag, NONE);
                        self.ranks[r].inflight = Inflight::Recv(id);
                    }
                    let Inflight::Recv(id) = self.ranks[r].inflight else {
                        unreachable!()
                    };
                    if self.recvs[id as usize].complete.is_none() {
                        self.ranks[r].wait = Wait::Recv(id);
                        return;
                    }
                    self.ranks[r].inflight = Inflight::None;
                    self.ranks[r].pc += 1;
                }
                OpKind::RegionBegin { region } => {
                    self.ranks[r].regions.push((region, now));
                    self.ranks[r].pc += 1;
                }
                OpKind::RegionEnd { region } => {
                    let st = &mut self.ranks[r];
                    st.pc += 1;
                    if let Some((open, begin)) = st.regions.pop() {
                        debug_assert_eq!(open, region, "schedule reader checks nesting");
                        self.regions.push(RegionRecord {
                            rank,
                            region,
                            begin,
                            end: now,
                        });
                    }
                }
            }
        }
    }

    /// Runs a dependency-graph rank: finish the compute that held the CPU, then start ready
    /// operations until one occupies the CPU.
    fn run_dag(&mut self, q: &mut Queue, net: &mut Network, now: Ps, rank: u32) {
        let r = rank as usize;
        let Some(dag) = self.ranks[r].dag.as_mut() else {
            return;
        };
        dag.cpu_busy = false;
        let running = std::mem::replace(&mut dag.running, NONE);
        if running != NONE {
            self.complete_op(q, now, rank, running);
        }
        loop {
            let Some(dag) = self.ranks[r].dag.as_mut() else {
                return;
            };
            let Some(op) = dag.ready.pop_front() else {
                break;
            };
            let kind = self.program.ops[r][op as usize].kind;
            self.start_op(q, now, rank, op);
            match kind {
                OpKind::Compute { ps } => {
                    if ps > 0 {
                        let dag = self.ranks[r].dag.as_mut().expect("dag rank");
                        dag.running = op;
                        dag.cpu_busy = true;
                        q.schedule(now + ps, Event::Rt(RtEvent::Resume { rank }));
                        return;
                    }
                    self.complete_op(q, now, rank, op);
                }
                OpKind::Send { dst, size, tag } => {
                    let id = self.new_xfer(now, rank, XferKind::Msg, dst, size, tag, NONE, op);
                    if self.overhead > 0 {
                        self.ranks[r].dag.as_mut().expect("dag rank").cpu_busy = true;
                        self.pay_overhead(q, net, now, rank, id);
                        return;
                    }
                    self.submit(q, net, now, id);
                }
                OpKind::Recv { src, tag, .. } => {
                    self.post_recv(q, now, rank, src, tag, op);
                }
                // The GOAL reader only produces compute, send and recv.
                _ => self.complete_op(q, now, rank, op),
            }
        }
        self.check_dag_done(rank, now);
    }

    fn start_op(&mut self, q: &mut Queue, now: Ps, rank: u32, op: u32) {
        let r = rank as usize;
        let Some(deps) = self.program.deps.as_ref() else {
            return;
        };
        let dag = self.ranks[r].dag.as_mut().expect("dag rank");
        dag.started[op as usize] = true;
        for &d in &deps[r].after_start[op as usize] {
            dag.need_irequires[d as usize] -= 1;
            if dag.need_irequires[d as usize] == 0 && dag.need_requires[d as usize] == 0 {
                dag.ready.push_back(d);
            }
        }
        Self::wake_cpu(dag, q, now, rank);
    }

    fn complete_op(&mut self, q: &mut Queue, now: Ps, rank: u32, op: u32) {
        let r = rank as usize;
        let Some(deps) = self.program.deps.as_ref() else {
            return;
        };
        let dag = self.ranks[r].dag.as_mut().expect("dag rank");
        dag.done[op as usize] = true;
        dag.completed += 1;
        for &d in &deps[r].after_complete[op as usize] {
            dag.need_requires[d as usize] -= 1;
            if dag.need_irequires[d as usize] == 0 && dag.need_requires[d as usize] == 0 {
                dag.ready.push_back(d);
            }
        }
        Self::wake_cpu(dag, q, now, rank);
        self.check_dag_done(rank, now);
    }

    fn wake_cpu(dag: &mut DagRank, q: &mut Queue, now: Ps, rank: u32) {
        if !dag.cpu_busy && !dag.ready.is_empty() {
            dag.cpu_busy = true;
            q.schedule(now, Event::Rt(RtEvent::Resume { rank }));
        }
    }

    fn check_dag_done(&mut self, rank: u32, now: Ps) {
        let st = &self.ranks[rank as usize];
        if let Some(dag) = &st.dag {
            if st.finish.is_none() && dag.completed as usize == dag.done.len() {
                self.done(rank, now);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn new_xfer(
        &mut self,
        now: Ps,
        rank: u32,
        kind: XferKind,
        peer: u32,
        size: u64,
        tag: i64,
        nic: u32,
        op: u32,
    ) -> u32 {
        let st = &mut self.ranks[rank as usize];
        let index = if nic == NONE {
            // Round-robin over the node's NICs.
            let i = st.nic_next % self.nics_per_node;
            st.nic_next += 1;
            i
        } else {
            nic // checked against nic.count before the run
        };
        let (src_rank, dst_rank) = match kind {
            XferKind::Put | XferKind::Msg => (rank, peer),
            XferKind::Get => (peer, rank),
        };
        let id = self.xfers.len() as u32;
        self.xfers.push(Xfer {
            kind,
            rank,
            src_rank,
            dst_rank,
            size,
            tag,
            src_nic: self.nic_of(src_rank, index),
            dst_nic: self.nic_of(dst_rank, index),
            issue: now,
            dma_start: None,
            landed: None,
            complete: None,
            op,
        });
        id
    }

    /// Charges the library overhead before the transfer reaches the NIC. Returns true when
    /// the rank must wait for it (a Resume is scheduled).
    fn pay_overhead(
        &mut self,
        q: &mut Queue,
        net: &mut Network,
        now: Ps,
        rank: u32,
        xfer: u32,
    ) -> bool {
        if self.overhead == 0 {
            self.submit(q, net, now, xfer);
            return false;
        }
        q.schedule(now + self.overhead, Event::Rt(RtEvent::Submit { xfer }));
        q.schedule(now + self.overhead, Event::Rt(RtEvent::Resume { rank }));
        true
    }

    fn submit(&mut self, q: &mut Queue, net: &mut Network, now: Ps, xfer: u32) {
        let x = &self.xfers[xfer as usize];
        match x.kind {
            XferKind::Put | XferKind::Msg => {
                net.send_data(q, now, x.src_nic, x.dst_nic, x.size, token(xfer, DATA))
            }
            XferKind::Get => {
                net.send_control(q, now, x.dst_nic, x.src_nic, token(xfer, GET_REQUEST))
            }
        }
    }

    /// Wakes `rank` if it waits for `what`.
    fn wake_if(&mut self, q: &mut Queue, now: Ps, rank: u32, what: Wait) -> bool {
        let st = &mut self.ranks[rank as usize];
        if st.wait == what {
            st.wait = Wait::No;
            q.schedule(now, Event::Rt(RtEvent::Resume { rank }));
            true
        } else {
            false
        }
    }

    fn finish_xfer(&mut self, q: &mut Queue, now: Ps, xfer: u32) {
        let x = &mut self.xfers[xfer as usize];
        x.complete = Some(now);
        let (rank, op) = (x.rank, x.op);
        self.last_activity = self.last_activity.max(now);
        if op != NONE {
            self.complete_op(q, now, rank, op);
        } else {
            self.wake_if(q, now, rank, Wait::Xfer(xfer));
        }
    }

    fn finish_recv(&mut self, q: &mut Queue, now: Ps, recv: u32) {
        let rv = &mut self.recvs[recv as usize];
        rv.complete = Some(now);
        let (rank, op) = (rv.rank, rv.op);
        self.last_activity = self.last_activity.max(now);
        if op != NONE {
            self.complete_op(q, now, rank, op);
        } else {
            self.wake_if(q, now, rank, Wait::Recv(recv));
        }
    }

    fn matches(rv: &RecvRecord, x: &Xfer) -> bool {
        (rv.src == ANY || rv.src == x.src_rank as i64) && (rv.tag == ANY || rv.tag == x.tag)
    }

    /// Pairs a receive with a message; the receive completes `T_pp` later.
    fn matched(&mut self, q: &mut Queue, now: Ps, recv: u32, xfer: u32) {
        self.recvs[recv as usize].xfer = xfer;
        if self.overhead == 0 {
            self.finish_recv(q, now, recv);
        } else {
            q.schedule(now + self.overhead, Event::Rt(RtEvent::RecvDone { recv }));
        }
    }

    fn post_recv(&mut self, q: &mut Queue, now: Ps, rank: u32, src: i64, tag: i64, op: u32) -> u32 {
        let id = self.recvs.len() as u32;
        self.recvs.push(RecvRecord {
            rank,
            src,
            tag,
            posted: now,
            xfer: NONE,
            complete: None,
            op,
        });
        let st = &self.ranks[rank as usize];
        let rv = &self.recvs[id as usize];
        match st
            .unexpected
            .iter()
            .position(|&x| Self::matches(rv, &self.xfers[x as usize]))
        {
            Some(i) => {
                let x = self.ranks[rank as usize].unexpected.remove(i);
                self.matched(q, now, id, x);
            }
            None => self.ranks[rank as usize].posted.push(id),
        }
        id
    }

    /// Reacts to what the network reports.
    pub fn on_notice(&mut self, q: &mut Queue, net: &mut Network, now: Ps, notice: Notice) {
        let tok = match notice {
            Notice::TxStarted { token }
            | Notice::TxDone { token }
            | Notice::Landed { token }
            | Notice::ControlArrived { token } => token,
        };
        let xfer = (tok >> 2) as u32;
        let part = tok & 3;
        let kind = self.xfers[xfer as usize].kind;
        match (notice, part) {
            (Notice::TxStarted { .. }, _) => self.xfers[xfer as usize].dma_start = Some(now),
            (Notice::TxDone { .. }, DATA) if kind == XferKind::Msg => {
                self.finish_xfer(q, now, xfer)
            }
            (Notice::TxDone { .. }, _) => {}
            (Notice::Landed { .. }, DATA) if kind == XferKind::Msg => {
                let x = &mut self.xfers[xfer as usize];
                x.landed = Some(now);
                let dst = x.dst_rank as usize;
                let x = &self.xfers[xfer as usize];
                let pos = self.ranks[dst]
                    .posted
                    .iter()
                    .position(|&rv| Self::matches(&self.recvs[rv as usize], x));
                match pos {
                    Some(i) => {
                        let rv = self.ranks[dst].posted.remove(i);
                        self.matched(q, now, rv, xfer);
                    }
                    None => self.ranks[dst].unexpected.push(xfer),
                }
            }
            (Notice::Landed { .. }, DATA) => {
                let x = &mut self.xfers[xfer as usize];
                x.landed = Some(now);
                let (dst_rank, tag, src_nic, dst_nic) = (x.dst_rank, x.tag, x.src_nic, x.dst_nic);
                if self.wake_if(q, now, dst_rank, Wait::Tag(tag)) {
                    // The woken poll consumes this put.
                    self.ranks[dst_rank as usize].pc += 1;
                } else {
                    *self.ranks[dst_rank as usize].landed.entry(tag).or_insert(0) += 1;
                }
                net.send_control(q, now, dst_nic, src_nic, token(xfer, PUT_ACK));
            }
            (Notice::ControlArrived { .. }, PUT_ACK) | (Notice::Landed { .. }, GET_DATA) => {
                if part == GET_DATA {
                    self.xfers[xfer as usize].landed = Some(now);
                }
                if self.overhead == 0 {
                    self.finish_xfer(q, now, xfer);
                } else {
                    q.schedule(now + self.overhead, Event::Rt(RtEvent::Finish { xfer }));
                }
            }
            (Notice::ControlArrived { .. }, GET_REQUEST) => {
                let x = &self.xfers[xfer as usize];
                net.send_data(q, now, x.src_nic, x.dst_nic, x.size, token(xfer, GET_DATA));
            }
            _ => {}
        }
    }

    /// `Some(report)` if some rank has not finished.
    pub fn deadlock(&self, now: Ps, net: &Network) -> Option<DeadlockReport> {
        let mut blocked = Vec::new();
        for (r, st) in self.ranks.iter().enumerate() {
            if st.finish.is_some() {
                continue;
            }
            if let (Some(dag), Some(deps)) = (&st.dag, &self.program.deps) {
                blocked.push(self.blocked_dag(r, dag, &deps[r]));
                continue;
            }
            let op = self.program.ops[r].get(st.pc);
            let (op_text, location) = op.map_or(("(end)".to_string(), "-".to_string()), |o| {
                (
                    self.program.describe_op(o),
                    self.program.describe_loc(o.loc),
                )
            });
            let waits_for = match st.wait {
                Wait::Tag(t) => format!("a put with tag {t} that never lands (no rank sends it, or an earlier poll consumed it)"),
                Wait::Xfer(x) => {
                    let x = &self.xfers[x as usize];
                    let peer = if x.kind == XferKind::Get { x.src_rank } else { x.dst_rank };
                    format!("its {} to/from rank {peer} to complete", x.kind.name())
                }
                Wait::Recv(rv) => self.describe_recv_wait(rv),
                Wait::No => "an event that never came".to_string(),
            };
            blocked.push(BlockedRank {
                rank: r as u32,
                op: op_text,
                location,
                waits_for,
            });
        }
        if blocked.is_empty() && net.live_packets == 0 {
            return None;
        }
        Some(DeadlockReport {
            time: now,
            blocked,
            network: net.stuck_summary(),
        })
    }

    fn describe_recv_wait(&self, rv: u32) -> String {
        let rv = &self.recvs[rv as usize];
        let any = |v: i64| {
            if v == ANY {
                "any".to_string()
            } else {
                v.to_string()
            }
        };
        format!(
            "a message from rank {} with tag {} that is never sent",
            any(rv.src),
            any(rv.tag)
        )
    }

    fn blocked_dag(&self, r: usize, dag: &DagRank, deps: &RankDeps) -> BlockedRank {
        // The first operation that has not completed.
        let op = dag.done.iter().position(|&d| !d).unwrap_or(0);
        let o = &self.program.ops[r][op];
        let label = deps.labels.get(op).cloned().unwrap_or_default();
        let waits_for = if dag.started[op] {
            match self
                .recvs
                .iter()
                .find(|rv| rv.rank as usize == r && rv.op == op as u32 && rv.complete.is_none())
            {
                Some(_) => {
                    let id = self
                        .recvs
                        .iter()
                        .position(|rv| rv.rank as usize == r && rv.op == op as u32)
                        .unwrap_or(0);
                    self.describe_recv_wait(id as u32)
                }
                None => "its data to leave memory".to_string(),
            }
        } else {
            // Which of its dependencies are unmet.
            let mut missing: Vec<String> = Vec::new();
            for (i, after) in deps.after_complete.iter().enumerate() {
                if after.contains(&(op as u32)) && !dag.done[i] {
                    missing.push(format!("{} to complete", deps.labels[i]));
                }
            }
            for (i, after) in deps.after_start.iter().enumerate() {
                if after.contains(&(op as u32)) && !dag.started[i] {
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
        }
    }

    /// Puts that landed but were never polled, per (rank, tag).
    pub fn unpolled(&self) -> Vec<(u32, i64, u32)> {
        let mut v: Vec<(u32, i64, u32)> = self
            .ranks
            .iter()
            .enumerate()
            .flat_map(|(r, st)| {
                st.landed
                    .iter()
                    .filter(|(_, &n)| n > 0)
                    .map(move |(&t, &n)| (r as u32, t, n))
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// Messages that landed but no receive matched: (src, dst, tag).
    pub fn unmatched_messages(&self) -> Vec<(u32, u32, i64)> {
        let mut v: Vec<(u32, u32, i64)> = self
            .ranks
            .iter()
            .flat_map(|st| {
                st.unexpected.iter().map(|&x| {
                    (
                        self.xfers[x as usize].src_rank,
                        self.xfers[x as usize].dst_rank,
                        self.xfers[x as usize].tag,
                    )
                })
            })
            .collect();
        v.sort_unstable();
        v
    }
}
