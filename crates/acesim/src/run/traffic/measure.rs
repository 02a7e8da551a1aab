//! What a load point measures: the packets created in the window, their latencies and
//! hops, the bytes offered and accepted in it; and the point they make with the network's
//! counters ([`TrafficPoint`]: percentiles, the latency trend, whether the load is past
//! saturation).

use crate::machine::topology::LinkClass;
use crate::machine::topology::Topology;
use crate::network::NetStats;
use crate::results::nics::{mean_hops, minimal_fraction};
use crate::run::traffic::config::TrafficConfig;
use crate::units::Ps;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Measured packets below which a point cannot be called saturated by its accepted rate
/// or latency trend (only by packets still in flight at the drain limit).
pub const MIN_JUDGED_PACKETS: u64 = 200;

/// What the partitions of a run measured so far, summed for the stop rule: measured
/// packets that arrived, and those not arrived yet.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Tally {
    pub arrived: u64,
    pub outstanding: i64,
}

impl Tally {
    /// The sum of the partitions' tallies.
    pub fn sum(tallies: impl Iterator<Item = Tally>) -> Tally {
        tallies.fold(Tally::default(), |a, t| Tally {
            arrived: a.arrived + t.arrived,
            outstanding: a.outstanding + t.outstanding,
        })
    }
}

pub use crate::results::partitions::Parallel;

/// One point of a latency/throughput curve.
#[derive(Debug, Clone, Serialize)]
pub struct TrafficPoint {
    pub pattern: String,
    pub load: f64,
    /// Created bytes in the window, as a fraction of the injection bandwidth.
    pub offered: f64,
    /// Delivered bytes in the window, as a fraction of the injection bandwidth.
    pub accepted: f64,
    pub latency_mean_ns: f64,
    pub latency_p50_ns: f64,
    pub latency_p99_ns: f64,
    /// The measured packets' latencies, counted in bins four to an octave.
    pub latency_histogram: LatencyHistogram,
    /// Mean router-to-router hops of the measured packets.
    pub hops_mean: f64,
    /// Fraction of packets routed minimally (1 unless routing is non-minimal or adaptive).
    pub minimal_fraction: f64,
    pub packets_measured: u64,
    /// Measured packets that had not arrived when the drain limit passed.
    pub packets_lost: u64,
    /// Mean latency of the measured packets created in the second half of the window over
    /// that of the first half: about 1 when stable, above 1 when source queues keep growing.
    pub latency_growth: f64,
    pub saturated: bool,
    /// Peak utilization per link class (network, local, global, injection, ejection).
    pub max_link_utilization: f64,
    pub events: u64,
    /// Link traversals of all packets (warm-up and drain included), for speed figures.
    pub packet_hops: u64,
    /// Packets delivered over the whole run.
    pub packets_delivered: u64,
    /// Time the simulation took; printed, never written to a file (outputs are
    /// byte-identical for the same inputs).
    #[serde(skip)]
    pub wall_seconds: f64,
    /// The threads it ran on, its windows and the events that crossed between
    /// partitions: printed, never written (outputs are the same on any number of threads).
    #[serde(skip)]
    pub parallel: Option<Parallel>,
    /// How the run would split among partitions, when measured (`--partitions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<crate::results::partitions::PartitionReport>,
    /// What the point came from: packet size on the wire, seed, model, acesim version and
    /// the machine (set by `run_point`), so that points of many sweeps can be put together.
    pub packet_bytes: u64,
    pub seed: u64,
    pub model: &'static str,
    pub acesim_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<crate::results::provenance::MachineId>,
}

/// Packet latencies counted in bins four to an octave (each bin a quarter of the way, in
/// picoseconds, from one power of two to the next: 1024, 1280, 1536, 1792, 2048 ps, ...),
/// from the bin of the shortest to that of the longest: `counts[i]` packets took from
/// `edges_ns[i]` to less than `edges_ns[i + 1]`. Integer bins, so that every machine and
/// every partitioning counts the same.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct LatencyHistogram {
    pub edges_ns: Vec<f64>,
    pub counts: Vec<u64>,
}

impl LatencyHistogram {
    /// The bin of a latency of `ps` picoseconds (latencies under 4 ps share the first).
    fn bin(ps: Ps) -> u32 {
        let x = ps.max(4);
        let e = 63 - x.leading_zeros();
        4 * e + ((x >> (e - 2)) & 3) as u32
    }

    /// The shortest latency of bin `b`, in picoseconds.
    fn lower_edge(b: u32) -> Ps {
        (4 + u64::from(b % 4)) << (b / 4 - 2)
    }

