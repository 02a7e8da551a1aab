//! k-ary n-trees (`kind = "fat_tree"`): n levels of k^(n-1) switches, k nodes per leaf
//! switch; up/down routing, the up port chosen by destination (d-mod-k) or at random.

use super::check::Bad;
use super::ports::{Builder, Hop, Ports};
use crate::error::Result;
use crate::machine::config::TopologyConfig;
use crate::rng::Rng;

/// Arity `k` and levels `n` (k^n nodes).
#[derive(Debug, Clone, PartialEq)]
pub struct FatTreeSpec {
    pub k: u32,
    pub n: u32,
}

impl FatTreeSpec {
    pub const FIELDS: &'static [&'static str] = &["k", "n"];

    pub fn from_config(t: &TopologyConfig, bad: Bad) -> Result<FatTreeSpec> {
        let (Some(k), Some(n)) = (t.k, t.n) else {
            return Err(bad(
                "topology",
                "a fat_tree needs `k` (arity) and `n` (levels)".into(),
            ));
        };
        if k < 2 {
            return Err(bad("topology.k", "k must be at least 2".into()));
        }
        if n < 1 {
            return Err(bad("topology.n", "n must be at least 1".into()));
        }
        if (k as u64).saturating_pow(n) > 1 << 28 {
            return Err(bad(
                "topology.n",
                format!("{k}^{n} nodes is more than acesim supports (2^28)"),
            ));
        }
        Ok(FatTreeSpec { k, n })
    }

    pub fn planned_nodes(&self) -> u64 {
        (self.k as u64).saturating_pow(self.n)
    }

    /// Routers and router-to-router ports.
    pub fn planned_routers(&self) -> (u64, u64) {
        let (k, n) = (self.k as u64, self.n);
        let per_level = k.saturating_pow(n.saturating_sub(1));
        // k down ports above level 0 and k up ports below the top: 2(n-1) k per column.
        let ports = per_level
            .saturating_mul(k)
            .saturating_mul(2 * (n as u64 - 1));
        (per_level.saturating_mul(n as u64), ports)
    }

    /// Level by level; a switch's down ports first (k NICs' worth at level 0), then its up
    /// ports.
    pub fn build(&self, nics: u32, b: &mut Builder) -> FatTree {
        let (k, n) = (self.k, self.n);
        let per_level = k.pow(n - 1);
        for l in 0..n {
            for _ in 0..per_level {
                let down = if l == 0 { k * nics } else { k };
                let up = if l + 1 < n { k } else { 0 };
                b.add_router(down + up);
            }
        }
        let down_ports = |l: u32| if l == 0 { k * nics } else { k };
        for l in 0..n.saturating_sub(1) {
            for w in 0..per_level {
                let digit = (w / k.pow(l)) % k;
                for j in 0..k {
                    let w2 = w - digit * k.pow(l) + j * k.pow(l);
                    let r = l * per_level + w;
                    let r2 = (l + 1) * per_level + w2;
                    b.connect(r, down_ports(l) + j, r2, digit);
                }
            }
        }
        for node in 0..per_level * k {
            for j in 0..nics {
                b.attach_nic(node * nics + j, node / k, (node % k) * nics + j);
            }
        }
        let mut pows = [0; MAX_LEVELS + 1];
        for (i, p) in pows.iter_mut().enumerate().take(n as usize + 1) {
            *p = k.pow(i as u32);
        }
        let switches = (0..n)
            .flat_map(|l| (0..per_level).map(move |w| (l, w / k.pow(l))))
            .collect();
        FatTree {
            k,
            n,
            per_level,
            pows,
            switches,
        }
    }
}

/// Most levels a tree has: k^n nodes are at most 2^28 and k is at least 2.
const MAX_LEVELS: usize = 28;

/// A built k-ary n-tree.
#[derive(Debug, Clone)]
pub struct FatTree {
    pub k: u32,
    pub n: u32,
    pub per_level: u32,
    /// `k^i` for `i` in `0..=n`: routing divides by them at every hop.
    pows: [u32; MAX_LEVELS + 1],
    /// Per router: its level, and its index's digits from its level on (the nodes it
    /// covers are those whose digits from level + 1 on are these), so that a hop divides
    /// only the destination.
    switches: Vec<(u32, u32)>,
}

impl FatTree {
    pub fn nodes(&self) -> u32 {
        self.per_level * self.k
    }

    /// Up/down: down when this switch covers the destination, else up, spreading
    /// destinations over the up ports (d-mod-k).
    #[inline]
    pub fn route(&self, ports: &Ports, base: u32, router: u32, dst_nic: u32) -> Hop {
        let k = self.k;
        let (level, top) = self.switches[router as usize];
        let dst_node = ports.nic_node(dst_nic);
        // This switch reaches dst downwards when digits level..n-2 of its index match
        // digits level+1..n-1 of the destination node: its index's top digits, from
        // `level` on, are the node's from `level + 1` on. (Two divisions side by side.)
        let (from_level, above) = (
            dst_node / self.pows[level as usize],
            dst_node / self.pows[level as usize + 1],
        );
        let covers = top == above;
        // Going down from level l changes index digit l-1 to node digit l; going up,
        // digit `level` of the node picks the up port (d-mod-k).
        let digit = from_level - above * k;
        if covers {
            Hop {
                port: base + digit,
                class: 0,
            }
        } else {
            let down = if level == 0 {
                k * ports.nics_per_node
            } else {
                k
            };
            Hop {
                port: base + down + digit,
                class: 0,
            }
        }
    }

