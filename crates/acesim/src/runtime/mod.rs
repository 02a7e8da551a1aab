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
//! **Messages** (MPI). A send pays the send overhead. Up to the eager threshold the data
//! goes at once; a larger message sends a request-to-send control packet and, once a
//! matching receive is posted, the receiver pulls the data with an RDMA get (rendezvous).
//! A send completes when its data has left memory; a receive completes the receive overhead
//! after its data is in memory. Matching follows MPI: context (communicator), source and
//! tag with wildcards; envelopes from one sender are matched in the order they were sent.
//!
//! **Execution.** A sequential program runs one operation after another: non-blocking ones
//! cost their overhead and return, blocking ones suspend the rank. A dependency-graph program
//! (GOAL) starts an operation once its dependencies hold; the rank's CPU runs compute and
//! send overheads one at a time in the order operations became ready.

use crate::engine::Schedule;
use crate::error::{BlockedRank, DeadlockReport};
use crate::machine::loaded::Machine;
use crate::machine::options::NicSelection;
use crate::machine::placement::Placement;
use crate::network::{Network, Notice};
use crate::program::{OpKind, Program, RankDeps, ANY, NONE};
use crate::units::Ps;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// The queue a run gives the runtime: it holds the runtime's events and the network's.
pub trait Queue<NetEvent>: Schedule<RtEvent> + Schedule<NetEvent> {}
impl<Q: Schedule<RtEvent> + Schedule<NetEvent>, NetEvent> Queue<NetEvent> for Q {}

/// What `start_xfer` issues: kind, peer, size, tag, NIC, context, request slot.
type XferArgs = (XferKind, u32, u64, i64, u32, u32, u32);

/// Requests are transfer ids, or receive ids with this bit set.
const RECV_BIT: u32 = 1 << 31;

#[derive(Debug, Clone, Copy)]
pub enum RtEvent {
    /// A rank's compute or overhead is over (or its CPU has new work): go on.
    Resume { rank: u32 },
    /// The issue overhead of a transfer is paid: hand it to the NIC.
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
    /// A message (send/isend and the sends inside collectives).
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
    /// Completion at the issuing rank (a message: its data has left memory).
    pub complete: Option<Ps>,
    /// Message context (communicator), order among messages of (src, dst, context), and
    /// whether it uses rendezvous.
    pub ctx: u32,
    seq: u32,
    pub rendezvous: bool,
    /// The receive it matched, or `NONE`.
    recv: u32,
    /// Dependency-graph operation it belongs to, or `NONE`.
    op: u32,
    /// The collective call it is a step of, or `NONE` for the program's own transfers.
    pub coll: u32,
}

/// A posted receive.
#[derive(Debug, Clone)]
pub struct RecvRecord {
    pub rank: u32,
    pub src: i64,
    pub tag: i64,
    pub ctx: u32,
    pub posted: Ps,
    /// The message it matched, or `NONE`.
    pub xfer: u32,
    pub complete: Option<Ps>,
    op: u32,
}

// Token parts: which leg of a transfer a network message is.
const DATA: u64 = 0;
/// Put: acknowledgement. Message: request-to-send.
const ACK_OR_RTS: u64 = 1;
/// Get: request. Message: the receiver's rendezvous get request.
const REQUEST: u64 = 2;
const GET_DATA: u64 = 3;

fn token(xfer: u32, part: u64) -> u64 {
    ((xfer as u64) << 2) | part
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Running, or waiting for a scheduled Resume.
    No,
    Tag(i64),
    /// One request (encoded).
    Req(u32),
    /// All / any of a request list of the current operation.
    All,
    Any,
}

/// Where blocked time is charged.
pub const CATEGORIES: &[&str] = &[
    "poll",
    "complete",
    "wait",
    "send",
    "recv",
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "alltoall",
    "allgather",
    "gather",
    "scatter",
];

fn category(name: &str) -> usize {
    CATEGORIES.iter().position(|c| *c == name).unwrap_or(2)
}

/// One CPU of a dependency-graph rank (GOAL's `cpu N`; most ranks have one).
#[derive(Debug, Clone)]
struct DagCpu {
    /// Busy until this time with a computation or a send's overhead.
    busy_until: Ps,
    /// Computation that completes when the CPU frees, or `NONE`.
    running: u32,
    /// Operations waiting for this CPU, in the order they became ready.
    ready: VecDeque<u32>,
}

impl Default for DagCpu {
    fn default() -> Self {
        DagCpu {
            busy_until: 0,
            running: NONE,
            ready: VecDeque::new(),
        }
    }
}

/// Dependency-graph state of one rank.
#[derive(Debug, Clone, Default)]
struct DagRank {
    need_requires: Vec<u32>,
    need_irequires: Vec<u32>,
    started: Vec<bool>,
    done: Vec<bool>,
    cpus: Vec<DagCpu>,
    /// Ready operations that need no CPU (receives, zero-time computations, sends when the
    /// send overhead is 0): they start as soon as they are ready.
    instant: VecDeque<u32>,
    /// A Resume is scheduled at this time to start new ready work (`Ps::MAX`: none).
    wake_at: Ps,
    completed: u32,
}

/// Time a rank spent, by kind.
#[derive(Debug, Clone, Default)]
pub struct RankStats {
    pub compute_ps: Ps,
    pub overhead_ps: Ps,
    /// Blocked time per entry of `CATEGORIES` (inside a collective: the collective's kind).
    pub blocked_ps: Vec<Ps>,
}

