//! `acesim._core`: the Rust core seen from Python. Strings in, strings and a result object
//! out; the Python package (python/acesim) builds the friendly API on top.

use acesim::error::{Error, Location};
use acesim::frontends::load::PYTHON_ARGUMENTS;
use acesim::frontends::record::{RecordOptions, TEXT_SHARE_OF_BUDGET};
use acesim::frontends::replay::{ReplayArgs, PYTHON};
use acesim::frontends::{self, mgen, Format, Source};
use acesim::network::Model;
use acesim::MachineSource;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

create_exception!(
    _core,
    InputError,
    PyValueError,
    "Bad input: machine, program or argument."
);
create_exception!(
    _core,
    ProgramError,
    PyRuntimeError,
    "A program failed to compile, record or run."
);
create_exception!(
    _core,
    DeadlockError,
    PyRuntimeError,
    "The program can never finish."
);
create_exception!(
    _core,
    InternalError,
    PyRuntimeError,
    "A broken model invariant (a bug in acesim)."
);

fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Input { .. } | Error::Io { .. } => InputError::new_err(msg),
        Error::Program { .. } => ProgramError::new_err(msg),
        Error::Deadlock(_) => DeadlockError::new_err(msg),
        Error::Internal(_) => InternalError::new_err(msg),
        Error::TooBig(_) => pyo3::exceptions::PyMemoryError::new_err(msg),
        Error::Interrupted(_) => pyo3::exceptions::PyKeyboardInterrupt::new_err(msg),
    }
}

/// Runs `work` in a thread of its own, without the interpreter lock, while this thread looks
/// at Python's signals every 50 ms: when a signal handler raises (Ctrl-C's
/// KeyboardInterrupt), the flag given to `work` is set so that it stops soon (a run with
/// partial results, a recording with its processes killed), and the exception is returned
/// beside what `work` gave.
fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(Arc<AtomicBool>) -> Result<T, Error> + Send,
) -> (Result<T, Error>, Option<PyErr>) {
    let flag = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let worker_flag = flag.clone();
        let spawned = std::thread::Builder::new()
            .name("acesim".into())
            // As much stack as the main thread has, for deep programs.
            .stack_size(64 << 20)
            .spawn_scoped(s, move || {
                let r = work(worker_flag);
                let _ = tx.send(());
                r
            });
        let handle = match spawned {
            Ok(h) => h,
            Err(e) => {
                return (
                    Err(Error::Internal(format!("cannot start a thread: {e}"))),
                    None,
                )
            }
        };
        let mut raised: Option<PyErr> = None;
        let mut rx = rx;
        loop {
            let (back, done) = py.detach(move || {
                let d = rx.recv_timeout(Duration::from_millis(50));
                (rx, d)
            });
            rx = back;
            if !matches!(done, Err(std::sync::mpsc::RecvTimeoutError::Timeout)) {
                break;
            }
            if raised.is_none() {
                if let Err(e) = py.check_signals() {
                    flag.store(true, Ordering::SeqCst);
                    raised = Some(e);
                }
            }
        }
        let result = py.detach(|| handle.join()).unwrap_or_else(|_| {
            Err(Error::Internal(
                "the simulation thread panicked".to_string(),
            ))
        });
        (result, raised)
    })
}

/// The results of one run.
#[pyclass(module = "acesim._core", name = "Result", frozen)]
struct RunResult {
    inner: acesim::Results,
}

#[pymethods]
impl RunResult {
    /// Predicted execution time in picoseconds.
    #[getter]
    fn predicted_time_ps(&self) -> u64 {
        self.inner.predicted_time_ps
    }
    /// Seconds the simulation took (not in the JSON, which is the same for the same inputs).
    #[getter]
    fn wall_seconds(&self) -> f64 {
        self.inner.wall_seconds
    }
    /// The network model it ran: "packet" or "flow".
    #[getter]
    fn model(&self) -> &'static str {
        self.inner.model
    }
    /// The JSON summary (the same as `acesim run --json`).
    fn json(&self) -> String {
        self.inner.to_json()
    }
    /// One CSV row per directed link (the same as `acesim run --links-csv`).
    fn links_csv(&self) -> String {
        self.inner.links_csv()
    }
    /// The timeline (Chrome trace JSON) with counter tracks for `links` (names or busiest:N).
    fn timeline_json(&self, links: Vec<String>) -> PyResult<String> {
        let ids = acesim::results::timeline::select_links(&self.inner, &links)
            .map_err(InputError::new_err)?;
        acesim::results::timeline::chrome_trace(&self.inner, &ids).map_err(InputError::new_err)
    }
    fn __repr__(&self) -> String {
        format!(
            "<acesim Result: {} on {}>",
            self.inner.predicted_time, self.inner.topology
        )
    }
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Names of the shipped machines.
#[pyfunction]
fn presets() -> Vec<String> {
    acesim::machine::config::PRESETS
        .iter()
        .map(|(n, _)| n.to_string())
        .collect()
}

