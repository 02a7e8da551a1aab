//! A program run on several threads: the machine split into blocks of routers, each with
//! the ranks on its nodes, advanced window by window (`engine::windows`), and the
//! partitions' networks and runtimes merged at the end into what one thread would have
//! left. The results are those of a run on one thread, byte for byte.

use crate::engine::{run_windows, Bounds, Partition, WindowCount};
use crate::error::{Error, Location, Result};
use crate::machine::loaded::Machine;
use crate::machine::placement::Placement;
use crate::machine::topology::Topology;
use crate::network::packet::{check_bytes, PacketNetwork};
use crate::network::{Model, Network};
use crate::program::link::Communicators;
use crate::program::Program;
use crate::results::partitions::Parallel;
use crate::results::{self, Results, StopReason};
use crate::run::options::Options;
use crate::run::program_part::prepare;
use crate::run::program_part::ProgramPart;
use crate::run::progress::{Reporter, Status};
use crate::runtime::{RtParams, Runtime};
use crate::units::Ps;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Routers a thread needs for threads to pay, when `threads = 0` chooses (the measure of
/// synthetic traffic, whose events per router a program's are like: docs/performance.md).
pub const ROUTERS_PER_THREAD: u32 = 1024;

/// The threads a run asks for: `threads`, 0 meaning every core, each with at least
/// `ROUTERS_PER_THREAD` routers.
pub fn threads_for(threads: u32, routers: u32) -> u32 {
    match threads {
        0 => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
            cores.min(routers / ROUTERS_PER_THREAD).max(1)
        }
        n => n,
    }
}

/// What one thread's run needs to be split.
pub(super) struct Whole<'a> {
    pub machine: &'a Machine,
    pub program: Program,
    pub comms: Option<Communicators>,
    pub topo: Topology,
    pub placement: Placement,
}

/// Runs `whole` on `threads` threads (at least 2).
pub(super) fn simulate_threads(
    whole: Whole<'_>,
    threads: u32,
    options: &Options,
    started: std::time::Instant,
) -> Result<Results> {
    let bad = |msg: String| Error::input(Location::file("command line").with_field("threads"), msg);
    if options.model != Model::Packet {
        return Err(bad(format!(
            "the {} model runs on one thread: leave out --threads (or use the packet model)",
            options.model.name()
        )));
    }
    if options.partitions.is_some() {
        return Err(bad(
            "--partitions measures how a serial run would split: it runs on one thread, so leave out --threads".into(),
        ));
    }
    let mut parts = partitions(whole, threads, options)?;
    let grid = parts[0].net.window_grid();
    let limit = options.max_sim_time.unwrap_or(Ps::MAX);
    let max_events = options.max_events.unwrap_or(u64::MAX);
    let interrupt = options.interrupt.clone();
    let interrupted = move || {
        interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
    };
    let events_of = |tallies: &[(u64, u32)]| tallies.iter().map(|t| t.0).sum::<u64>();
    let stop = |_: Ps, tallies: &[(u64, u32)]| events_of(tallies) > max_events || interrupted();
    let ranks = parts[0].rt.program.ranks;
    let mut reporter = Reporter::new(options.progress.as_ref());
    let mut watch = |end: Ps, tallies: &[(u64, u32)]| {
        if reporter.due() {
            reporter.report(Status::Run {
                sim_ps: end,
                events: events_of(tallies),
                ranks_finished: tallies.iter().map(|t| t.1).sum(),
                ranks,
            });
        }
    };
    let bounds = Bounds {
        grid,
        limit,
        stop: &stop,
        no_stop_before: 0,
    };
    let count = run_windows(&mut parts, &bounds, &mut watch).map_err(Error::Internal)?;
    let next = parts.iter().filter_map(|p| p.next_time()).min();
    let stopped = next.map(|t| {
        if t > limit {
            (StopReason::MaxSimTime, limit)
        } else if interrupted() {
            (StopReason::Interrupted, count.reached)
        } else {
            (StopReason::MaxEvents, count.reached)
        }
    });
    finish(parts, stopped, count, threads, started)
}

