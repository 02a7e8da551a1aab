//! `acesim run`: a program on a machine, with its outputs (JSON, links CSV, schedule,
//! timeline) written all or nothing.

use crate::args::RunArgs;
use crate::exit_codes::EXIT_STOPPED;
use crate::inputs::{bytes, load_machine, load_program, machine_inputs, record_timeout_arg};
use crate::output::{check_distinct, write_all, Output, Producer};
use crate::signals::{interrupt_flag, signal_exit_code};
use acesim::engine::Exchange;
use acesim::error::{Error, Location};
use acesim::frontends::record::{OnlyRanks, RecordOptions};
use acesim::frontends::schedule;
use acesim::network::Model;
use acesim::run::options::ReadWhole;
use acesim::run::phases::Phases;
use std::path::PathBuf;

pub(crate) fn run(a: RunArgs) -> acesim::Result<i32> {
    let phases = if a.timings {
        Phases::on()
    } else {
        Phases::default()
    };
    if !a.timeline_links.is_empty() && a.timeline.is_none() {
        return Err(Error::input(
            Location::file("command line").with_field("timeline-links"),
            "--timeline-links chooses the links drawn in a timeline: it needs --timeline FILE",
        ));
    }
    let model = Model::parse(&a.model)
        .map_err(|m| Error::input(Location::file("command line").with_field("model"), m))?;
    let check = |option: &str, p: &Option<PathBuf>| {
        p.as_deref().map(|p| Output::check(option, p)).transpose()
    };
    let json_out = check("--json", &a.json)?;
    let links_out = check("--links-csv", &a.links_csv)?;
    let schedule_out = check("--schedule-out", &a.schedule_out)?;
    let timeline_out = check("--timeline", &a.timeline)?;
    let parquet_parent = a
        .parquet
        .as_deref()
        .map(crate::parquet::check)
        .transpose()?;
    // Ctrl-C or SIGTERM stops a recording (and its processes) or the run at its next look
    // at the flag and writes what it has (set up first, so a signal while reading the
    // program is not lost); a second one ends the process at once.
    let interrupt = interrupt_flag();
    let config = load_machine(&a.machine)?;
    {
        let outputs: Vec<&Output> = [&json_out, &links_out, &schedule_out, &timeline_out]
            .into_iter()
            .flatten()
            .collect();
        let mut inputs = vec![("program", a.program.as_path())];
        inputs.extend(machine_inputs(&a.machine, &config));
        check_distinct(&outputs, &inputs)?;
    }
    phases.lap("load machine");
    // Under mpirun, one block of the machine per process; process 0 prints and writes.
    let processes = crate::processes::start()?;
    let (program, schedule_text, read_whole) =
        read_program(&a, &config, &interrupt, (processes.as_deref(), model))?;
    phases.lap("read program");
    let trace = a.trace || a.timeline.is_some();
    let max_sim_time = acesim::run::simulate::parse_time_limit(
        a.max_sim_time.as_deref(),
        "command line",
        "max-sim-time",
    )?;
    if let Some(t) = a.threads {
        crate::traffic::warn_if_more_than_cores(t);
    }
    let first = processes.as_ref().is_none_or(|p| p.me() == 0);
    // Where the run is, on a terminal unless --quiet (cleared before the summary).
    let terminal = (!a.quiet && first)
        .then(acesim::run::progress::Terminal::on_stderr)
        .flatten();
    let summary_only = json_out.is_none() && a.timeline.is_none() && a.parquet.is_none();
    let options = acesim::run::simulate::Options {
        progress: terminal.as_ref().map(|t| t.progress()),
        model,
        trace,
        check: a.check,
        max_events: a.max_events,
        max_sim_time,
        interrupt: Some(interrupt),
        memory_check: !a.ignore_memory_limit,
        timeline: a.timeline.is_some(),
        partitions: a.partitions,
        threads: a.threads,
        phases: phases.clone(),
        // The summary counts operations; only the JSON and the timeline list them.
        summary_only,
        // Nor does it read the per-rank, per-link or per-NIC tables.
        no_tables: summary_only && links_out.is_none(),
        read_whole,
        ..Default::default()
    };
    let results = match &processes {
        Some(ex) => {
            acesim::run::simulate_processes::simulate_across(&config, program, &options, &**ex)
        }
        None => acesim::run::simulate::simulate_with(&config, program, &options).map(Some),
    };
    if let Some(t) = &terminal {
        t.clear();
    }
    let Some(results) = results? else {
        return Ok(0); // another process than the first: process 0 writes
    };
    let timeline = draw_timeline(&a, &results)?;
    if timeline.is_some() {
        phases.lap("draw timeline");
    }
    // Outputs are written only after the run succeeded, all or nothing.
    let mut writes: Vec<(Output, Producer)> = Vec::new();
    if let (Some(o), Some(t)) = (schedule_out, &schedule_text) {
        writes.push((o, bytes(t.as_bytes())));
    }
    // A large JSON or links table is formatted on the cores the program was read on, and
    // under mpirun on those of every process of process 0's machine: they have sent their
    // shares and wait.
    let threads =
        threads_of_the_process(a.threads) * processes.as_ref().map_or(1, |p| p.on_this_machine());
    let results = &results;
    if let Some(o) = json_out {
        writes.push((o, Box::new(move |w| results.write_json_on(w, threads))));
    }
    if let Some(o) = links_out {
        writes.push((o, Box::new(move |w| results.write_links_csv(w, threads))));
    }
    if let (Some(o), Some(t)) = (timeline_out, &timeline) {
        writes.push((o, bytes(t.as_bytes())));
    }
    write_all(writes)?;
    phases.lap("write outputs");
    if let (Some(dir), Some(parent)) = (&a.parquet, &parquet_parent) {
        crate::parquet::write(results, dir, parent, threads)?;
        phases.lap("write parquet");
    }
    if !a.quiet {
        out!("{}", results.summary());
    } else if let Some(p) = &results.partial {
        eprintln!(
            "warning: partial results: the run was stopped ({}) at {} ps",
            p.reason.name(),
            p.stopped_at_ps
        );
    }
    if let Some(report) = phases.report() {
        eprint!("{report}");
    }
    Ok(match &results.partial {
        None => 0,
        Some(p) if p.reason == acesim::results::StopReason::Interrupted => signal_exit_code(),
        Some(_) => EXIT_STOPPED,
    })
}

