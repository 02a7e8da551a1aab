//! The drivers: a program on a machine (`simulate`), synthetic traffic on a network
//! (`traffic`, with its `patterns`), and the memory admission both apply first; `compare`
//! runs a program at both network levels and says how far apart they are; `partition_report`
//! measures how a run would split among partitions; a program runs on threads
//! (`simulate_threads`) or across processes (`simulate_processes`); `phases` times where a
//! run's wall time goes.

pub mod admission;
pub mod compare;
pub mod events;
pub mod options;
pub mod partition_report;
pub mod patterns;
pub mod phases;
pub mod program_part;
pub mod progress;
pub mod simulate;
pub mod simulate_processes;
pub mod simulate_threads;
pub mod traffic;
