//! The runtime's state: every rank's position in its program and what it waits for, every
//! transfer and posted receive with the times of its phases, and the records a run keeps.
//! The behaviour lives beside it: the interpreter, the dependency-graph executor, CPUs,
//! transfers and matching, records and deadlock diagnosis.

use super::ranks::Ranks;
use crate::engine::Schedule;
use crate::machine::loaded::Machine;
use crate::machine::options::NicSelection;
use crate::machine::placement::Placement;
use crate::program::collectives::{Step, StepGen};
use crate::program::{Op, Program, SrcLoc, NONE};
use crate::units::Ps;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, VecDeque};

/// The queue a run gives the runtime: it holds the runtime's events and the network's.
pub trait Queue<NetEvent>: Schedule<RtEvent> + Schedule<NetEvent> {}

impl<Q: Schedule<RtEvent> + Schedule<NetEvent>, NetEvent> Queue<NetEvent> for Q {}

/// What `start_xfer` issues: kind, peer, size, tag, NIC, context, request slot.
pub(super) type XferArgs = (XferKind, u32, u64, i64, u32, u32, u32);

/// Requests are transfer ids, or receive ids with this bit set.
pub(super) const RECV_BIT: u32 = 1 << 31;

/// What the runtime schedules for itself. Its ids are [`Id`]s, aligned to a byte, so that
/// it takes 7 bytes: beside a network event's tag, which has values to spare, a program
/// run's queue entry (a key and a network's or the runtime's event) is 16 bytes instead of
/// 24 (`queue_entries_are_16_bytes`), and the queue moves a third fewer bytes.
#[derive(Debug, Clone, Copy)]
pub enum RtEvent {
    /// A rank's compute or overhead is over (or its CPU has new work): go on.
    Resume { rank: Id },
    /// The issue overhead of a transfer is paid: hand it to the NIC.
    Submit { xfer: Id },
    /// The completion overhead of a put/get is paid.
    Finish { xfer: Id },
    /// The completion overhead of a receive is paid.
    RecvDone { recv: Id },
    /// What the network would report of a transfer's leg that stays in its node's memory
    /// (`node.intra_node = "memory"`): `what` is a [`Local`] step.
    Local { xfer: Id, part: u8, what: u8 },
}

/// A rank, transfer or receive id in an [`RtEvent`]: a `u32` kept as its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id([u8; 4]);

impl Id {
    #[inline(always)]
    pub fn get(self) -> u32 {
        u32::from_ne_bytes(self.0)
    }
}

impl From<u32> for Id {
    #[inline(always)]
    fn from(id: u32) -> Id {
        Id(id.to_ne_bytes())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
/// A time that may not have come yet, in 8 bytes where `Option<Ps>` takes 16: a run keeps a
/// record per message, millions of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamp(Ps);

impl Stamp {
    pub const NOT_YET: Stamp = Stamp(Ps::MAX);

    pub fn get(self) -> Option<Ps> {
        (self.0 != Ps::MAX).then_some(self.0)
    }

    pub fn is_some(self) -> bool {
        self.0 != Ps::MAX
    }

    pub fn is_none(self) -> bool {
        self.0 == Ps::MAX
    }

    /// It came at `t` (no simulated time reaches `Ps::MAX`).
    pub fn set(&mut self, t: Ps) {
        self.0 = t;
    }

    /// It came at `t`, unless it had come already.
    pub fn set_once(&mut self, t: Ps) {
        if self.is_none() {
            self.0 = t;
        }
    }
}

/// Whether a blocked `WaitAll` counts on a request: no, yes, or yes and, inside a
/// collective, the handle to consume as it completes (stored plus 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Awaited(u32);

impl Awaited {
    pub(super) const NO: Awaited = Awaited(0);
    pub(super) const YES: Awaited = Awaited(1);

    /// Counted on, and handle `h` consumed when done.
    pub(super) fn consuming(h: u32) -> Awaited {
        debug_assert!(h < u32::MAX - 1, "a handle index fits below the marks");
        Awaited(h.wrapping_add(2))
    }

    /// The handle to consume, if any.
    pub(super) fn handle(self) -> Option<u32> {
        self.0.checked_sub(2)
    }
}

/// The messages of one (sender, receiver, context): how many were sent, and how many the
/// receiver matched in order.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Seq {
    pub(super) sent: u32,
    pub(super) received: u32,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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
    pub dma_start: Stamp,
    /// Last byte in the destination's memory (`T_end`).
    pub landed: Stamp,
    /// Completion at the issuing rank (a message: its data has left memory).
    pub complete: Stamp,
    /// Message context (communicator), order among messages of (src, dst, context), and
    /// whether it uses rendezvous.
    pub ctx: u32,
    pub(super) seq: u32,
    pub rendezvous: bool,
    /// The receive it matched, or `NONE`.
    pub(super) recv: u32,
    /// Dependency-graph operation it belongs to, or `NONE`.
    pub(super) op: u32,
    /// The collective call it is a step of, or `NONE` for the program's own transfers.
    pub coll: u32,
    /// A collective step's requests consumed by the waits of its sender and receiver: once
    /// both are, and it is complete, nothing refers to it and its record is reused.
    pub(super) sender_waited: bool,
    pub(super) receiver_waited: bool,
}

/// A posted receive.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RecvRecord {
    pub rank: u32,
    pub src: i64,
    pub tag: i64,
    pub ctx: u32,
    pub posted: Ps,
    /// The message it matched, or `NONE`.
    pub xfer: u32,
    pub complete: Stamp,
    pub(super) op: u32,
}

