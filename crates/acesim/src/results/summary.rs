//! The short human summary a run prints: its time and size, where the time went, and what
//! the program left undone.

use crate::results::report::Results;
use crate::units::{format_time, Ps};
use std::collections::BTreeMap;
use std::fmt::Write as _;

impl Results {
    /// A short human summary.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        self.write_headline(&mut s);
        self.write_regions_and_collectives(&mut s);
        self.write_partitions(&mut s);
        self.write_warnings(&mut s);
        s
    }

    /// How the run would split among partitions, when measured, or how it ran on threads.
    fn write_partitions(&self, s: &mut String) {
        if let Some(p) = &self.partitions {
            s.push_str(&p.describe());
        }
        if let Some(c) = &self.coupling {
            s.push_str(&c.describe());
        }
        if let Some(par) = self.parallel.filter(|p| p.threads > 1 || p.processes > 1) {
            let _ = writeln!(s, "{}", par.describe(self.events));
        }
    }

    /// Whether the run was stopped, its time, the machine and the size of the run.
    fn write_headline(&self, s: &mut String) {
        if let Some(p) = &self.partial {
            let _ = writeln!(
                s,
                "PARTIAL RESULTS: the run was stopped ({}) at {} with {} of {} ranks finished; the time below is a lower bound",
                p.reason.name(),
                format_time(p.stopped_at_ps),
                p.ranks_finished,
                self.ranks
            );
        }
        let _ = writeln!(
            s,
            "{} execution time: {} ({} ps)",
            if self.partial.is_some() {
                "simulated"
            } else {
                "predicted"
            },
            self.predicted_time,
            self.predicted_time_ps
        );
        self.write_traced(s);
        let _ = writeln!(s, "machine: {}", self.topology);
        // Collective steps are not listed as operations; say they ran.
        let in_collectives = if self.collectives.is_empty() {
            String::new()
        } else {
            let messages: u64 = self.collectives.iter().map(|c| c.messages).sum();
            format!(
                " (+{messages} in {} collective calls)",
                self.collectives.len()
            )
        };
        let _ = writeln!(
            s,
            "ranks: {}   operations: {}{in_collectives}   events: {}   packet-hops: {}   wall: {:.3} s",
            self.ranks,
            self.operation_count,
            self.events,
            self.packet_hops,
            self.wall_seconds
        );
    }

    /// For a replayed trace: how long the traced run took (its longest rank's window), next
    /// to the prediction, so that a user sees how far the replay is from the trace.
    fn write_traced(&self, s: &mut String) {
        let Some((rank, window)) = self
            .per_rank
            .iter()
            .filter_map(|r| r.traced_ps.map(|t| (r.rank, t)))
            .max_by_key(|&(rank, t)| (t, std::cmp::Reverse(rank)))
        else {
            return;
        };
        let ratio = match window {
            0 => String::new(),
            w => format!(
                "; predicted/traced {:.3}",
                self.predicted_time_ps as f64 / w as f64
            ),
        };
        let _ = writeln!(
            s,
            "traced run: {} (rank {rank}'s window, the longest){ratio}",
            format_time(window)
        );
    }

    /// A line per region, and per kind and algorithm of collective call.
    fn write_regions_and_collectives(&self, s: &mut String) {
        for r in &self.regions {
            let _ = writeln!(
                s,
                "region {}: {} entries, min {}, mean {}, max {}",
                r.name,
                r.count,
                format_time(r.min_ps),
                format_time(r.mean_ps as Ps),
                format_time(r.max_ps)
            );
        }
        // Calls finished, their time, and calls a stopped run left unfinished.
        let mut by: BTreeMap<(&str, &str), (u64, Ps, u64)> = BTreeMap::new();
        for c in &self.collectives {
            let e = by.entry((&c.kind, &c.algorithm)).or_insert((0, 0, 0));
            if c.finished {
                e.0 += 1;
                e.1 += c.duration_ps;
            } else {
                e.2 += 1;
            }
        }
        for ((kind, algo), (n, total, unfinished)) in by {
            let _ = match (n, unfinished) {
                (0, u) => writeln!(s, "{kind} ({algo}): {u} calls, none finished when the run stopped"),
                (n, 0) => writeln!(s, "{kind} ({algo}): {n} calls, mean {}", format_time(total / n)),
                (n, u) => writeln!(
                    s,
                    "{kind} ({algo}): {n} calls, mean {} ({u} more not finished when the run stopped)",
                    format_time(total / n)
                ),
            };
        }
    }

    /// Messages never received, requests left pending, puts never polled.
    fn write_warnings(&self, s: &mut String) {
        if !self.unmatched_messages.is_empty() {
            let n: u32 = self.unmatched_messages.iter().map(|m| m.3).sum();
            let _ = writeln!(
                s,
                "warning: {n} messages were never received ({} sender/receiver/tag combinations; see unmatched_messages in --json)",
                self.unmatched_messages.len()
            );
        }
        if !self.unfinished_requests.is_empty() {
            let n: u32 = self.unfinished_requests.iter().map(|u| u.count).sum();
            let first = &self.unfinished_requests[0];
            let _ = writeln!(
                s,
                "warning: {} finished with {n} request{} pending (rank {}: {}; see unfinished_requests in --json)",
                plural(self.unfinished_requests.len() as u64, "rank"),
                if n == 1 { "" } else { "s" },
                first.rank,
                first.first
            );
        }
        if !self.unpolled_puts.is_empty() {
            let n: u32 = self.unpolled_puts.iter().map(|u| u.2).sum();
            let _ = writeln!(
                s,
                "note: {n} puts landed but were never polled (see unpolled_puts in --json)"
            );
        }
    }
}

/// `1 rank`, `2 ranks`.
fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}
