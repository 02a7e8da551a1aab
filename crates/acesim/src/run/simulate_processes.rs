//! A program run across processes (`mpirun -np P acesim run ...`): the machine split into
//! P blocks of routers as for threads (`simulate_threads.rs`), one block and the ranks on
//! its nodes in each process, which advance in the same windows and exchange what crosses
//! through an [`Exchange`] (MPI from the command line). When the run ends every process
//! sends process 0 its runtime and its network's counts, and process 0 merges them as the
//! partitions of threads are merged: its results are those of a run in one process, byte
//! for byte.

use crate::engine::{gather_all, gather_first, run_processes, Bounds, Exchange, Group, Partition};
use crate::error::{Error, Location, Result};
use crate::machine::loaded::Machine;
use crate::network::packet::PacketNetwork;
use crate::program::Program;
use crate::results::partitions::Parallel;
use crate::results::provenance::MachineId;
use crate::results::Results;
use crate::run::options::Options;
use crate::run::progress::Reporter;
use crate::run::simulate::{simulate_with, whole_of};
use crate::run::simulate_threads::{
    finish, partitions, refuse_unsplittable, stop_of, stop_rule, threads_for, watch_run, Ended,
    Tally,
};
use crate::runtime::{Runtime, RuntimeShare};
use crate::units::Ps;

/// Runs `program` on `machine` as this process's share of a run across the processes of
/// `ex`: the results on process 0, `None` on the others (every process returns the same
/// input errors; a run's own error, such as a deadlock, is returned by process 0).
pub fn simulate_across(
    machine: &Machine,
    program: Program,
    options: &Options,
    ex: &dyn Exchange,
) -> Result<Option<Results>> {
    if ex.count() <= 1 {
        return simulate_with(machine, program, options).map(Some);
    }
    let started = std::time::Instant::now();
    refuse_unsplittable(options, "mpirun")?;
    agree(ex, machine, &program, options)?;
    options.phases.lap("agree on inputs");
    let internal = |e: String| Error::Internal(e);
    let whole = match program.partial {
        false => whole_of(machine, program, options)?,
        // Linking a partial program reads only some ranks' operations: a process that
        // failed makes every process lay out the whole program, for its first error.
        true => agreed(ex, whole_of(machine, program, options), || {
            whole_of(machine, options.whole_program()?, options)
        })?,
    };
    options.phases.lap("link and lay out");
    let ranks = whole.program.ranks;
    // Each process runs `threads` partitions, on as many threads.
    let routers = whole.topo.num_routers / ex.count() as u32;
    let threads = threads_for(options.threads.unwrap_or(1), routers);
    let blocks = ex.count() as u32 * threads;
    let me = ex.me() as u32 * threads;
    let (mut parts, split) = partitions(whole, (blocks, Some(me..me + threads)), options)?;
    options.phases.lap("build partitions");
    let mut part = Group::new(&mut parts, (me as usize, blocks as usize), sum_tallies);
    let limit = options.max_sim_time.unwrap_or(Ps::MAX);
    let stop = stop_rule(options);
    let mut reporter = Reporter::new(options.progress.as_ref());
    let mut watch = |end: Ps, tallies: &[Tally]| watch_run(&mut reporter, ranks, end, tallies);
    let bounds = Bounds {
        grid: part.parts[0].net.window_grid(),
        limit,
        stop: &stop,
        no_stop_before: 0,
    };
    let mut count = run_processes(&mut part, ex, &bounds, &mut watch).map_err(internal)?;
    options.phases.lap("windows");
    count.crossings += gather_all(ex, &part.crossings)
        .map_err(internal)?
        .iter()
        .sum::<u64>();
    let now = part.parts.iter().map(|p| p.q.now()).max().unwrap_or(0);
    let status = gather_all(ex, &(part.next_time(), part.tally(), now)).map_err(internal)?;
    let (stopped, end) = stop_of(&status, limit, count.reached);
    let (mut ends, mut nets, mut runtimes) = (Vec::new(), Vec::new(), Vec::new());
    for (i, p) in parts.into_iter().enumerate() {
        // Process 0's first network is the one the counts are added to.
        let keeps_counts = ex.me() == 0 && i == 0;
        let (ended, net, mut rt) = Ended::of(
            p,
            end,
            stopped.is_none(),
            (keeps_counts, !options.no_tables),
        );
        rt.leave_free_slots();
        ends.push(ended);
        nets.push(net);
        runtimes.push(rt);
    }
    // Only the first partition's network is kept (for the counts merged into it).
    nets.truncate(1);
    options.phases.lap("end partitions");
    // Process 0 keeps its own shares; the others send theirs. When every rank finished
    // and the results read no rank's row, those that finished cleanly stay behind: process
    // 0 neither decodes nor holds half a million states it would not read.
    let finished: u32 = status.iter().map(|s| s.1 .1).sum();
    let without_finished =
        options.no_tables && finished == ranks && split.program.traced_windows.is_none();
    let sent: Option<Vec<(Ended, RuntimeShare)>> = match ex.me() {
        0 => None,
        _ => Some(
            ends.drain(..)
                .zip(runtimes.drain(..).map(|rt| rt.into_share(without_finished)))
                .collect(),
        ),
    };
    let Some(all) = gather_first(ex, sent).map_err(internal)? else {
        return Ok(None);
    };
    for (q, shares) in all.into_iter().enumerate().skip(1) {
        let shares = shares.ok_or_else(|| Error::Internal(format!("process {q} sent no share")))?;
        for (i, (e, share)) in shares.into_iter().enumerate() {
            ends.push(e);
            runtimes.push(Runtime::from_share(
                split.program.clone(),
                split.params.clone(),
                split.placement.clone(),
                ((q as u32 * threads) + i as u32, split.of_rank.clone()),
                share,
            ));
        }
    }
    let net = nets.swap_remove(0);
    options.phases.lap("gather shares");
    let parallel = Parallel {
        threads,
        processes: ex.count() as u32,
        windows: count.windows,
        crossings: count.crossings,
    };
    let mut results = finish(net, runtimes, ends, (stopped, parallel), (started, options))?;
    results.machine = Some(MachineId::of(machine, &machine.name.0));
    Ok(Some(results))
}