#[derive(Debug, Clone)]
struct RankState {
    pc: usize,
    wait: Wait,
    blocked_since: Ps,
    /// A blocking send/recv already issued (encoded request), or `NONE`.
    inflight: u32,
    finish: Option<Ps>,
    nic_next: u32,
    /// Request slot -> encoded request.
    handles: Vec<u32>,
    /// Landed puts not yet consumed by a poll, by tag.
    landed: HashMap<i64, u32>,
    regions: Vec<(u32, Ps)>,
    /// Current collective call and when this rank entered it.
    coll: Option<(u32, Ps)>,
    /// Receives not yet matched, in posting order.
    posted: Vec<u32>,
    /// Envelopes (eager data or rendezvous requests) not yet matched, in arrival order.
    unexpected: Vec<u32>,
    stats: RankStats,
    dag: Option<DagRank>,
}

/// What a traced interval of a rank was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceKind {
    Compute,
    Overhead,
    /// Blocked, charged to `CATEGORIES[i]`.
    Blocked(u8),
    /// Inside collective call i.
    Collective(u32),
}

/// One interval of a rank's time, recorded when tracing.
#[derive(Debug, Clone, Copy)]
pub struct TraceInterval {
    pub rank: u32,
    pub kind: TraceKind,
    pub start: Ps,
    pub end: Ps,
}

/// A closed region on one rank.
#[derive(Debug, Clone)]
pub struct RegionRecord {
    pub rank: u32,
    pub region: u32,
    pub begin: Ps,
    pub end: Ps,
}

/// Timing of one collective call over its ranks.
#[derive(Debug, Clone, Default)]
pub struct CollRecord {
    pub first_begin: Ps,
    pub last_end: Ps,
    pub sum_ps: Ps,
    pub ranks: u32,
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

/// Timing parameters of the runtime.
#[derive(Debug, Clone)]
pub struct RtParams {
    /// RDMA library overhead `T_pp`.
    pub overhead: Ps,
    pub send_overhead: Ps,
    pub recv_overhead: Ps,
    pub eager_threshold: u64,
    pub nics_per_node: u32,
    /// Pick a NIC by the rank's index on its node instead of round-robin.
    pub nic_by_rank: bool,
}

impl RtParams {
    /// The runtime's parameters from the machine (MPI overheads default to `node.overhead`).
    pub fn from_config(machine: &Machine) -> RtParams {
        let tpp = machine.node.overhead.0;
        RtParams {
            overhead: tpp,
            send_overhead: machine.mpi.send_overhead.map_or(tpp, |t| t.0),
            recv_overhead: machine.mpi.recv_overhead.map_or(tpp, |t| t.0),
            eager_threshold: machine.mpi.eager_threshold.0,
            nics_per_node: machine.nic.count,
            nic_by_rank: machine.nic_selection == NicSelection::ByRank,
        }
    }
}

pub struct Runtime {
    pub program: Program,
    p: RtParams,
    ranks: Vec<RankState>,
    pub xfers: Vec<Xfer>,
    pub recvs: Vec<RecvRecord>,
    pub regions: Vec<RegionRecord>,
    pub colls: Vec<CollRecord>,
    pub placement: Placement,
    /// Next sequence number per (src, dst, context), at the sender and at the receiver.
    send_seq: HashMap<(u32, u32, u32), u32>,
    recv_seq: HashMap<(u32, u32, u32), u32>,
    /// Envelopes that arrived ahead of an earlier one from the same sender.
    early: HashMap<(u32, u32, u32), BTreeMap<u32, u32>>,
    pub last_activity: Ps,
    /// Per-rank intervals, when tracing.
    pub trace: Option<Vec<TraceInterval>>,
    /// Ranks that finished while some of their requests had not completed.
    pub unfinished: Vec<UnfinishedRequests>,
    /// The runtime's invariants, checked as the run goes (`--check`, debug builds).
    checks: Option<Box<CpuChecks>>,
}

/// What the runtime checks of every CPU: it runs one computation or overhead at a time,
/// and its rank cannot finish before the CPU's busy time has passed.
#[derive(Debug, Default)]
struct CpuChecks {
    /// Per rank, per CPU: end of its last busy interval, and its busy time so far.
    free_at: Vec<Vec<Ps>>,
    busy: Vec<Vec<Ps>>,
    violation: Option<String>,
}

/// A rank that reached the end of its program with requests still pending (an MPI program
/// that never waits for an isend/irecv).
#[derive(Debug, Clone)]
pub struct UnfinishedRequests {
    pub rank: u32,
    pub count: u32,
    /// What the first of them waits for.
    pub first: String,
}

impl Runtime {
    pub fn new(program: Program, p: RtParams, placement: Placement) -> Runtime {
        let ranks = (0..program.ranks as usize)
            .map(|r| RankState {
                pc: 0,
                wait: Wait::No,
                blocked_since: 0,
                inflight: NONE,
                finish: None,
                nic_next: 0,
                handles: vec![NONE; program.handles[r] as usize],
                landed: HashMap::new(),
                regions: Vec::new(),
                coll: None,
                posted: Vec::new(),
                unexpected: Vec::new(),
                stats: RankStats {
                    blocked_ps: vec![0; CATEGORIES.len()],
                    ..Default::default()
                },
                dag: program.deps.as_ref().map(|d| {
                    let d = &d[r];
                    let n = d.requires.len();
                    DagRank {
                        need_requires: d.requires.clone(),
                        need_irequires: d.irequires.clone(),
                        started: vec![false; n],
                        done: vec![false; n],
                        cpus: vec![DagCpu::default(); d.cpus() as usize],
                        wake_at: Ps::MAX,
                        ..Default::default()
                    }
                }),
            })
            .collect();
        let colls = vec![
            CollRecord {
                first_begin: Ps::MAX,
                ..Default::default()
            };
            program.collectives.len()
        ];
        Runtime {
            program,
            p,
            ranks,
            xfers: Vec::new(),
            recvs: Vec::new(),
            regions: Vec::new(),
            colls,
            placement,
            send_seq: HashMap::new(),
            recv_seq: HashMap::new(),
            early: HashMap::new(),
            last_activity: 0,
            trace: None,
            unfinished: Vec::new(),
            checks: None,
        }
    }

