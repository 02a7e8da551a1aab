//! How the flow model's rate solves would tie together the partitions of a parallel run
//! (`acesim run --model flow --partitions N`), measured on one thread.
//!
//! A conservative parallel run lets partitions advance apart for a window as long as the
//! smallest latency between them: nothing one does can reach another sooner. A max-min
//! solve has no such delay. A message starting in one partition changes, at that same
//! picosecond, the rates of messages in others that share a link with it, and so when they
//! finish. Every solve whose new rates belong to messages of two or more partitions is a
//! point at which those partitions must meet, with no lookahead. This counts them.

use crate::network::partition::Partitioning;
use crate::units::{format_time, Ps};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CouplingReport {
    pub partitions: u32,
    /// The lookahead the same split gives a packet-level run.
    pub lookahead_ps: Ps,
    /// Solves that changed at least one message's rate.
    pub solves: u64,
    /// Of those, the ones that changed rates of messages of two or more partitions (a
    /// message belongs to the partitions of its sender and of its receiver).
    pub coupled_solves: u64,
    /// Messages whose rate a solve changed, and of those, the ones whose sender and
    /// receiver are in different partitions.
    pub rate_changes: u64,
    pub rate_changes_across: u64,
    /// Lookahead windows with a solve, and with a coupled solve.
    pub windows: u64,
    pub coupled_windows: u64,
}

impl CouplingReport {
    /// One line for a human.
    pub fn describe(&self) -> String {
        let share = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
        format!(
            "flow partitions: {}   lookahead: {}   solves: {}, {} ({:.1} %) changing rates in several partitions, in {} of {} windows ({:.1} %)\n",
            self.partitions,
            format_time(self.lookahead_ps),
            self.solves,
            self.coupled_solves,
            share(self.coupled_solves, self.solves),
            self.coupled_windows,
            self.windows,
            share(self.coupled_windows, self.windows),
        )
    }
}

/// The counts, and what they need: each NIC's partition.
pub struct Coupling {
    of_nic: Vec<u32>,
    report: CouplingReport,
    /// Partitions seen in the current solve (a stamp per partition), and how many.
    seen: Vec<u64>,
    touched: u32,
    /// The window of the last solve and of the last coupled solve.
    window: Option<Ps>,
    coupled_window: Option<Ps>,
}

impl Coupling {
    /// Counts for the split `split`, `nic_router` giving each NIC's router.
    pub fn new(split: &Partitioning, nics: u32, nic_router: impl Fn(u32) -> u32) -> Self {
        Coupling {
            of_nic: (0..nics)
                .map(|n| split.of_router[nic_router(n) as usize])
                .collect(),
            report: CouplingReport {
                partitions: split.parts,
                lookahead_ps: split.lookahead,
                solves: 0,
                coupled_solves: 0,
                rate_changes: 0,
                rate_changes_across: 0,
                windows: 0,
                coupled_windows: 0,
            },
            seen: vec![0; split.parts as usize],
            touched: 0,
            window: None,
            coupled_window: None,
        }
    }

    /// A solve starts.
    pub fn start(&mut self) {
        self.touched = 0;
    }

    /// The solve changed the rate of a message from `src_nic` to `dst_nic`.
    pub fn changed(&mut self, src_nic: u32, dst_nic: u32) {
        let stamp = self.report.solves + 1;
        let (a, b) = (self.of_nic[src_nic as usize], self.of_nic[dst_nic as usize]);
        self.report.rate_changes += 1;
        if a != b {
            self.report.rate_changes_across += 1;
        }
        for p in [a, b] {
            if self.seen[p as usize] != stamp {
                self.seen[p as usize] = stamp;
                self.touched += 1;
            }
        }
    }

    /// The solve at `now` ended.
    pub fn end(&mut self, now: Ps) {
        if self.touched == 0 {
            return;
        }
        let r = &mut self.report;
        r.solves += 1;
        let window = now / r.lookahead_ps.max(1);
        if self.window != Some(window) {
            self.window = Some(window);
            r.windows += 1;
        }
        if self.touched >= 2 {
            r.coupled_solves += 1;
            if self.coupled_window != Some(window) {
                self.coupled_window = Some(window);
                r.coupled_windows += 1;
            }
        }
    }

    pub fn report(&self) -> CouplingReport {
        self.report.clone()
    }
}
