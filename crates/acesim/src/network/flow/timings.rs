//! Timings of messages alone on their routes, remembered. A run's messages come in a few
//! shapes over routes made of a few kinds of links (a neighbour exchange sends one size
//! over one-hop routes), and working a timing out row by row costs far more than looking it
//! up: the pipeline's equations see a route only through its links' kinds, in order.

use super::pipeline::{timing, Hop, Shape, Timing};
use crate::network::link_kinds::LinkKind;
use crate::units::{transfer_time, Ps};
use rustc_hash::FxHashMap;

/// Runs of equal link kinds a remembered route may have (routes with more are worked out
/// each time: long detours, rare).
const RUNS: usize = 8;
/// Timings kept before the cache starts afresh (bounds its memory when the injection link's
/// busy time makes every shape new).
const CAPACITY: usize = 1 << 16;

/// A shape and its route's link kinds, run-length encoded: (kind, links in a row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    packets: u64,
    full: u64,
    last: u64,
    header: u64,
    dma: Option<u64>,
    queue: u64,
    rx_dma: bool,
    link_busy: u64,
    runs: [(u8, u32); RUNS],
}

#[derive(Debug, Default)]
pub(super) struct Timings {
    known: FxHashMap<Key, Timing>,
    /// The last timing asked for: a run's messages come in runs of one shape on one kind of
    /// route (a neighbour exchange's million NICs), and comparing the key costs less than
    /// hashing it.
    last: Option<(Key, Timing)>,
    /// Scratch: the route's hops for the pipeline.
    hops: Vec<Hop>,
}

impl Timings {
    /// The timing of `shape` alone on links whose kinds (indices into `kinds`) are
    /// `classes`, in order.
    pub(super) fn timing(
        &mut self,
        shape: &Shape,
        classes: impl Iterator<Item = u8> + Clone,
        kinds: &[LinkKind],
    ) -> Timing {
        let key = key(shape, classes.clone());
        if let (Some(k), Some((last, t))) = (&key, &self.last) {
            if k == last {
                return *t;
            }
        }
        if let Some(k) = key {
            if let Some(&t) = self.known.get(&k) {
                self.last = Some((k, t));
                return t;
            }
        }
        self.hops.clear();
        self.hops.extend(classes.map(|c| {
            let k = kinds[c as usize];
            Hop {
                rate: k.rate,
                latency: k.latency,
                sender_delay: k.sender_delay,
            }
        }));
        let t = timing(shape, &self.hops);
        if let Some(k) = key {
            if self.known.len() >= CAPACITY {
                self.known.clear();
            }
            self.known.insert(k, t);
            self.last = Some((k, t));
        }
        t
    }
}

/// The key of a shape on a route (`None`: the route has too many runs to remember).
fn key(shape: &Shape, classes: impl Iterator<Item = u8>) -> Option<Key> {
    let mut runs = [(u8::MAX, 0u32); RUNS];
    let mut n = 0;
    for c in classes {
        if n > 0 && runs[n - 1].0 == c {
            runs[n - 1].1 += 1;
            continue;
        }
        if n == RUNS {
            return None;
        }
        runs[n] = (c, 1);
        n += 1;
    }
    Some(Key {
        packets: shape.packets,
        full: shape.full,
        last: shape.last,
        header: shape.header,
        dma: shape.dma,
        queue: shape.queue,
        rx_dma: shape.rx_dma,
        link_busy: shape.link_busy,
        runs,
    })
}

/// A message's packets, their full and last payloads and their header: what a link's busy
/// time for it depends on besides the link's rate.
pub(super) type BusyKey = (u64, u64, u64, u64);

/// The time a message keeps a link of each kind busy (its packets' serialization), for the
/// last two shapes seen on that kind: a run sends data and control packets, each mostly of
/// one shape, and two divisions a link cost more than the rest of its counting.
#[derive(Debug, Default)]
pub(super) struct BusyTimes {
    /// Per link kind: (key, busy) of the two shapes, the newer first.
    known: Vec<[(BusyKey, Ps); 2]>,
}

