//! One simulation run: machine + program -> results.

use crate::config::MachineConfig;
use crate::engine::{EventQueue, Schedule};
use crate::error::{Error, Location, Result};
use crate::network::{NetEvent, Network};
use crate::program::{OpKind, Program, NONE};
use crate::results::{self, Results};
use crate::runtime::{Placement, RtEvent, RtParams, Runtime};
use crate::topology::{PlannedSize, Topology};
use crate::units::Ps;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Every event of a run.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    Net(NetEvent),
    Rt(RtEvent),
}

impl Schedule<NetEvent> for EventQueue<Event> {
    #[inline]
    fn at(&mut self, time: Ps, event: NetEvent) {
        self.schedule(time, Event::Net(event));
    }
    #[inline]
    fn reserve(&mut self) -> u64 {
        EventQueue::reserve(self)
    }
    #[inline]
    fn at_reserved(&mut self, time: Ps, seq: u64, event: NetEvent) {
        self.schedule_reserved(time, seq, Event::Net(event));
    }
    #[inline]
    fn current_key(&self) -> (Ps, u64) {
        EventQueue::current_key(self)
    }
}

impl Schedule<RtEvent> for EventQueue<Event> {
    #[inline]
    fn at(&mut self, time: Ps, event: RtEvent) {
        self.schedule(time, Event::Rt(event));
    }
    #[inline]
    fn reserve(&mut self) -> u64 {
        EventQueue::reserve(self)
    }
    #[inline]
    fn at_reserved(&mut self, time: Ps, seq: u64, event: RtEvent) {
        self.schedule_reserved(time, seq, Event::Rt(event));
    }
    #[inline]
    fn current_key(&self) -> (Ps, u64) {
        EventQueue::current_key(self)
    }
}

/// The topology for `ranks` ranks and where each rank lives.
pub fn layout(machine: &MachineConfig, ranks: u32) -> Result<(Topology, Placement)> {
    let nodes = crate::placement::nodes_needed(&machine.placement, ranks)?;
    let topo = Topology::build(machine, nodes)?;
    if nodes > topo.num_nodes {
        crate::placement::check_fits(&machine.placement, ranks, topo.num_nodes)?;
        let rpn = machine.placement.ranks_per_node;
        return Err(Error::input(
            Location::file("command line").with_field("ranks"),
            format!(
                "{ranks} ranks at {rpn} per node need {nodes} nodes but this {} has {} nodes",
                topo.kind, topo.num_nodes
            ),
        ));
    }
    let placement = crate::placement::place(&machine.placement, ranks)?;
    Ok((topo, placement))
}

/// Checks what a program asks of the machine (NIC indices) before running it.
pub fn check_program(machine: &MachineConfig, program: &Program) -> Result<()> {
    let nics = machine.nic.count;
    for (rank, ops) in program.ops.iter().enumerate() {
        for (i, op) in ops.iter().enumerate() {
            // GOAL's `nic N` option is kept beside the operation.
            let goal_nic = program
                .deps
                .as_ref()
                .map_or(NONE, |d| d[rank].nic_of(i as u32));
            let nic = match op.kind {
                OpKind::Put { nic, .. } | OpKind::Get { nic, .. } => Some(nic),
                _ if goal_nic != NONE => Some(goal_nic),
                _ => None,
            };
            if let Some(nic) = nic {
                if nic != NONE && nic >= nics {
                    let (file, line) = program
                        .describe_loc(op.loc)
                        .rsplit_once(':')
                        .map_or((String::new(), None), |(f, l)| {
                            (f.to_string(), l.parse().ok())
                        });
                    let mut loc = Location::file(file).with_field("nic");
                    loc.line = line;
                    return Err(Error::input(loc, format!("rank {rank}: nic={nic} but the machine has {nics} NIC(s) per node (nic.count)")));
                }
            }
        }
    }
    Ok(())
}

/// How to run a simulation.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Record per-rank intervals and link activity (for timelines; costs memory).
    pub trace: bool,
    /// Check the model's invariants as the run goes (always on in debug builds).
    pub check: bool,
    /// Stop after this many events, with partial results.
    pub max_events: Option<u64>,
    /// Stop at this simulated time, with partial results.
    pub max_sim_time: Option<Ps>,
    /// Set from outside (Ctrl-C) to stop the run with partial results.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Refuse to start when the estimated memory exceeds what the machine has available.
    pub memory_check: bool,
    /// A timeline will be drawn from the trace after the run (for the memory estimate).
    pub timeline: bool,
    /// Make every returned credit an event, as before credits were kept off the queue when
    /// they wake nothing: the reference that optimisation must match (tests).
    #[doc(hidden)]
    pub every_credit_an_event: bool,
}

/// What a run records beyond its results, for the memory estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracing {
    None,
    /// Per-rank intervals and link activity (`--trace`).
    Trace,
    /// The trace, and a timeline drawn from it (`--timeline`).
    Timeline,
}

