//! When each node offers its next packet: the Bernoulli and the periodic process, each
//! node drawing from its own stream of the seed, so that what a node draws depends on its
//! own events alone, however a run is split among threads.

use crate::rng::Rng;
use crate::run::traffic::config::{Injection, TrafficConfig};
use crate::units::{transfer_time, Ps};

/// The generator's own event: node `node` offers its next packet.
#[derive(Debug, Clone, Copy)]
pub(super) struct Gen {
    pub node: u32,
}

/// The injection process of every node.
pub(super) struct Injector {
    injection: Injection,
    /// One flit time: the Bernoulli slot, and the clock periodic packets start on.
    slot: Ps,
    /// Mean packets per slot (load·flit/packet), and ln(1 - it), the denominator of every
    /// geometric draw.
    p_slot: f64,
    ln_miss: f64,
    /// Periodic: the time between a node's packets, and when each node's next is due.
    period: Ps,
    due: Vec<Ps>,
    /// Per node, its stream: the times of its packets and their destinations.
    rngs: Vec<Rng>,
}

impl Injector {
    /// The process of `cfg` on `nodes` nodes whose injection links carry `bandwidth` bytes/s.
    pub fn new(cfg: &TrafficConfig, bandwidth: u64, nodes: u32) -> Injector {
        let p_slot = (cfg.load * cfg.flit as f64 / cfg.packet as f64).min(1.0);
        Injector {
            injection: cfg.injection,
            slot: transfer_time(cfg.flit, bandwidth).max(1),
            p_slot,
            ln_miss: (1.0 - p_slot).ln(),
            period: (transfer_time(cfg.packet, bandwidth) as f64 / cfg.load)
                .round()
                .max(1.0) as Ps,
            due: match cfg.injection {
                Injection::Periodic => vec![0; nodes as usize],
                Injection::Bernoulli => Vec::new(),
            },
            rngs: (0..nodes)
                .map(|n| Rng::stream(cfg.seed ^ 0x5EED_0F7A_FF1C, u64::from(n)))
                .collect(),
        }
    }

    /// Node `node`'s stream, which also draws its packets' destinations.
    #[inline]
    pub fn rng(&mut self, node: u32) -> &mut Rng {
        &mut self.rngs[node as usize]
    }

    /// When `node` offers its first packet. First arrivals are spread so that nodes do not
    /// start in lockstep.
    pub fn first(&mut self, node: u32) -> Ps {
        match self.injection {
            Injection::Periodic => {
                let phase = self.rngs[node as usize].below(self.period);
                self.due[node as usize] = phase;
                self.on_clock(phase)
            }
            Injection::Bernoulli => self.gap(node) - self.slot,
        }
    }

    /// When `node`, which offered a packet at `now`, offers its next one.
    #[inline]
    pub fn next(&mut self, node: u32, now: Ps) -> Ps {
        match self.injection {
            Injection::Periodic => {
                let due = &mut self.due[node as usize];
                *due += self.period;
                let due = *due;
                self.on_clock(due)
            }
            Injection::Bernoulli => now + self.gap(node),
        }
    }

    /// Bernoulli: a geometric number of slots until the next packet (at least one).
    #[inline]
    fn gap(&mut self, node: u32) -> Ps {
        let u = self.rngs[node as usize].next_f64().max(f64::MIN_POSITIVE);
        let k = if self.p_slot >= 1.0 {
            1.0
        } else {
            (u.ln() / self.ln_miss).floor() + 1.0
        };
        (k as Ps).saturating_mul(self.slot)
    }

    /// A periodic node's k-th packet is due at phase + k·period and starts at the first edge
    /// of the slot clock (one flit time) at or after that: the times of a flit-clocked NIC.
    #[inline]
    fn on_clock(&self, t: Ps) -> Ps {
        t.div_ceil(self.slot) * self.slot
    }
}