/// The partitions of a run on `threads` threads, each with its ranks started.
fn partitions(
    whole: Whole<'_>,
    threads: u32,
    options: &Options,
) -> Result<Vec<ProgramPart<PacketNetwork>>> {
    let Whole {
        machine,
        program,
        comms,
        topo,
        placement,
    } = whole;
    let first = PacketNetwork::new(topo.clone(), machine);
    let split = first.partition(threads, "--threads")?;
    let of_router = Arc::new(split.of_router);
    let node_part =
        |node: u32, nic: u32| of_router[topo.nic_router(topo.node_nic(node, nic)) as usize];
    // A node's NICs share its memory and its ranks: they live in one partition.
    let nics = topo.nics_per_node();
    if let Some(node) =
        (0..topo.num_nodes).find(|&n| (1..nics).any(|i| node_part(n, i) != node_part(n, 0)))
    {
        return Err(Error::input(
            Location::file("command line").with_field("threads"),
            format!("node {node} has NICs on routers of different partitions, so the machine cannot be split in {threads}: use one thread"),
        ));
    }
    let of_rank: Arc<Vec<u32>> =
        Arc::new(placement.node.iter().map(|&n| node_part(n, 0)).collect());
    let params = RtParams::from_config(machine);
    let program = Arc::new(program);
    let parts = threads as usize;
    // Each partition's network and runtime are built on a thread of their own.
    let build = |me: u32, net: Option<PacketNetwork>| {
        let mut net = net.unwrap_or_else(|| PacketNetwork::new(topo.clone(), machine));
        net.make_partition(me, of_router.clone());
        if options.every_credit_an_event {
            net.every_credit_an_event();
        }
        let mut rt = Runtime::partition_of(
            program.clone(),
            params.clone(),
            placement.clone(),
            (me, of_rank.clone()),
        );
        if let Some(c) = &comms {
            rt.stream(c.clone());
        }
        prepare(&mut net, &mut rt, options);
        ProgramPart::new(net, rt, parts)
    };
    std::thread::scope(|s| {
        let others: Vec<_> = (1..threads)
            .map(|me| s.spawn(move || build(me, None)))
            .collect();
        let mut all = vec![build(0, Some(first))];
        for h in others {
            all.push(
                h.join()
                    .map_err(|_| Error::Internal("building a partition failed".into()))?,
            );
        }
        Ok(all)
    })
}

/// The partitions' shares merged into one run's results (or the error that ended it).
fn finish(
    parts: Vec<ProgramPart<PacketNetwork>>,
    stopped: Option<(StopReason, Ps)>,
    count: WindowCount,
    threads: u32,
    started: std::time::Instant,
) -> Result<Results> {
    let broken = |v: &str| Error::Internal(format!("model invariant broken: {v}"));
    let mut nets = Vec::with_capacity(parts.len());
    let mut runtimes = Vec::with_capacity(parts.len());
    let (mut events, mut last) = (0, 0);
    for mut p in parts {
        if let Some(e) = p.rt.stream_error() {
            return Err(e);
        }
        if let Some(v) = p.net.violation().or(p.rt.violation()).or(p.q.overflow()) {
            return Err(broken(v));
        }
        events += p.q.processed();
        last = last.max(p.q.now());
        nets.push(p.net);
        runtimes.push(p.rt);
    }
    let wall = started.elapsed().as_secs_f64();
    let parallel = Parallel {
        threads,
        processes: 1,
        windows: count.windows,
        crossings: count.crossings,
    };
    let end = stopped.map_or(last, |(_, at)| at);
    let in_network = in_network_bytes(&nets, end).map_err(|v| broken(&v))?;
    if let Some((reason, at)) = stopped {
        let mut rt = merged(runtimes)?;
        let partial = results::Partial {
            reason,
            stopped_at_ps: at,
            ranks_finished: rt.ranks_finished(),
        };
        let mut net = merged_network(nets)?;
        if let Some(bytes) = in_network {
            let c = net.counters();
            check_bytes(c.bytes_injected, c.bytes_delivered, bytes).map_err(|v| broken(&v))?;
        }
        net.release_run_state();
        let mut r = results::collect(&net, &mut rt, events, wall, Some(partial));
        r.parallel = Some(parallel);
        return Ok(r);
    }
    // What happened after the last event without being one (credits that woke nothing)
    // ends the run as its event would have.
    let mut now = last;
    for n in &mut nets {
        now = now.max(n.settle());
    }
    let in_flight = nets.iter().any(|n| n.in_flight());
    let stuck: Vec<String> = nets.iter().filter_map(|n| n.stuck_summary()).collect();
    for rt in &runtimes {
        rt.check_end().map_err(|v| broken(&v))?;
    }
    let mut rt = merged(runtimes)?;
    let stuck = (!stuck.is_empty()).then(|| stuck.join("; "));
    if let Some(report) = rt.deadlock_report(now, in_flight, stuck) {
        return Err(Error::Deadlock(Box::new(report)));
    }
    let mut net = merged_network(nets)?;
    net.check_end(now).map_err(|v| broken(&v))?;
    net.release_run_state();
    let mut r = results::collect(&net, &mut rt, events, wall, None);
    r.parallel = Some(parallel);
    Ok(r)
}

/// Bytes of the packets still in the network over all partitions, after each checked its
/// own (`None` without the checks on).
fn in_network_bytes(nets: &[PacketNetwork], end: Ps) -> std::result::Result<Option<u64>, String> {
    let mut total = Some(0);
    for n in nets {
        let bytes = n.in_network_bytes(end)?;
        total = total.zip(bytes).map(|(a, b)| a + b);
    }
    Ok(total)
}

fn merged(runtimes: Vec<Runtime>) -> Result<Runtime> {
    crate::runtime::merge(runtimes).ok_or_else(|| Error::Internal("a run with no partition".into()))
}

/// The first partition's network with every partition's counts: what the results read.
fn merged_network(nets: Vec<PacketNetwork>) -> Result<PacketNetwork> {
    let mut nets = nets.into_iter();
    let mut first = nets
        .next()
        .ok_or_else(|| Error::Internal("a run with no partition".into()))?;
    for n in nets {
        first.stats.add(&n.stats);
    }
    Ok(first)
}
