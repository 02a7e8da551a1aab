//! Programs: per-rank operation lists, whatever front end produced them, and their linking
//! (communicators, requests, collectives expanded into point-to-point steps).

pub mod adjust;
pub mod call_seqs;
pub mod collective_defaults;
pub mod collectives;
pub mod link;
pub mod ops;
pub mod sink;
pub mod stream;

pub use ops::*;