impl BusyTimes {
    pub(super) fn busy(&mut self, kind: u8, key: BusyKey, kinds: &[LinkKind]) -> Ps {
        let k = kind as usize;
        if self.known.len() <= k {
            // Packets are never 0: an empty entry matches no key.
            self.known.resize(k + 1, [((0, 0, 0, 0), 0); 2]);
        }
        let known = &mut self.known[k];
        if known[0].0 == key {
            return known[0].1;
        }
        if known[1].0 == key {
            known.swap(0, 1);
            return known[0].1;
        }
        let (n, full, last, header) = key;
        let rate = kinds[k].rate;
        let busy =
            (n - 1) * transfer_time(full + header, rate) + transfer_time(last + header, rate);
        known[1] = known[0];
        known[0] = (key, busy);
        busy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds() -> [LinkKind; 5] {
        let mut k = [LinkKind::default(); 5];
        for (i, kind) in k.iter_mut().enumerate() {
            kind.rate = 10_000_000_000 + i as u64 * 1_000_000_000;
            kind.latency = 1000 + 10 * i as u64;
            kind.sender_delay = 50 + i as u64;
        }
        k
    }

    /// Busy times by hand: at 10 GB/s a byte takes 100 ps, at 11 GB/s 1000/11 ps rounded
    /// up; three shapes taking turns on two kinds each get their own, whichever is
    /// remembered.
    #[test]
    fn busy_times_are_the_serialization_of_every_packet() {
        let kinds = kinds();
        let mut busy = BusyTimes::default();
        // 3 packets: 2 of 256 + 32 bytes, 1 of 100 + 32.
        let a = (3, 256, 100, 32);
        let b = (1, 0, 0, 64);
        let c = (2, 1000, 1000, 0);
        for _ in 0..3 {
            assert_eq!(busy.busy(0, a, &kinds), 2 * 288 * 100 + 132 * 100);
            assert_eq!(busy.busy(1, a, &kinds), 2 * 26_182 + 12_000);
            assert_eq!(busy.busy(0, b, &kinds), 6_400);
            assert_eq!(busy.busy(1, b, &kinds), 5_819);
            assert_eq!(busy.busy(0, c, &kinds), 200_000);
            assert_eq!(busy.busy(1, c, &kinds), 2 * 90_910);
        }
    }

    fn shape(packets: u64, link_busy: u64) -> Shape {
        Shape {
            packets,
            full: 2048,
            last: 100,
            header: 32,
            dma: Some(8_000_000_000),
            queue: 2,
            rx_dma: true,
            link_busy,
        }
    }

    /// Remembered or not, a timing is the pipeline's for the same hops.
    #[test]
    fn a_remembered_timing_is_the_pipelines() {
        let kinds = kinds();
        let mut cache = Timings::default();
        let routes: [&[u8]; 4] = [&[4, 0, 0, 3], &[4, 0, 1, 0, 3], &[4, 3], &[4, 0, 0, 0, 3]];
        for _ in 0..2 {
            for r in routes {
                for s in [shape(1, 0), shape(3, 0), shape(3, 700), shape(40, 0)] {
                    let hops: Vec<Hop> = r
                        .iter()
                        .map(|&c| Hop {
                            rate: kinds[c as usize].rate,
                            latency: kinds[c as usize].latency,
                            sender_delay: kinds[c as usize].sender_delay,
                        })
                        .collect();
                    let got = cache.timing(&s, r.iter().copied(), &kinds);
                    assert_eq!(got, timing(&s, &hops));
                }
            }
        }
        assert_eq!(cache.known.len(), 16);
    }

    /// A route of more runs than a key holds is worked out, not remembered.
    #[test]
    fn long_alternating_routes_are_not_remembered() {
        let kinds = kinds();
        let mut cache = Timings::default();
        let route: Vec<u8> = (0..20).map(|i| (i % 2) as u8).collect();
        cache.timing(&shape(2, 0), route.iter().copied(), &kinds);
        assert!(cache.known.is_empty());
    }
}
