//! How a run would split among the partitions of a parallel run (`--partitions`), as
//! `run::partition_report` measures it.

use crate::units::{format_time, Ps};
use serde::Serialize;

/// How a point ran: on how many threads, in how many windows, with how many events
/// handed between partitions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Parallel {
    pub threads: u32,
    /// Processes of a run across processes (`mpirun`), 1 otherwise.
    pub processes: u32,
    pub windows: u64,
    pub crossings: u64,
}

impl Parallel {
    /// One line for a human: on what it ran, in how many windows, and the share of its
    /// `events` that crossed between partitions.
    pub fn describe(&self, events: u64) -> String {
        let on = if self.processes > 1 && self.threads > 1 {
            format!("{} processes of {} threads", self.processes, self.threads)
        } else if self.processes > 1 {
            format!("{} processes", self.processes)
        } else {
            format!("{} threads", self.threads)
        };
        format!(
            "{on}, {} windows, {:.2} % of events crossed between partitions",
            self.windows,
            100.0 * self.crossings as f64 / events.max(1) as f64
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartitionReport {
    pub partitions: u32,
    /// The smallest latency of a link between partitions: the width of a window.
    pub lookahead_ps: Ps,
    /// Directed router-to-router links between partitions.
    pub cut_links: u64,
    /// Events each partition handled.
    pub events: Vec<u64>,
    /// Events scheduled in one partition for another: the messages between partitions.
    pub cross_events: u64,
    /// Of those, the ones scheduled less than a lookahead ahead: a conservative run could
    /// not deliver them in time (0 when the partitioning is sound).
    pub cross_events_within_lookahead: u64,
    /// Lookahead windows with at least one event: the synchronisations a run needs.
    pub windows: u64,
    /// Over the windows, the events of the busiest partition in each: the events a
    /// parallel run handles one after another.
    pub critical_events: u64,
    /// Events over critical events: the speed-up the partitioning allows before any cost
    /// of synchronisation or of messages between partitions.
    pub speedup_bound: f64,
}

impl PartitionReport {
    /// Two lines for a human: the windows, what crosses, the balance and the bound.
    pub fn describe(&self) -> String {
        let total: u64 = self.events.iter().sum();
        let share = 100.0 * self.cross_events as f64 / total.max(1) as f64;
        let busiest = self.events.iter().copied().max().unwrap_or(0);
        let mean = total as f64 / f64::from(self.partitions.max(1));
        format!(
            "partitions: {}   lookahead: {}   windows: {}   events per window: {:.1}\n  crossing partitions: {} events ({share:.2} %), {} within the lookahead   busiest partition: {:.2}x the mean   speed-up bound: {:.2}x\n",
            self.partitions,
            format_time(self.lookahead_ps),
            self.windows,
            total as f64 / self.windows.max(1) as f64,
            self.cross_events,
            self.cross_events_within_lookahead,
            busiest as f64 / mean.max(1.0),
            self.speedup_bound
        )
    }
}