/// The ranks whose operations process `me` of `processes` needs (those on the nodes of its
/// partitions: `partitions`), for a program of `ranks` ranks run on `threads` threads a
/// process (`Options::threads`); `None` when the machine cannot take the ranks or be split
/// (the run then says why, from the whole program).
pub fn own_ranks(
    machine: &Machine,
    ranks: u32,
    (processes, me): (usize, usize),
    threads: Option<u32>,
) -> Option<Vec<bool>> {
    let (topo, placement) = crate::run::simulate::layout(machine, ranks).ok()?;
    let routers = topo.num_routers / processes as u32;
    let threads = threads_for(threads.unwrap_or(1), routers);
    let blocks = processes as u32 * threads;
    let split = PacketNetwork::partition_machine(&topo, machine, blocks, "mpirun -np").ok()?;
    let mine = me as u32 * threads..(me as u32 + 1) * threads;
    let nic = |node: u32| topo.node_nic(node, 0);
    Some(
        placement
            .node
            .iter()
            .map(|&node| mine.contains(&split.of_router[topo.nic_router(nic(node)) as usize]))
            .collect(),
    )
}

/// What this process made of its share of a step (`mine`: reading or linking only its own
/// ranks' operations) when every process's succeeded; else what the step gives done on
/// the whole program (`whole`), in every process: one process's first error, and no
/// process waits for others in a run they left.
pub fn agreed<T>(
    ex: &dyn Exchange,
    mine: Result<T>,
    whole: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let all = gather_all(ex, &mine.is_ok()).map_err(Error::Internal)?;
    match (mine, all.iter().all(|&ok| ok)) {
        (Ok(value), true) => Ok(value),
        _ => whole(),
    }
}

/// A process's tally: its partitions' events and finished ranks added up.
fn sum_tallies(tallies: &[Tally]) -> Tally {
    tallies
        .iter()
        .fold((0, 0, false), |(e, f, i), &(pe, pf, pi)| {
            (e + pe, f + pf, i || pi)
        })
}

/// Checks that every process was given the same machine, program and options.
fn agree(ex: &dyn Exchange, machine: &Machine, program: &Program, options: &Options) -> Result<()> {
    // A partial program holds each process's own ranks' operations, and every rank's
    // collective calls, regions and request lists.
    let ops: usize = match program.partial {
        false => program.ops.iter().map(Vec::len).sum(),
        true => 0,
    };
    let mine = format!(
        "{} {} {ops} {} {} {} {:?} {:?} {} {} {} {}",
        MachineId::of(machine, "").hash,
        program.ranks,
        program.coll_calls.len(),
        program.regions.len(),
        program.req_lists.len(),
        options.max_events,
        options.max_sim_time,
        options.trace,
        options.check,
        options.summary_only,
        options.timeline,
    );
    let all = gather_all(ex, &mine).map_err(Error::Internal)?;
    match all.iter().position(|other| *other != all[0]) {
        None => Ok(()),
        Some(p) => Err(Error::input(
            Location::file("mpirun"),
            format!("the processes of the run were given different inputs (process {p} differs from process 0): give every process the same command line and files"),
        )),
    }
}
