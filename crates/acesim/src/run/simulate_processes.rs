//! A program run across processes (`mpirun -np P acesim run ...`): the machine split into
//! P blocks of routers as for threads (`simulate_threads.rs`), one block and the ranks on
//! its nodes in each process, which advance in the same windows and exchange what crosses
//! through an [`Exchange`] (MPI from the command line). When the run ends every process
//! sends process 0 its runtime and its network's counts, and process 0 merges them as the
//! partitions of threads are merged: its results are those of a run in one process, byte
//! for byte.

use crate::engine::{gather_all, gather_first, run_processes, Bounds, Exchange, Partition};
use crate::error::{Error, Location, Result};
use crate::machine::loaded::Machine;
use crate::program::Program;
use crate::results::partitions::Parallel;
use crate::results::provenance::MachineId;
use crate::results::Results;
use crate::run::options::Options;
use crate::run::progress::Reporter;
use crate::run::simulate::{simulate_with, whole_of};
use crate::run::simulate_threads::{
    finish, partitions, refuse_unsplittable, stop_of, stop_rule, watch_run, Ended, Tally,
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
    if options.threads.is_some_and(|t| t != 1) {
        return Err(Error::input(
            Location::file("command line").with_field("threads"),
            "a run across processes runs one thread in each: leave out --threads",
        ));
    }
    agree(ex, machine, &program, options)?;
    let internal = |e: String| Error::Internal(e);
    let whole = whole_of(machine, program, options)?;
    let ranks = whole.program.ranks;
    let blocks = ex.count() as u32;
    let (mut parts, split) = partitions(whole, (blocks, Some(ex.me() as u32)), options)?;
    let mut part = parts
        .pop()
        .ok_or_else(|| Error::Internal("no partition for this process".into()))?;
    let limit = options.max_sim_time.unwrap_or(Ps::MAX);
    let stop = stop_rule(options);
    let mut reporter = Reporter::new(options.progress.as_ref());
    let mut watch = |end: Ps, tallies: &[Tally]| watch_run(&mut reporter, ranks, end, tallies);
    let bounds = Bounds {
        grid: part.net.window_grid(),
        limit,
        stop: &stop,
        no_stop_before: 0,
    };
    let count = run_processes(&mut part, ex, &bounds, &mut watch).map_err(internal)?;
    let status =
        gather_all(ex, &(part.next_time(), part.tally(), part.q.now())).map_err(internal)?;
    let (stopped, end) = stop_of(&status, limit, count.reached);
    let (ended, net, rt) = Ended::of(part, end, stopped.is_none());
    // Process 0 keeps its own share; the others send theirs.
    let (own, sent): (_, Option<(Ended, RuntimeShare)>) = match ex.me() {
        0 => (Some((ended, rt)), None),
        _ => (None, Some((ended, rt.into_share()))),
    };
    let (Some(all), Some((ended, rt))) = (gather_first(ex, &sent).map_err(internal)?, own) else {
        return Ok(None);
    };
    let (mut ends, mut runtimes) = (vec![ended], vec![rt]);
    for (k, share) in all.into_iter().enumerate().skip(1) {
        let (e, share) =
            share.ok_or_else(|| Error::Internal(format!("process {k} sent no share")))?;
        ends.push(e);
        runtimes.push(Runtime::from_share(
            split.program.clone(),
            split.params.clone(),
            split.placement.clone(),
            (k as u32, split.of_rank.clone()),
            share,
        ));
    }
    let parallel = Parallel {
        threads: 1,
        processes: blocks,
        windows: count.windows,
        crossings: count.crossings,
    };
    let mut results = finish(net, runtimes, ends, (stopped, parallel), started)?;
    results.machine = Some(MachineId::of(machine, &machine.name.0));
    Ok(Some(results))
}

/// Checks that every process was given the same machine, program and options.
fn agree(ex: &dyn Exchange, machine: &Machine, program: &Program, options: &Options) -> Result<()> {
    let ops: usize = program.ops.iter().map(Vec::len).sum();
    let mine = format!(
        "{} {} {ops} {:?} {:?} {} {} {} {}",
        MachineId::of(machine, "").hash,
        program.ranks,
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
