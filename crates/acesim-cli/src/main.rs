//! The `acesim` command.

use acesim::error::{Error, Location};
use acesim::{mgen, schedule, MachineSource, Program};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
    /// Compile and record an MGEN C program as a schedule, without simulating it.
    Record {
        /// The MGEN C program.
        program: PathBuf,
        #[arg(long)]
        ranks: u32,
        /// Where to write the schedule (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Arguments passed to MGEN_Main.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Print a machine (file or preset) with every default filled in, and its size.
    Machine(MachineArgs),
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
struct RunArgs {
    /// The program: MGEN C (.c), GOAL (.goal) or schedule text (any other extension).
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
    /// Do not print the summary.
    #[arg(long, short)]
    quiet: bool,
    /// Arguments passed to MGEN_Main.
    #[arg(last = true)]
    args: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn dispatch(cli: Cli) -> acesim::Result<()> {
    match cli.command {
        Command::Run(a) => run(a),
        Command::Record {
            program,
            ranks,
            output,
            args,
        } => {
            check_ranks(ranks)?;
            let text = mgen::record(&program, ranks, &args)?;
            // Parse it so a recorded program with bad values is reported now.
            schedule::parse(
                &format!("schedule recorded from {}", program.display()),
                &text,
            )?;
            match output {
                Some(p) => write_atomic(&p, text.as_bytes()),
                None => {
                    print!("{text}");
                    Ok(())
                }
            }
        }
        Command::Machine(m) => {
            let config = load_machine(&m)?;
            let ranks = m.ranks.unwrap_or(1);
            let (topo, _) = acesim::sim::layout(&config, ranks)?;
            println!(
                "# {}: {} routers, {} nodes, {} NICs per node, {} directed links",
                topo.kind,
                topo.num_routers,
                topo.num_nodes,
                topo.nics_per_node,
                topo.num_links()
            );
            print!("{}", config.to_toml());
            Ok(())
        }
        Command::Validate { machine, program } => {
            let config = load_machine(&machine)?;
            let ranks = match &program {
                Some(p) => load_program(p, machine.ranks, &[])?.ranks,
                None => machine.ranks.unwrap_or(1),
            };
            acesim::sim::layout(&config, ranks)?;
            if let Some(p) = &program {
                let mut prog = load_program(p, machine.ranks, &[])?;
                acesim::sim::check_program(&config, &prog)?;
                acesim::mpi::link(&mut prog, &config.collectives)?;
            }
            println!("ok");
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

fn load_machine(m: &MachineArgs) -> acesim::Result<acesim::MachineConfig> {
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
    MachineSource::open(&m.machine)?
        .with_overrides(&sets)
        .load()
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

fn load_program(path: &Path, ranks: Option<u32>, args: &[String]) -> acesim::Result<Program> {
    let name = path.display().to_string();
    let is_c = path.extension().is_some_and(|e| e == "c");
    if is_c {
        let ranks = ranks.ok_or_else(|| {
            Error::input(
                Location::file("command line").with_field("ranks"),
                format!("--ranks is needed to run the C program {name}"),
            )
        })?;
        check_ranks(ranks)?;
        return mgen::load(path, ranks, args);
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(&name, e))?;
    let program = if path.extension().is_some_and(|e| e == "goal") {
        acesim::goal::parse(&name, &text)?
    } else {
        schedule::parse(&name, &text)?
    };
    if let Some(r) = ranks {
        if r != program.ranks {
            return Err(Error::input(
                Location::file("command line").with_field("ranks"),
                format!(
                    "--ranks {r} but {name} is a schedule for {} ranks",
                    program.ranks
                ),
            ));
        }
    }
    Ok(program)
}

fn run(a: RunArgs) -> acesim::Result<()> {
    let config = load_machine(&a.machine)?;
    let program = load_program(&a.program, a.machine.ranks, &a.args)?;
    let schedule_text = match &a.schedule_out {
        Some(_) => Some(schedule::write(&program).map_err(|m| {
            Error::input(Location::file("command line").with_field("schedule-out"), m)
        })?),
        None => None,
    };
    let results = acesim::simulate(&config, program)?;
    // Outputs are written only after the run succeeded, each atomically.
    if let (Some(p), Some(t)) = (&a.schedule_out, &schedule_text) {
        write_atomic(p, t.as_bytes())?;
    }
    if let Some(p) = &a.json {
        write_atomic(p, results.to_json().as_bytes())?;
    }
    if let Some(p) = &a.links_csv {
        write_atomic(p, results.links_csv().as_bytes())?;
    }
    if !a.quiet {
        print!("{}", results.summary());
    }
    Ok(())
}

/// Writes through a temporary file in the same folder and renames it into place, so a
/// reader never sees half a file.
fn write_atomic(path: &Path, bytes: &[u8]) -> acesim::Result<()> {
    let name = path.display().to_string();
    if name == "-" {
        return std::io::Write::write_all(&mut std::io::stdout(), bytes)
            .map_err(|e| Error::io("standard output", e));
    }
    // Devices, pipes and the like (/dev/stdout) are written in place: renaming over them
    // would replace the device node with a file.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return std::fs::write(path, bytes).map_err(|e| Error::io(&name, e));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| Error::io(&name, e))?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(|e| Error::io(&name, e))?;
    tmp.persist(path).map_err(|e| Error::io(&name, e.error))?;
    Ok(())
}
