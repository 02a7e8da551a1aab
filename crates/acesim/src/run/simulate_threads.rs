//! A program run on several threads: the machine split into blocks of routers, each with
//! the ranks on its nodes, advanced window by window (`engine::windows`), and the
//! partitions' networks and runtimes merged at the end into what one thread would have
//! left. The results are those of a run on one thread, byte for byte.

use crate::engine::{run_windows, Bounds, Partition};
use crate::error::{Error, Location, Result, SentError};
use crate::machine::loaded::Machine;
use crate::machine::placement::Placement;
use crate::machine::topology::Topology;
use crate::network::packet::{check_bytes, PacketNetwork};
use crate::network::{Model, Network, SparseStats};
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
use serde::{Deserialize, Serialize};
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

/// Refuses what a run split into partitions cannot do (`source`: how it was split).
pub(super) fn refuse_unsplittable(options: &Options, source: &str) -> Result<()> {
    let bad = |msg: String| Error::input(Location::file("command line").with_field("threads"), msg);
    if options.model != Model::Packet {
        return Err(bad(format!(
            "the {} model runs on one thread and in one process: leave out {source} (or use the packet model)",
            options.model.name()
        )));
    }
    if options.partitions.is_some() {
        return Err(bad(format!(
            "--partitions measures how a serial run would split: it runs on one thread, so leave out {source}"
        )));
    }
    Ok(())
}

/// Runs `whole` on `threads` threads (at least 2).
pub(super) fn simulate_threads(
    whole: Whole<'_>,
    threads: u32,
    options: &Options,
    started: std::time::Instant,
) -> Result<Results> {
    refuse_unsplittable(options, "--threads")?;
    let (mut parts, _) = partitions(whole, (threads, None), options)?;
    options.phases.lap("build partitions");
    let limit = options.max_sim_time.unwrap_or(Ps::MAX);
    let stop = stop_rule(options);
    let ranks = parts[0].rt.program.ranks;
    let mut reporter = Reporter::new(options.progress.as_ref());
    let mut watch = |end: Ps, tallies: &[Tally]| watch_run(&mut reporter, ranks, end, tallies);
    let bounds = Bounds {
        grid: parts[0].net.window_grid(),
        limit,
        stop: &stop,
        no_stop_before: 0,
    };
    let count = run_windows(&mut parts, &bounds, &mut watch).map_err(Error::Internal)?;
    options.phases.lap("windows");
    let status: Vec<_> = parts
        .iter()
        .map(|p| (p.next_time(), p.tally(), p.q.now()))
        .collect();
    let (stopped, end) = stop_of(&status, limit, count.reached);
    // Each partition ends on a thread of its own (settling its credits). Only the first's
    // network is kept, and the others' counts are added to it: each other partition hands
    // its counts over as soon as it has ended and then frees the rest of its network on its
    // thread, while the first adds them, before the runtimes are merged, which is when a
    // large run peaks.
    let complete = stopped.is_none();
    let tables = !options.no_tables;
    let mut parts = parts.into_iter();
    let first = parts
        .next()
        .ok_or_else(|| Error::Internal("a run with no partition".into()))?;
    let (first_end, net, first_rt, others) = std::thread::scope(|s| {
        let others: Vec<_> = parts
            .map(|p| {
                let (send, ended) = std::sync::mpsc::channel();
                let freed = s.spawn(move || {
                    let (ended, mut net, rt) = Ended::of(p, end, complete, (true, tables));
                    let counts = std::mem::take(&mut net.stats);
                    // A closed channel means the first partition's thread is gone.
                    let _ = send.send((ended, rt, counts));
                    drop(net);
                });
                (ended, freed)
            })
            .collect();
        let (ended, mut net, rt) = Ended::of(first, end, complete, (true, tables));
        // Every partition's counts are added (in partition order) before any is joined,
        // so none waits for another's network to be freed.
        let received: Vec<_> = (1..)
            .zip(others)
            .map(|(part, (other, freed))| {
                let got = other.recv().ok().map(|(ended, rt, counts)| {
                    match tables {
                        true => net.add_counts_of(part, &counts),
                        false => net.stats.counters.add(&counts.counters),
                    }
                    (ended, rt)
                });
                (got, freed)
            })
            .collect();
        // A partition that panicked sent nothing, or failed freeing its network.
        let others: Vec<_> = received
            .into_iter()
            .map(|(got, freed)| freed.join().ok().and(got))
            .collect();
        (ended, net, rt, others)
    });
    let (mut ends, mut runtimes) = (vec![first_end], vec![first_rt]);
    for other in others {
        let (ended, rt) =
            other.ok_or_else(|| Error::Internal("ending a partition failed".into()))?;
        ends.push(ended);
        runtimes.push(rt);
    }
    let parallel = Parallel {
        threads,
        processes: 1,
        windows: count.windows,
        crossings: count.crossings,
    };
    options.phases.lap("end partitions");
    finish(net, runtimes, ends, (stopped, parallel), (started, options))
}

