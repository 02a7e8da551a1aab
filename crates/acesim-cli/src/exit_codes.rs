//! The exit codes that are not an error's own (`acesim::Error::exit_code`); docs/errors.md
//! lists them all.

/// Exit code of a run stopped by --max-events or --max-sim-time (partial results written).
pub const EXIT_STOPPED: i32 = 4;
/// Exit code of a run refused because it would not fit in memory.
pub const EXIT_TOO_BIG: i32 = 5;
/// Exit code of a run stopped by Ctrl-C (partial results written), as shells report SIGINT.
pub const EXIT_INTERRUPTED: i32 = 130;
/// Exit code of a run stopped by SIGTERM (partial results written).
pub const EXIT_TERMINATED: i32 = 143;
