//! The packet-level network: NICs with DMA engines, pipelined virtual cut-through routers
//! with per-VC input buffers and credit flow control, and full-duplex links.
//!
//! Timing of one hop (DESIGN.md §2). A packet whose head reaches a router input at `h` and
//! whose tail arrives at `t` is routed after the pipeline delay `d` (routing + VC allocation +
//! switch allocation + switch latency), then waits for its output link and for a downstream
//! buffer with room for the whole packet (VCT). It leaves at `now`; its tail leaves at
//! `max(now + size/rate, t + d)`: cut-through when it does not wait, never faster than it
//! arrived. A link carries one packet per direction at a time. Buffer space is returned to
//! the upstream sender as a credit one cable latency after the tail has left.
//!
//! The runtime talks to it only through the [`Network`] interface.

mod build;
mod checks;
mod credits;
mod network;
mod nic;
mod router;
mod routing;
mod split;
mod state;

pub use checks::check_bytes;
pub use state::{Crossing, NetParams, PacketEvent, PacketNetwork};
