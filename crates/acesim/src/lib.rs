//! acesim: an interconnection-network simulator for RDMA and MPI communication.
//!
//! The folders are the data flow of a run:
//!
//! ```text
//! machine/    config (TOML, presets) -> topology + placement
//! frontends/  C and Python programs, schedules, GOAL   -> program/
//! program/    per-rank operations, linked (communicators, requests, collectives)
//! runtime/    ranks executing their programs  <->  network/ (behind one interface, at the NIC)
//! engine/     the event queue both run on
//! results/    summary, tables, timeline
//! run/        the drivers that tie them together: a program run, synthetic traffic
//! ```
//!
//! Below them: `units` (picoseconds, bytes, bandwidths), `ids` (dense ids and `NONE`),
//! `error` (located input errors), `rng` (seeded random numbers), `memory` (what this
//! process may use), `zero_pages` and `prefault` (fresh memory made cheaper). Nothing in
//! the core prints or exits; the CLI and the Python binding do. docs/architecture.md walks
//! through it.

pub mod engine;
pub mod error;
pub mod frontends;
pub mod ids;
pub mod machine;
pub mod memory;
pub mod network;
pub mod prefault;
pub mod program;
pub mod results;
pub mod rng;
pub mod run;
pub mod runtime;
pub mod units;
pub mod zero_pages;

pub use error::{Error, Result};
pub use machine::config::MachineConfig;
pub use machine::load::MachineSource;
pub use machine::Machine;
pub use program::Program;
pub use results::Results;
pub use run::simulate::simulate;
