//! What a run split into partitions would see, measured on one thread (`--partitions N`):
//! each event is counted in the partition of the entity that handles it, as crossing when
//! the entity that scheduled it is in another, and in the lookahead window of its time.
//! The busiest partition of each window bounds what a conservative parallel run can gain.

use crate::engine::EventQueue;
use crate::error::Result;
use crate::network::partition::Partitioning;
use crate::network::Network;
use crate::results::partitions::PartitionReport;
use crate::units::Ps;

/// Counts a run's events by partition and window as they are handled.
pub struct PartitionCounter {
    /// The partition of each origin of the queue.
    of_origin: Vec<u32>,
    lookahead: Ps,
    window: u64,
    in_window: Vec<u64>,
    report: PartitionReport,
}

impl PartitionCounter {
    /// A counter for `split`, whose origins (ranks, then network entities) live at the
    /// routers `origin_router` gives.
    pub fn new(split: &Partitioning, origins: u32, origin_router: impl Fn(u32) -> u32) -> Self {
        let parts = split.parts as usize;
        PartitionCounter {
            of_origin: (0..origins)
                .map(|o| split.of_router[origin_router(o) as usize])
                .collect(),
            lookahead: split.lookahead,
            window: u64::MAX,
            in_window: vec![0; parts],
            report: PartitionReport {
                partitions: split.parts,
                lookahead_ps: split.lookahead,
                cut_links: split.cut_links,
                events: vec![0; parts],
                cross_events: 0,
                cross_events_within_lookahead: 0,
                windows: 0,
                critical_events: 0,
                speedup_bound: 1.0,
            },
        }
    }

    /// A counter for `parts` partitions of `net`, in a queue whose origins are the
    /// driver's `own` entities (ranks, generators), living at the routers `own_router`
    /// gives, then the network's. `source` names where `parts` came from, for errors.
    pub fn for_network<N: Network>(
        net: &N,
        parts: u32,
        source: &str,
        own: u32,
        own_router: impl Fn(u32) -> u32,
    ) -> Result<Self> {
        let split = net.partition(parts, source)?;
        let router = |origin: u32| {
            if origin < own {
                own_router(origin)
            } else {
                net.entity_router(origin - own).unwrap_or(0)
            }
        };
        Ok(PartitionCounter::new(&split, own + net.entities(), router))
    }

    /// An event of key `key` at `now`, handled by origin `handler`.
    #[inline]
    pub fn count<E: Copy>(&mut self, q: &EventQueue<E>, now: Ps, key: u64, handler: u32) {
        let part = self.of_origin[handler as usize];
        let from = self.of_origin[q.origin_of(key) as usize];
        let r = &mut self.report;
        r.events[part as usize] += 1;
        if from != part {
            r.cross_events += 1;
            if EventQueue::<E>::delay_of(key).is_some_and(|d| d < self.lookahead) {
                r.cross_events_within_lookahead += 1;
            }
        }
        let window = now / self.lookahead.max(1);
        if window != self.window {
            self.close_window();
            self.window = window;
        }
        self.in_window[part as usize] += 1;
    }

    fn close_window(&mut self) {
        let busiest = self.in_window.iter().copied().max().unwrap_or(0);
        if busiest > 0 {
            self.report.windows += 1;
            self.report.critical_events += busiest;
        }
        self.in_window.iter_mut().for_each(|n| *n = 0);
    }

    /// The report, once the run is over.
    pub fn finish(mut self) -> PartitionReport {
        self.close_window();
        let total: u64 = self.report.events.iter().sum();
        if self.report.critical_events > 0 {
            self.report.speedup_bound = total as f64 / self.report.critical_events as f64;
        }
        self.report
    }
}