// Token parts: which leg of a transfer a network message is.
pub(super) const DATA: u64 = 0;

/// Put: acknowledgement. Message: request-to-send.
pub(super) const ACK_OR_RTS: u64 = 1;

/// Get: request. Message: the receiver's rendezvous get request.
pub(super) const REQUEST: u64 = 2;

pub(super) const GET_DATA: u64 = 3;

pub(super) fn token(xfer: u32, part: u64) -> u64 {
    ((xfer as u64) << 2) | part
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum Wait {
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
pub const CATEGORIES: [&str; 13] = [
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

pub(super) fn category(name: &str) -> usize {
    CATEGORIES.iter().position(|c| *c == name).unwrap_or(2)
}

/// One CPU of a dependency-graph rank (GOAL's `cpu N`; most ranks have one).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct DagCpu {
    /// Busy until this time with a computation or a send's overhead.
    pub(super) busy_until: Ps,
    /// Computation that completes when the CPU frees, or `NONE`.
    pub(super) running: u32,
    /// Operations waiting for this CPU, in the order they became ready.
    pub(super) ready: VecDeque<u32>,
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

/// Where one operation of a dependency-graph rank stands: one entry a operation, so that
/// releasing, starting and completing it touch one cache line, not one an array.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct DagOp {
    /// Its `requires` and `irequires` not yet met: it is ready when none are left.
    pub(super) need: u32,
    pub(super) started: bool,
    pub(super) done: bool,
}

/// Dependency-graph state of one rank.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct DagRank {
    pub(super) ops: Vec<DagOp>,
    pub(super) cpus: Vec<DagCpu>,
    /// Ready operations that need no CPU (receives, zero-time computations, sends when the
    /// send overhead is 0): they start as soon as they are ready.
    pub(super) instant: VecDeque<u32>,
    /// A Resume is scheduled at this time to start new ready work (`Ps::MAX`: none).
    pub(super) wake_at: Ps,
    pub(super) completed: u32,
}

/// Time a rank spent, by kind.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RankStats {
    pub compute_ps: Ps,
    pub overhead_ps: Ps,
    /// Blocked time per entry of `CATEGORIES` (inside a collective: the collective's kind).
    pub blocked_ps: [Ps; CATEGORIES.len()],
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct RankState {
    pub(super) pc: usize,
    pub(super) wait: Wait,
    /// Requests of the list a `WaitAll` waits for that have not completed (counted down as
    /// they complete, so a wait over n requests costs O(n), not O(n) per completion).
    pub(super) wait_left: u32,
    /// Woken at a `WaitAll` whose list is done: the resume passes it without a new look.
    pub(super) all_done: bool,
    pub(super) blocked_since: Ps,
    /// A blocking send/recv already issued (encoded request), or `NONE`.
    pub(super) inflight: u32,
    pub(super) finish: Option<Ps>,
    pub(super) nic_next: u32,
    /// Request slot -> encoded request.
    pub(super) handles: Vec<u32>,
    /// Landed puts not yet consumed by a poll, by tag.
    pub(super) landed: HashMap<i64, u32>,
    pub(super) regions: Vec<(u32, Ps)>,
    /// The collective call the rank is in, and its steps generated as the rank goes
    /// (boxed: most ranks are in none at a time).
    /// (Sent between processes apart: `share.rs`.)
    #[serde(skip)]
    pub(super) in_coll: Option<Box<InCollective>>,
    /// Receives not yet matched, in posting order.
    pub(super) posted: Vec<u32>,
    /// Envelopes (eager data or rendezvous requests) not yet matched, in arrival order.
    pub(super) unexpected: Vec<u32>,
    pub(super) stats: RankStats,
    /// Dependency-graph ranks only (GOAL), boxed: a million sequential ranks do not carry
    /// its empty lists.
    pub(super) dag: Option<Box<DagRank>>,
}

impl RankState {
    /// The collective call (`Program::collectives`) the rank is in.
    pub(super) fn collective(&self) -> Option<u32> {
        self.in_coll.as_ref().map(|c| c.id)
    }

    /// On to the next operation: of the collective's round if the rank is in one, else of
    /// its program.
    #[inline]
    pub(super) fn advance(&mut self) {
        match self.in_coll.as_deref_mut() {
            Some(c) => c.at += 1,
            None => self.pc += 1,
        }
    }
}

/// The collective call a rank is in, and its position in the call's steps.
#[derive(Debug, Clone)]
pub(super) struct InCollective {
    /// The collective (`Program::collectives`), and the rank's own call
    /// (`Program::coll_calls`; `NONE` for a communicator creation).
    pub(super) id: u32,
    pub(super) call: u32,
    /// When the rank entered it.
    pub(super) begin: Ps,
    pub(super) gen: StepGen,
    /// Where the call is in the rank's program.
    pub(super) loc: SrcLoc,
    /// Scratch for the steps of a round.
    pub(super) steps: Vec<Step>,
    /// The operations of the current round, and the next to run.
    pub(super) ops: Vec<Op>,
    pub(super) at: usize,
    /// The request lists of the round's waits (`WaitAll { list, count }` indexes here).
    pub(super) lists: Vec<u32>,
    /// Handles of the messages and puts issued and not yet waited for.
    pub(super) messages: Vec<u32>,
    pub(super) puts: Vec<u32>,
    /// Handles waited for, free for the next steps (the next to take last). A wait
    /// consumes its requests (the runtime clears their handles), so a rank's handles number
    /// what its steps have in flight at once.
    pub(super) spare: Vec<u32>,
}

/// What a traced interval of a rank was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TraceKind {
    Compute,
    Overhead,
    /// Blocked, charged to `CATEGORIES[i]`.
    Blocked(u8),
    /// Inside collective call i.
    Collective(u32),
}

