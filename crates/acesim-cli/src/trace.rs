//! `acesim trace info`: what an MPI trace holds (ranks, calls by kind, bytes, communicators,
//! each rank's traced window), read completely but not simulated.

use crate::args::TraceCommand;
use crate::inputs::trace_options;
use crate::output::{check_distinct, write_all, Output, Producer};
use acesim::error::{Error, Location};
use acesim::frontends::dumpi::{self, TraceSummary};
use acesim::frontends::format::Format;
use acesim::frontends::ti;
use acesim::units::{format_time, Ps};
use std::fmt::Write as _;
use std::path::Path;

/// Runs a `trace` subcommand; the exit code (`trace record` passes on the program's).
pub(crate) fn trace(command: TraceCommand) -> acesim::Result<i32> {
    match command {
        TraceCommand::Info {
            trace,
            json,
            trace_args,
        } => info(&trace, json.as_deref(), &trace_args).map(|()| 0),
        TraceCommand::Record {
            output,
            prefix,
            tracer,
            command,
        } => crate::trace_record::record(&output, &prefix, tracer.as_deref(), &command),
    }
}

fn info(path: &Path, json: Option<&Path>, args: &crate::args::TraceArgs) -> acesim::Result<()> {
    let json_out = json.map(|p| Output::check("--json", p)).transpose()?;
    let outputs: Vec<&Output> = json_out.iter().collect();
    check_distinct(&outputs, &[("trace", path)])?;
    let format = crate::inputs::program_format(path, &args.format)?;
    let mut options = trace_options(args)?;
    // What the trace holds does not depend on the host's speed: compute in flops needs none.
    options.flops.get_or_insert(1e9);
    let (_, summary) = match format {
        Format::Dumpi => dumpi::read(path, &options)?,
        Format::Ti => ti::read(path, &options)?,
        Format::Otf2 => acesim::frontends::otf2::read(path, &options)?,
        _ => {
            return Err(Error::input(
                Location::file(path.display().to_string()),
                format!(
                    "`acesim trace info` reads MPI traces (a DUMPI trace's .meta file, an OTF2 trace's .otf2 anchor file, or a SimGrid trace with --format ti); this is {}",
                    format.describe(&path.display().to_string())
                ),
            ))
        }
    };
    let mut writes: Vec<(Output, Producer)> = Vec::new();
    if let Some(o) = json_out {
        let s = &summary;
        writes.push((
            o,
            Box::new(move |w| {
                serde_json::to_writer_pretty(&mut *w, s).map_err(std::io::Error::other)?;
                writeln!(w)
            }),
        ));
    }
    write_all(writes)?;
    out!("{}", describe(path, &summary));
    Ok(())
}

/// The human summary of a trace.
pub(crate) fn describe(path: &Path, s: &TraceSummary) -> String {
    let mut o = String::new();
    let kind = match s.version {
        _ if !s.format.is_empty() => s.format.to_string(),
        [0, 0, 0] => "SimGrid time-independent".to_string(),
        [a, b, c] => format!("DUMPI {a}.{b}.{c}"),
    };
    let _ = writeln!(o, "{}: {kind} trace, {} ranks", path.display(), s.ranks);
    let total: u64 = s.calls.values().sum();
    let _ = writeln!(
        o,
        "calls: {total} ({} collective), {} bytes sent point to point, {} communicator memberships created",
        s.collective_calls, s.p2p_bytes, s.comms_created
    );
    let mut calls: Vec<(&str, u64)> = s.calls.iter().map(|(k, v)| (*k, *v)).collect();
    calls.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
    for (name, n) in calls {
        let _ = writeln!(o, "  {name:<24} {n:>12}");
    }
    // SimGrid's traces have no clock: no windows.
    if let Some(w) = window_stats(&s.windows).filter(|w| w.max > 0) {
        let _ = writeln!(
            o,
            "traced window per rank: min {}, mean {}, max {} (rank {})",
            format_time(w.min),
            format_time(w.mean),
            format_time(w.max),
            w.max_rank
        );
    }
    // Every rank's window for small traces; --json has them all.
    if s.windows.len() <= 64 && s.windows.iter().any(|&w| w > 0) {
        for (r, w) in s.windows.iter().enumerate() {
            let _ = writeln!(o, "  rank {r:<5} {}", format_time(*w));
        }
    }
    o
}

struct WindowStats {
    min: Ps,
    mean: Ps,
    max: Ps,
    max_rank: usize,
}

fn window_stats(windows: &[Ps]) -> Option<WindowStats> {
    let (max_rank, &max) = windows
        .iter()
        .enumerate()
        .max_by_key(|&(r, w)| (*w, std::cmp::Reverse(r)))?;
    let sum: u128 = windows.iter().map(|&w| w as u128).sum();
    Some(WindowStats {
        min: windows.iter().copied().min().unwrap_or(0),
        mean: (sum / windows.len() as u128) as Ps,
        max,
        max_rank,
    })
}
