//! How a run would split among the partitions of a parallel run (`--partitions`), as
//! `run::partition_report` measures it.

use crate::units::Ps;
use serde::Serialize;

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
