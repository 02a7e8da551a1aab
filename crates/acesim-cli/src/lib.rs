//! The `acesim` command, as a library so that the Python package's `acesim` entry point
//! runs the very same code (`acesim::_core.cli`).

use acesim::error::{Error, Location};
use acesim::frontends::load::COMMAND_LINE;
use acesim::frontends::record::{parse_timeout, RecordOptions, MAX_RANKS};
use acesim::frontends::{self, python, schedule, Format, Source};
use acesim::machine::topology::TopologySpec;
use acesim::{MachineSource, Program};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

mod output;
use output::{check_distinct, write_all, Output, Producer};

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

#[derive(Parser)]
#[command(
    name = "acesim",
    version,
    about = "Interconnection-network simulator for RDMA and MPI communication"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a program on a machine and print the predicted execution time.
    Run(RunArgs),
    /// Record an MGEN C program (compiled) or a Python program as a schedule, without
    /// simulating it.
    Record {
        /// The MGEN C (.c) or Python (.py) program.
        program: PathBuf,
        #[arg(long)]
        ranks: u32,
        /// Where to write the schedule (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Stop when a rank makes no MGEN call (records no operation, for Python) for this
        /// long (default 60s, or $ACESIM_RECORD_TIMEOUT; 0: wait for ever).
        #[arg(long = "record-timeout", value_name = "TIME")]
        record_timeout: Option<String>,
        /// Record even if the schedule text outgrows the memory available.
        #[arg(long = "ignore-memory-limit")]
        ignore_memory_limit: bool,
        /// Arguments passed to MGEN_Main (ctx.args, for Python).
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Print a machine (file or preset) with every default filled in, and its size.
    Machine(MachineArgs),
    /// Write PNG plots and a self-contained HTML page for a JSON summary (needs the Python
    /// package with matplotlib).
    Report {
        /// A JSON summary written by `acesim run --json`.
        result: PathBuf,
        /// Folder for the plots and report.html (default: next to the JSON).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Synthetic traffic: latency and accepted throughput against offered load.
    Traffic(TrafficArgs),
    /// Check a machine and, optionally, a program without simulating.
    Validate {
        #[command(flatten)]
        machine: MachineArgs,
        /// A program to check against the machine.
        program: Option<PathBuf>,
    },
}

#[derive(Args)]
struct MachineArgs {
    /// Machine file (TOML) or preset name (table1).
    #[arg(long, short, default_value = "table1")]
    machine: String,
    /// Override a machine field, e.g. --set router.switch_latency=100ns (repeatable).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    set: Vec<String>,
    /// Number of ranks; schedules carry their own.
    #[arg(long)]
    ranks: Option<u32>,
    /// Ranks per node (sharing its NICs and DMA engines); same as --set placement.ranks_per_node=N.
    #[arg(long = "ranks-per-node")]
    ranks_per_node: Option<u32>,
    /// Placement of ranks on nodes: block, cyclic, random (see placement.seed) or a file with
    /// one node number per rank.
    #[arg(long)]
    placement: Option<String>,
}

#[derive(Args)]
struct TrafficArgs {
    #[command(flatten)]
    machine: MachineArgs,
    /// uniform, permutation, transpose, bit_complement, bit_reverse, shuffle, tornado,
    /// neighbor, nearest_group, worst_case, hotspot:NODES:FRACTION.
    #[arg(long, default_value = "uniform")]
    pattern: String,
    /// Offered loads (fractions of the injection bandwidth): 0.5, 0.1,0.2 or FROM:TO:STEP.
    #[arg(long, default_value = "0.1:1.0:0.1")]
    load: String,
    /// Packet size on the wire, header included.
    #[arg(long, default_value = "64 B")]
    packet: String,
    /// Slot of the Bernoulli injection process (BookSim's flit); default: the packet.
    #[arg(long)]
    flit: Option<String>,
    /// bernoulli or periodic.
    #[arg(long, default_value = "bernoulli")]
    injection: String,
    /// Warm-up before measuring; default: 1000 packet times.
    #[arg(long)]
    warmup: Option<String>,
    /// Measurement window; default: 5000 packet times.
    #[arg(long)]
    measure: Option<String>,
    /// How long to wait after the window for the measured packets; default: 10 windows.
    #[arg(long)]
    drain: Option<String>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the table as CSV here.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write the points as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Keep going past saturation (by default the sweep stops after two saturated loads).
    #[arg(long = "all-loads")]
    all_loads: bool,
    /// Check the model's invariants as each load runs and when it stops (README "Safety").
    #[arg(long)]
    check: bool,
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args)]
struct RunArgs {
    /// The program: MGEN C (.c), Python (.py), GOAL (.goal) or schedule text (any other
    /// extension).
    program: PathBuf,
    #[command(flatten)]
    machine: MachineArgs,
    /// Write the JSON summary here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write one CSV row per directed link here.
    #[arg(long = "links-csv")]
    links_csv: Option<PathBuf>,
    /// Also write the program as schedule text here (e.g. to keep a recorded C program).
    #[arg(long = "schedule-out")]
    schedule_out: Option<PathBuf>,
    /// Write a timeline (Chrome trace JSON for Perfetto or chrome://tracing) here.
    #[arg(long)]
    timeline: Option<PathBuf>,
    /// Links drawn as utilization counters in the timeline: names (r0.p1->r1, nic3->r1) or
    /// busiest:N (default busiest:4), comma-separated.
    #[arg(long = "timeline-links", value_delimiter = ',')]
    timeline_links: Vec<String>,
    /// Add every rank's intervals (compute, overhead, blocked, regions, collectives) to --json.
    #[arg(long)]
    trace: bool,
    /// Do not print the summary.
    #[arg(long, short)]
    quiet: bool,
    /// Check the model's invariants while running (link bandwidth, credits, packet
    /// conservation, event order); a broken one stops the run with exit code 70.
    #[arg(long)]
    check: bool,
    /// Stop after this many events and write partial results (exit code 4).
    #[arg(long = "max-events", value_name = "N")]
    max_events: Option<u64>,
    /// Stop at this simulated time (e.g. 10ms) and write partial results (exit code 4).
    #[arg(long = "max-sim-time", value_name = "TIME")]
    max_sim_time: Option<String>,
    /// Run even if the estimated memory exceeds what the machine has available.
    #[arg(long = "ignore-memory-limit")]
    ignore_memory_limit: bool,
    /// Stop recording a C or Python program when a rank makes no MGEN call (records no
    /// operation, for Python) for this long (default 60s, or $ACESIM_RECORD_TIMEOUT; 0:
    /// wait for ever).
    #[arg(long = "record-timeout", value_name = "TIME")]
    record_timeout: Option<String>,
    /// Arguments passed to MGEN_Main (ctx.args, for Python).
    #[arg(last = true)]
    args: Vec<String>,
}

