//! Memory admission: a run is estimated from the machine's planned size and the program
//! before anything large is built, and refused (exit code 5) when it would not fit.

use crate::error::{Error, Result};
use crate::machine::loaded::Machine;
use crate::machine::placement;
use crate::machine::topology::{PlannedSize, Topology};
use crate::memory::{approx_size, memory_budget};
use crate::network::flow::FlowNetwork;
use crate::network::packet::PacketNetwork;
use crate::network::Model;
use crate::program::Program;
use crate::results;
use crate::runtime::Runtime;

/// What a run records beyond its results, for the memory estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracing {
    None,
    /// Per-rank intervals and link activity (`--trace`).
    Trace,
    /// The trace, and a timeline drawn from it (`--timeline`).
    Timeline,
}

/// Estimated bytes a run of the linked `program` allocates beyond the program itself, from
/// the machine's planned size (nothing is built).
pub fn estimate_run_memory(
    machine: &Machine,
    program: &Program,
    tracing: Tracing,
    model: Model,
) -> Result<u64> {
    let nodes = placement::nodes_needed(
        &machine.placement_policy,
        machine.placement.ranks_per_node,
        program.ranks,
    )?;
    let size = crate::machine::topology::planned_size(machine, nodes);
    Ok(estimate_memory(&size, machine, program, tracing, model))
}

/// Refuses (exit 5) a machine whose topology alone needs more memory than is available,
/// before it is built (`acesim machine` and `validate` build only the topology).
pub fn admit_machine(machine: &Machine, ranks: u32) -> Result<()> {
    let nodes = placement::nodes_needed(
        &machine.placement_policy,
        machine.placement.ranks_per_node,
        ranks,
    )?;
    let size = crate::machine::topology::planned_size(machine, nodes);
    let need = Topology::estimate_bytes(&size) * 5 / 4;
    if let Some(have) = memory_budget()? {
        if need > have {
            return Err(Error::TooBig(format!(
                "building this machine needs about {} of memory but only {} is available; use a smaller machine",
                approx_size(need),
                approx_size(have)
            )));
        }
    }
    Ok(())
}

/// `Err(TooBig)` when a run's `need` bytes exceed the memory budget.
pub fn admit(need: u64) -> Result<()> {
    if let Some(have) = memory_budget()? {
        if need > have {
            return Err(Error::TooBig(format!(
                "this run needs about {} of memory but only {} is available; use a smaller machine or program, or --ignore-memory-limit to run anyway",
                approx_size(need),
                approx_size(have)
            )));
        }
    }
    Ok(())
}

/// Estimated bytes of the topology, network state, runtime records and results of a run on
/// a machine of `size`. It errs on the high side (docs/performance.md compares it with
/// measured peaks).
pub fn estimate_memory(
    size: &PlannedSize,
    machine: &Machine,
    program: &Program,
    tracing: Tracing,
    model: Model,
) -> u64 {
    let n = Runtime::count_transfers(program);
    let xfers = n.xfers + n.step_xfers;
    let topo = Topology::estimate_bytes(size);
    // Message slots are reused once a message lands: about two in flight per rank.
    let in_flight = 2 * program.ranks as u64;
    let net = match model {
        Model::Packet => PacketNetwork::estimate_bytes(size, machine.router.vcs as u64, in_flight),
        // A rank may post every send at once: each waits for its NIC as a small request,
        // and about two a NIC move.
        Model::Flow => FlowNetwork::estimate_bytes(size, xfers, in_flight),
    };
    let rt = Runtime::estimate_bytes(program, &n);
    // Result rows: the program's own receives (its transfers' records are the runtime's,
    // moved into the results, counted above; collective steps are summarised per call).
    let res = results::estimate_bytes(0, n.recvs, size.links(), program.ranks as u64);
    // Events in flight: a few per transfer at most, 32 bytes each in the queue.
    let events = xfers.min(1 << 24) * 3 * 32;
    // Per operation, measured on 4K- and 16K-rank neighbour exchanges (docs/performance.md):
    // the trace about 110 B (intervals and link activity), a timeline about 3.7 KiB more
    // (its events are built whole before they are written).
    let ops = n.ops;
    let traced = match tracing {
        Tracing::None => 0,
        Tracing::Trace => ops * 160,
        Tracing::Timeline => ops * (160 + 4096),
    };
    // Allocator slack and growth by doubling: measured 1.21x the sum on a 128K-rank
    // neighbour exchange.
    (topo + net + rt + res + events + traced) * 5 / 4
}
