//! OTF2 traces (Score-P's Open Trace Format 2), read with the OTF2 C library (the `otf2`
//! feature; shim.c hands its definitions and events to Rust). One rank per MPI process
//! (location group); messages, requests, collectives and the compute between MPI calls. See
//! docs/traces.md for what is read and how it maps. Without the feature, reading an OTF2
//! trace is an error that says how to build acesim with it.

#[cfg(feature = "otf2")]
mod convert;
#[cfg(feature = "otf2")]
mod defs;
#[cfg(feature = "otf2")]
mod shim;
#[cfg(feature = "otf2")]
mod stream;

use crate::error::{Error, Location, Result};
use crate::frontends::dumpi::{TraceOptions, TraceSummary};
use crate::program::ops::Program;
use std::path::Path;

/// Whether this acesim was built with OTF2 support (the `otf2` feature).
pub const AVAILABLE: bool = cfg!(feature = "otf2");

/// Reads the whole OTF2 trace whose anchor file (`traces.otf2`) is `path`.
pub fn read(path: &Path, opts: &TraceOptions) -> Result<(Program, TraceSummary)> {
    #[cfg(feature = "otf2")]
    {
        convert::read(path, opts)
    }
    #[cfg(not(feature = "otf2"))]
    {
        let _ = opts;
        Err(not_built(path))
    }
}

/// Reads the OTF2 trace at `path` for its skeleton (every event checked); the program reads
/// each rank's events again as the run reaches them.
pub fn read_streamed(path: &Path, opts: &TraceOptions) -> Result<(Program, TraceSummary)> {
    read_in_windows(path, opts, WINDOW_EVENTS, KEPT_OPEN)
}

/// Events a streamed rank reads at a time.
const WINDOW_EVENTS: u64 = 16_384;
/// Ranks whose location stays open between windows.
const KEPT_OPEN: usize = 64;

/// `read_streamed` with windows of `events` events, `kept_open` ranks keeping their
/// location open between windows (the others open it again for each window): tests cut
/// small traces into many windows both ways.
#[doc(hidden)]
pub fn read_in_windows(
    path: &Path,
    opts: &TraceOptions,
    events: u64,
    kept_open: usize,
) -> Result<(Program, TraceSummary)> {
    #[cfg(feature = "otf2")]
    {
        stream::read_in_windows(path, opts, events, kept_open)
    }
    #[cfg(not(feature = "otf2"))]
    {
        let _ = (opts, events, kept_open);
        Err(not_built(path))
    }
}

/// The error for an OTF2 trace given to an acesim built without the `otf2` feature.
pub fn not_built(path: &Path) -> Error {
    Error::input(
        Location::file(path.display().to_string()),
        "this is an OTF2 trace, but this acesim was built without OTF2 support: run scripts/setup (it installs libotf2-trace-dev and builds with the `otf2` feature), or build with `cargo build --release --features acesim/otf2` where otf2-config is installed",
    )
}