/// Exit code of a run stopped by --max-events or --max-sim-time (partial results written).
pub const EXIT_STOPPED: i32 = 4;
/// Exit code of a run refused because it would not fit in memory.
pub const EXIT_TOO_BIG: i32 = 5;
/// Exit code of a run stopped by Ctrl-C (partial results written), as shells report SIGINT.
pub const EXIT_INTERRUPTED: i32 = 130;
/// Exit code of a run stopped by SIGTERM (partial results written).
pub const EXIT_TERMINATED: i32 = 143;

/// The first SIGINT or SIGTERM received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The flag the run and the recorders look at; set by the first signal.
static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe work here: atomics, kill, write, _exit.
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // A second signal: stop at once, with the recorder's processes.
        acesim::frontends::child::kill_group(
            acesim::frontends::child::CHILD_GROUP.load(Ordering::SeqCst),
        );
        let msg = b"acesim: stopped at once (second signal)\n";
        // SAFETY: write and _exit are async-signal-safe.
        unsafe {
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::_exit(128 + sig);
        }
    }
    if let Some(f) = INTERRUPT.get() {
        f.store(true, Ordering::SeqCst);
    }
}

/// The interrupt flag, with SIGINT and SIGTERM handlers that set it (installed once): the
/// run stops at its next look at the flag and writes what it has, a recording stops its
/// rank processes; a second signal ends acesim at once.
fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = INTERRUPT.get_or_init(|| Arc::new(AtomicBool::new(false)));
    #[cfg(unix)]
    if let Ok(mut saved) = SAVED_HANDLERS.lock() {
        if saved.is_empty() {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                // SAFETY: installs a handler that only does async-signal-safe work, keeping
                // the one it replaces (restored when the command ends).
                unsafe {
                    let mut act: libc::sigaction = std::mem::zeroed();
                    act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                    act.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut act.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, &act, &mut old) == 0 {
                        saved.push((sig, old));
                    }
                }
            }
        }
    }
    flag.clone()
}