/// A partition's tally: events handled, ranks finished, interrupted.
pub(super) type Tally = (u64, u32, bool);

/// When the partitions stop at a window's end: past the events asked for, or interrupted
/// (the same decision in every partition: it reads only the tallies).
pub(super) fn stop_rule(options: &Options) -> impl Fn(Ps, &[Tally]) -> bool {
    let max_events = options.max_events.unwrap_or(u64::MAX);
    move |_: Ps, tallies: &[Tally]| {
        tallies.iter().map(|t| t.0).sum::<u64>() > max_events || tallies.iter().any(|t| t.2)
    }
}

/// Progress at a window's end.
pub(super) fn watch_run(reporter: &mut Reporter, ranks: u32, end: Ps, tallies: &[Tally]) {
    if reporter.due() {
        reporter.report(Status::Run {
            sim_ps: end,
            events: tallies.iter().map(|t| t.0).sum(),
            ranks_finished: tallies.iter().map(|t| t.1).sum(),
            ranks,
        });
    }
}

/// Why the run stopped before its end (and when), from every partition's next event, tally
/// and clock after the last window; and the time the run ended.
pub(super) fn stop_of(
    status: &[(Option<Ps>, Tally, Ps)],
    limit: Ps,
    reached: Ps,
) -> (Option<(StopReason, Ps)>, Ps) {
    let next = status.iter().filter_map(|s| s.0).min();
    let stopped = next.map(|t| {
        if t > limit {
            (StopReason::MaxSimTime, limit)
        } else if status.iter().any(|s| s.1 .2) {
            (StopReason::Interrupted, reached)
        } else {
            (StopReason::MaxEvents, reached)
        }
    });
    let last = status.iter().map(|s| s.2).max().unwrap_or(0);
    (stopped, stopped.map_or(last, |(_, at)| at))
}

/// How the machine is split: the program, its parameters and placement, and the partition
/// of every rank (what process 0 needs to rebuild the others' runtimes).
pub(super) struct Split {
    pub program: Arc<Program>,
    pub params: RtParams,
    pub placement: Placement,
    pub of_rank: Arc<Vec<u32>>,
}

/// The partitions of a run split in `blocks` (all of them, or only the blocks `only`),
/// each with its ranks started.
pub(super) fn partitions(
    whole: Whole<'_>,
    (blocks, only): (u32, Option<std::ops::Range<u32>>),
    options: &Options,
) -> Result<(Vec<ProgramPart<PacketNetwork>>, Split)> {
    let Whole {
        machine,
        program,
        comms,
        topo,
        placement,
    } = whole;
    let source = if only.is_some() {
        "mpirun -np"
    } else {
        "--threads"
    };
    let split = PacketNetwork::partition_machine(&topo, machine, blocks, source)?;
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
            format!("node {node} has NICs on routers of different partitions, so the machine cannot be split in {blocks}: use one thread and one process"),
        ));
    }
    let of_rank: Arc<Vec<u32>> =
        Arc::new(placement.node.iter().map(|&n| node_part(n, 0)).collect());
    let params = RtParams::from_config(machine);
    let program = Arc::new(program);
    let parts = blocks as usize;
    // Each partition's network and runtime are built on a thread of their own.
    let build = |me: u32| {
        let mut net = PacketNetwork::new_partition(topo.clone(), machine, me, of_router.clone());
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
        let mut part = ProgramPart::new(net, rt, parts);
        part.interrupt = options.interrupt.clone();
        part
    };
    let mine = only.unwrap_or(0..blocks);
    let built = std::thread::scope(|s| {
        let others: Vec<_> = mine
            .clone()
            .skip(1)
            .map(|me| s.spawn(move || build(me)))
            .collect();
        let mut all = vec![build(mine.start)];
        for h in others {
            all.push(
                h.join()
                    .map_err(|_| Error::Internal("building a partition failed".into()))?,
            );
        }
        Ok::<_, Error>(all)
    })?;
    let split = Split {
        program,
        params,
        placement,
        of_rank,
    };
    Ok((built, split))
}

/// What a partition leaves when the run ends, beside its runtime: what the end of the run
/// needs of its network (the counts, and the checks it made of itself), and whether its
/// runtime failed.
#[derive(Serialize, Deserialize)]
pub(super) struct Ended {
    /// A trace read as the run goes that turned out unreadable.
    stream_error: Option<SentError>,
    broken: Option<String>,
    events: u64,
    /// Bytes of the packets still in the network at the end, or the invariant broken.
    in_network: std::result::Result<Option<u64>, String>,
    /// When what happened after the last event ended (a run that finished).
    settled: Ps,
    in_flight: bool,
    stuck: Option<String>,
    runtime_end: std::result::Result<(), String>,
    stats: SparseStats,
}

