//! Everything a run keeps is numbered densely from 0 in a `u32` (ranks, nodes, NICs,
//! routers, ports, links, packets, messages, operations, requests), so that state lives in
//! flat arrays; [`NONE`] is the id of nothing (no handle, the end of a list).

pub const NONE: u32 = u32::MAX;