/// The handlers `interrupt_flag` replaced (the Python interpreter's, when the command runs
/// inside Python), put back by `restore_signals`.
#[cfg(unix)]
static SAVED_HANDLERS: std::sync::Mutex<Vec<(libc::c_int, libc::sigaction)>> =
    std::sync::Mutex::new(Vec::new());

/// Puts back the signal handlers in force before the command and clears the flag, so that
/// a process running several commands (Python calling `acesim._core.cli`) is as before.
fn restore_signals() {
    #[cfg(unix)]
    if let Ok(mut saved) = SAVED_HANDLERS.lock() {
        for (sig, old) in saved.drain(..) {
            // SAFETY: reinstalls a handler exactly as it was.
            unsafe {
                libc::sigaction(sig, &old, std::ptr::null_mut());
            }
        }
    }
    SIGNAL.store(0, Ordering::SeqCst);
    if let Some(f) = INTERRUPT.get() {
        f.store(false, Ordering::SeqCst);
    }
}

/// Exit code for a signal received: 130 for SIGINT, 143 for SIGTERM.
fn signal_exit_code() -> i32 {
    match SIGNAL.load(Ordering::SeqCst) {
        #[cfg(unix)]
        libc::SIGTERM => EXIT_TERMINATED,
        _ => EXIT_INTERRUPTED,
    }
}

/// Name of the signal received, for messages.
fn signal_name() -> &'static str {
    match signal_exit_code() {
        EXIT_TERMINATED => "SIGTERM",
        _ => "Ctrl-C (SIGINT)",
    }
}

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
    if let Command::Run(a) = cli.command {
        return run(a);
    }
    dispatch_other(cli).map(|()| 0)
}

