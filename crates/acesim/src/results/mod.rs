//! What a run produced: per-operation, per-rank, per-link and per-collective results, the
//! summary, tables and a timeline.
//!
//! `collect` builds [`Results`] (`report`) from the runtime and the network at the end of a
//! run, a concept a file: `ranks`, `operations`, `regions`, `collectives`, `links`, `nics`,
//! `topology`, `partitions`. What is written from them: the JSON (`report`; on threads, `json_threads`), the human `summary`, the
//! per-link `tables` and the `timeline`.

mod chunks;
pub mod collect;
pub mod collectives;
mod json_threads;
pub mod links;
pub mod nics;
pub mod operations;
pub mod partitions;
pub mod provenance;
pub mod ranks;
pub mod regions;
pub mod report;
mod rows;
mod skeleton;
pub mod summary;
pub mod tables;
pub mod timeline;
pub mod topology;

pub use collect::collect;
pub use collectives::CollectiveResult;
pub use links::{LinkResult, LinkTable};
pub use nics::NicResult;
pub use operations::{OperationResult, Operations, ReceiveResult, Receives, Record, Rows, Table};
pub use ranks::{BlockedTimes, RankResult, TraceEntry, UnfinishedResult};
pub use regions::RegionResult;
pub use report::{estimate_bytes, Partial, Results, StopReason, MAX_JSON_LINKS};
pub use topology::TopologyDetail;