/// The Chrome trace `--timeline` asks for (`None` without it): the links
/// `--timeline-links` chooses, the four busiest by default.
fn draw_timeline(a: &RunArgs, results: &acesim::Results) -> acesim::Result<Option<String>> {
    if a.timeline.is_none() {
        return Ok(None);
    }
    let spec = if a.timeline_links.is_empty() {
        vec!["busiest:4".to_string()]
    } else {
        a.timeline_links.clone()
    };
    let links = acesim::results::timeline::select_links(results, &spec).map_err(|m| {
        Error::input(
            Location::file("command line").with_field("timeline-links"),
            m,
        )
    })?;
    acesim::results::timeline::chrome_trace(results, &links)
        .map(Some)
        .map_err(Error::Internal)
}

/// The threads this process reads a large program and formats a large JSON or links table
/// on: the run's (`--threads`), or every core for a serial run unless mpirun started
/// several processes (which share the cores).
fn threads_of_the_process(threads: Option<u32>) -> usize {
    RecordOptions::read_threads_for(match threads {
        None if crate::processes::launched() > 1 => Some(1),
        t => t,
    })
}

/// The program of `a`, read (recorded, parsed, streamed) with `a`'s options, and its
/// schedule text when `--schedule-out` asks for it; the job layout applied after the text
/// is made (the text is the program as read, without jobs). Under mpirun a process reads
/// whole only its own ranks' blocks of a schedule file (`schedule::parse_only`): the
/// program is then `partial`, and comes with the way to read it whole again.
fn read_program(
    a: &RunArgs,
    config: &acesim::Machine,
    interrupt: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    (processes, model): (Option<&dyn Exchange>, Model),
) -> acesim::Result<(acesim::Program, Option<String>, Option<ReadWhole>)> {
    let options = RecordOptions {
        interrupt: Some(interrupt.clone()),
        timeout_s: record_timeout_arg(a.record_timeout.as_deref())?,
        memory_check: !a.ignore_memory_limit,
        trace: crate::inputs::trace_options(&a.trace_args)?,
        // The schedule text is the whole program as read.
        stream_traces: a.schedule_out.is_none(),
        // A run on threads reads a large schedule on them too; a serial run on every core,
        // unless mpirun started several processes (which share the cores).
        read_threads: threads_of_the_process(a.threads),
        only_ranks: None,
    };
    let args = crate::inputs::program_args(&a.program, &a.params, &a.args)?;
    if a.schedule_out.is_some()
        && a.program
            .to_str()
            .is_some_and(acesim::frontends::motif::is_motif)
    {
        return Err(Error::input(
            Location::file("command line").with_field("schedule-out"),
            "a motif is generated as the run goes: it has no schedule to write",
        ));
    }
    let source = ProgramSource {
        path: a.program.clone(),
        format: a.trace_args.format.clone(),
        ranks: a.machine.ranks,
        args,
        options,
        layout: crate::inputs::replay_args(&a.trace_args),
        machine: config.clone(),
    };
    // A split run's own ranks: the whole schedule is still needed to write it out, to
    // repeat it as jobs (which renumbers its ranks) and by models that do not split.
    let split = processes.filter(|_| {
        a.schedule_out.is_none()
            && a.trace_args.jobs.is_none()
            && model == Model::Packet
            && a.partitions.is_none()
    });
    if let Some(ex) = split {
        let (count, me, threads) = (ex.count(), ex.me(), a.threads);
        let machine = config.clone();
        let only = OnlyRanks(std::sync::Arc::new(move |ranks| {
            acesim::run::simulate_processes::own_ranks(&machine, ranks, (count, me), threads)
        }));
        // Every process goes on only if every one read its share: else all read the whole
        // program, and return its first error as one process would.
        let program = acesim::run::simulate_processes::agreed(ex, source.read(Some(only)), || {
            source.read(None)
        })?;
        let read_whole = program.partial.then(|| {
            ReadWhole(std::sync::Arc::new(move || {
                let whole = source.read(None)?;
                acesim::run::simulate::linked(&source.machine, whole)
            }))
        });
        return Ok((program, None, read_whole));
    }
    let program = source.load(None)?;
    let schedule_text = match &a.schedule_out {
        Some(_) => Some(schedule::write(&program).map_err(|m| {
            Error::input(Location::file("command line").with_field("schedule-out"), m)
        })?),
        None => None,
    };
    let program = source.lay_out(program)?;
    Ok((program, schedule_text, None))
}

/// Where a run's program comes from, and how it is read: enough to read it again.
struct ProgramSource {
    path: PathBuf,
    format: String,
    ranks: Option<u32>,
    args: Vec<String>,
    options: RecordOptions,
    /// The job layout applied after reading (`--jobs`, `--max-message`, `--collectives`).
    layout: acesim::frontends::replay::ReplayArgs,
    machine: acesim::Machine,
}

impl ProgramSource {
    /// The program as read, whole or (`only`) with only some ranks' operations.
    fn load(&self, only: Option<OnlyRanks>) -> acesim::Result<acesim::Program> {
        let options = RecordOptions {
            only_ranks: only,
            ..self.options.clone()
        };
        load_program(&self.path, &self.format, self.ranks, &self.args, &options)
    }

    /// The job layout applied to `program`.
    fn lay_out(&self, program: acesim::Program) -> acesim::Result<acesim::Program> {
        self.layout.lay_out(
            program,
            &self.machine,
            &acesim::frontends::replay::COMMAND_LINE,
        )
    }

    /// The program read and laid out.
    fn read(&self, only: Option<OnlyRanks>) -> acesim::Result<acesim::Program> {
        self.lay_out(self.load(only)?)
    }
}
