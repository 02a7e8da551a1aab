//! One simulation run: machine + program -> results.

use crate::error::{Error, Location, Result};
use crate::machine::loaded::Machine;
use crate::machine::placement::{self, Placement};
use crate::machine::topology::Topology;
use crate::network::flow::FlowNetwork;
use crate::network::packet::PacketNetwork;
use crate::network::{Model, Network};
use crate::program::{OpKind, Program, NONE};
use crate::results::provenance::MachineId;
use crate::results::{self, Results, StopReason};
use crate::run::admission::{admit, estimate_run_memory};
/// How to run a simulation (`run/options.rs`).
pub use crate::run::options::Options;
use crate::run::partition_report::PartitionCounter;
use crate::run::program_part::prepare;
use crate::run::program_part::ProgramPart;
use crate::run::progress::{Reporter, Status};
use crate::run::simulate_threads::{simulate_threads, threads_for, Whole};
use crate::runtime::{RtParams, Runtime};
use crate::units::Ps;
use std::sync::atomic::Ordering;

/// The topology for `ranks` ranks and where each rank lives.
pub fn layout(machine: &Machine, ranks: u32) -> Result<(Topology, Placement)> {
    let (policy, rpn) = (&machine.placement_policy, machine.placement.ranks_per_node);
    let nodes = placement::nodes_needed(policy, rpn, ranks)?;
    let topo = Topology::build(machine, nodes)?;
    if nodes > topo.num_nodes {
        placement::check_fits(policy, rpn, ranks, topo.num_nodes)?;
        return Err(Error::input(
            Location::file("command line").with_field("ranks"),
            format!(
                "{ranks} ranks at {rpn} per node need {nodes} nodes but this {} has {} nodes",
                topo.kind(),
                topo.num_nodes
            ),
        ));
    }
    let placement = placement::place(policy, rpn, ranks)?;
    Ok((topo, placement))
}

/// Checks what a program asks of the machine (NIC indices) before running it.
pub fn check_program(machine: &Machine, program: &Program) -> Result<()> {
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
                    return Err(program.error_at(op.loc, "nic", format!("rank {rank}: nic={nic} but the machine has {nics} NIC(s) per node (nic.count)")));
                }
            }
        }
    }
    Ok(())
}

/// `program` checked against the machine and linked, as a run links it (a program read
/// whole again for a partial one: `Options::read_whole`).
pub fn linked(machine: &Machine, mut program: Program) -> Result<Program> {
    check_program(machine, &program)?;
    crate::program::link::link_keeping(&mut program, &machine.collectives)?;
    Ok(program)
}

/// A time limit given as text (`10ms`), or the input error naming `source` and `field`.
pub fn parse_time_limit(text: Option<&str>, source: &str, field: &str) -> Result<Option<Ps>> {
    text.map(|t| {
        crate::units::parse_time(t)
            .map_err(|m| Error::input(Location::file(source).with_field(field), m))
    })
    .transpose()
}

/// The program checked and linked, admitted to the memory, and laid out on the machine.
pub(super) fn whole_of<'a>(
    machine: &'a Machine,
    program: Program,
    options: &Options,
) -> Result<Whole<'a>> {
    let mut program = program;
    check_program(machine, &program)?;
    let comms = crate::program::link::link_keeping(&mut program, &machine.collectives)?;
    if program.stream.is_some() && comms.is_none() {
        return Err(Error::Internal(
            "a program read as the run goes was linked before it was run".into(),
        ));
    }
    // Before anything large is built: a machine too big for the memory is refused at once.
    if options.memory_check {
        admit(estimate_run_memory(
            machine,
            &program,
            options.tracing(),
            options.model,
        )?)?;
    }
    let (topo, placement) = layout(machine, program.ranks)?;
    Ok(Whole {
        machine,
        program,
        comms,
        topo,
        placement,
    })
}

/// How often (in events) the interrupt flag is looked at.
const INTERRUPT_POLL: u64 = 4096;

/// Runs `program` on `machine` and returns the results (or why it could not finish).
pub fn simulate(machine: &Machine, program: Program) -> Result<Results> {
    simulate_with(machine, program, &Options::default())
}

/// `simulate` with options.
pub fn simulate_with(machine: &Machine, program: Program, options: &Options) -> Result<Results> {
    let started = std::time::Instant::now();
    let whole = whole_of(machine, program, options)?;
    options.phases.lap("link and lay out");
    let threads = options
        .threads
        .map_or(1, |t| threads_for(t, whole.topo.num_routers));
    if threads > 1 {
        let mut results = simulate_threads(whole, threads, options, started)?;
        results.machine = Some(MachineId::of(machine, &machine.name.0));
        return Ok(results);
    }
    let Whole {
        program,
        comms,
        topo,
        placement,
        ..
    } = whole;
    let mut rt = Runtime::new(program, RtParams::from_config(machine), placement);
    if let Some(comms) = comms {
        rt.stream(comms);
    }
    let mut results = match options.model {
        Model::Packet => {
            let mut net = PacketNetwork::new(topo, machine);
            if options.every_credit_an_event {
                net.every_credit_an_event();
            }
            drive(net, rt, options, started)
        }
        Model::Flow => drive(FlowNetwork::new(topo, machine), rt, options, started),
    }?;
    results.machine = Some(MachineId::of(machine, &machine.name.0));
    Ok(results)
}

