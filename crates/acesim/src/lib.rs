//! acesim: an interconnection-network simulator for RDMA and MPI communication.
//!
//! Data flows one way: machine config -> topology + network model; program front end ->
//! per-rank operation lists -> runtime <-> network -> results.

pub mod child;
pub mod collectives;
pub mod config;
pub mod engine;
pub mod error;
pub mod goal;
pub mod mgen;
pub mod mpi;
pub mod network;
pub mod patterns;
pub mod placement;
pub mod program;
pub mod results;
pub mod runtime;
pub mod schedule;
pub mod sim;
pub mod timeline;
pub mod topology;
pub mod traffic;
pub mod units;

pub use config::{MachineConfig, MachineSource};
pub use error::{Error, Result};
pub use program::Program;
pub use results::Results;
pub use sim::simulate;
