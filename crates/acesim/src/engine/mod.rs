//! The discrete-event engine: a calendar queue of small `Copy` events keyed by (time,
//! sequence), the `Schedule` interface through which models add events to it, the hint that
//! fetches the coming events' records early, and the windows in which the partitions of a
//! parallel run advance together.

pub mod group;
pub mod local_exchange;
pub mod prefetch;
pub mod processes;
pub mod queue;
pub mod windows;

pub use group::Group;
pub use local_exchange::LocalExchange;
pub use processes::{gather_all, gather_first, run_processes, Exchange};
pub use queue::{EventQueue, Schedule};
pub use windows::{run_windows, Bounds, Partition, WindowCount};