fn dispatch_other(cli: Cli) -> acesim::Result<()> {
    match cli.command {
        Command::Run(_) => unreachable!("handled in dispatch"),
        Command::Record {
            program,
            ranks,
            output,
            record_timeout,
            ignore_memory_limit,
            args,
        } => {
            check_recorded_ranks(ranks)?;
            let output = output.map(|p| Output::check("-o", &p)).transpose()?;
            check_distinct(&output.iter().collect::<Vec<_>>(), &[("program", &program)])?;
            let interrupt = interrupt_flag();
            let options = RecordOptions {
                interrupt: Some(interrupt.clone()),
                timeout_s: record_timeout_arg(record_timeout.as_deref())?,
                memory_check: !ignore_memory_limit,
            };
            let format = Format::of_path(&program);
            let text = frontends::load::record(&program, format, ranks, &args, &options)?;
            check_interrupt(&interrupt, &program)?;
            // Parse it so a recorded program with bad values is reported now.
            schedule::parse(
                &format!("schedule recorded from {}", program.display()),
                &text,
            )?;
            match output {
                Some(o) => write_all(vec![(o, bytes(text.as_bytes()))]),
                None => {
                    out!("{text}");
                    Ok(())
                }
            }
        }
        Command::Machine(m) => {
            let config = load_machine(&m)?;
            let ranks = m.ranks.unwrap_or(1);
            acesim::run::admission::admit_machine(&config, ranks)?;
            let (topo, _) = acesim::run::simulate::layout(&config, ranks)?;
            outln!(
                "# {}: {} routers, {} nodes, {} NICs per node, {} directed links",
                topo.kind(),
                topo.num_routers,
                topo.num_nodes,
                topo.nics_per_node(),
                topo.num_links()
            );
            out!("{}", config.in_force().to_toml());
            Ok(())
        }
        Command::Report { result, output } => {
            let mut args = vec!["report".to_string(), result.display().to_string()];
            if let Some(o) = output {
                args.push("-o".into());
                args.push(o.display().to_string());
            }
            let out = python::run_package(&args, "acesim report")?;
            out!("{}", String::from_utf8_lossy(&out.stdout));
            Ok(())
        }
        Command::Traffic(t) => traffic(t),
        Command::Validate { machine, program } => {
            let config = load_machine(&machine)?;
            let options = RecordOptions {
                interrupt: Some(interrupt_flag()),
                memory_check: true,
                ..Default::default()
            };
            let ranks = match &program {
                Some(p) => load_program(p, machine.ranks, &[], &options)?.ranks,
                None => machine.ranks.unwrap_or(1),
            };
            acesim::run::admission::admit_machine(&config, ranks)?;
            let (topo, _) = acesim::run::simulate::layout(&config, ranks)?;
            outln!(
                "machine ok: {}: {} routers, {} nodes, {} directed links",
                topo.kind(),
                topo.num_routers,
                topo.num_nodes,
                topo.num_links()
            );
            if let Some(p) = &program {
                let mut prog = load_program(p, machine.ranks, &[], &options)?;
                acesim::run::simulate::check_program(&config, &prog)?;
                acesim::program::link::link(&mut prog, &config.collectives)?;
                let need = acesim::run::admission::estimate_run_memory(
                    &config,
                    &prog,
                    acesim::run::admission::Tracing::None,
                )?;
                // The same admission as `run`: a run that would be refused is refused here.
                acesim::run::admission::admit(need)?;
                let ops: usize = prog.ops.iter().map(Vec::len).sum();
                outln!(
                    "program ok: {} ranks, {ops} operations after expanding collectives; the run needs about {} beyond the program{}",
                    prog.ranks,
                    acesim::memory::approx_size(need),
                    acesim::memory::memory_budget()?.map_or(String::new(), |a| format!(
                        " ({} available)",
                        acesim::memory::approx_size(a)
                    ))
                );
            }
            Ok(())
        }
    }
}

fn check_ranks(r: u32) -> acesim::Result<()> {
    if r == 0 {
        return Err(Error::input(
            Location::file("command line").with_field("ranks"),
            "--ranks must be at least 1",
        ));
    }
    Ok(())
}