    /// Checks the runtime's invariants as the run goes (`violation`, `check_end`).
    pub fn enable_checks(&mut self) {
        let cpus: Vec<usize> = (0..self.program.ranks as usize)
            .map(|r| {
                self.program
                    .deps
                    .as_ref()
                    .map_or(1, |d| d[r].cpus() as usize)
            })
            .collect();
        self.checks = Some(Box::new(CpuChecks {
            free_at: cpus.iter().map(|&n| vec![0; n]).collect(),
            busy: cpus.iter().map(|&n| vec![0; n]).collect(),
            violation: None,
        }));
    }

    /// The first broken invariant, if checks are on and one broke.
    pub fn violation(&self) -> Option<&str> {
        self.checks.as_ref().and_then(|c| c.violation.as_deref())
    }

    /// Invariants of a finished run: no rank finished before its CPUs' busy time.
    pub fn check_end(&self) -> Result<(), String> {
        let Some(c) = &self.checks else {
            return Ok(());
        };
        if let Some(v) = &c.violation {
            return Err(v.clone());
        }
        for (r, st) in self.ranks.iter().enumerate() {
            let Some(finish) = st.finish else { continue };
            for (cpu, &busy) in c.busy[r].iter().enumerate() {
                if finish < busy {
                    return Err(format!(
                        "rank {r} finished at {finish} ps, before the {busy} ps its CPU {cpu} computed and paid overheads"
                    ));
                }
            }
        }
        Ok(())
    }