#[pyfunction]
fn preset_text(name: &str) -> PyResult<String> {
    acesim::machine::config::PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| t.to_string())
        .ok_or_else(|| {
            InputError::new_err(format!(
                "no preset named '{name}' (presets: {})",
                presets().join(", ")
            ))
        })
}

fn load_machine(text: &str, name: &str, overrides: &[String]) -> Result<acesim::Machine, Error> {
    MachineSource::from_text(name, text)
        .with_overrides(overrides)
        .load()
}

/// A machine's TOML with every default filled in, after applying `overrides` (FIELD=VALUE).
#[pyfunction]
#[pyo3(signature = (text, name, overrides = Vec::new()))]
fn machine_normalize(text: &str, name: &str, overrides: Vec<String>) -> PyResult<String> {
    load_machine(text, name, &overrides)
        .map(|c| c.to_toml())
        .map_err(to_py)
}

/// Settings of a machine that are valid but probably not what the user meant.
#[pyfunction]
fn machine_warnings(text: &str, name: &str) -> PyResult<Vec<String>> {
    load_machine(text, name, &[])
        .map(|c| c.warnings())
        .map_err(to_py)
}

/// The network model `name` says, or InputError with the message the CLI gives
/// (`unknown network model 'x' (expected packet or flow)`).
#[pyfunction]
fn parse_model(name: &str) -> PyResult<&'static str> {
    Model::parse(name)
        .map(Model::name)
        .map_err(InputError::new_err)
}

/// `model` as an argument, located at `arguments`, field `model`.
fn model_arg(name: &str) -> Result<Model, Error> {
    Model::parse(name).map_err(|m| Error::input(Location::file("arguments").with_field("model"), m))
}

/// The program the arguments name: `program_format` is "schedule" or "goal" (program_text
/// is the text) or "c" (program_text is the path of the C file).
#[allow(clippy::too_many_arguments)]
fn load_program(
    program_text: &str,
    program_name: &str,
    program_format: &str,
    ranks: Option<u32>,
    args: &[String],
    interrupt: &Arc<AtomicBool>,
    replay: &ReplayArgs,
    machine: &acesim::Machine,
    threads: Option<u32>,
) -> Result<acesim::Program, Error> {
    // `auto`: a file, recognised by its name and content as on the command line.
    let by_content = (program_format == "auto").then(|| Format::of_path(Path::new(program_text)));
    let format = by_content.or_else(|| Format::by_name(program_format)).ok_or_else(|| {
        Error::input(
            Location::file("arguments").with_field("program_format"),
            format!(
                "unknown program format '{program_format}' (auto, schedule, goal, c, dumpi, ti or otf2)"
            ),
        )
    })?;
    let source = match format {
        _ if by_content.is_some() => Source::File(Path::new(program_text)),
        Format::C | Format::Python | Format::Dumpi | Format::Ti | Format::Otf2 | Format::Motif => {
            Source::File(Path::new(program_text))
        }
        Format::Goal | Format::Schedule => Source::Text {
            name: program_name,
            text: program_text,
        },
    };
    let options = RecordOptions {
        interrupt: Some(interrupt.clone()),
        memory_check: true,
        trace: replay.trace_options(&PYTHON)?,
        stream_traces: true,
        read_threads: RecordOptions::read_threads_for(threads),
        ..Default::default()
    };
    let program = frontends::load(source, format, ranks, args, &options, &PYTHON_ARGUMENTS)?;
    replay.lay_out(program, machine, &PYTHON)
}

/// The replay keyword arguments of `simulate` and `compare_models` (docs/traces.md).
#[allow(clippy::too_many_arguments)]
fn replay_args(
    ignore_calls: Vec<String>,
    compute_scale: Option<f64>,
    compute_threshold: Option<String>,
    flops: Option<String>,
    jobs: Option<String>,
    max_message: Option<String>,
    collectives: Option<String>,
) -> ReplayArgs {
    ReplayArgs {
        ignore_calls,
        compute_scale,
        compute_threshold,
        flops,
        jobs,
        max_message,
        collectives,
    }
}

