//! Synthetic traffic: every node injects packets of a pattern at an offered load, and the
//! latency and accepted throughput are measured over a window, as network architects do
//! with BookSim, SuperSim or SST/Merlin.
//!
//! A run has a warm-up, then a measurement window: packets created in the window are the
//! measured ones; generation stops at its end and the run continues until they have all
//! arrived (or a drain limit passes: the load is past saturation). Packets skip the DMA
//! engines: only the network is measured. Latency is from a packet's creation (so it counts
//! the time it waited in its source queue) to its tail reaching the destination NIC.
//! Offered and accepted loads are fractions of the injection link bandwidth.
//!
//! A point (`point`) is checked against the machine, then the generator — the pattern's
//! destinations (`run::patterns`) at the times of the `injection` process — runs against
//! the network model, and the `measure`ment window judges the load. A curve (`sweep`) runs
//! the points of a list of loads, as the `config` says, and `table` writes them out.

mod config;
mod injection;
mod measure;
mod part;
mod point;
mod sweep;
mod table;

pub use config::{Injection, TrafficConfig};
pub use measure::{Parallel, TrafficPoint, MIN_JUDGED_PACKETS};
pub use point::{pattern_shape, run_point, run_point_on, run_point_with};
pub use sweep::{
    last_stable_load, parse_loads, run_curve, run_loads, run_loads_on, saturation_throughput,
};
pub use table::{points_csv, points_table};
