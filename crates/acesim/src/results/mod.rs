//! What a run produced: per-operation, per-rank, per-link and per-collective results, the
//! summary, tables and a timeline.

pub mod collect;
pub mod timeline;

pub use collect::*;
