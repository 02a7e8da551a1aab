//! Motifs: communication patterns generated as the run goes (`motif:NAME` in place of a
//! program, its parameters as the program's arguments `NAME=VALUE`), so that memory does
//! not grow with iterations: a rank's operations are made an iteration at a time when the
//! run reaches them (`program::stream`). The patterns follow SST Ember's motifs (halo2d,
//! halo3d, sweep3d, ring, incast, random pairs) and the CTH-like nearest-neighbour pattern
//! of the ACES studies; docs/motifs.md gives each one's operations and parameters.

mod generate;
mod params;

use crate::error::{Error, Location, Result};
use crate::program::ops::{Program, Streamed};
use generate::MotifSource;
pub use params::{Motif, MotifKind, NAMES};
use std::sync::Arc;

/// The prefix that names a motif where a program's path goes.
pub const PREFIX: &str = "motif:";

/// Whether `program` names a motif (`motif:halo3d`).
pub fn is_motif(program: &str) -> bool {
    program.starts_with(PREFIX)
}

/// The program of motif `spec` (`motif:NAME`) on `ranks` ranks with parameters `args`
/// (`NAME=VALUE` each), checked: an unknown motif or parameter, a value that does not parse
/// and parameters that do not fit the rank count are errors naming the field.
pub fn program(spec: &str, ranks: Option<u32>, args: &[String]) -> Result<Program> {
    let at = Location::file(spec);
    let name = spec.strip_prefix(PREFIX).unwrap_or(spec);
    let Some(ranks) = ranks else {
        return Err(Error::input(
            at.with_field("ranks"),
            format!("--ranks (Python: ranks=) is needed to run motif {name}"),
        ));
    };
    let motif = Motif::parse(spec, name, ranks, args)?;
    let mut prog = Program::new(ranks);
    let file = prog.file_id(spec);
    for h in prog.handles.iter_mut() {
        *h = motif.requests();
    }
    for c in prog.comm_handles.iter_mut() {
        *c = motif.communicators();
    }
    // Collective calls are linked before the run, from a skeleton of each rank's calls
    // (`program::stream`); every rank's calls share the motif's few call records.
    prog.coll_calls = motif.collective_calls();
    let source = MotifSource::new(motif, file);
    if !prog.coll_calls.is_empty() {
        for (r, ops) in prog.ops.iter_mut().enumerate() {
            generate::skeleton(&source, r as u32, ops);
        }
    }
    prog.stream = Some(Streamed::new(Arc::new(source)));
    Ok(prog)
}
