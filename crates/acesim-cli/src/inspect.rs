//! `acesim machine` and `acesim validate`: a machine (and a program) checked and described
//! without simulating, with the memory admission a run would apply.

use crate::args::MachineArgs;
use crate::inputs::{load_machine, load_program};
use crate::signals::interrupt_flag;
use acesim::frontends::record::RecordOptions;
use acesim::memory::{approx_size, memory_budget};
use acesim::network::Model;
use acesim::run::admission::{admit, admit_machine, estimate_run_memory, Tracing};
use acesim::run::simulate::{check_program, layout};
use std::path::Path;

/// `acesim machine`: every field in force, and the size of the machine.
pub(crate) fn machine(m: &MachineArgs) -> acesim::Result<()> {
    let config = load_machine(m)?;
    let ranks = m.ranks.unwrap_or(1);
    admit_machine(&config, ranks)?;
    let (topo, _) = layout(&config, ranks)?;
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

/// `acesim validate`: the machine, and the program against it.
pub(crate) fn validate(
    machine: &MachineArgs,
    program: Option<&Path>,
    params: &[String],
) -> acesim::Result<()> {
    let config = load_machine(machine)?;
    let options = RecordOptions {
        interrupt: Some(interrupt_flag()),
        memory_check: true,
        ..Default::default()
    };
    // Loaded once (a recorded C program runs, a large trace is read): its rank count sizes
    // the machine, then the program is checked against it.
    let prog = program
        .map(|p| {
            let args = crate::inputs::program_args(p, params, &[])?;
            load_program(p, "auto", machine.ranks, &args, &options)
        })
        .transpose()?;
    let ranks = prog
        .as_ref()
        .map_or(machine.ranks.unwrap_or(1), |p| p.ranks);
    admit_machine(&config, ranks)?;
    let (topo, _) = layout(&config, ranks)?;
    outln!(
        "machine ok: {}: {} routers, {} nodes, {} directed links",
        topo.kind(),
        topo.num_routers,
        topo.num_nodes,
        topo.num_links()
    );
    let Some(mut prog) = prog else {
        return Ok(());
    };
    check_program(&config, &prog)?;
    acesim::program::link::link(&mut prog, &config.collectives)?;
    // The packet model's estimate: the flow model needs less.
    let need = estimate_run_memory(&config, &prog, Tracing::None, Model::Packet)?;
    // The same admission as `run`: a run that would be refused is refused here.
    admit(need)?;
    let ops = match prog.stream {
        // A trace read as the run goes, or a motif: its operations are not made yet.
        Some(_) => "its operations read or made as the run goes".to_string(),
        None => format!(
            "{} operations, the steps of collectives included",
            acesim::runtime::Runtime::count_transfers(&prog).ops
        ),
    };
    outln!(
        "program ok: {} ranks, {ops}; the run needs about {} beyond the program{}",
        prog.ranks,
        approx_size(need),
        memory_budget()?.map_or(String::new(), |a| format!(
            " ({} available)",
            approx_size(a)
        ))
    );
    Ok(())
}