    /// CPU `cpu` of `rank` is busy from `start` to `end` (checked: never twice at once).
    fn occupy_cpu(&mut self, rank: u32, cpu: u32, start: Ps, end: Ps) {
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

    /// Records per-rank intervals for timelines (costs memory per operation).
    pub fn enable_trace(&mut self) {
        self.trace = Some(Vec::new());
    }

    fn record(&mut self, rank: u32, kind: TraceKind, start: Ps, end: Ps) {
        if let Some(t) = &mut self.trace {
            if end > start {
                t.push(TraceInterval {
                    rank,
                    kind,
                    start,
                    end,
                });
            }
        }
    }

    /// Transfers (puts, gets, messages) and receives the program's operations will create.
    pub fn count_transfers(program: &Program) -> (u64, u64) {
        let (mut xfers, mut recvs) = (0u64, 0u64);
        for op in program.ops.iter().flatten() {
            match op.kind {
                OpKind::Put { .. }
                | OpKind::Get { .. }
                | OpKind::Send { .. }
                | OpKind::Isend { .. } => xfers += 1,
                OpKind::Recv { .. } | OpKind::Irecv { .. } => recvs += 1,
                _ => {}
            }
        }
        (xfers, recvs)
    }

    /// Bytes the runtime allocates for `program`: rank state, one record per transfer and
    /// receive, sequence numbers per communicating pair.
    pub fn estimate_bytes(program: &Program) -> u64 {
        use std::mem::size_of;
        let (xfers, recvs) = Self::count_transfers(program);
        let handles: u64 = program.handles.iter().map(|&h| h as u64).sum();
        program.ranks as u64 * (size_of::<RankState>() as u64 + 64)
            + handles * 4
            + xfers * (size_of::<Xfer>() as u64 + 2 * 48)
            + recvs * size_of::<RecvRecord>() as u64
    }

    pub fn ranks_finished(&self) -> u32 {
        self.ranks.iter().filter(|r| r.finish.is_some()).count() as u32
    }

    pub fn rank_finish(&self, rank: u32) -> Option<Ps> {
        self.ranks[rank as usize].finish
    }

    pub fn rank_stats(&self, rank: u32) -> &RankStats {
        &self.ranks[rank as usize].stats
    }

    /// Starts every rank at time 0.
    pub fn start(&mut self, q: &mut impl Schedule<RtEvent>) {
        for rank in 0..self.program.ranks {
            let r = rank as usize;
            if self.ranks[r].dag.is_some() {
                let n = self.program.ops[r].len() as u32;
                for op in 0..n {
                    let dag = self.ranks[r].dag.as_ref().expect("dag rank");
                    if dag.need_requires[op as usize] == 0 && dag.need_irequires[op as usize] == 0 {
                        self.make_ready(q, 0, rank, op);
                    }
                }
                if let Some(dag) = self.ranks[r].dag.as_mut() {
                    if dag.wake_at == 0 {
                        continue; // make_ready scheduled its Resume
                    }
                    dag.wake_at = 0;
                }
            }
            q.at(0, RtEvent::Resume { rank });
        }
    }

    pub fn handle<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        ev: RtEvent,
    ) {
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

    fn done(&mut self, rank: u32, now: Ps) {
        let pending: Vec<u32> = self.ranks[rank as usize]
            .handles
            .iter()
            .copied()
            .filter(|&e| !self.req_done(e))
            .collect();
        if let Some(&first) = pending.first() {
            self.unfinished.push(UnfinishedRequests {
                rank,
                count: pending.len() as u32,
                first: self.describe_req(first),
            });
        }
        self.ranks[rank as usize].finish = Some(now);
        self.last_activity = self.last_activity.max(now);
    }

    fn req_done(&self, e: u32) -> bool {
        if e == NONE {
            return true;
        }
        if e & RECV_BIT != 0 {
            self.recvs[(e & !RECV_BIT) as usize].complete.is_some()
        } else {
            self.xfers[e as usize].complete.is_some()
        }
    }

    /// The request list of the operation rank `r` is at (WaitAll/WaitAny).
    fn current_list(&self, r: usize) -> &[u32] {
        match self.program.ops[r].get(self.ranks[r].pc).map(|o| o.kind) {
            Some(OpKind::WaitAll { list, count } | OpKind::WaitAny { list, count }) => {
                &self.program.req_lists[list as usize..(list + count) as usize]
            }
            _ => &[],
        }
    }

    fn satisfied(&self, r: usize) -> bool {
        let st = &self.ranks[r];
        match st.wait {
            Wait::No => true,
            Wait::Tag(t) => st.landed.get(&t).is_some_and(|&n| n > 0),
            Wait::Req(e) => self.req_done(e),
            Wait::All => self
                .current_list(r)
                .iter()
                .all(|&h| self.req_done(st.handles[h as usize])),
            Wait::Any => self
                .current_list(r)
                .iter()
                .any(|&h| self.req_done(st.handles[h as usize])),
        }
    }

    /// Suspends rank `r` at the current operation, charging the wait to `cat`.
    fn block(&mut self, r: usize, now: Ps, wait: Wait) {
        let st = &mut self.ranks[r];
        st.wait = wait;
        st.blocked_since = now;
    }

    /// Category blocked time of rank `r` goes to: its collective, else its operation.
    fn blocked_category(&self, r: usize) -> usize {
        let st = &self.ranks[r];
        if let Some((call, _)) = st.coll {
            return category(&self.program.collectives[call as usize].kind);
        }
        match self.program.ops[r].get(st.pc).map(|o| o.kind) {
            Some(OpKind::Poll { .. }) => category("poll"),
            Some(OpKind::Complete { .. }) => category("complete"),
            Some(OpKind::Send { .. }) => category("send"),
            Some(OpKind::Recv { .. }) => category("recv"),
            _ => category("wait"),
        }
    }

    /// Wakes rank `r` if what it waits for now holds.
    fn check_wake(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, r: usize) {
        if self.ranks[r].wait == Wait::No || !self.satisfied(r) {
            return;
        }
        let cat = self.blocked_category(r);
        let since = self.ranks[r].blocked_since;
        self.record(r as u32, TraceKind::Blocked(cat as u8), since, now);
        let st = &mut self.ranks[r];
        st.stats.blocked_ps[cat] += now - st.blocked_since;
        st.wait = Wait::No;
        q.at(now, RtEvent::Resume { rank: r as u32 });
    }

    /// Runs a sequential rank from its current operation until it blocks, computes or ends.
    fn run<N: Network>(&mut self, q: &mut impl Queue<N::Event>, net: &mut N, now: Ps, rank: u32) {
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
                        self.ranks[r].stats.compute_ps += ps;
                        self.occupy_cpu(rank, 0, now, now + ps);
                        self.record(rank, TraceKind::Compute, now, now + ps);
                        q.at(now + ps, RtEvent::Resume { rank });
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
                    let x = (XferKind::Put, dst, size, tag, nic, 0, handle);
                    if self.start_xfer(q, net, now, rank, x, self.p.overhead) {
                        return;
                    }
                }
                OpKind::Get {
                    src,
                    size,
                    handle,
                    nic,
                } => {
                    let x = (XferKind::Get, src, size, 0, nic, 0, handle);
                    if self.start_xfer(q, net, now, rank, x, self.p.overhead) {
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
                        _ => return self.block(r, now, Wait::Tag(tag)),
                    }
                }
                OpKind::Complete { handle: req } | OpKind::Wait { req } => {
                    let e = self.ranks[r].handles[req as usize];
                    if self.req_done(e) {
                        self.ranks[r].pc += 1;
                    } else {
                        return self.block(r, now, Wait::Req(e));
                    }
                }
                OpKind::WaitAll { .. } | OpKind::WaitAny { .. } => {
                    let all = matches!(op.kind, OpKind::WaitAll { .. });
                    let wait = if all { Wait::All } else { Wait::Any };
                    self.ranks[r].wait = wait;
                    let ok = self.satisfied(r);
                    self.ranks[r].wait = Wait::No;
                    if ok {
                        self.ranks[r].pc += 1;
                    } else {
                        return self.block(r, now, wait);
                    }
                }
                OpKind::Test { .. } => self.ranks[r].pc += 1,
                OpKind::Isend {
                    dst,
                    size,
                    tag,
                    comm,
                    req,
                } => {
                    let x = (XferKind::Msg, dst, size, tag, NONE, comm, req);
                    if self.start_xfer(q, net, now, rank, x, self.p.send_overhead) {
                        return;
                    }
                }
                OpKind::Irecv {
                    src,
                    tag,
                    comm,
                    req,
                    ..
                } => {
                    self.ranks[r].pc += 1;
                    let id = self.post_recv(q, net, now, rank, src, tag, comm, NONE);
                    self.set_handle(r, req, id | RECV_BIT);
                }
                OpKind::Send {
                    dst,
                    size,
                    tag,
                    comm,
                } => {
                    // Blocking: issue once (paying the overhead), then wait for completion.
                    if self.ranks[r].inflight == NONE {
                        let id = self.new_xfer(
                            now,
                            rank,
                            XferKind::Msg,
                            dst,
                            size,
                            tag,
                            NONE,
                            comm,
                            NONE,
                        );
                        self.ranks[r].inflight = id;
                        if self.pay_overhead(q, net, now, rank, 0, id, self.p.send_overhead) {
                            return;
                        }
                    }
                    let e = self.ranks[r].inflight;
                    if !self.req_done(e) {
                        return self.block(r, now, Wait::Req(e));
                    }
                    self.ranks[r].inflight = NONE;
                    self.ranks[r].pc += 1;
                }
                OpKind::Recv { src, tag, comm, .. } => {
                    if self.ranks[r].inflight == NONE {
                        let id = self.post_recv(q, net, now, rank, src, tag, comm, NONE);
                        self.ranks[r].inflight = id | RECV_BIT;
                    }
                    let e = self.ranks[r].inflight;
                    if !self.req_done(e) {
                        return self.block(r, now, Wait::Req(e));
                    }
                    self.ranks[r].inflight = NONE;
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
                OpKind::CollBegin { call } => {
                    self.ranks[r].coll = Some((call, now));
                    self.ranks[r].pc += 1;
                }
                OpKind::CollEnd { call } => {
                    let st = &mut self.ranks[r];
                    st.pc += 1;
                    if let Some((_, begin)) = st.coll.take() {
                        self.record(rank, TraceKind::Collective(call), begin, now);
                        let c = &mut self.colls[call as usize];
                        c.first_begin = c.first_begin.min(begin);
                        c.last_end = c.last_end.max(now);
                        c.sum_ps += now - begin;
                        c.ranks += 1;
                    }
                }
                // Linking removes these; an unlinked program never reaches the runtime.
                OpKind::Coll { .. } | OpKind::CommSplit { .. } | OpKind::CommDup { .. } => {
                    self.ranks[r].pc += 1
                }
            }
        }
    }

