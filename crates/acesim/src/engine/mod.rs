//! The discrete-event engine: a calendar queue of small `Copy` events keyed by (time,
//! sequence), and the `Schedule` interface through which models add events to it.

pub mod queue;

pub use queue::{EventQueue, Schedule};