/// Runs the runtime against network model `net` until the program ends or a limit stops
/// it, and collects the results.
fn drive<N: Network>(
    mut net: N,
    mut rt: Runtime,
    options: &Options,
    started: std::time::Instant,
) -> Result<Results> {
    // The other cores map the pages the run's records are about to fill, and make the
    // results' rows, as they read the program (`--threads 1` keeps to one core).
    let _prefault = crate::prefault::Prefault::while_serial(options.threads);
    let rows = crate::frontends::record::RecordOptions::read_threads_for(options.threads);
    let tables = (rows, !options.no_tables);
    prepare(&mut net, &mut rt, options);
    let phases = &options.phases;
    phases.lap("build network");
    let counter = match options.partitions {
        Some(parts) if !net.measure_coupling(parts, "command line")? => {
            Some(partition_counter(&net, &rt, parts)?)
        }
        _ => None,
    };
    // Events are ordered by their origins (ranks, then the network's entities) at each
    // picosecond: the order of a run on any number of threads.
    let mut run = ProgramPart::new(net, rt, 1);
    run.counter = counter;
    let max_events = options.max_events.unwrap_or(u64::MAX);
    let max_time = options.max_sim_time.unwrap_or(Ps::MAX);
    let mut reporter = Reporter::new(options.progress.as_ref());
    // The run goes in slices of events, between which it looks at the limits and progress.
    let stopped = loop {
        let slice_end = run
            .q
            .processed()
            .saturating_add(INTERRUPT_POLL)
            .min(max_events);
        run.run_events(max_time.saturating_add(1), slice_end)
            .map_err(Error::Internal)?;
        let Some(next) = run.q.peek_time() else {
            break None;
        };
        if next > max_time {
            break Some((StopReason::MaxSimTime, max_time));
        }
        if run.q.processed() >= max_events {
            break Some((StopReason::MaxEvents, next));
        }
        if options
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
        {
            break Some((StopReason::Interrupted, next));
        }
        if reporter.due() {
            reporter.report(Status::Run {
                sim_ps: run.q.now(),
                events: run.q.processed(),
                ranks_finished: run.rt.ranks_finished(),
                ranks: run.rt.program.ranks,
            });
        }
    };
    let ProgramPart {
        mut net,
        mut rt,
        q,
        counter,
        ..
    } = run;
    phases.lap("events");
    // A trace read as the run goes that turned out unreadable ends it with its error.
    if let Some(e) = rt.stream_error() {
        return Err(e);
    }
    if let Some(v) = net.violation().or(rt.violation()).or(q.overflow()) {
        return Err(Error::Internal(format!("model invariant broken: {v}")));
    }
    let wall = started.elapsed().as_secs_f64();
    let events = q.processed();
    if let Some((reason, at)) = stopped {
        let partial = results::Partial {
            reason,
            stopped_at_ps: at,
            ranks_finished: rt.ranks_finished(),
        };
        drop(q);
        net.release_run_state();
        let mut r = results::collect(&mut net, &mut rt, events, wall, Some(partial), tables);
        r.partitions = counter.map(PartitionCounter::finish);
        r.coupling = net.coupling();
        phases.lap("collect results");
        return Ok(r);
    }
    // What happened after the last event without being one (credits that woke nothing)
    // ends the run as its event would have.
    let now = q.now().max(net.settle());
    if let Some(report) = rt.deadlock(now, &net) {
        return Err(Error::Deadlock(Box::new(report)));
    }
    net.check_end(now)
        .and_then(|()| rt.check_end())
        .map_err(|v| Error::Internal(format!("model invariant broken: {v}")))?;
    drop(q);
    net.release_run_state();
    let mut r = results::collect(&mut net, &mut rt, events, wall, None, tables);
    r.partitions = counter.map(PartitionCounter::finish);
    r.coupling = net.coupling();
    phases.lap("collect results");
    Ok(r)
}

/// Counts the run's events for `parts` partitions of `net`: a rank lives at the router of
/// its node's first NIC.
fn partition_counter<N: Network>(net: &N, rt: &Runtime, parts: u32) -> Result<PartitionCounter> {
    let topo = net.topology();
    let rank_router = |rank: u32| {
        let node = rt.placement.node[rank as usize];
        topo.nic_router(topo.node_nic(node, 0))
    };
    PartitionCounter::for_network(net, parts, "command line", rt.entities(), rank_router)
}