impl Tracing {
    pub fn of(options: &Options) -> Tracing {
        match (options.trace, options.timeline) {
            (_, true) => Tracing::Timeline,
            (true, false) => Tracing::Trace,
            (false, false) => Tracing::None,
        }
    }
}

/// Estimated bytes a run of the linked `program` allocates beyond the program itself, from
/// the machine's planned size (nothing is built).
pub fn estimate_run_memory(
    machine: &MachineConfig,
    program: &Program,
    tracing: Tracing,
) -> Result<u64> {
    let nodes = crate::placement::nodes_needed(&machine.placement, program.ranks)?;
    let size = crate::topology::planned_size(machine, nodes);
    Ok(estimate_memory(&size, machine, program, tracing))
}

/// Refuses (exit 5) a machine whose topology alone needs more memory than is available,
/// before it is built (`acesim machine` and `validate` build only the topology).
pub fn admit_machine(machine: &MachineConfig, ranks: u32) -> Result<()> {
    let nodes = crate::placement::nodes_needed(&machine.placement, ranks)?;
    let size = crate::topology::planned_size(machine, nodes);
    let need = Topology::estimate_bytes(&size) * 5 / 4;
    if let Some(have) = memory_budget()? {
        if need > have {
            return Err(Error::TooBig(format!(
                "building this machine needs about {} of memory but only {} is available; use a smaller machine",
                approx_size(need),
                approx_size(have)
            )));
        }
    }
    Ok(())
}

/// `Err(TooBig)` when a run's `need` bytes exceed the memory budget.
pub fn admit(need: u64) -> Result<()> {
    if let Some(have) = memory_budget()? {
        if need > have {
            return Err(Error::TooBig(format!(
                "this run needs about {} of memory but only {} is available; use a smaller machine or program, or --ignore-memory-limit to run anyway",
                approx_size(need),
                approx_size(have)
            )));
        }
    }
    Ok(())
}

/// Estimated bytes of the topology, network state, runtime records and results of a run on
/// a machine of `size`. It errs on the high side (docs/performance.md compares it with
/// measured peaks).
pub fn estimate_memory(
    size: &PlannedSize,
    machine: &MachineConfig,
    program: &Program,
    tracing: Tracing,
) -> u64 {
    let (xfers, recvs) = Runtime::count_transfers(program);
    let topo = Topology::estimate_bytes(size);
    // Message slots are reused once a message lands: about two in flight per rank.
    let net = Network::estimate_bytes(size, machine.router.vcs as u64, 2 * program.ranks as u64);
    let rt = Runtime::estimate_bytes(program);
    let user_ops = xfers; // result rows; collective steps are summarised per call
    let res = results::estimate_bytes(user_ops, recvs, size.links(), program.ranks as u64);
    // Events in flight: a few per transfer at most, 32 bytes each in the queue.
    let events = xfers.min(1 << 24) * 3 * 32;
    // Per operation, measured on 4K- and 16K-rank neighbour exchanges (docs/performance.md):
    // the trace about 110 B (intervals and link activity), a timeline about 3.7 KiB more
    // (its events are built whole before they are written).
    let ops: u64 = program.ops.iter().map(|o| o.len() as u64).sum();
    let traced = match tracing {
        Tracing::None => 0,
        Tracing::Trace => ops * 160,
        Tracing::Timeline => ops * (160 + 4096),
    };
    // Allocator slack and growth by doubling: measured 1.21x the sum on a 128K-rank
    // neighbour exchange.
    (topo + net + rt + res + events + traced) * 5 / 4
}

/// `1.3 GiB`, `880 MiB`: a size for people, rounded.
pub fn approx_size(bytes: u64) -> String {
    let b = bytes as f64;
    for (div, unit) in [
        (1u64 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ] {
        if bytes >= div {
            return format!("{:.1} {unit}", b / div as f64);
        }
    }
    format!("{bytes} B")
}

/// The memory a run may use: `$ACESIM_MEMORY_LIMIT` (a size such as `4GiB`, for shared
/// machines and batch jobs) or else what the operating system says is available.
pub fn memory_budget() -> Result<Option<u64>> {
    match std::env::var("ACESIM_MEMORY_LIMIT") {
        Ok(v) => crate::units::parse_size(&v).map(Some).map_err(|m| {
            Error::input(
                Location::file("environment").with_field("ACESIM_MEMORY_LIMIT"),
                m,
            )
        }),
        Err(_) => Ok(match (available_memory(), address_space_left()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }),
    }
}

/// Address space this process may still map under its limit (`ulimit -v`, Linux
/// `RLIMIT_AS`), if there is a limit: allocations past it fail however much memory is free.
pub fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?; // "unlimited" does not parse: no limit
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used_kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(soft.saturating_sub(used_kib * 1024))
}

