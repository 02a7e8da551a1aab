//! `acesim compare-models`: a program at both network levels, packet and flow, and how far
//! apart they are (acesim::run::compare); the report printed, the JSON written all or
//! nothing.

use crate::args::CompareArgs;
use crate::inputs::{load_machine, load_program, machine_inputs, record_timeout_arg};
use crate::output::{check_distinct, write_all, Output, Producer};
use crate::signals::interrupt_flag;
use acesim::frontends::record::RecordOptions;

pub(crate) fn compare_models(a: CompareArgs) -> acesim::Result<i32> {
    let json_out = a
        .json
        .as_deref()
        .map(|p| Output::check("--json", p))
        .transpose()?;
    // As `acesim run`: a signal stops the recording or the level running, and nothing is
    // written.
    let interrupt = interrupt_flag();
    let config = load_machine(&a.machine)?;
    {
        let outputs: Vec<&Output> = json_out.iter().collect();
        let mut inputs = vec![("program", a.program.as_path())];
        inputs.extend(machine_inputs(&a.machine, &config));
        check_distinct(&outputs, &inputs)?;
    }
    let record = RecordOptions {
        interrupt: Some(interrupt.clone()),
        timeout_s: record_timeout_arg(a.record_timeout.as_deref())?,
        memory_check: !a.ignore_memory_limit,
        trace: crate::inputs::trace_options(&a.trace_args)?,
        stream_traces: true,
        ..Default::default()
    };
    let args = crate::inputs::program_args(&a.program, &a.params, &a.args)?;
    let program = load_program(
        &a.program,
        &a.trace_args.format,
        a.machine.ranks,
        &args,
        &record,
    )?;
    let program = crate::inputs::adjust_program(program, &a.trace_args, &config)?;
    let options = acesim::run::simulate::Options {
        check: a.check,
        interrupt: Some(interrupt),
        memory_check: !a.ignore_memory_limit,
        ..Default::default()
    };
    let runs = acesim::run::compare::compare_models(&config, program, &options)?;
    let comparison = &runs.comparison;
    let mut writes: Vec<(Output, Producer)> = Vec::new();
    if let Some(o) = json_out {
        writes.push((o, Box::new(|w| comparison.write_json(w))));
    }
    write_all(writes)?;
    if !a.quiet {
        out!("{}", comparison.report());
    }
    Ok(0)
}
