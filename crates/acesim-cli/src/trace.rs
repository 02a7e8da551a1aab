//! `acesim trace info`: what an MPI trace holds (ranks, calls by kind, bytes, communicators,
//! each rank's traced window), read completely but not simulated.

use crate::args::TraceCommand;
use crate::inputs::trace_options;
use crate::output::{check_distinct, write_all, Output, Producer};
use acesim::error::{Error, Location};
use acesim::frontends::dumpi;
use acesim::frontends::format::Format;
use acesim::frontends::ti;
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
        // Read as a replay reads it first: every record checked, only its skeleton kept.
        Format::Dumpi => dumpi::read_streamed(path, &options)?,
        Format::Ti => ti::read_streamed(path, &options)?,
        Format::Otf2 => acesim::frontends::otf2::read_streamed(path, &options)?,
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
    out!("{}", crate::trace_summary::describe(path, &summary));
    Ok(())
}