/// Memory the operating system says is available (Linux `MemAvailable`), if known.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A time limit given as text (`10ms`), or the input error naming `source` and `field`.
pub fn parse_time_limit(text: Option<&str>, source: &str, field: &str) -> Result<Option<Ps>> {
    text.map(|t| {
        crate::units::parse_time(t)
            .map_err(|m| Error::input(Location::file(source).with_field(field), m))
    })
    .transpose()
}

/// Why a run stopped before its program finished (`max-events`, ... in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    MaxEvents,
    MaxSimTime,
    Interrupted,
}

impl StopReason {
    pub fn name(self) -> &'static str {
        match self {
            StopReason::MaxEvents => "max-events",
            StopReason::MaxSimTime => "max-sim-time",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// How often (in events) the interrupt flag is looked at.
const INTERRUPT_POLL: u64 = 4096;

/// Runs `program` on `machine` and returns the results (or why it could not finish).
pub fn simulate(machine: &MachineConfig, program: Program) -> Result<Results> {
    simulate_with(machine, program, &Options::default())
}

/// `simulate` with options.
pub fn simulate_with(
    machine: &MachineConfig,
    program: Program,
    options: &Options,
) -> Result<Results> {
    let started = std::time::Instant::now();
    let mut program = program;
    check_program(machine, &program)?;
    crate::mpi::link(&mut program, &machine.collectives)?;
    // Before anything large is built: a machine too big for the memory is refused at once.
    if options.memory_check {
        admit(estimate_run_memory(
            machine,
            &program,
            Tracing::of(options),
        )?)?;
    }
    let (topo, placement) = layout(machine, program.ranks)?;
    let mut net = Network::new(topo, machine);
    let tpp = machine.node.overhead.0;
    let params = RtParams {
        overhead: tpp,
        send_overhead: machine.mpi.send_overhead.map_or(tpp, |t| t.0),
        recv_overhead: machine.mpi.recv_overhead.map_or(tpp, |t| t.0),
        eager_threshold: machine.mpi.eager_threshold.0,
        nics_per_node: machine.nic.count,
        nic_by_rank: machine.nic.selection == "by_rank",
    };
    let mut rt = Runtime::new(program, params, placement);
    if options.trace {
        rt.enable_trace();
        net.enable_trace();
    }
    if options.every_credit_an_event {
        net.every_credit_an_event();
    }
    if options.check || cfg!(debug_assertions) {
        net.enable_checks();
        rt.enable_checks();
    }
    let mut q: EventQueue<Event> = EventQueue::default();
    rt.start(&mut q);
    let mut notices = Vec::new();
    let max_events = options.max_events.unwrap_or(u64::MAX);
    let max_time = options.max_sim_time.unwrap_or(Ps::MAX);
    let mut stopped: Option<(StopReason, Ps)> = None;
    let mut last_time = 0;
    while let Some((now, ev)) = q.pop() {
        if now < last_time {
            return Err(Error::Internal(format!(
                "event time went back from {last_time} ps to {now} ps"
            )));
        }
        last_time = now;
        if now > max_time {
            stopped = Some((StopReason::MaxSimTime, max_time));
            break;
        }
        let processed = q.processed();
        if processed > max_events {
            stopped = Some((StopReason::MaxEvents, now));
            break;
        }
        if processed.is_multiple_of(INTERRUPT_POLL)
            && options
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
        {
            stopped = Some((StopReason::Interrupted, now));
            break;
        }
        match ev {
            Event::Net(e) => net.handle(&mut q, now, e),
            Event::Rt(e) => rt.handle(&mut q, &mut net, now, e),
        }
        // Reacting to a notice may produce more (a same-node ack arrives at once).
        while !net.notices.is_empty() {
            std::mem::swap(&mut notices, &mut net.notices);
            for n in notices.drain(..) {
                rt.on_notice(&mut q, &mut net, now, n);
            }
        }
    }
    if let Some(v) = net.violation().or(rt.violation()) {
        return Err(Error::Internal(format!("model invariant broken: {v}")));
    }
    let wall = started.elapsed().as_secs_f64();
    if let Some((reason, at)) = stopped {
        let partial = results::Partial {
            reason,
            stopped_at_ps: at,
            ranks_finished: rt.ranks_finished(),
        };
        let events = q.processed().saturating_sub(1);
        drop(q);
        net.release_run_state();
        return Ok(results::collect(
            machine,
            &net,
            &rt,
            events,
            wall,
            Some(partial),
        ));
    }
    // Credits that woke nothing were not events; the last of them ends the run as its
    // event would have.
    let now = q.now().max(net.settle_all_credits());
    if let Some(report) = rt.deadlock(now, &net) {
        return Err(Error::Deadlock(Box::new(report)));
    }
    net.check_end(now)
        .and_then(|()| rt.check_end())
        .map_err(|v| Error::Internal(format!("model invariant broken: {v}")))?;
    let events = q.processed();
    drop(q);
    net.release_run_state();
    Ok(results::collect(machine, &net, &rt, events, wall, None))
}
