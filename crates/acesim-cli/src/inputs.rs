//! What the commands share: reading the machine and the program the user named, and
//! checking the values given on the command line.

use crate::args::MachineArgs;
use crate::output::Producer;
use acesim::error::{Error, Location};
use acesim::frontends::load::COMMAND_LINE;
use acesim::frontends::record::{parse_timeout, RecordOptions, MAX_RANKS};
use acesim::frontends::{self, Format, Source};
use acesim::{MachineSource, Program};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) fn check_ranks(r: u32) -> acesim::Result<()> {
    if r == 0 {
        return Err(Error::input(
            Location::file("command line").with_field("ranks"),
            "--ranks must be at least 1",
        ));
    }
    Ok(())
}

/// A rank count for recording a C or Python program: refused at once when absurd.
pub(crate) fn check_recorded_ranks(r: u32) -> acesim::Result<()> {
    check_ranks(r)?;
    if r > MAX_RANKS {
        return Err(Error::input(
            Location::file("command line").with_field("ranks"),
            format!(
                "--ranks {r}: programs are recorded for at most {} ranks",
                MAX_RANKS
            ),
        ));
    }
    Ok(())
}

/// `--record-timeout` in seconds, if given.
pub(crate) fn record_timeout_arg(text: Option<&str>) -> acesim::Result<Option<u64>> {
    text.map(|t| parse_timeout(t, "command line", "record-timeout"))
        .transpose()
}

/// `Error::Interrupted` once a signal has arrived (checked between phases).
pub(crate) fn check_interrupt(flag: &AtomicBool, program: &Path) -> acesim::Result<()> {
    match flag.load(Ordering::SeqCst) {
        true => Err(Error::Interrupted(format!(
            "stopped after recording {}",
            program.display()
        ))),
        false => Ok(()),
    }
}

pub(crate) fn load_machine(m: &MachineArgs) -> acesim::Result<acesim::Machine> {
    m.ranks.map_or(Ok(()), check_ranks)?;
    let mut sets = m.set.clone();
    if let Some(n) = m.ranks_per_node {
        sets.push(format!("placement.ranks_per_node={n}"));
    }
    match m.placement.as_deref() {
        None => {}
        Some(p @ ("block" | "cyclic" | "random")) => sets.push(format!("placement.policy={p}")),
        Some(file) => {
            sets.push("placement.policy=file".into());
            sets.push(format!("placement.file={}", toml_string(file)));
        }
    }
    let config = MachineSource::open(&m.machine)?
        .with_overrides(&sets)
        .load()?;
    for w in config.warnings() {
        eprintln!("warning: {w}");
    }
    Ok(config)
}

/// A TOML string literal for a value given on the command line.
pub(crate) fn toml_string(s: &str) -> String {
    let escaped: String = s
        .chars()
        .flat_map(|c| match c {
            '\\' | '"' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

/// The format `--format` names (`auto`: by the file's extension and content).
pub(crate) fn program_format(path: &Path, name: &str) -> acesim::Result<Format> {
    match name {
        "auto" => Ok(Format::of_path(path)),
        "python" => Ok(Format::Python),
        other => Format::by_name(other).ok_or_else(|| {
            Error::input(
                Location::file("command line").with_field("--format"),
                format!(
                    "unknown format `{other}` (expected auto, schedule, goal, dumpi, ti, otf2, c or python){}",
                    acesim::error::did_you_mean(
                        other,
                        ["auto", "schedule", "goal", "dumpi", "ti", "otf2", "c", "python"]
                    )
                ),
            )
        }),
    }
}

/// The program at `path` in `format` (`--format`), read or recorded (C and Python
/// programs, for `ranks` ranks).
pub(crate) fn load_program(
    path: &Path,
    format: &str,
    ranks: Option<u32>,
    args: &[String],
    options: &RecordOptions,
) -> acesim::Result<Program> {
    let format = program_format(path, format)?;
    if let Some(r) = ranks.filter(|_| format.is_recorded()) {
        check_recorded_ranks(r)?;
    }
    frontends::load(
        Source::File(path),
        format,
        ranks,
        args,
        options,
        &COMMAND_LINE,
    )
}

/// The program's arguments: a motif's `--param`s, then what follows `--`. `--param` on
/// another program is refused (its arguments follow `--`).
pub(crate) fn program_args(
    program: &Path,
    params: &[String],
    args: &[String],
) -> acesim::Result<Vec<String>> {
    let motif = program
        .to_str()
        .is_some_and(acesim::frontends::motif::is_motif);
    if !params.is_empty() && !motif {
        return Err(Error::input(
            Location::file("command line").with_field("param"),
            format!(
                "--param sets a motif's parameter (motif:NAME); {} takes its arguments after `--`",
                program.display()
            ),
        ));
    }
    Ok(params.iter().chain(args).cloned().collect())
}

/// Writes `b` as it is.
pub(crate) fn bytes(b: &[u8]) -> Producer<'_> {
    Box::new(move |w| w.write_all(b))
}

/// The input files named by the machine options, which no output may overwrite: the
/// machine file (not a preset) and the placement file.
pub(crate) fn machine_inputs<'a>(
    m: &'a MachineArgs,
    config: &'a acesim::Machine,
) -> Vec<(&'static str, &'a Path)> {
    let mut inputs = vec![("machine file", Path::new(&m.machine))];
    if let Some(p) = &m.placement {
        inputs.push(("placement file", Path::new(p)));
    }
    if let Some(p) = &config.placement.file {
        inputs.push(("placement file", Path::new(p)));
    }
    inputs
}

/// The replay options of the command line, as the library reads them.
pub(crate) fn replay_args(t: &crate::args::TraceArgs) -> acesim::frontends::replay::ReplayArgs {
    acesim::frontends::replay::ReplayArgs {
        ignore_calls: t.ignore_call.clone(),
        compute_scale: t.compute_scale,
        compute_threshold: t.compute_threshold.clone(),
        flops: t.flops.clone(),
        jobs: t.jobs.clone(),
        max_message: t.max_message.clone(),
        collectives: Some(t.collectives.clone()),
    }
}

/// The trace options of the command line.
pub(crate) fn trace_options(
    t: &crate::args::TraceArgs,
) -> acesim::Result<acesim::frontends::dumpi::TraceOptions> {
    replay_args(t).trace_options(&acesim::frontends::replay::COMMAND_LINE)
}

/// The job layout of the command line applied to `program`: messages capped, collectives
/// skipped, the job repeated (`acesim::program::adjust`).
pub(crate) fn adjust_program(
    program: acesim::Program,
    t: &crate::args::TraceArgs,
    machine: &acesim::Machine,
) -> acesim::Result<acesim::Program> {
    replay_args(t).lay_out(program, machine, &acesim::frontends::replay::COMMAND_LINE)
}