/// Runs a program: `program_format` is "schedule" or "goal" (program_text is the text) or
/// "c" (program_text is the path of the C file); `model` is "packet" or "flow".
#[pyfunction]
#[pyo3(signature = (machine_text, machine_name, program_text, program_name, program_format, ranks = None, args = Vec::new(), trace = false, check = false, max_events = None, max_sim_time = None, model = "packet".to_string(), ignore_calls = Vec::new(), compute_scale = None, compute_threshold = None, flops = None, jobs = None, max_message = None, collectives = None, partitions = None, threads = None))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    machine_text: String,
    machine_name: String,
    program_text: String,
    program_name: String,
    program_format: String,
    ranks: Option<u32>,
    args: Vec<String>,
    trace: bool,
    check: bool,
    max_events: Option<u64>,
    max_sim_time: Option<String>,
    model: String,
    ignore_calls: Vec<String>,
    compute_scale: Option<f64>,
    compute_threshold: Option<String>,
    flops: Option<String>,
    jobs: Option<String>,
    max_message: Option<String>,
    collectives: Option<String>,
    partitions: Option<u32>,
    threads: Option<u32>,
) -> PyResult<RunResult> {
    let replay = replay_args(
        ignore_calls,
        compute_scale,
        compute_threshold,
        flops,
        jobs,
        max_message,
        collectives,
    );
    let run = move |interrupt: Arc<AtomicBool>| -> Result<acesim::Results, Error> {
        let terminal = acesim::run::progress::Terminal::on_stderr();
        let model = model_arg(&model)?;
        let machine = load_machine(&machine_text, &machine_name, &[])?;
        let program = load_program(
            &program_text,
            &program_name,
            &program_format,
            ranks,
            &args,
            &interrupt,
            &replay,
            &machine,
            threads,
        )?;
        let max_sim_time = acesim::run::simulate::parse_time_limit(
            max_sim_time.as_deref(),
            "arguments",
            "max_sim_time",
        )?;
        let options = acesim::run::simulate::Options {
            model,
            trace,
            check,
            max_events,
            max_sim_time,
            // As the CLI: a run that cannot fit is refused (MemoryError) before it starts.
            memory_check: true,
            interrupt: Some(interrupt),
            partitions,
            threads,
            // Where the run is, when stderr is a terminal (not in a notebook or a pipe).
            progress: terminal.as_ref().map(|t| t.progress()),
            ..Default::default()
        };
        acesim::run::simulate::simulate_with(&machine, program, &options)
    };
    match interruptible(py, run) {
        (Ok(inner), None) => Ok(RunResult { inner }),
        // Interrupted: the exception (KeyboardInterrupt) carries what the run has, marked
        // partial, as `partial_result`.
        (Ok(inner), Some(e)) => {
            let partial = Py::new(py, RunResult { inner })?;
            e.value(py).setattr("partial_result", partial)?;
            Err(e)
        }
        (Err(_), Some(e)) => Err(e),
        (Err(err), None) => Err(to_py(err)),
    }
}

/// Runs a program at both network levels and compares them (`acesim compare-models`):
/// returns `(comparison JSON, report text, packet result, flow result, packet wall s,
/// flow wall s)`.
#[pyfunction]
#[pyo3(signature = (machine_text, machine_name, program_text, program_name, program_format, ranks = None, args = Vec::new(), trace = false, check = false, ignore_calls = Vec::new(), compute_scale = None, compute_threshold = None, flops = None, jobs = None, max_message = None, collectives = None))]
#[allow(clippy::too_many_arguments)]
fn compare_models(
    py: Python<'_>,
    machine_text: String,
    machine_name: String,
    program_text: String,
    program_name: String,
    program_format: String,
    ranks: Option<u32>,
    args: Vec<String>,
    trace: bool,
    check: bool,
    ignore_calls: Vec<String>,
    compute_scale: Option<f64>,
    compute_threshold: Option<String>,
    flops: Option<String>,
    jobs: Option<String>,
    max_message: Option<String>,
    collectives: Option<String>,
) -> PyResult<(String, String, RunResult, RunResult, f64, f64)> {
    let replay = replay_args(
        ignore_calls,
        compute_scale,
        compute_threshold,
        flops,
        jobs,
        max_message,
        collectives,
    );
    let run = move |interrupt: Arc<AtomicBool>| {
        let machine = load_machine(&machine_text, &machine_name, &[])?;
        let program = load_program(
            &program_text,
            &program_name,
            &program_format,
            ranks,
            &args,
            &interrupt,
            &replay,
            &machine,
            None,
        )?;
        let options = acesim::run::simulate::Options {
            trace,
            check,
            memory_check: true,
            interrupt: Some(interrupt),
            ..Default::default()
        };
        acesim::run::compare::compare_models(&machine, program, &options)
    };
    match interruptible(py, run) {
        (_, Some(e)) => Err(e),
        (Err(err), None) => Err(to_py(err)),
        (Ok(runs), None) => {
            let json = runs.comparison.to_json();
            let report = runs.comparison.report();
            let (packet_wall, flow_wall) = (
                runs.comparison.packet.wall_seconds,
                runs.comparison.flow.wall_seconds,
            );
            Ok((
                json,
                report,
                RunResult { inner: runs.packet },
                RunResult { inner: runs.flow },
                packet_wall,
                flow_wall,
            ))
        }
    }
}