    /// The whole way from node `src_node` to NIC `dst_nic` (of another node) that `route`
    /// gives hop by hop, written from the two nodes' digits without walking the wiring:
    /// the ports it leaves switches by go into `links`, and it returns the router-to-router
    /// hops. Going up, `choose_up(first up port, d-mod-k hop)` picks the up port
    /// (any of them keeps the path minimal: the level it turns at depends on the nodes
    /// alone). A message routed at once (the flow model) pays no division chain and no
    /// load of the next router per hop.
    pub fn path(
        &self,
        ports: &Ports,
        (src_node, dst_nic): (u32, u32),
        mut choose_up: impl FnMut(u32, Hop) -> Hop,
        links: &mut Vec<u32>,
    ) -> u32 {
        let (k, n) = (self.k, self.n as usize);
        let dst_node = ports.nic_node(dst_nic);
        // Node digits, least significant first: digit 0 is the node's port on its leaf,
        // digit l + 1 is digit l of its leaf's index.
        let digit = |node: u32, l: usize| node / self.pows[l] % k;
        // The level where the way turns: switch (l, w) covers the nodes whose digits from
        // l + 1 on are w's from l on; a leaf's digits are its source's, and going up from
        // level l replaces digit l only.
        let turn = (1..n)
            .rev()
            .find(|&l| digit(src_node, l) != digit(dst_node, l))
            .unwrap_or(0);
        // Switch (l, w) is router l * per_level + w; up port j of (l, w) leads to
        // (l + 1, w with digit l set to j), and down port p of (l + 1, w) to (l, w with
        // digit l set to p) (`FatTreeSpec::build`).
        let mut w = src_node / k;
        let mut chosen = [0u32; MAX_LEVELS];
        for (l, up) in chosen.iter_mut().enumerate().take(turn) {
            let router = l as u32 * self.per_level + w;
            let first =
                ports.port_base[router as usize] + if l == 0 { k * ports.nics_per_node } else { k };
            let d_mod_k = Hop {
                port: first + digit(dst_node, l),
                class: 0,
            };
            let port = choose_up(first, d_mod_k).port;
            links.push(port);
            *up = port - first;
            // Digit l of w is still the source's (digit l + 1 of the node).
            w = w - digit(src_node, l + 1) * self.pows[l] + *up * self.pows[l];
        }
        for l in (1..=turn).rev() {
            let router = l as u32 * self.per_level + w;
            let down = digit(dst_node, l);
            links.push(ports.port_base[router as usize] + down);
            // Digit l - 1 of w is the up port taken from level l - 1.
            w = w - chosen[l - 1] * self.pows[l - 1] + down * self.pows[l - 1];
        }
        links.push(ports.nic_port[dst_nic as usize]);
        2 * turn as u32
    }

    /// `router.routing = "random"`: going up, one of the k up ports drawn at random (the
    /// level reached, and so the path's length, is the same); going down, `hop` itself.
    pub fn random_up(&self, ports: &Ports, router: u32, hop: Hop, rng: &mut Rng) -> Hop {
        match self.up_ports(ports, router, hop) {
            Some(first) => Hop {
                port: first + rng.below(self.k as u64) as u32,
                ..hop
            },
            None => hop,
        }
    }

    /// When `hop` (the d-mod-k route at `router`) goes up: the first of the switch's `k`
    /// up ports, which all lead one level up (any of them keeps the path minimal).
    #[inline]
    pub fn up_ports(&self, ports: &Ports, router: u32, hop: Hop) -> Option<u32> {
        let k = self.k;
        // Up ports are the last k of a switch below the top level.
        let base = ports.port_base[router as usize];
        let count = ports.port_base[router as usize + 1] - base;
        let going_up = router / self.per_level + 1 < self.n && hop.port >= base + count - k;
        going_up.then_some(base + count - k)
    }

    /// `router.routing = "adaptive"`: of the `k` up ports from `first`, the one `load` says
    /// is least loaded, looking from the d-mod-k port `hop` round (ties keep the first
    /// looked at, so that an idle network routes as d-mod-k does).
    pub fn least_loaded_up(k: u32, first: u32, hop: Hop, mut load: impl FnMut(u32) -> u64) -> Hop {
        let own = hop.port - first;
        let mut best = (u64::MAX, hop.port);
        for i in 0..k {
            let port = first + (own + i) % k;
            let l = load(port);
            if l < best.0 {
                best = (l, port);
            }
        }
        Hop {
            port: best.1,
            ..hop
        }
    }

    /// Up to the common ancestor and down again.
    pub fn max_hops(&self) -> u32 {
        2 * self.n.saturating_sub(1)
    }
}
