//! The machine a run simulates: its description (TOML, presets, `--set`), read and checked
//! once into a [`Machine`], its topology (routers, ports, NICs and the routing function)
//! and where ranks live on its nodes.

pub mod config;
pub mod load;
pub mod loaded;
pub mod options;
pub mod placement;
pub mod topology;
pub mod validate;

pub use loaded::Machine;