/// Compiles and records an MGEN C program; returns its schedule text.
#[pyfunction]
#[pyo3(signature = (path, ranks, args = Vec::new()))]
fn record_c(py: Python<'_>, path: String, ranks: u32, args: Vec<String>) -> PyResult<String> {
    let work = move |interrupt: Arc<AtomicBool>| {
        let options = RecordOptions {
            interrupt: Some(interrupt),
            memory_check: true,
            ..Default::default()
        };
        mgen::record_with(Path::new(&path), ranks, &args, &options)
    };
    match interruptible(py, work) {
        (_, Some(e)) => Err(e),
        (r, None) => r.map_err(to_py),
    }
}

/// How much schedule text a recording may make, as `acesim run` bounds one: `(bytes, share,
/// budget)`, the text taking 1/share of the memory budget (given in words, `3.8 MiB`), or
/// None when there is no budget. The Python recorder stops a program past it.
#[pyfunction]
fn record_text_limit() -> PyResult<Option<(u64, u64, String)>> {
    let share = TEXT_SHARE_OF_BUDGET;
    Ok(acesim::memory::memory_budget()
        .map_err(to_py)?
        .map(|b| ((b / share).max(1), share, acesim::memory::approx_size(b))))
}

/// Synthetic traffic: runs `loads` and returns the points as JSON (see docs/traffic.md).
#[pyfunction]
#[pyo3(signature = (machine_text, machine_name, pattern, loads, packet, flit = None, injection = "bernoulli".to_string(), warmup = None, measure = None, drain = None, seed = 1, all_loads = false, check = false, threads = 1))]
#[allow(clippy::too_many_arguments)]
fn traffic(
    py: Python<'_>,
    machine_text: String,
    machine_name: String,
    pattern: String,
    loads: Vec<f64>,
    packet: u64,
    flit: Option<u64>,
    injection: String,
    warmup: Option<u64>,
    measure: Option<u64>,
    drain: Option<u64>,
    seed: u64,
    all_loads: bool,
    check: bool,
    threads: u32,
) -> PyResult<String> {
    use acesim::run::traffic::{run_loads, Injection, TrafficConfig};
    let run = move || -> Result<String, Error> {
        let machine = load_machine(&machine_text, &machine_name, &[])?;
        let bad =
            |field: &str, m: String| Error::input(Location::file("arguments").with_field(field), m);
        let pattern =
            acesim::run::patterns::Pattern::parse(&pattern).map_err(|m| bad("pattern", m))?;
        let injection = Injection::parse(&injection).map_err(|m| bad("injection", m))?;
        let base = TrafficConfig {
            check,
            threads,
            ..TrafficConfig::with_defaults(
                &machine, pattern, packet, flit, injection, warmup, measure, drain, seed,
            )?
        };
        let terminal = acesim::run::progress::Terminal::on_stderr();
        let progress = terminal.as_ref().map(|t| t.progress());
        let points = run_loads(&machine, &base, &loads, all_loads, progress.as_ref())?;
        serde_json::to_string(&points).map_err(|e| Error::Internal(e.to_string()))
    };
    py.detach(run).map_err(to_py)
}

/// The `acesim` command line (without the program name); returns the exit code.
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.detach(move || acesim_cli::main_with_args(argv))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("ProgramError", py.get_type::<ProgramError>())?;
    m.add("DeadlockError", py.get_type::<DeadlockError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add_class::<RunResult>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(preset_text, m)?)?;
    m.add_function(wrap_pyfunction!(machine_normalize, m)?)?;
    m.add_function(wrap_pyfunction!(machine_warnings, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(compare_models, m)?)?;
    m.add_function(wrap_pyfunction!(parse_model, m)?)?;
    m.add_function(wrap_pyfunction!(record_c, m)?)?;
    m.add_function(wrap_pyfunction!(record_text_limit, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(traffic, m)?)?;
    Ok(())
}
