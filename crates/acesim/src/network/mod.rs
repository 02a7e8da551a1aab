//! The network seen from the NIC: what the runtime and the traffic generator may ask of any
//! network model, and the statistics every model keeps.
//!
//! A model moves messages between NICs and reports, as [`Notice`]s, when a message's data
//! starts and stops leaving the sender's memory, when it has landed in the receiver's memory
//! and when a control message has arrived. The runtime knows nothing else of it, so the
//! packet model ([`packet`]) and other models are interchangeable behind [`Network`]. The
//! runtime and the drivers are generic over it: the hot path has no dynamic dispatch.
//!
//! How a model is added: docs/architecture.md.

pub mod flow;
pub mod interface;
pub mod link_kinds;
pub mod models;
pub mod packet;
pub mod partition;

pub use interface::{
    LinkCounts, LinkStats, LinkTotals, ModelEvent, NetCounters, NetStats, Network, NicStats,
    Notice, SparseStats,
};
pub use models::Model;
