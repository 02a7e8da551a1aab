//! The `acesim` command, as a library so that the Python package's `acesim` entry point
//! runs the very same code (`acesim::_core.cli`).

/// Writes to standard output; a closed pipe (`acesim ... | head`) ends the output quietly
/// instead of panicking as `print!` does.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut o = std::io::stdout().lock();
        if let Err(e) = write!(o, $($arg)*).and_then(|_| o.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}

macro_rules! outln {
    ($($arg:tt)*) => {{
        out!($($arg)*);
        out!("\n");
    }};
}

mod args;
mod compare;
mod exit_codes;
mod inputs;
mod inspect;
mod output;
mod parquet;
mod processes;
mod record;
mod run;
mod signals;
mod trace;
mod trace_record;
mod trace_summary;
mod traffic;

use acesim::frontends::python;
use args::{Cli, Command};
use clap::Parser;
use signals::{restore_signals, signal_exit_code, signal_name};

pub use exit_codes::{EXIT_INTERRUPTED, EXIT_STOPPED, EXIT_TERMINATED, EXIT_TOO_BIG};

/// Runs the command line `args` (without the program name); returns the exit code.
pub fn main_with_args(args: Vec<String>) -> i32 {
    let cli = match Cli::try_parse_from(std::iter::once("acesim".to_string()).chain(args)) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let result = dispatch(cli);
    let code = exit_code_of(result);
    restore_signals();
    code
}

fn exit_code_of(result: acesim::Result<i32>) -> i32 {
    match result {
        Ok(code) => code,
        Err(acesim::Error::Interrupted(m)) => {
            eprintln!("error[interrupted]: {}: {m}", signal_name());
            signal_exit_code()
        }
        Err(e) => {
            let code = e.exit_code();
            eprintln!("{}", e.with_source_from_file().render());
            code
        }
    }
}

fn dispatch(cli: Cli) -> acesim::Result<i32> {
    if !matches!(cli.command, Command::Traffic(_) | Command::Run(_)) {
        processes::refuse_if_launched(cli.command.name())?;
    }
    match cli.command {
        Command::Run(a) => return run::run(a),
        Command::CompareModels(a) => return compare::compare_models(a),
        Command::Record {
            program,
            ranks,
            output,
            record_timeout,
            ignore_memory_limit,
            args,
        } => record::record(record::Record {
            program: &program,
            ranks,
            output,
            record_timeout,
            ignore_memory_limit,
            args: &args,
        })?,
        Command::Machine(m) => inspect::machine(&m)?,
        Command::Report { result, output } => {
            let mut args = vec!["report".to_string(), result.display().to_string()];
            if let Some(o) = output {
                args.push("-o".into());
                args.push(o.display().to_string());
            }
            let out = python::run_package(&args, "acesim report")?;
            out!("{}", String::from_utf8_lossy(&out.stdout));
        }
        Command::Parquet { result, output } => {
            let mut args = vec!["parquet".to_string(), result.display().to_string()];
            if let Some(o) = output {
                args.push("-o".into());
                args.push(o.display().to_string());
            }
            let out = python::run_package(&args, "acesim parquet")?;
            out!("{}", String::from_utf8_lossy(&out.stdout));
        }
        Command::Traffic(t) => traffic::traffic(t)?,
        Command::Validate {
            machine,
            program,
            params,
        } => inspect::validate(&machine, program.as_deref(), &params)?,
        Command::Trace(t) => return trace::trace(t),
    }
    Ok(0)
}