impl Ended {
    /// Partition `p` ended at `end` (`complete`: with nothing left to do). Its network
    /// keeps its counts (`keeps_counts`) on threads, where they are added whole
    /// (`PacketNetwork::add_counts_of`), and in process 0's first partition; the other
    /// processes' partitions make them sparse to send them, reading the links they send on,
    /// or send only the totals when the run makes no `tables`.
    pub(super) fn of(
        p: ProgramPart<PacketNetwork>,
        end: Ps,
        complete: bool,
        (keeps_counts, tables): (bool, bool),
    ) -> (Ended, PacketNetwork, Runtime) {
        let ProgramPart {
            mut net, mut rt, q, ..
        } = p;
        let stream_error = rt.stream_error().map(SentError::from);
        let broken = net
            .violation()
            .or(rt.violation())
            .or(q.overflow())
            .map(str::to_string);
        let in_network = net.in_network_bytes(end);
        // What happened after the last event without being one (credits that woke
        // nothing) ends the run as its event would have.
        let settled = if complete { net.settle() } else { 0 };
        let ended = Ended {
            stream_error,
            broken,
            events: q.processed(),
            in_network,
            settled: settled.max(q.now()),
            in_flight: net.in_flight(),
            stuck: net.stuck_summary(),
            runtime_end: if complete { rt.check_end() } else { Ok(()) },
            stats: match (keeps_counts, tables) {
                (true, _) => SparseStats::default(),
                (false, true) => net.take_sparse_stats(),
                (false, false) => net.stats.totals(),
            },
        };
        (ended, net, rt)
    }
}

/// The partitions' shares merged into one run's results (or the error that ended it):
/// `net` is the first partition's network, `runtimes` and `ends` every partition's.
pub(super) fn finish(
    mut net: PacketNetwork,
    runtimes: Vec<Runtime>,
    ends: Vec<Ended>,
    (stopped, parallel): (Option<(StopReason, Ps)>, Parallel),
    (started, options): (std::time::Instant, &Options),
) -> Result<Results> {
    let phases = &options.phases;
    let broken = |v: &str| Error::Internal(format!("model invariant broken: {v}"));
    // What only a running network needs goes first: the end needs only its counts. A run
    // given several threads frees it on another (`free_aside`).
    let aside = parallel.threads > 1;
    free_aside(net.take_run_state(), aside);
    let (mut events, mut now, mut in_flight) = (0, 0, false);
    let (mut in_network, mut stuck) = (Some(0), Vec::new());
    for (i, e) in ends.into_iter().enumerate() {
        if let Some(e) = e.stream_error {
            return Err(e.into());
        }
        if let Some(v) = &e.broken {
            return Err(broken(v));
        }
        events += e.events;
        now = now.max(e.settled);
        in_flight |= e.in_flight;
        stuck.extend(e.stuck);
        let bytes = e.in_network.map_err(|v| broken(&v))?;
        in_network = in_network.zip(bytes).map(|(a, b)| a + b);
        if stopped.is_none() {
            e.runtime_end.map_err(|v| broken(&v))?;
        }
        // The partitions' counts added in partition order (busy intervals in that order)
        // to the first's, which its network kept.
        if i > 0 {
            net.stats.add_sparse(&e.stats);
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let mut rt = crate::runtime::merge(runtimes)
        .ok_or_else(|| Error::Internal("a run with no partition".into()))?;
    phases.lap("merge runtimes");
    let partial = match stopped {
        Some((reason, at)) => {
            if let Some(bytes) = in_network {
                let c = net.counters();
                check_bytes(c.bytes_injected, c.bytes_delivered, bytes).map_err(|v| broken(&v))?;
            }
            Some(results::Partial {
                reason,
                stopped_at_ps: at,
                ranks_finished: rt.ranks_finished(),
            })
        }
        None => {
            let stuck = (!stuck.is_empty()).then(|| stuck.join("; "));
            if rt.program.partial && rt.ranks_finished() < rt.program.ranks {
                // The report reads what blocked ranks still have to do, whichever process
                // ran them: from the whole program, read again.
                rt.program = Arc::new(options.whole_program()?);
            }
            if let Some(report) = rt.deadlock_report(now, in_flight, stuck) {
                return Err(Error::Deadlock(Box::new(report)));
            }
            net.check_end(now).map_err(|v| broken(&v))?;
            None
        }
    };
    let mut r = results::collect(
        &mut net,
        &mut rt,
        events,
        wall,
        partial,
        (parallel.threads as usize, !options.no_tables),
    );
    r.parallel = Some(parallel);
    // What is left of the network and the runtime: the program's operations, the ranks'
    // states.
    free_aside((net, rt), aside);
    phases.lap("collect results");
    Ok(r)
}

/// Frees `value`, on a thread of its own when `aside` (a run given several threads): a
/// million-rank run's end frees gigabytes, a tenth of a second each time, which the
/// results and outputs need not wait for. (A process that ends first lets the system take
/// the rest back.)
fn free_aside<T: Send + 'static>(value: T, aside: bool) {
    if aside {
        // A thread the system cannot start drops its closure, and `value` with it, here.
        let _ = std::thread::Builder::new().spawn(move || drop(value));
    } else {
        drop(value);
    }
}
