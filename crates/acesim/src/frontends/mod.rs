//! Program front ends: each reads one kind of input into a [`Program`](crate::program::Program)
//! (per-rank operation lists): MGEN C programs (recorded rank by rank), Python programs
//! (recorded by the Python package), the schedule text format, GOAL dependency graphs and MPI
//! traces (DUMPI, OTF2, SimGrid time-independent); motifs are patterns generated as the run
//! goes.
//! [`load`] is the one way in, for the command line and the Python binding alike.

pub mod binary;
pub mod child;
pub mod dumpi;
pub mod format;
pub mod goal;
pub mod lines;
pub mod load;
pub mod mgen;
pub mod motif;
pub mod otf2;
pub mod python;
pub mod record;
pub mod replay;
pub mod schedule;
pub mod stretches;
pub mod ti;
pub mod words;

pub use format::Format;
pub use load::{load, Source};
