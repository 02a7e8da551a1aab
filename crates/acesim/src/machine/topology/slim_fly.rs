//! Slim Fly (`kind = "slimfly"`; Besta and Hoefler, SC'14): the McKay-Miller-Širáň graphs
//! of diameter 2, the most routers of a given radix that any two reach each other in two
//! hops. For a prime `q = 4w + δ` (δ = ±1) there are 2q² routers, (s, x, y) with s ∈ {0, 1}
//! and x, y ∈ Z_q, each linked to (3q − δ)/2 others: (0, x, y)–(0, x, y') when y − y' is in
//! the generator set X, (1, m, c)–(1, m, c') when c − c' is in X', and (0, x, y)–(1, m, c)
//! when y = m·x + c. Routes are minimal (one hop, or two through the lowest-numbered
//! common neighbour), on VC class = hops taken, deadlock-free with 2 classes; Valiant and
//! UGAL go through a random intermediate router first (up to four hops, four classes).

use super::check::{positive, Bad};
use super::ports::{Builder, Hop};
use crate::error::Result;
use crate::machine::config::TopologyConfig;
use crate::rng::Rng;

/// What the machine file says of a Slim Fly.
#[derive(Debug, Clone, PartialEq)]
pub struct SlimFlySpec {
    /// The prime q (q mod 4 = 1 or 3).
    pub q: u32,
    /// Nodes per router; by default ⌈k/2⌉ for network radix k, the paper's balance.
    pub nodes_per_router: u32,
}

/// Largest q read: 2q² routers with a next-hop table of (2q²)² two-byte entries (q = 43:
/// 3,698 routers, about 80,000 nodes at the balanced concentration, a 27 MB table).
const MAX_Q: u32 = 43;

fn is_prime(q: u32) -> bool {
    q >= 2
        && (2..q)
            .take_while(|d| d * d <= q)
            .all(|d| !q.is_multiple_of(d))
}

impl SlimFlySpec {
    pub const FIELDS: &'static [&'static str] = &["q", "nodes_per_router"];

    pub fn from_config(t: &TopologyConfig, bad: Bad) -> Result<SlimFlySpec> {
        let Some(q) = t.q else {
            return Err(bad(
                "topology",
                "a slimfly needs `q`, a prime with q mod 4 = 1 or 3 (e.g. q = 5: 50 routers of network radix 7)".into(),
            ));
        };
        // An odd prime is 1 or 3 mod 4.
        if !is_prime(q) || !(3..=MAX_Q).contains(&q) {
            return Err(bad(
                "topology.q",
                format!("q = {q}: acesim builds Slim Flies for primes q with q mod 4 = 1 or 3, from 3 to {MAX_Q} (prime powers and q = 4w are not built yet)"),
            ));
        }
        positive(bad, "nodes_per_router", t.nodes_per_router)?;
        let radix = network_radix(q);
        Ok(SlimFlySpec {
            q,
            nodes_per_router: t.nodes_per_router.unwrap_or(radix.div_ceil(2)),
        })
    }

    pub fn routers(&self) -> u32 {
        2 * self.q * self.q
    }

    pub fn planned_nodes(&self) -> u64 {
        u64::from(self.routers()) * u64::from(self.nodes_per_router)
    }

    /// Routers and router-to-router ports.
    pub fn planned_routers(&self) -> (u64, u64) {
        let r = u64::from(self.routers());
        (r, r * u64::from(network_radix(self.q)))
    }

    /// Each router's links to other routers first, by the neighbour's number; the NICs
    /// follow.
    pub fn build(&self, nics: u32, b: &mut Builder) -> SlimFly {
        let (q, npr) = (self.q, self.nodes_per_router);
        let neighbours = mms_graph(q);
        let n = neighbours.len() as u32;
        let radix = network_radix(q);
        for _ in 0..n {
            b.add_router(radix + npr * nics);
        }
        for (r, adj) in neighbours.iter().enumerate() {
            let r = r as u32;
            for (i, &v) in adj.iter().enumerate() {
                if v > r {
                    let j = neighbours[v as usize]
                        .binary_search(&r)
                        .expect("the graph is undirected");
                    b.connect(r, i as u32, v, j as u32);
                }
            }
            for i in 0..npr {
                for j in 0..nics {
                    let node = r * npr + i;
                    b.attach_nic(node * nics + j, r, radix + i * nics + j);
                }
            }
        }
        SlimFly {
            q,
            next_port: next_ports(&neighbours),
            routers: n,
            neighbours,
        }
    }
}

/// Network ports of each router: (3q − δ)/2.
pub fn network_radix(q: u32) -> u32 {
    let delta: i64 = if q % 4 == 1 { 1 } else { -1 };
    ((3 * i64::from(q) - delta) / 2) as u32
}

/// A primitive element of Z_q (q prime).
fn primitive_root(q: u32) -> u32 {
    (2..q)
        .find(|&g| {
            let mut x = 1u32;
            (1..q - 1).all(|_| {
                x = x * g % q;
                x != 1
            })
        })
        .unwrap_or(1)
}