    pub fn of(latencies: &[Ps]) -> LatencyHistogram {
        let Some((lo, hi)) = latencies
            .iter()
            .map(|&l| Self::bin(l))
            .fold(None, |r: Option<(u32, u32)>, b| {
                Some(r.map_or((b, b), |(lo, hi)| (lo.min(b), hi.max(b))))
            })
        else {
            return LatencyHistogram::default();
        };
        let mut counts = vec![0u64; (hi - lo + 1) as usize];
        for &l in latencies {
            counts[(Self::bin(l) - lo) as usize] += 1;
        }
        let edges_ns = (lo..=hi + 1)
            .map(|b| Self::lower_edge(b) as f64 / 1e3)
            .collect();
        LatencyHistogram { edges_ns, counts }
    }
}

/// The window `[warmup, end)` and what it measured so far. A packet's token is the time
/// it was created, so its latency is known where it lands: each partition of a parallel
/// run measures the packets it creates and those it receives, and the partitions'
/// measurements add up (`add`).
#[derive(Serialize, Deserialize)]
pub(super) struct Measurement {
    warmup: Ps,
    end: Ps,
    /// Packets created from here on are in the window's second half.
    half: Ps,
    /// A packet's size on the wire: the bytes it offers and delivers.
    packet: u64,
    /// The bytes all nodes could inject in the window: what the offered and accepted
    /// loads are fractions of.
    capacity: f64,
    /// Latencies of the measured packets that arrived, and their hops in all.
    latencies: Vec<Ps>,
    hops: u64,
    /// Latency sums and counts of the packets created in each half of the window.
    halves: [(u128, u64); 2],
    /// Measured packets created here less those that arrived here (negative in a
    /// partition that receives more than it sends).
    outstanding: i64,
    /// Bytes created in the window, and bytes delivered in it.
    offered_bytes: u64,
    accepted_bytes: u64,
}

impl Measurement {
    /// The window of `cfg` on `nodes` nodes whose injection links carry `bandwidth` bytes/s.
    pub fn new(cfg: &TrafficConfig, bandwidth: u64, nodes: u32) -> Measurement {
        Measurement {
            warmup: cfg.warmup,
            end: cfg.warmup + cfg.measure,
            half: cfg.warmup + cfg.measure / 2,
            packet: cfg.packet,
            capacity: nodes as f64 * bandwidth as f64 * (cfg.measure as f64 / 1e12),
            latencies: Vec::new(),
            hops: 0,
            halves: [(0, 0); 2],
            outstanding: 0,
            offered_bytes: 0,
            accepted_bytes: 0,
        }
    }

    /// The end of the window: no packet is created from here on.
    #[inline]
    pub fn end(&self) -> Ps {
        self.end
    }

    /// A packet created at `now`: its token.
    #[inline]
    pub fn create(&mut self, now: Ps) -> u64 {
        if now >= self.warmup {
            self.outstanding += 1;
            self.offered_bytes += self.packet;
        }
        now
    }

    /// Packet `token` arrived at `now` after `hops` router-to-router hops.
    #[inline]
    pub fn land(&mut self, now: Ps, token: u64, hops: u32) {
        if now >= self.warmup && now < self.end {
            self.accepted_bytes += self.packet;
        }
        let born = token;
        if born >= self.warmup {
            let h = &mut self.halves[(born >= self.half) as usize];
            h.0 += (now - born) as u128;
            h.1 += 1;
            self.latencies.push(now - born);
            self.hops += hops as u64;
            self.outstanding -= 1;
        }
    }

    /// What it measured so far, for the stop rule and progress.
    pub fn tally(&self) -> Tally {
        Tally {
            arrived: self.latencies.len() as u64,
            outstanding: self.outstanding,
        }
    }

    /// Adds what another partition measured.
    pub fn add(&mut self, other: Measurement) {
        self.latencies.extend(other.latencies);
        self.hops += other.hops;
        for (a, b) in self.halves.iter_mut().zip(other.halves) {
            a.0 += b.0;
            a.1 += b.1;
        }
        self.outstanding += other.outstanding;
        self.offered_bytes += other.offered_bytes;
        self.accepted_bytes += other.accepted_bytes;
    }

