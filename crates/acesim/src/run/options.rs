//! How to run a simulation: what to record, check and stop at, on how many threads.

use crate::network::Model;
use crate::run::admission::Tracing;
use crate::units::Ps;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How to run a simulation.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Record per-rank intervals and link activity (for timelines; costs memory).
    pub trace: bool,
    /// Check the model's invariants as the run goes (always on in debug builds).
    pub check: bool,
    /// Stop after this many events, with partial results.
    pub max_events: Option<u64>,
    /// Stop at this simulated time, with partial results.
    pub max_sim_time: Option<Ps>,
    /// Set from outside (Ctrl-C) to stop the run with partial results.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Refuse to start when the estimated memory exceeds what the machine has available.
    pub memory_check: bool,
    /// A timeline will be drawn from the trace after the run (for the memory estimate).
    pub timeline: bool,
    /// The network model: packets (the default) or flows.
    pub model: Model,
    /// Make every returned credit an event, as before credits were kept off the queue when
    /// they wake nothing: the reference that optimisation must match (tests).
    #[doc(hidden)]
    pub every_credit_an_event: bool,
    /// Measure how the run would split into this many partitions (`--partitions`).
    pub partitions: Option<u32>,
    /// Keep no per-operation records: the results count the operations but list none, and
    /// a replayed trace holds the requests in flight rather than one record per message.
    /// For runs whose outputs do not show them (the command line without `--json`).
    pub summary_only: bool,
    /// Make no per-rank, per-link or per-NIC tables: for runs whose outputs are the
    /// summary alone (the command line without `--json`, `--links-csv`, `--parquet` or
    /// `--timeline`). The network's totals are still added up; a run across processes
    /// then sends process 0 no per-link counts.
    pub no_tables: bool,
    /// Told where the run is every quarter of a second (`run::progress`).
    pub progress: Option<crate::run::progress::Progress>,
    /// Threads to run on (`run::simulate_threads`), 0 meaning every core (with enough
    /// routers each); one when not given. The results are the same on any number.
    pub threads: Option<u32>,
    /// Times the run's phases (`acesim run --timings`); off by default.
    pub phases: crate::run::phases::Phases,
    /// Reads the whole program again, checked and linked (`simulate::linked`): for a run
    /// across processes given a `partial` program, whose first error, or deadlock report,
    /// may need ranks that no process read whole.
    pub read_whole: Option<ReadWhole>,
}

/// How a partial program is read whole again (`Options::read_whole`).
#[derive(Clone)]
pub struct ReadWhole(
    pub Arc<dyn Fn() -> crate::error::Result<crate::program::Program> + Send + Sync>,
);

impl std::fmt::Debug for ReadWhole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadWhole")
    }
}

impl Options {
    /// The whole program, read again (`read_whole`).
    pub(crate) fn whole_program(&self) -> crate::error::Result<crate::program::Program> {
        match &self.read_whole {
            Some(read) => (read.0)(),
            None => Err(crate::error::Error::Internal(
                "a partial program with no way to read it whole".into(),
            )),
        }
    }

    /// What the run records beyond its results (for the memory estimate).
    pub fn tracing(&self) -> Tracing {
        match (self.trace, self.timeline) {
            (_, true) => Tracing::Timeline,
            (true, false) => Tracing::Trace,
            (false, false) => Tracing::None,
        }
    }
}
