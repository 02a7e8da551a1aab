//! The flow-level network (MFS): a message is a flow through its sender's DMA engine, the
//! links of its route and the receiver's DMA engine, at a max-min fair rate recomputed when
//! flows start or end; alone on its route it takes exactly what the packet model gives it.
//! Buffers and credits are not modelled (docs/flow.md).

mod build;
mod control;
pub mod coupling;
mod maxmin;
mod messages;
mod network;
mod packets;
mod paths;
pub mod pipeline;
mod queues;
mod reservations;
mod state;
mod timings;

pub use coupling::CouplingReport;
pub use maxmin::MaxMin;
pub use state::{FlowEvent, FlowNetwork, Milestone};