/// A rank count for recording a C or Python program: refused at once when absurd.
fn check_recorded_ranks(r: u32) -> acesim::Result<()> {
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
fn record_timeout_arg(text: Option<&str>) -> acesim::Result<Option<u64>> {
    text.map(|t| parse_timeout(t, "command line", "record-timeout"))
        .transpose()
}

/// `Error::Interrupted` once a signal has arrived (checked between phases).
fn check_interrupt(flag: &AtomicBool, program: &Path) -> acesim::Result<()> {
    match flag.load(Ordering::SeqCst) {
        true => Err(Error::Interrupted(format!(
            "stopped after recording {}",
            program.display()
        ))),
        false => Ok(()),
    }
}

fn load_machine(m: &MachineArgs) -> acesim::Result<acesim::Machine> {
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
fn toml_string(s: &str) -> String {
    let escaped: String = s
        .chars()
        .flat_map(|c| match c {
            '\\' | '"' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

/// The program at `path`, read or recorded (C and Python programs, for `ranks` ranks).
fn load_program(
    path: &Path,
    ranks: Option<u32>,
    args: &[String],
    options: &RecordOptions,
) -> acesim::Result<Program> {
    let format = Format::of_path(path);
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

fn run(a: RunArgs) -> acesim::Result<i32> {
    if !a.timeline_links.is_empty() && a.timeline.is_none() {
        return Err(Error::input(
            Location::file("command line").with_field("timeline-links"),
            "--timeline-links chooses the links drawn in a timeline: it needs --timeline FILE",
        ));
    }
    let check = |option: &str, p: &Option<PathBuf>| {
        p.as_deref().map(|p| Output::check(option, p)).transpose()
    };
    let json_out = check("--json", &a.json)?;
    let links_out = check("--links-csv", &a.links_csv)?;
    let schedule_out = check("--schedule-out", &a.schedule_out)?;
    let timeline_out = check("--timeline", &a.timeline)?;
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
    let options = RecordOptions {
        interrupt: Some(interrupt.clone()),
        timeout_s: record_timeout_arg(a.record_timeout.as_deref())?,
        memory_check: !a.ignore_memory_limit,
    };
    let program = load_program(&a.program, a.machine.ranks, &a.args, &options)?;
    let schedule_text = match &a.schedule_out {
        Some(_) => Some(schedule::write(&program).map_err(|m| {
            Error::input(Location::file("command line").with_field("schedule-out"), m)
        })?),
        None => None,
    };
    let trace = a.trace || a.timeline.is_some();
    let max_sim_time = acesim::run::simulate::parse_time_limit(
        a.max_sim_time.as_deref(),
        "command line",
        "max-sim-time",
    )?;
    let options = acesim::run::simulate::Options {
        trace,
        check: a.check,
        max_events: a.max_events,
        max_sim_time,
        interrupt: Some(interrupt),
        memory_check: !a.ignore_memory_limit,
        timeline: a.timeline.is_some(),
        ..Default::default()
    };
    let results = acesim::run::simulate::simulate_with(&config, program, &options)?;
    let timeline = match &a.timeline {
        Some(_) => {
            let spec = if a.timeline_links.is_empty() {
                vec!["busiest:4".to_string()]
            } else {
                a.timeline_links.clone()
            };
            let links = acesim::results::timeline::select_links(&results, &spec).map_err(|m| {
                Error::input(
                    Location::file("command line").with_field("timeline-links"),
                    m,
                )
            })?;
            Some(
                acesim::results::timeline::chrome_trace(&results, &links)
                    .map_err(Error::Internal)?,
            )
        }
        None => None,
    };
    // Outputs are written only after the run succeeded, all or nothing.
    let links_text = links_out.as_ref().map(|_| results.links_csv());
    let mut writes: Vec<(Output, Producer)> = Vec::new();
    if let (Some(o), Some(t)) = (schedule_out, &schedule_text) {
        writes.push((o, bytes(t.as_bytes())));
    }
    if let Some(o) = json_out {
        writes.push((o, Box::new(|w| results.write_json(w))));
    }
    if let (Some(o), Some(t)) = (links_out, &links_text) {
        writes.push((o, bytes(t.as_bytes())));
    }
    if let (Some(o), Some(t)) = (timeline_out, &timeline) {
        writes.push((o, bytes(t.as_bytes())));
    }
    write_all(writes)?;
    if !a.quiet {
        out!("{}", results.summary());
    } else if let Some(p) = &results.partial {
        eprintln!(
            "warning: partial results: the run was stopped ({}) at {} ps",
            p.reason.name(),
            p.stopped_at_ps
        );
    }
    Ok(match &results.partial {
        None => 0,
        Some(p) if p.reason == acesim::results::StopReason::Interrupted => signal_exit_code(),
        Some(_) => EXIT_STOPPED,
    })
}

fn traffic(a: TrafficArgs) -> acesim::Result<()> {
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
        parse_loads, points_csv, points_table, run_loads, saturation_throughput, Injection,
        TrafficConfig,
    };
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
    let points = run_loads(&config, &base, &loads, a.all_loads)?;
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
fn size_for_traffic(config: &mut acesim::Machine, ranks: Option<u32>) -> acesim::Result<()> {
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

/// Writes `b` as it is.
fn bytes(b: &[u8]) -> Producer<'_> {
    Box::new(move |w| w.write_all(b))
}

/// The input files named by the machine options, which no output may overwrite: the
/// machine file (not a preset) and the placement file.
fn machine_inputs<'a>(
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
