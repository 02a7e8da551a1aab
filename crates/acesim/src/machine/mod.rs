//! The machine a run simulates: its description (TOML, presets, `--set`), its topology
//! (routers, ports, NICs and the routing function) and where ranks live on its nodes.

pub mod config;
pub mod placement;
pub mod topology;
