//! Slim Fly (`kind = "slimfly"`; Besta and Hoefler, SC'14): the McKay-Miller-Širáň graphs
//! of diameter 2, the most routers of a given radix that any two reach each other in two
//! hops. For a prime power `q = 4w + δ` (δ ∈ {−1, 0, 1}) there are 2q² routers, (s, x, y)
//! with s ∈ {0, 1} and x, y in the field GF(q), each linked to (3q − δ)/2 others:
//! (0, x, y)–(0, x, y') when y − y' is in the generator set X, (1, m, c)–(1, m, c') when
//! c − c' is in X', and (0, x, y)–(1, m, c) when y = m·x + c. Routes are minimal (one hop, or two through the lowest-numbered
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
    /// The prime power q (q mod 4 ≠ 2).
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

/// `q = p^k` for a prime p: `Some((p, k))`.
fn prime_power(q: u32) -> Option<(u32, u32)> {
    let p = (2..=q).find(|&d| q.is_multiple_of(d))?;
    let (mut rest, mut k) = (q, 0);
    while rest.is_multiple_of(p) {
        rest /= p;
        k += 1;
    }
    (rest == 1 && is_prime(p)).then_some((p, k))
}

impl SlimFlySpec {
    pub const FIELDS: &'static [&'static str] = &["q", "nodes_per_router"];

    pub fn from_config(t: &TopologyConfig, bad: Bad) -> Result<SlimFlySpec> {
        let Some(q) = t.q else {
            return Err(bad(
                "topology",
                "a slimfly needs `q`, a prime power from 3 to 43 (e.g. q = 5: 50 routers of network radix 7)".into(),
            ));
        };
        // A prime power other than 2 is 0, 1 or 3 mod 4 (odd, or a power of 2 from 4).
        if prime_power(q).is_none() || !(3..=MAX_Q).contains(&q) {
            return Err(bad(
                "topology.q",
                format!("q = {q}: acesim builds Slim Flies for prime powers q from 3 to {MAX_Q} (3, 4, 5, 7, 8, 9, 11, 13, 16, 17, ...)"),
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
    let delta: i64 = match q % 4 {
        1 => 1,
        0 => 0,
        _ => -1,
    };
    ((3 * i64::from(q) - delta) / 2) as u32
}

/// The field GF(q), q = p^k: an element is the polynomial of degree < k over Z_p whose
/// coefficients are its base-p digits; sums and products come from tables.
struct Field {
    q: u32,
    add: Vec<u32>,
    mul: Vec<u32>,
    /// A primitive element: its powers are every non-zero element.
    xi: u32,
}

impl Field {
    /// GF(q) for a prime power q: the first monic polynomial of degree k (in base-p order)
    /// for which some element has order q − 1, which only a field has.
    fn new(q: u32) -> Field {
        let (p, k) = prime_power(q).unwrap_or((q, 1));
        let digits = |mut x: u32| -> Vec<u32> {
            (0..k)
                .map(|_| {
                    let d = x % p;
                    x /= p;
                    d
                })
                .collect()
        };
        let number = |c: &[u32]| c.iter().rev().fold(0, |x, &d| x * p + d);
        let mut add = vec![0; (q * q) as usize];
        for a in 0..q {
            for b in 0..q {
                let (da, db) = (digits(a), digits(b));
                let sum: Vec<u32> = da.iter().zip(&db).map(|(x, y)| (x + y) % p).collect();
                add[(a * q + b) as usize] = number(&sum);
            }
        }
        // Candidate moduli x^k + (lower terms `low`).
        for low in 0..q {
            let modulus = digits(low);
            let times = |a: u32, b: u32| -> u32 {
                let (da, db) = (digits(a), digits(b));
                let mut prod = vec![0u32; 2 * k as usize];
                for (i, x) in da.iter().enumerate() {
                    for (j, y) in db.iter().enumerate() {
                        prod[i + j] = (prod[i + j] + x * y) % p;
                    }
                }
                // Reduce: x^k = −(low terms).
                for deg in (k as usize..2 * k as usize).rev() {
                    let c = prod[deg];
                    if c != 0 {
                        prod[deg] = 0;
                        for (i, m) in modulus.iter().enumerate() {
                            let at = deg - k as usize + i;
                            prod[at] = (prod[at] + (p - c) * m) % p;
                        }
                    }
                }
                number(&prod[..k as usize])
            };
            let mul: Vec<u32> = (0..q * q).map(|i| times(i / q, i % q)).collect();
            let order = |g: u32| {
                let mut x = g;
                let mut n = 1;
                while x != 1 && x != 0 && n < q {
                    x = mul[(x * q + g) as usize];
                    n += 1;
                }
                (x == 1).then_some(n)
            };
            if let Some(xi) = (2.min(q - 1)..q).find(|&g| order(g) == Some(q - 1)) {
                return Field { q, add, mul, xi };
            }
        }
        unreachable!("every prime power has a field")
    }

    fn add(&self, a: u32, b: u32) -> u32 {
        self.add[(a * self.q + b) as usize]
    }

    fn mul(&self, a: u32, b: u32) -> u32 {
        self.mul[(a * self.q + b) as usize]
    }

    /// −a.
    fn neg(&self, a: u32) -> u32 {
        (0..self.q).find(|&b| self.add(a, b) == 0).unwrap_or(0)
    }

    /// ξ^e.
    fn pow(&self, e: u32) -> u32 {
        (0..e).fold(1, |x, _| self.mul(x, self.xi))
    }
}

/// The generator sets X and X' of the MMS construction for q = 4w + δ.
fn generator_sets(f: &Field) -> (Vec<u32>, Vec<u32>) {
    let q = f.q;
    let pow = |e: u32| f.pow(e);
    let (mut x, mut x2) = (Vec::new(), Vec::new());
    if q.is_multiple_of(4) {
        // δ = 0: the even powers of ξ up to ξ^(q−2), and the odd ones up to ξ^(q−1).
        for e in (0..q - 1).step_by(2) {
            x.push(pow(e));
        }
        for e in (1..q).step_by(2) {
            x2.push(pow(e));
        }
    } else if q % 4 == 1 {
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
    let f = Field::new(q);
    let (x, x2) = generator_sets(&f);
    let id = |s: u32, a: u32, b: u32| s * q * q + a * q + b;
    let mut adj = vec![Vec::new(); (2 * q * q) as usize];
    for a in 0..q {
        for b in 0..q {
            for &d in &x {
                adj[id(0, a, b) as usize].push(id(0, a, f.add(b, d)));
            }
            for &d in &x2 {
                adj[id(1, a, b) as usize].push(id(1, a, f.add(b, d)));
            }
            // (0, x, y) – (1, m, c) when y = m·x + c.
            for m in 0..q {
                let c = f.add(b, f.neg(f.mul(m, a)));
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
        // The primes, and the prime powers of every δ: 4, 8, 16 (δ = 0), 9, 25 (δ = 1),
        // 27 (δ = −1).
        for q in [3u32, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 25, 27] {
            let adj = mms_graph(q);
            assert_eq!(adj.len() as u32, 2 * q * q);
            let f = Field::new(q);
            let (x, x2) = generator_sets(&f);
            // Symmetric generator sets: the graph is undirected.
            for set in [&x, &x2] {
                for &d in set {
                    assert!(set.contains(&f.neg(d)), "q {q}: {set:?}");
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
        assert_eq!(
            (network_radix(4), network_radix(8), network_radix(9)),
            (6, 12, 13)
        );
    }
}
