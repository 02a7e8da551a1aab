//! The command line: subcommands and their options (clap).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "acesim",
    version,
    about = "Interconnection-network simulator for RDMA and MPI communication"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Simulate a program on a machine and print the predicted execution time.
    #[command(after_help = "Examples (from the clone):
  acesim run examples/papers/ring_put.c --machine table1 --ranks 8
  acesim run examples/mpi/collectives.c --ranks 16 --ranks-per-node 2 --json out.json
  acesim run tests/data/dumpi/sst-macro-testbgp/testbgp.meta -m examples/machines/torus-4x4.toml --jobs fill
  acesim run examples/schedules/hotspot.sched -m examples/machines/torus-4x4.toml --model flow
  acesim run examples/schedules/hotspot.sched -m examples/machines/torus-4x4.toml --threads 2

Across processes (a build with MPI: scripts/setup), the same output files:
  mpirun -np 2 acesim run examples/schedules/hotspot.sched -m examples/machines/torus-4x4.toml")]
    Run(RunArgs),
    /// Run a program at both network levels, packet and flow, and report how far apart
    /// they are: total time, per-operation latency error, per-link bytes, wall time.
    #[command(
        name = "compare-models",
        after_help = "Example:\n  acesim compare-models examples/schedules/hotspot.sched -m examples/machines/torus-4x4.toml --json cmp.json"
    )]
    CompareModels(CompareArgs),
    /// Record an MGEN C program (compiled) or a Python program as a schedule, without
    /// simulating it.
    #[command(
        after_help = "Example:\n  acesim record examples/papers/ring_put.c --ranks 4 -o ring.sched"
    )]
    Record {
        /// The MGEN C (.c) or Python (.py) program.
        program: PathBuf,
        /// Number of ranks (each runs the program once, in a process of its own).
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
    #[command(
        after_help = "Examples:\n  acesim machine --machine table1\n  acesim machine -m examples/machines/torus-4x4.toml --set link.bandwidth=\"200 Gb/s\""
    )]
    Machine(MachineArgs),
    /// Write PNG plots and a self-contained HTML page for a JSON summary (needs the Python
    /// package with matplotlib).
    #[command(
        after_help = "Examples:\n  acesim run examples/mpi/collectives.c --ranks 16 --json out.json && acesim report out.json\n  acesim traffic -m examples/machines/torus-4x4.toml --json t.json && acesim report t.json -o t-report"
    )]
    Report {
        /// A JSON summary written by `acesim run --json`, or the points of `acesim traffic
        /// --json`.
        result: PathBuf,
        /// Folder for the plots and report.html (default: next to the JSON).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Write a JSON summary's tables as Parquet files (as `acesim run --parquet`; needs the
    /// Python package with pyarrow).
    #[command(
        after_help = "Examples:\n  acesim run examples/mpi/collectives.c --ranks 16 --json out.json && acesim parquet out.json -o out-tables"
    )]
    Parquet {
        /// A JSON summary written by `acesim run --json`.
        result: PathBuf,
        /// Folder for the .parquet files (default: next to the JSON, RESULT-tables).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Synthetic traffic: latency and accepted throughput against offered load.
    #[command(
        after_help = "Examples:\n  acesim traffic -m examples/machines/torus-4x4.toml --pattern uniform --load 0.1:1.0:0.1\n  acesim traffic -m table1 --set topology.kind=dragonfly --set topology.p=2 --set topology.a=4 --set topology.h=2 --pattern worst_case --load 0.2,0.4 --csv df.csv\n  acesim traffic -m examples/machines/torus-4x4.toml --load 0.5 --threads 2\n\nAcross processes (a build with MPI: scripts/setup):\n  mpirun -np 2 acesim traffic -m examples/machines/torus-4x4.toml --load 0.5"
    )]
    Traffic(TrafficArgs),
    /// Check a machine and, optionally, a program without simulating.
    #[command(
        after_help = "Example:\n  acesim validate -m examples/machines/torus-4x4.toml examples/schedules/hotspot.sched"
    )]
    Validate {
        #[command(flatten)]
        machine: MachineArgs,
        /// A program to check against the machine.
        program: Option<PathBuf>,
        /// A motif's parameter, NAME=VALUE (repeatable): checked with the motif.
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
    },
    /// MPI traces: what one holds, without simulating it; recording one from a real MPI
    /// program.
    #[command(
        subcommand,
        after_help = "Examples:\n  acesim trace info tests/data/dumpi/sst-macro-testbgp/testbgp.meta\n  acesim trace record -o /tmp/ring -- mpirun --oversubscribe -np 4 examples/mpi-traces/ring"
    )]
    Trace(TraceCommand),
}