/// One interval of a rank's time, recorded when tracing.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct TraceInterval {
    pub rank: u32,
    pub kind: TraceKind,
    pub start: Ps,
    pub end: Ps,
}

/// A closed region on one rank.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RegionRecord {
    pub rank: u32,
    pub region: u32,
    pub begin: Ps,
    pub end: Ps,
}

/// Timing of one collective call over its ranks, and the messages and bytes of its steps
/// (counted as they are issued: their records are reused once done).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct CollRecord {
    pub first_begin: Ps,
    pub last_end: Ps,
    pub sum_ps: Ps,
    pub ranks: u32,
    pub messages: u64,
    pub bytes: u64,
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
    /// Messages within a node as shared-memory copies (bytes/s, latency), or through the
    /// NIC (`None`).
    pub intra_node_copy: Option<(u64, Ps)>,
    /// Compute time charged per byte a collective reduces.
    pub reduce_ps: Ps,
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
            intra_node_copy: machine.intra_node_copy(),
            reduce_ps: machine.collectives.reduce_time_per_byte.0,
        }
    }
}

pub struct Runtime {
    /// Shared by the partitions of a run on threads (a program read as the run goes gets
    /// its own copy, which it fills).
    pub program: std::sync::Arc<Program>,
    pub(super) p: RtParams,
    pub(super) ranks: Ranks<RankState>,
    /// Every transfer and posted receive of the program, in the order they were issued or
    /// posted; those of collective steps are retired once done and their slots reused by
    /// later steps (`free_xfers`, `free_recvs`), so a long run of collectives holds only
    /// the steps in flight.
    pub xfers: Vec<Xfer>,
    pub recvs: Vec<RecvRecord>,
    pub(super) free_xfers: Vec<u32>,
    pub(super) free_recvs: Vec<u32>,
    pub regions: Vec<RegionRecord>,
    pub colls: Vec<CollRecord>,
    pub placement: Placement,
    /// Next sequence number per (src, dst, context), at the sender and at the receiver
    /// (one entry for both: a message looks the pair up once at each end).
    pub(super) seq: HashMap<(u32, u32, u32), Seq>,
    /// Envelopes that arrived ahead of an earlier one from the same sender.
    pub(super) early: HashMap<(u32, u32, u32), BTreeMap<u32, u32>>,
    /// Requests (by `xfers` index, and by `recvs` index) a blocked `WaitAll` counts on
    /// (`Awaited`): inside a collective, with the handle to consume as each completes.
    /// Kept by request, not in a map: a collective step's every message is counted on
    /// once and done once, and a hash map's insertion and removal took about 330
    /// instructions a message of a fat-tree all-to-all.
    pub(super) awaited_xfers: Vec<Awaited>,
    pub(super) awaited_recvs: Vec<Awaited>,
    pub last_activity: Ps,
    /// Per-rank intervals, when tracing.
    pub trace: Option<Vec<TraceInterval>>,
    /// Ranks that finished while some of their requests had not completed.
    pub unfinished: Vec<UnfinishedRequests>,
    /// The runtime's invariants, checked as the run goes (`--check`, debug builds).
    pub(super) checks: Option<Box<CpuChecks>>,
    /// Keep no per-operation records (`summary_only`): the program's own transfers and
    /// receives are retired like a collective's steps once nothing refers to them, so a
    /// long trace holds the requests in flight, not one record per message.
    pub(super) summary_only: bool,
    /// The program's own transfers issued (collective steps excluded), kept or not.
    pub program_transfers: u64,
    /// A streamed program's open streams (`program::stream`).
    pub(super) streams: Option<crate::program::stream::StreamState>,
    /// This runtime's share of a parallel run (`partition.rs`), if it is one of several.
    pub(super) split: Option<Box<RtSplit>>,
    /// A merged parallel run's operations and user receives in the run's order, as their
    /// slots in `xfers` and `recvs` (`merge.rs`): the results read them in this order.
    pub merged: Option<Box<(Vec<u32>, Vec<u32>)>>,
    /// Ranks finished so far.
    pub(super) finished: u32,
}