/// The generator sets X and X' of the MMS construction for prime q = 4w + δ.
fn generator_sets(q: u32) -> (Vec<u32>, Vec<u32>) {
    let xi = primitive_root(q);
    let pow = |e: u32| (0..e).fold(1u32, |x, _| x * xi % q);
    let (mut x, mut x2) = (Vec::new(), Vec::new());
    if q % 4 == 1 {
        // δ = 1: the even powers and the odd powers of ξ, up to ξ^(q−2).
        for e in (0..q - 1).step_by(2) {
            x.push(pow(e));
            x2.push(pow(e + 1));
        }
    } else {
        // δ = −1 (w = (q + 1)/4): X = {1, ξ², ..., ξ^(2w−2)} ∪ {ξ^(2w−1), ..., ξ^(4w−3)},
        // X' = {ξ, ξ³, ..., ξ^(2w−1)} ∪ {ξ^(2w), ..., ξ^(4w−2)}.
        let w = (q + 1) / 4;
        for e in (0..=2 * w - 2).step_by(2) {
            x.push(pow(e));
        }
        for e in (2 * w - 1..=4 * w - 3).step_by(2) {
            x.push(pow(e));
        }
        for e in (1..=2 * w - 1).step_by(2) {
            x2.push(pow(e));
        }
        for e in (2 * w..=4 * w - 2).step_by(2) {
            x2.push(pow(e));
        }
    }
    (x, x2)
}

/// Router (s, a, b) is number s·q² + a·q + b.
fn mms_graph(q: u32) -> Vec<Vec<u32>> {
    let (x, x2) = generator_sets(q);
    let id = |s: u32, a: u32, b: u32| s * q * q + a * q + b;
    let mut adj = vec![Vec::new(); (2 * q * q) as usize];
    for a in 0..q {
        for b in 0..q {
            for &d in &x {
                adj[id(0, a, b) as usize].push(id(0, a, (b + d) % q));
            }
            for &d in &x2 {
                adj[id(1, a, b) as usize].push(id(1, a, (b + d) % q));
            }
            // (0, x, y) – (1, m, c) when y = m·x + c.
            for m in 0..q {
                let c = (b + q * q - m * a % q) % q;
                adj[id(0, a, b) as usize].push(id(1, m, c));
                adj[id(1, m, c) as usize].push(id(0, a, b));
            }
        }
    }
    for v in &mut adj {
        v.sort_unstable();
        v.dedup();
    }
    adj
}

/// For every router and destination router, the local port of the next hop on a shortest
/// path: the direct link, else the link to the lowest-numbered common neighbour.
fn next_ports(adj: &[Vec<u32>]) -> Vec<u16> {
    let n = adj.len();
    let mut next = vec![u16::MAX; n * n];
    for (r, ns) in adj.iter().enumerate() {
        let row = &mut next[r * n..][..n];
        // Two-hop destinations first, through the neighbours from the highest-numbered
        // down, so that the lowest-numbered common neighbour is the one kept; then the
        // direct links.
        for (i, &v) in ns.iter().enumerate().rev() {
            for &w in &adj[v as usize] {
                row[w as usize] = i as u16;
            }
        }
        for (i, &v) in ns.iter().enumerate() {
            row[v as usize] = i as u16;
        }
        row[r] = u16::MAX;
    }
    next
}

/// A built Slim Fly, as routing reads it.
#[derive(Debug, Clone)]
pub struct SlimFly {
    pub q: u32,
    routers: u32,
    /// `next_port[r · routers + d]`: local port of router r toward router d.
    next_port: Vec<u16>,
    /// Each router's neighbours, in port order.
    neighbours: Vec<Vec<u32>>,
}

impl SlimFly {
    /// The next hop at `router` (first port `base`) toward `dst_router` (not this one), on
    /// VC class `hops` (hops taken so far: 0 or 1).
    #[inline]
    pub fn route(&self, base: u32, router: u32, dst_router: u32, hops: u8) -> Hop {
        let local = self.next_port[(router * self.routers + dst_router) as usize];
        Hop {
            port: base + u32::from(local),
            class: hops,
        }
    }

    /// The most hops of a route under any routing: two minimal, four through an
    /// intermediate router (Valiant, UGAL).
    pub fn max_hops(&self) -> u32 {
        4
    }

    /// Router-to-router hops between routers `a` and `b` on a minimal route.
    pub fn hops(&self, a: u32, b: u32) -> u64 {
        if a == b {
            0
        } else if self.neighbours[a as usize].binary_search(&b).is_ok() {
            1
        } else {
            2
        }
    }

    /// Valiant: a random router other than `src` and `dst` to go through.
    pub fn draw_intermediate(&self, src: u32, dst: u32, rng: &mut Rng) -> u32 {
        let mut v = rng.below(u64::from(self.routers) - 2) as u32;
        for skip in [src.min(dst), src.max(dst)] {
            if v >= skip {
                v += 1;
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mms_graphs_have_the_papers_size_radix_and_diameter() {
        for q in [3u32, 5, 7, 11, 13, 17, 19] {
            let adj = mms_graph(q);
            assert_eq!(adj.len() as u32, 2 * q * q);
            let (x, x2) = generator_sets(q);
            // Symmetric generator sets: the graph is undirected.
            for set in [&x, &x2] {
                for &d in set {
                    assert!(set.contains(&((q - d) % q)), "q {q}: {set:?}");
                }
            }
            for (r, ns) in adj.iter().enumerate() {
                assert_eq!(ns.len() as u32, network_radix(q), "q {q} router {r}");
                assert!(!ns.contains(&(r as u32)));
                for &v in ns {
                    assert!(adj[v as usize].contains(&(r as u32)));
                }
            }
            // Diameter 2: every router reaches every other in at most two hops.
            let next = next_ports(&adj);
            let n = adj.len();
            for r in 0..n {
                for d in 0..n {
                    if r != d {
                        let p = next[r * n + d];
                        assert_ne!(p, u16::MAX, "q {q}: {r} -> {d}");
                        let v = adj[r][p as usize] as usize;
                        assert!(v == d || adj[v].contains(&(d as u32)), "q {q}: {r} -> {d}");
                    }
                }
            }
        }
        assert_eq!((network_radix(5), network_radix(7)), (7, 11));
    }
}