    /// Issues a non-blocking transfer of the current operation and pays its overhead;
    /// true if the rank waits for that overhead.
    fn start_xfer<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        rank: u32,
        x: XferArgs,
        overhead: Ps,
    ) -> bool {
        let (kind, peer, size, tag, nic, ctx, handle) = x;
        let r = rank as usize;
        self.ranks[r].pc += 1;
        let id = self.new_xfer(now, rank, kind, peer, size, tag, nic, ctx, NONE);
        self.set_handle(r, handle, id);
        self.pay_overhead(q, net, now, rank, 0, id, overhead)
    }

    fn set_handle(&mut self, r: usize, handle: u32, e: u32) {
        if handle != NONE {
            self.ranks[r].handles[handle as usize] = e;
        }
    }

    /// Runs a dependency-graph rank: the computations whose time is over complete, then
    /// ready operations start, each CPU taking its own in the order they became ready,
    /// until every free CPU is busy or nothing is ready.
    fn run_dag<N: Network>(
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
    fn next_ready(&mut self, now: Ps, r: usize) -> Option<(u32, u32)> {
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
    fn start_dag_op<N: Network>(
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
                self.record(rank, TraceKind::Compute, now, now + ps);
                self.occupy_cpu(rank, cpu, now, now + ps);
                let st = &mut self.ranks[r];
                st.stats.compute_ps += ps;
                let c = &mut st.dag.as_mut().expect("dag rank").cpus[cpu as usize];
                c.running = op;
                c.busy_until = now + ps;
                q.at(now + ps, RtEvent::Resume { rank });
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
                self.post_recv(q, net, now, rank, src, tag, comm, op);
            }
            // Zero-time compute, and anything else the GOAL reader never produces.
            _ => self.complete_op(q, now, rank, op),
        }
    }

    /// Operation `op` of a dependency-graph rank has its dependencies: it waits for its CPU
    /// if it needs one, and a Resume looks at it now unless one is on its way.
    fn make_ready(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, rank: u32, op: u32) {
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
            q.at(now, RtEvent::Resume { rank });
        }
    }

    fn start_op(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, rank: u32, op: u32) {
        let r = rank as usize;
        let Some(deps) = self.program.deps.as_ref() else {
            return;
        };
        let dag = self.ranks[r].dag.as_mut().expect("dag rank");
        dag.started[op as usize] = true;
        for i in 0..deps[r].after_start[op as usize].len() {
            let deps = self.program.deps.as_ref().expect("dag program");
            let d = deps[r].after_start[op as usize][i];
            let dag = self.ranks[r].dag.as_mut().expect("dag rank");
            dag.need_irequires[d as usize] -= 1;
            if dag.need_irequires[d as usize] == 0 && dag.need_requires[d as usize] == 0 {
                self.make_ready(q, now, rank, d);
            }
        }
    }

    fn complete_op(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, rank: u32, op: u32) {
        let r = rank as usize;
        let Some(deps) = self.program.deps.as_ref() else {
            return;
        };
        let dag = self.ranks[r].dag.as_mut().expect("dag rank");
        dag.done[op as usize] = true;
        dag.completed += 1;
        for i in 0..deps[r].after_complete[op as usize].len() {
            let deps = self.program.deps.as_ref().expect("dag program");
            let d = deps[r].after_complete[op as usize][i];
            let dag = self.ranks[r].dag.as_mut().expect("dag rank");
            dag.need_requires[d as usize] -= 1;
            if dag.need_irequires[d as usize] == 0 && dag.need_requires[d as usize] == 0 {
                self.make_ready(q, now, rank, d);
            }
        }
        self.check_dag_done(rank, now);
    }

    fn check_dag_done(&mut self, rank: u32, now: Ps) {
        let st = &self.ranks[rank as usize];
        if let Some(dag) = &st.dag {
            if st.finish.is_none() && dag.completed as usize == dag.done.len() {
                self.done(rank, now);
            }
        }
    }

    /// NIC index used by `rank` for its next transfer.
    fn nic_index(&mut self, rank: u32, nic: u32) -> u32 {
        let nics = self.p.nics_per_node;
        if nic != NONE {
            return nic; // checked against nic.count before the run
        }
        if self.p.nic_by_rank {
            return self.placement.local[rank as usize] % nics;
        }
        let st = &mut self.ranks[rank as usize];
        let i = st.nic_next % nics;
        st.nic_next += 1;
        i
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
        ctx: u32,
        op: u32,
    ) -> u32 {
        let (src_rank, dst_rank) = match kind {
            XferKind::Put | XferKind::Msg => (rank, peer),
            XferKind::Get => (peer, rank),
        };
        let index = self.nic_index(rank, nic);
        let nics = self.p.nics_per_node;
        // By rank, each side uses the NIC of its own index on its node.
        let (si, di) = if self.p.nic_by_rank && nic == NONE {
            (
                self.placement.local[src_rank as usize] % nics,
                self.placement.local[dst_rank as usize] % nics,
            )
        } else {
            (index, index)
        };
        let seq = if kind == XferKind::Msg {
            let s = self.send_seq.entry((src_rank, dst_rank, ctx)).or_insert(0);
            *s += 1;
            *s - 1
        } else {
            0
        };
        let id = self.xfers.len() as u32;
        self.xfers.push(Xfer {
            kind,
            rank,
            src_rank,
            dst_rank,
            size,
            tag,
            src_nic: self.placement.node[src_rank as usize] * nics + si,
            dst_nic: self.placement.node[dst_rank as usize] * nics + di,
            issue: now,
            dma_start: None,
            landed: None,
            complete: None,
            ctx,
            seq,
            rendezvous: kind == XferKind::Msg && size > self.p.eager_threshold,
            recv: NONE,
            op,
            coll: self.ranks[rank as usize].coll.map_or(NONE, |(c, _)| c),
        });
        id
    }

    /// Charges an issue overhead on the rank's CPU `cpu` before the transfer reaches the
    /// NIC. Returns true when the rank must wait for it (a Resume is scheduled).
    #[allow(clippy::too_many_arguments)]
    fn pay_overhead<N: Network>(
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
        q.at(now + overhead, RtEvent::Submit { xfer });
        q.at(now + overhead, RtEvent::Resume { rank });
        true
    }

    fn submit<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        xfer: u32,
    ) {
        let x = &self.xfers[xfer as usize];
        match x.kind {
            XferKind::Put => net.send_data(q, now, x.src_nic, x.dst_nic, x.size, token(xfer, DATA)),
            XferKind::Msg if !x.rendezvous => {
                net.send_data(q, now, x.src_nic, x.dst_nic, x.size, token(xfer, DATA))
            }
            XferKind::Msg => {
                net.send_control(q, now, x.src_nic, x.dst_nic, token(xfer, ACK_OR_RTS))
            }
            XferKind::Get => net.send_control(q, now, x.dst_nic, x.src_nic, token(xfer, REQUEST)),
        }
    }

    fn finish_xfer(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, xfer: u32) {
        let x = &mut self.xfers[xfer as usize];
        x.complete = Some(now);
        let (rank, op) = (x.rank, x.op);
        self.request_done(q, now, rank, op);
    }

    fn finish_recv(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, recv: u32) {
        let rv = &mut self.recvs[recv as usize];
        rv.complete = Some(now);
        let (rank, op) = (rv.rank, rv.op);
        self.request_done(q, now, rank, op);
    }

    /// A request of `rank` completed: its dependency-graph operation completes, or the
    /// rank wakes if that is what it waited for.
    fn request_done(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, rank: u32, op: u32) {
        self.last_activity = self.last_activity.max(now);
        if op != NONE {
            self.complete_op(q, now, rank, op);
        } else {
            self.check_wake(q, now, rank as usize);
        }
    }

    fn matches(rv: &RecvRecord, x: &Xfer) -> bool {
        rv.ctx == x.ctx
            && (rv.src == ANY || rv.src == x.src_rank as i64)
            && (rv.tag == ANY || rv.tag == x.tag)
    }

    /// A receive has its message: eager data completes it (after the receive overhead);
    /// a rendezvous request makes the receiver pull the data.
    fn matched<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        recv: u32,
        xfer: u32,
    ) {
        self.recvs[recv as usize].xfer = xfer;
        self.xfers[xfer as usize].recv = recv;
        let x = &self.xfers[xfer as usize];
        if x.rendezvous {
            net.send_control(q, now, x.dst_nic, x.src_nic, token(xfer, REQUEST));
        } else {
            self.complete_recv_after_overhead(q, now, recv);
        }
    }

    fn complete_recv_after_overhead(&mut self, q: &mut impl Schedule<RtEvent>, now: Ps, recv: u32) {
        if self.p.recv_overhead == 0 {
            self.finish_recv(q, now, recv);
        } else {
            q.at(now + self.p.recv_overhead, RtEvent::RecvDone { recv });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn post_recv<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        rank: u32,
        src: i64,
        tag: i64,
        ctx: u32,
        op: u32,
    ) -> u32 {
        let id = self.recvs.len() as u32;
        self.recvs.push(RecvRecord {
            rank,
            src,
            tag,
            ctx,
            posted: now,
            xfer: NONE,
            complete: None,
            op,
        });
        let rv = &self.recvs[id as usize];
        let st = &self.ranks[rank as usize];
        match st
            .unexpected
            .iter()
            .position(|&x| Self::matches(rv, &self.xfers[x as usize]))
        {
            Some(i) => {
                let x = self.ranks[rank as usize].unexpected.remove(i);
                self.matched(q, net, now, id, x);
            }
            None => self.ranks[rank as usize].posted.push(id),
        }
        id
    }

    /// An envelope (eager data, or a rendezvous request) reached its receiver: match it, in
    /// send order per (sender, context).
    fn envelope<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        xfer: u32,
    ) {
        let x = &self.xfers[xfer as usize];
        let key = (x.src_rank, x.dst_rank, x.ctx);
        let expected = self.recv_seq.entry(key).or_insert(0);
        if x.seq != *expected {
            self.early.entry(key).or_default().insert(x.seq, xfer);
            return;
        }
        let mut next = Some(xfer);
        while let Some(x) = next {
            *self.recv_seq.entry(key).or_insert(0) += 1;
            self.match_envelope(q, net, now, x);
            let want = self.recv_seq[&key];
            next = self.early.get_mut(&key).and_then(|m| m.remove(&want));
        }
    }

    fn match_envelope<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        xfer: u32,
    ) {
        let dst = self.xfers[xfer as usize].dst_rank as usize;
        let x = &self.xfers[xfer as usize];
        match self.ranks[dst]
            .posted
            .iter()
            .position(|&rv| Self::matches(&self.recvs[rv as usize], x))
        {
            Some(i) => {
                let rv = self.ranks[dst].posted.remove(i);
                self.matched(q, net, now, rv, xfer);
            }
            None => self.ranks[dst].unexpected.push(xfer),
        }
    }

    /// Reacts to what the network reports.
    pub fn on_notice<N: Network>(
        &mut self,
        q: &mut impl Queue<N::Event>,
        net: &mut N,
        now: Ps,
        notice: Notice,
    ) {
        let tok = match notice {
            Notice::TxStarted { token }
            | Notice::TxDone { token }
            | Notice::Landed { token, .. }
            | Notice::ControlArrived { token } => token,
        };
        let xfer = (tok >> 2) as u32;
        let part = tok & 3;
        let kind = self.xfers[xfer as usize].kind;
        match (kind, notice, part) {
            (_, Notice::TxStarted { .. }, _) => {
                let x = &mut self.xfers[xfer as usize];
                x.dma_start.get_or_insert(now);
            }
            // Messages: the data has left memory (sender done); the data or the
            // request-to-send arrived; the receiver asks for rendezvous data.
            (XferKind::Msg, Notice::TxDone { .. }, DATA) => self.finish_xfer(q, now, xfer),
            (XferKind::Msg, Notice::Landed { .. }, DATA) => {
                self.xfers[xfer as usize].landed = Some(now);
                if self.xfers[xfer as usize].rendezvous {
                    let rv = self.xfers[xfer as usize].recv;
                    self.complete_recv_after_overhead(q, now, rv);
                } else {
                    self.envelope(q, net, now, xfer);
                }
            }
            (XferKind::Msg, Notice::ControlArrived { .. }, ACK_OR_RTS) => {
                self.envelope(q, net, now, xfer)
            }
            (XferKind::Msg, Notice::ControlArrived { .. }, REQUEST) => {
                let x = &self.xfers[xfer as usize];
                net.send_data(q, now, x.src_nic, x.dst_nic, x.size, token(xfer, DATA));
            }
            // Puts: landed (polls may return), then the acknowledgement completes them.
            (XferKind::Put, Notice::Landed { .. }, DATA) => {
                let x = &mut self.xfers[xfer as usize];
                x.landed = Some(now);
                let (dst_rank, tag, src_nic, dst_nic) = (x.dst_rank, x.tag, x.src_nic, x.dst_nic);
                let d = dst_rank as usize;
                *self.ranks[d].landed.entry(tag).or_insert(0) += 1;
                if self.ranks[d].wait == Wait::Tag(tag) {
                    // The woken poll consumes this put.
                    self.check_wake(q, now, d);
                    if let Some(n) = self.ranks[d].landed.get_mut(&tag) {
                        *n -= 1;
                    }
                    self.ranks[d].pc += 1;
                }
                net.send_control(q, now, dst_nic, src_nic, token(xfer, ACK_OR_RTS));
            }
            (XferKind::Put, Notice::ControlArrived { .. }, ACK_OR_RTS)
            | (XferKind::Get, Notice::Landed { .. }, GET_DATA) => {
                if part == GET_DATA {
                    self.xfers[xfer as usize].landed = Some(now);
                }
                if self.p.overhead == 0 {
                    self.finish_xfer(q, now, xfer);
                } else {
                    q.at(now + self.p.overhead, RtEvent::Finish { xfer });
                }
            }
            (XferKind::Get, Notice::ControlArrived { .. }, REQUEST) => {
                let x = &self.xfers[xfer as usize];
                net.send_data(q, now, x.src_nic, x.dst_nic, x.size, token(xfer, GET_DATA));
            }
            _ => {}
        }
    }

    /// `Some(report)` if some rank has not finished.
    pub fn deadlock(&self, now: Ps, net: &impl Network) -> Option<DeadlockReport> {
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
            let (mut op_text, location) = op.map_or(("(end)".to_string(), "-".to_string()), |o| {
                (
                    self.program.describe_op(o),
                    self.program.describe_loc(o.loc),
                )
            });
            if let Some((call, _)) = st.coll {
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
        if blocked.is_empty() && !net.in_flight() {
            return None;
        }
        Some(DeadlockReport {
            time: now,
            cycle: find_cycle(&blocked),
            blocked,
            network: net.stuck_summary(),
        })
    }

    /// The first unfinished rank whose remaining program puts `tag` to rank `dst`, and where
    /// (a poll's deadlock report then names it and can close a circle). Looks at most at a
    /// bounded number of operations, so that a huge program's report stays quick.
    fn later_putter(&self, dst: u32, tag: i64) -> Option<(u32, String)> {
        let mut budget: usize = 10_000_000;
        for (q, st) in self.ranks.iter().enumerate() {
            if st.finish.is_some() || st.dag.is_some() {
                continue;
            }
            let rest = self.program.ops[q].get(st.pc..).unwrap_or(&[]);
            for op in rest.iter().take(budget) {
                if let OpKind::Put { dst: d, tag: t, .. } = op.kind {
                    if d == dst && t == tag {
                        return Some((q as u32, self.program.describe_loc(op.loc)));
                    }
                }
            }
            budget = budget.saturating_sub(rest.len());
            if budget == 0 {
                break;
            }
        }
        None
    }

    /// The rank whose action a pending request needs, if one particular rank can.
    fn waits_on(&self, e: u32) -> Option<u32> {
        if e & RECV_BIT != 0 {
            let rv = &self.recvs[(e & !RECV_BIT) as usize];
            return (rv.src != ANY && rv.xfer == NONE).then_some(rv.src as u32);
        }
        let x = &self.xfers[e as usize];
        // A rendezvous send waits for its receiver to post the matching receive.
        (x.kind == XferKind::Msg && x.rendezvous && x.recv == NONE).then_some(x.dst_rank)
    }

    fn describe_req(&self, e: u32) -> String {
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

    fn describe_recv_wait(&self, rv: u32) -> String {
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

    fn blocked_dag(&self, r: usize, dag: &DagRank, deps: &RankDeps) -> BlockedRank {
        // The first operation that has not completed.
        let op = dag.done.iter().position(|&d| !d).unwrap_or(0);
        let o = &self.program.ops[r][op];
        let label = deps.labels.get(op).cloned().unwrap_or_default();
        let mut waits_on = Vec::new();
        let waits_for =
            if dag.started[op] {
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
            waits_on,
        }
    }

    /// Puts that landed but were never polled, per (rank, tag); collective tags excluded.
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

    /// Messages that arrived but no receive matched: (src, dst, tag, count).
    pub fn unmatched_messages(&self) -> Vec<(u32, u32, i64, u32)> {
        let mut counts: BTreeMap<(u32, u32, i64), u32> = BTreeMap::new();
        for st in &self.ranks {
            for &x in &st.unexpected {
                let x = &self.xfers[x as usize];
                *counts.entry((x.src_rank, x.dst_rank, x.tag)).or_insert(0) += 1;
            }
        }
        for m in self.early.values() {
            for &x in m.values() {
                let x = &self.xfers[x as usize];
                *counts.entry((x.src_rank, x.dst_rank, x.tag)).or_insert(0) += 1;
            }
        }
        counts
            .into_iter()
            .map(|((s, d, t), n)| (s, d, t, n))
            .collect()
    }

    /// Receives posted but never matched (a rank that finished with requests pending).
    pub fn unmatched_receives(&self) -> usize {
        self.ranks.iter().map(|st| st.posted.len()).sum()
    }
}
