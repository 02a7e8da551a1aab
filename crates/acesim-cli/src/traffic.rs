//! `acesim traffic`: synthetic traffic at a list of offered loads, as a table and files.

use crate::args::TrafficArgs;
use crate::inputs::{bytes, load_machine, machine_inputs};
use crate::output::{check_distinct, write_all, Output, Producer};
use acesim::error::{Error, Location};
use acesim::machine::topology::TopologySpec;

pub(crate) fn traffic(a: TrafficArgs) -> acesim::Result<()> {
    let csv_out = a
        .csv
        .as_deref()
        .map(|p| Output::check("--csv", p))
        .transpose()?;
    let json_out = a
        .json
        .as_deref()
        .map(|p| Output::check("--json", p))
        .transpose()?;
    use acesim::run::traffic::{
        parse_loads, points_csv, points_table, run_loads_on, saturation_throughput, Injection,
        TrafficConfig,
    };
    // Ranks are placed on nodes only for programs: traffic runs one generator per node.
    for (given, option) in [
        (a.machine.ranks_per_node.is_some(), "ranks-per-node"),
        (a.machine.placement.is_some(), "placement"),
    ] {
        if given {
            return Err(Error::input(
                Location::file("command line").with_field(option),
                format!("--{option} places a program's ranks on nodes; synthetic traffic has no ranks: it runs one generator per node (use --set to change the machine)"),
            ));
        }
    }
    let mut config = load_machine(&a.machine)?;
    size_for_traffic(&mut config, a.machine.ranks)?;
    let outputs: Vec<&Output> = [&csv_out, &json_out].into_iter().flatten().collect();
    check_distinct(&outputs, &machine_inputs(&a.machine, &config))?;
    let cmd =
        |field: &str, m: String| Error::input(Location::file("command line").with_field(field), m);
    let loads = parse_loads(&a.load).map_err(|m| cmd("load", m))?;
    let pattern =
        acesim::run::patterns::Pattern::parse(&a.pattern).map_err(|m| cmd("pattern", m))?;
    let packet = acesim::units::parse_size(&a.packet).map_err(|m| cmd("packet", m))?;
    let flit = match &a.flit {
        Some(f) => acesim::units::parse_size(f).map_err(|m| cmd("flit", m))?,
        None => packet,
    };
    let injection = Injection::parse(&a.injection).map_err(|m| cmd("injection", m))?;
    let time = |v: &Option<String>, field: &str| -> acesim::Result<Option<u64>> {
        v.as_deref()
            .map(|t| acesim::units::parse_time(t).map_err(|m| cmd(field, m)))
            .transpose()
    };
    let base = TrafficConfig {
        check: a.check,
        partitions: a.partitions,
        threads: a.threads,
        ..TrafficConfig::with_defaults(
            &config,
            pattern,
            packet,
            Some(flit),
            injection,
            time(&a.warmup, "warmup")?,
            time(&a.measure, "measure")?,
            time(&a.drain, "drain")?,
            a.seed,
        )?
    };
    // Under mpirun, one block of the machine per process; process 0 prints and writes.
    let processes = crate::processes::start()?;
    let first = processes.as_ref().is_none_or(|p| p.me() == 0);
    warn_if_more_than_cores(a.threads);
    // Where each point is, on a terminal unless --quiet (cleared before the table).
    let terminal = (!a.quiet && first)
        .then(acesim::run::progress::Terminal::on_stderr)
        .flatten();
    let progress = terminal.as_ref().map(|t| t.progress());
    let points = run_loads_on(
        &config,
        &base,
        &loads,
        a.all_loads,
        progress.as_ref(),
        processes.as_deref(),
    );
    drop(progress);
    drop(terminal);
    let points = points?;
    if !first {
        return Ok(());
    }
    let csv = points_csv(&points);
    let json_text = match &json_out {
        Some(_) => {
            serde_json::to_string_pretty(&points).map_err(|e| Error::Internal(e.to_string()))?
        }
        None => String::new(),
    };
    let mut writes: Vec<(Output, Producer)> = Vec::new();
    if let Some(o) = csv_out {
        writes.push((o, bytes(csv.as_bytes())));
    }
    if let Some(o) = json_out {
        writes.push((o, bytes(json_text.as_bytes())));
    }
    write_all(writes)?;
    if !a.quiet {
        out!("{}", points_table(&points));
        for p in &points {
            if let Some(split) = &p.partitions {
                out!("load {:.3}: {}", p.load, split.describe());
            }
            if let Some(par) = p
                .parallel
                .filter(|par| par.threads > 1 || par.processes > 1)
            {
                outln!("load {:.3}: {}", p.load, par.describe(p.events));
            }
        }
        let best = saturation_throughput(&points).unwrap_or(0.0);
        if !points.iter().any(|p| p.saturated) {
            outln!(
                "no saturation up to load {}; best accepted throughput {best:.4}",
                points.last().map_or(0.0, |p| p.load)
            );
        } else if let Some(l) = acesim::run::traffic::last_stable_load(&points) {
            outln!("saturation throughput: {best:.4} of the injection bandwidth (last stable load {l})");
        } else {
            outln!("saturated at every load tried; best accepted throughput {best:.4}");
        }
    }
    Ok(())
}

/// Traffic runs on every node of the machine: `--ranks N` sizes a crossbar that has no
/// `nodes` of its own, and is refused where it would be ignored.
pub(crate) fn size_for_traffic(
    config: &mut acesim::Machine,
    ranks: Option<u32>,
) -> acesim::Result<()> {
    let Some(n) = ranks else { return Ok(()) };
    if let TopologySpec::Crossbar(c) = &mut config.topology {
        if c.nodes.is_none() {
            c.nodes = Some(n);
            return Ok(());
        }
    }
    let nodes = acesim::machine::topology::planned_size(config, 1).nodes;
    if nodes == n as u64 {
        return Ok(());
    }
    Err(Error::input(
        Location::file("command line").with_field("ranks"),
        format!(
            "--ranks {n}: synthetic traffic runs on every node of the machine, and this {} has {nodes}; --ranks sizes only a crossbar without `nodes`",
            config.topology.name()
        ),
    ))
}

/// Warns when `threads` (from --threads) exceeds the cores: each window waits for the
/// slowest partition, and a thread without a core is slow.
pub(crate) fn warn_if_more_than_cores(threads: u32) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    if threads > cores {
        eprintln!(
            "warning: --threads {threads} on {cores} cores: partitions take turns on the cores and the run is slower than on {cores} threads"
        );
    }
}