// What a partition of a run on threads keeps (its behaviour: partition.rs).

/// What a partition keeps of its share of the run.
#[derive(Debug, Default)]
pub(super) struct RtSplit {
    pub(super) me: u32,
    /// The partition of every rank.
    pub(super) of_rank: std::sync::Arc<Vec<u32>>,
    /// Per transfer slot: its name, or `LOCAL`.
    pub(super) names: Vec<u64>,
    /// The transfers between partitions in flight here (issued here or mirrored), by name.
    pub(super) by_name: HashMap<u64, u32>,
    pub(super) next_name: u64,
    /// Mirrors for each partition, until the end of the window.
    pub(super) out: Vec<Vec<Mirror>>,
    /// Time and key of the event being handled, and a count of records made in it: where a
    /// record falls in the run's one order, for the merge.
    pub(super) event: (Ps, u64),
    pub(super) made: u64,
    /// That place of every transfer and receive slot (of kept records).
    pub(super) xfer_order: Vec<Order>,
    pub(super) recv_order: Vec<Order>,
}

/// Where a record was made in the run's order of events: (time, key, count).
pub(super) type Order = (Ps, u64, u64);

/// A transfer issued in another partition, whose other end is here.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Mirror {
    pub(super) name: u64,
    pub(super) xfer: Xfer,
}

/// What the runtime checks of every CPU: it runs one computation or overhead at a time,
/// and its rank cannot finish before the CPU's busy time has passed.
#[derive(Debug, Default)]
pub(super) struct CpuChecks {
    /// Per rank, per CPU: end of its last busy interval, and its busy time so far.
    pub(super) free_at: Vec<Vec<Ps>>,
    pub(super) busy: Vec<Vec<Ps>>,
    pub(super) violation: Option<String>,
}

/// A rank that reached the end of its program with requests still pending (an MPI program
/// that never waits for an isend/irecv).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct UnfinishedRequests {
    pub rank: u32,
    pub count: u32,
    /// What the first of them waits for.
    pub first: String,
}

impl Runtime {
    pub fn new(program: Program, p: RtParams, placement: Placement) -> Runtime {
        Runtime::shared(std::sync::Arc::new(program), p, placement)
    }

    /// A runtime for `program`, which other runtimes (partitions of one run) may share.
    pub fn shared(program: std::sync::Arc<Program>, p: RtParams, placement: Placement) -> Runtime {
        let ranks = (0..program.ranks)
            .map(|r| rank_state(&program, r))
            .collect();
        Runtime::with_ranks(program, p, placement, Ranks::whole(ranks))
    }