    /// The point of a run of `cfg` on `topo`, begun at `started`, whose last event (of
    /// `events`) was at `last`: what the window measured and the network's counters
    /// (`stats`, summed over the partitions).
    pub fn point(
        mut self,
        cfg: &TrafficConfig,
        (topo, stats): (&Topology, &NetStats),
        last: Ps,
        events: u64,
        started: Instant,
    ) -> TrafficPoint {
        let offered = self.offered_bytes as f64 / self.capacity;
        let accepted = self.accepted_bytes as f64 / self.capacity;
        let (p50, p99) = (self.percentile_ns(0.5), self.percentile_ns(0.99));
        let n = self.latencies.len().max(1) as f64;
        let mean = self.latencies.iter().sum::<Ps>() as f64 / n / 1e3;
        let latency_growth = self.latency_growth();
        // Every packet created has landed or is still out: the sum is not negative.
        let lost = self.outstanding.max(0) as u64;
        let packets_measured = self.latencies.len() as u64 + lost;
        // Past saturation the network cannot deliver what is offered (docs/traffic.md):
        // measured packets are still in flight at the drain limit, less than 95 % of the
        // offered load is accepted, or the latency runs away (packets created in the second
        // half of the window wait on average over 10 % longer than those of the first half).
        // Too few measured packets say nothing about saturation: their accepted rate and
        // latency trend are noise (a load of 1e-6 measures a handful of packets).
        let judged = packets_measured >= MIN_JUDGED_PACKETS;
        let saturated = lost > 0 || (judged && (accepted < 0.95 * offered || latency_growth > 1.1));
        let delivered: u64 = stats.nics.iter().map(|s| s.ejected_packets).sum();
        let minimal: u64 = stats.nics.iter().map(|s| s.minimal_packets).sum();
        TrafficPoint {
            pattern: cfg.pattern.name(),
            load: cfg.load,
            offered,
            accepted,
            latency_mean_ns: mean,
            latency_p50_ns: p50,
            latency_p99_ns: p99,
            latency_histogram: LatencyHistogram::of(&self.latencies),
            hops_mean: mean_hops(self.hops, self.latencies.len() as u64),
            minimal_fraction: minimal_fraction(minimal, delivered),
            packets_measured,
            packets_lost: lost,
            latency_growth,
            saturated,
            max_link_utilization: max_link_utilization(topo, stats, last),
            events,
            packet_hops: stats.counters.packet_hops,
            packets_delivered: delivered,
            wall_seconds: started.elapsed().as_secs_f64(),
            partitions: None,
            parallel: None,
            packet_bytes: cfg.packet,
            seed: cfg.seed,
            model: "packet",
            acesim_version: env!("CARGO_PKG_VERSION"),
            machine: None,
        }
    }

    /// The latency below which fraction `f` of the arrived packets lie, in ns (NaN without
    /// any). By selection (linear time), not by sorting a million latencies.
    fn percentile_ns(&mut self, f: f64) -> f64 {
        let latencies = &mut self.latencies;
        if latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((latencies.len() as f64 * f).ceil() as usize).clamp(1, latencies.len()) - 1;
        *latencies.select_nth_unstable(i).1 as f64 / 1e3
    }

    /// Mean latency of the second half's packets over the first half's: about 1 when
    /// stable, 1 when a half has none.
    fn latency_growth(&self) -> f64 {
        let half_mean = |(sum, n): (u128, u64)| sum as f64 / n.max(1) as f64;
        let [first, second] = self.halves;
        if first.1 == 0 || second.1 == 0 {
            1.0
        } else {
            half_mean(second) / half_mean(first).max(1.0)
        }
    }
}

/// The busiest link's utilization over a run that ended at `last`, injection links aside.
fn max_link_utilization(topo: &Topology, stats: &NetStats, last: Ps) -> f64 {
    let elapsed = last.max(1);
    (0..topo.num_links())
        .filter(|&l| topo.link_class(l) != LinkClass::Injection)
        .map(|l| stats.links[l as usize].busy_ps as f64 / elapsed as f64)
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod histogram_tests {
    use super::LatencyHistogram;

    #[test]
    fn bins_are_quarters_of_an_octave_and_count_every_latency() {
        // 1000 ps lies in [896, 1024), the bin below that of 1024 and 1279 ps.
        let h = LatencyHistogram::of(&[1000, 1024, 1279, 1280, 2047, 2048, 5000]);
        assert_eq!(
            h.edges_ns,
            vec![0.896, 1.024, 1.28, 1.536, 1.792, 2.048, 2.56, 3.072, 3.584, 4.096, 5.12]
        );
        assert_eq!(h.counts, vec![1, 2, 1, 0, 1, 1, 0, 0, 0, 1]);
        assert_eq!(h.counts.iter().sum::<u64>(), 7);
        // Every latency lies in its bin.
        for ps in [4u64, 5, 7, 8, 9, 1023, 1024, 123_456_789] {
            let b = LatencyHistogram::bin(ps);
            assert!(
                LatencyHistogram::lower_edge(b) <= ps && ps < LatencyHistogram::lower_edge(b + 1),
                "{ps}"
            );
        }
        assert_eq!(LatencyHistogram::of(&[]), LatencyHistogram::default());
    }
}