impl Command {
    /// The subcommand as typed.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::Run(_) => "run",
            Command::CompareModels(_) => "compare-models",
            Command::Record { .. } => "record",
            Command::Machine(_) => "machine",
            Command::Report { .. } => "report",
            Command::Parquet { .. } => "parquet",
            Command::Traffic(_) => "traffic",
            Command::Validate { .. } => "validate",
            Command::Trace { .. } => "trace",
        }
    }
}

#[derive(Subcommand)]
pub(crate) enum TraceCommand {
    /// Ranks, calls by kind, bytes, communicators and each rank's traced window.
    Info {
        /// The trace (a DUMPI trace's .meta file, or a SimGrid trace with --format ti).
        trace: PathBuf,
        /// Also write the summary, with every rank's window, as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        #[command(flatten)]
        trace_args: TraceArgs,
    },
    /// Run an MPI program under the system MPI with a PMPI library (tracer/acesim_dumpi.c)
    /// that writes a DUMPI trace of it: acesim trace record -o DIR -- mpirun -np 16 ./app.
    Record {
        /// Folder for the trace (made when missing): PREFIX.meta and PREFIX-NNNN.bin.
        #[arg(long, short)]
        output: PathBuf,
        /// File-name prefix of the trace's files.
        #[arg(long, default_value = "trace")]
        prefix: String,
        /// A prebuilt tracing library (make -C tracer) instead of compiling
        /// tracer/acesim_dumpi.c with mpicc (or $MPICC) for this run.
        #[arg(long)]
        tracer: Option<PathBuf>,
        /// The command that runs the program, after `--`: mpirun -np 16 ./app args.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
}

#[derive(Args)]
pub(crate) struct MachineArgs {
    /// Machine file (TOML) or preset name (table1).
    #[arg(long, short, default_value = "table1")]
    pub(crate) machine: String,
    /// Override a machine field, e.g. --set router.switch_latency=100ns (repeatable).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub(crate) set: Vec<String>,
    /// Number of ranks; schedules carry their own.
    #[arg(long)]
    pub(crate) ranks: Option<u32>,
    /// Ranks per node (sharing its NICs and DMA engines); same as --set placement.ranks_per_node=N.
    #[arg(long = "ranks-per-node")]
    pub(crate) ranks_per_node: Option<u32>,
    /// Placement of ranks on nodes: block, cyclic, random (see placement.seed) or a file with
    /// one node number per rank.
    #[arg(long)]
    pub(crate) placement: Option<String>,
}

#[derive(Args)]
pub(crate) struct TrafficArgs {
    #[command(flatten)]
    pub(crate) machine: MachineArgs,
    /// uniform, permutation, transpose, bit_complement, bit_reverse, shuffle, tornado,
    /// neighbor, nearest_group, worst_case, hotspot:NODES:FRACTION.
    #[arg(long, default_value = "uniform")]
    pub(crate) pattern: String,
    /// Offered loads (fractions of the injection bandwidth): 0.5, 0.1,0.2 or FROM:TO:STEP.
    #[arg(long, default_value = "0.1:1.0:0.1")]
    pub(crate) load: String,
    /// Packet size on the wire, header included.
    #[arg(long, default_value = "64 B")]
    pub(crate) packet: String,
    /// Slot of the Bernoulli injection process (BookSim's flit); default: the packet.
    #[arg(long)]
    pub(crate) flit: Option<String>,
    /// bernoulli or periodic.
    #[arg(long, default_value = "bernoulli")]
    pub(crate) injection: String,
    /// Warm-up before measuring; default: 1000 packet times.
    #[arg(long)]
    pub(crate) warmup: Option<String>,
    /// Measurement window; default: 5000 packet times.
    #[arg(long)]
    pub(crate) measure: Option<String>,
    /// How long to wait after the window for the measured packets; default: 10 windows.
    #[arg(long)]
    pub(crate) drain: Option<String>,
    /// Seed of the random draws (destinations, injection times, random routing): the same
    /// seed gives the same results.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Write the table as CSV here.
    #[arg(long)]
    pub(crate) csv: Option<PathBuf>,
    /// Write the points as JSON here.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Keep going past saturation (by default the sweep stops after two saturated loads).
    #[arg(long = "all-loads")]
    pub(crate) all_loads: bool,
    /// Check the model's invariants as each load runs and when it stops (README "Safety").
    #[arg(long)]
    pub(crate) check: bool,
    /// Measure how each load would split into N partitions of a parallel run, on one
    /// thread (as `acesim run --partitions`).
    #[arg(long, value_name = "N")]
    pub(crate) partitions: Option<u32>,
    /// Run each load on N threads, the machine split into N blocks of routers (0: every
    /// core, with at least 1,024 routers a thread). The results are the same on any number
    /// of threads.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) threads: u32,
    /// Do not print the table or the progress line (--csv and --json are still written).
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

#[derive(Args)]
pub(crate) struct RunArgs {
    /// The program: MGEN C (.c), Python (.py), GOAL (.goal), a DUMPI trace (.meta), a
    /// SimGrid trace (--format ti) or schedule text (any other extension).
    pub(crate) program: PathBuf,
    #[command(flatten)]
    pub(crate) machine: MachineArgs,
    #[command(flatten)]
    pub(crate) trace_args: TraceArgs,
    /// The network model: `packet` (packets through routers, flit-level accurate) or
    /// `flow` (messages as max-min fair flows: much faster, exact when uncontended; see
    /// docs/flow.md).
    #[arg(long, value_name = "MODEL", default_value = "packet")]
    pub(crate) model: String,
    /// Write the JSON summary here.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Write one CSV row per directed link here.
    #[arg(long = "links-csv")]
    pub(crate) links_csv: Option<PathBuf>,
    /// Write the tables (ranks, operations, receives, links, regions, collectives) as
    /// Parquet files into this folder, for runs of millions of rows (needs the Python
    /// package with pyarrow: scripts/setup installs it).
    #[arg(long, value_name = "DIR")]
    pub(crate) parquet: Option<PathBuf>,
    /// Also write the program as schedule text here (e.g. to keep a recorded C program).
    #[arg(long = "schedule-out")]
    pub(crate) schedule_out: Option<PathBuf>,
    /// Write a timeline (Chrome trace JSON for Perfetto or chrome://tracing) here.
    #[arg(long)]
    pub(crate) timeline: Option<PathBuf>,
    /// Links drawn as utilization counters in the timeline: names (r0.p1->r1, nic3->r1) or
    /// busiest:N, the N busiest fabric links (router to router; NIC links where the fabric
    /// has fewer that carried anything); default busiest:4; comma-separated.
    #[arg(long = "timeline-links", value_delimiter = ',')]
    pub(crate) timeline_links: Vec<String>,
    /// Add every rank's intervals (compute, overhead, blocked, regions, collectives) to --json.
    #[arg(long)]
    pub(crate) trace: bool,
    /// Do not print the summary.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Print where the wall time went on stderr when the run ends: reading, linking,
    /// building, the events (or windows), merging, collecting, writing.
    #[arg(long)]
    pub(crate) timings: bool,
    /// Check the model's invariants while running (link bandwidth, credits, packet
    /// conservation, event order); a broken one stops the run with exit code 70.
    #[arg(long)]
    pub(crate) check: bool,
    /// Stop after this many events and write partial results (exit code 4).
    #[arg(long = "max-events", value_name = "N")]
    pub(crate) max_events: Option<u64>,
    /// Stop at this simulated time (e.g. 10ms) and write partial results (exit code 4).
    #[arg(long = "max-sim-time", value_name = "TIME")]
    pub(crate) max_sim_time: Option<String>,
    /// Run even if the estimated memory exceeds what the machine has available.
    #[arg(long = "ignore-memory-limit")]
    pub(crate) ignore_memory_limit: bool,
    /// Measure how this run would split into N partitions (threads) of a parallel run:
    /// lookahead, windows, events crossing partitions, balance and the speed-up they allow.
    /// The run uses the event order a partitioned run needs (docs/performance.md).
    #[arg(long, value_name = "N")]
    pub(crate) partitions: Option<u32>,
    /// Run on N threads, the machine split into N blocks of routers, each with the ranks
    /// on its nodes (0: every core, with at least 1,024 routers a thread; packet model).
    /// The results are the same on any number of threads; on more than one, --max-events
    /// stops at the end of the window in which the count is passed. Under `mpirun -np P`:
    /// N threads in each process, the machine split into P x N blocks. A large schedule is
    /// read, and a large --json or --links-csv formatted, on the run's threads (on every
    /// core when --threads is not given); a run not given --threads also has the pages its
    /// records are about to fill mapped on another core.
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<u32>,
    /// Stop recording a C or Python program when a rank makes no MGEN call (records no
    /// operation, for Python) for this long (default 60s, or $ACESIM_RECORD_TIMEOUT; 0:
    /// wait for ever).
    #[arg(long = "record-timeout", value_name = "TIME")]
    pub(crate) record_timeout: Option<String>,
    /// A motif's parameter, NAME=VALUE (motif:halo3d --param iterations=100; repeatable):
    /// the same as giving it after `--` (docs/motifs.md).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub(crate) params: Vec<String>,
    /// Arguments passed to MGEN_Main (ctx.args, for Python; a motif's parameters).
    #[arg(last = true)]
    pub(crate) args: Vec<String>,
}

#[derive(Args)]
pub(crate) struct CompareArgs {
    /// The program: MGEN C (.c), Python (.py), GOAL (.goal), a DUMPI trace (.meta), a
    /// SimGrid trace (--format ti) or schedule text (any other extension).
    pub(crate) program: PathBuf,
    #[command(flatten)]
    pub(crate) machine: MachineArgs,
    #[command(flatten)]
    pub(crate) trace_args: TraceArgs,
    /// Write the comparison as JSON here (without wall times: the same inputs give the
    /// same file).
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Do not print the report.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Check both models' invariants while running (a broken one stops with exit code 70).
    #[arg(long)]
    pub(crate) check: bool,
    /// Run even if the estimated memory of a level exceeds what the machine has available.
    #[arg(long = "ignore-memory-limit")]
    pub(crate) ignore_memory_limit: bool,
    /// Stop recording a C or Python program when a rank makes no MGEN call (records no
    /// operation, for Python) for this long (default 60s, or $ACESIM_RECORD_TIMEOUT; 0:
    /// wait for ever).
    #[arg(long = "record-timeout", value_name = "TIME")]
    pub(crate) record_timeout: Option<String>,
    /// A motif's parameter, NAME=VALUE (motif:halo3d --param iterations=100; repeatable):
    /// the same as giving it after `--` (docs/motifs.md).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub(crate) params: Vec<String>,
    /// Arguments passed to MGEN_Main (ctx.args, for Python; a motif's parameters).
    #[arg(last = true)]
    pub(crate) args: Vec<String>,
}

/// How a program or MPI trace (DUMPI, SimGrid) is read and replayed, and the job layout of
/// any program (ACES); shared by the commands that read programs.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct TraceArgs {
    /// How to read the program: auto (by extension and content), schedule, goal, dumpi, ti
    /// (a SimGrid time-independent trace or list of trace files), c or python.
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    pub(crate) format: String,
    /// Host speed that turns a SimGrid trace's flops into time: 1Gf, 100Mf, 1e9 (flop/s).
    #[arg(long, value_name = "RATE")]
    pub(crate) flops: Option<String>,
    /// Run the program N times side by side, each job with its own world communicator, or
    /// `fill`: as many jobs as the machine's nodes x ranks per node hold.
    #[arg(long, value_name = "N|fill")]
    pub(crate) jobs: Option<String>,
    /// Cap every message and collective at this size, e.g. 64KiB (as ACES truncated).
    #[arg(long = "max-message", value_name = "SIZE")]
    pub(crate) max_message: Option<String>,
    /// `run` (default): collectives run on the network with the machine's algorithms;
    /// `skip`: they take no time (to compare with tools that skip them).
    #[arg(long, value_name = "run|skip", default_value = "run")]
    pub(crate) collectives: String,
    /// Skip this MPI call of a trace (it then costs nothing), e.g. MPI_Win_fence; repeatable.
    #[arg(long = "ignore-call", value_name = "NAME")]
    pub(crate) ignore_call: Vec<String>,
    /// Factor on the compute a trace shows between calls (default 1; 0 drops it).
    #[arg(long = "compute-scale", value_name = "FACTOR")]
    pub(crate) compute_scale: Option<f64>,
    /// Gaps between a trace's calls shorter than this are not compute (default 0).
    #[arg(long = "compute-threshold", value_name = "TIME")]
    pub(crate) compute_threshold: Option<String>,
}
