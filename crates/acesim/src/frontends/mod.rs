//! Program front ends: each reads one kind of input into a [`Program`](crate::program::Program)
//! (per-rank operation lists): MGEN C programs (recorded rank by rank), the schedule text
//! format and GOAL dependency graphs.

pub mod child;
pub mod goal;
pub mod mgen;
pub mod schedule;