    /// Partition `me` of a run whose ranks live in the partitions `of_rank` says: it holds
    /// the state of its own ranks only, and runs them (`make_partition`).
    pub fn partition_of(
        program: std::sync::Arc<Program>,
        p: RtParams,
        placement: Placement,
        (me, of_rank): (u32, std::sync::Arc<Vec<u32>>),
    ) -> Runtime {
        let own: Vec<u32> = (0..program.ranks)
            .filter(|&r| of_rank[r as usize] == me)
            .collect();
        // Room for the idle state too, so that adding it copies nothing.
        let mut states = Vec::with_capacity(own.len() + 1);
        states.extend(own.iter().map(|&r| rank_state(&program, r)));
        let ranks = Ranks::from_own(program.ranks, &own, states, idle_rank());
        Runtime::partition_with(program, p, placement, (me, of_rank), ranks)
    }

    /// Partition `me` of a run whose ranks live where `of_rank` says, holding `ranks`.
    pub(super) fn partition_with(
        program: std::sync::Arc<Program>,
        p: RtParams,
        placement: Placement,
        (me, of_rank): (u32, std::sync::Arc<Vec<u32>>),
        ranks: Ranks<RankState>,
    ) -> Runtime {
        let mut rt = Runtime::with_ranks(program, p, placement, ranks);
        rt.make_partition(me, of_rank);
        rt
    }

    fn with_ranks(
        program: std::sync::Arc<Program>,
        p: RtParams,
        placement: Placement,
        ranks: Ranks<RankState>,
    ) -> Runtime {
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
            free_xfers: Vec::new(),
            free_recvs: Vec::new(),
            regions: Vec::new(),
            colls,
            placement,
            seq: HashMap::default(),
            early: HashMap::default(),
            awaited_xfers: Vec::new(),
            awaited_recvs: Vec::new(),
            last_activity: 0,
            trace: None,
            unfinished: Vec::new(),
            checks: None,
            summary_only: false,
            program_transfers: 0,
            streams: None,
            split: None,
            merged: None,
            finished: 0,
        }
    }

    /// Keeps no per-operation records: the results count the program's operations but list
    /// none (and no receives). For runs whose outputs do not show them.
    pub fn keep_no_records(&mut self) {
        self.summary_only = true;
    }

    /// Reads the operations of a program read as the run goes (`program::stream`) from its
    /// streams, translated with the communicators its linking made.
    pub fn stream(&mut self, comms: crate::program::link::Communicators) {
        self.streams = crate::program::stream::StreamState::start(
            std::sync::Arc::make_mut(&mut self.program),
            comms,
        );
    }

    /// The first error a streamed program's reading met (the run cannot go on).
    pub fn stream_error(&mut self) -> Option<crate::error::Error> {
        self.streams.as_mut().and_then(|s| s.error.take())
    }

    /// Whether the program's transfers and receives are kept for the results.
    pub fn keeps_records(&self) -> bool {
        !self.summary_only
    }

    /// Ranks that reached the end of their program (in a partition: of its own).
    pub fn ranks_finished(&self) -> u32 {
        self.finished
    }

    /// A rank's finish and statistics, read from any thread (the runtime as a whole
    /// holds what only one may): the per-rank results are made on the run's threads.
    pub fn rank_ends<'a>(&'a self) -> impl Fn(u32) -> (Option<Ps>, &'a RankStats) + Sync + 'a {
        let ranks = &self.ranks;
        move |rank| {
            let state = &ranks[rank as usize];
            (state.finish, &state.stats)
        }
    }
}

/// The state of rank `r` of `program` before it starts.
fn rank_state(program: &Program, r: u32) -> RankState {
    let r = r as usize;
    RankState {
        handles: vec![NONE; program.handles[r] as usize],
        dag: program.deps.as_ref().map(|d| {
            let d = &d[r];
            let ops = (d.requires.iter().zip(&d.irequires))
                .map(|(&requires, &irequires)| DagOp {
                    need: requires.saturating_add(irequires),
                    ..DagOp::default()
                })
                .collect();
            Box::new(DagRank {
                ops,
                cpus: vec![DagCpu::default(); d.cpus() as usize],
                wake_at: Ps::MAX,
                ..Default::default()
            })
        }),
        ..idle_rank()
    }
}

/// A rank before it starts, without its handles or dependency graph: what a partition
/// reads of a rank another partition runs.
pub(super) fn idle_rank() -> RankState {
    RankState {
        pc: 0,
        wait: Wait::No,
        wait_left: 0,
        all_done: false,
        blocked_since: 0,
        inflight: NONE,
        finish: None,
        nic_next: 0,
        handles: Vec::new(),
        landed: HashMap::default(),
        regions: Vec::new(),
        in_coll: None,
        posted: Vec::new(),
        unexpected: Vec::new(),
        stats: RankStats::default(),
        dag: None,
    }
}
