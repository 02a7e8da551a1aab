//! HyperX (`kind = "hyperx"`; Ahn et al., SC'09), a flattened butterfly when its dimensions
//! are equal: routers on a grid of 1 to 6 dimensions, each linked directly to every router
//! that differs from it in one coordinate, `nodes_per_router` nodes each. A route corrects
//! one coordinate per hop, so it takes as many hops as coordinates differ: in dimension
//! order (`router.routing = "auto"`), deadlock-free with one VC class since channels only
//! lead to higher dimensions; or (`"adaptive"`, minimal adaptive) the dimension still to
//! correct whose port has the fewest bytes queued, on VC class = hops taken, which only
//! goes up along a route and so is deadlock-free with as many classes as dimensions.

use super::check::{grid_dims, grid_routers, positive, Bad};
use super::ports::{Builder, Hop, Ports};
use crate::error::Result;
use crate::machine::config::TopologyConfig;

/// What the machine file says of a HyperX.
#[derive(Debug, Clone, PartialEq)]
pub struct HyperXSpec {
    /// Routers per dimension.
    pub dims: Vec<u32>,
    pub nodes_per_router: u32,
}

impl HyperXSpec {
    pub const FIELDS: &'static [&'static str] = &["dims", "nodes_per_router"];

    pub fn from_config(t: &TopologyConfig, bad: Bad) -> Result<HyperXSpec> {
        let dims = grid_dims(t, bad)?;
        positive(bad, "nodes_per_router", t.nodes_per_router)?;
        let npr = t.nodes_per_router.unwrap_or(1);
        let links: u64 = dims.iter().map(|&d| d as u64 - 1).sum();
        if links + npr as u64 > 1 << 16 {
            return Err(bad(
                "topology.dims",
                format!(
                    "a router would have {} ports ({links} to other routers, {npr} to nodes): at most 2^16",
                    links + npr as u64
                ),
            ));
        }
        let routers = grid_routers(dims);
        if routers > 1 << 24 {
            return Err(bad(
                "topology.dims",
                format!("{routers} routers is more than acesim supports in a hyperx (2^24)"),
            ));
        }
        Ok(HyperXSpec {
            dims: dims.to_vec(),
            nodes_per_router: npr,
        })
    }

    fn routers(&self) -> u64 {
        grid_routers(&self.dims)
    }

    pub fn planned_nodes(&self) -> u64 {
        self.routers().saturating_mul(self.nodes_per_router as u64)
    }

    /// Routers and router-to-router ports (one per other router of each dimension).
    pub fn planned_routers(&self) -> (u64, u64) {
        let per_router: u64 = self.dims.iter().map(|&d| d as u64 - 1).sum();
        (self.routers(), self.routers().saturating_mul(per_router))
    }

    /// Dimension `d`'s ports come after those of the dimensions before it, one per other
    /// coordinate in increasing order; the NICs follow.
    pub fn build(&self, nics: u32, b: &mut Builder) -> HyperX {
        let (dims, npr) = (&self.dims, self.nodes_per_router);
        let mut strides = Vec::with_capacity(dims.len());
        let mut first_port = Vec::with_capacity(dims.len());
        let (mut s, mut p) = (1u32, 0u32);
        for &d in dims {
            strides.push(s);
            first_port.push(p);
            s *= d; // at most 2^24 routers (checked when read)
            p += d - 1;
        }
        let (routers, net_ports) = (s, p);
        for _ in 0..routers {
            b.add_router(net_ports + npr * nics);
        }
        let x = HyperX {
            dims: dims.clone(),
            strides,
            first_port,
            net_ports,
        };
        for r in 0..routers {
            for (d, &size) in dims.iter().enumerate() {
                let c = x.coord(r, d);
                // Each pair once: from the lower coordinate to every higher one.
                for v in c + 1..size {
                    let r2 = r - c * x.strides[d] + v * x.strides[d];
                    b.connect(r, x.port(d, c, v), r2, x.port(d, v, c));
                }
            }
            for i in 0..npr {
                for j in 0..nics {
                    let node = r * npr + i;
                    b.attach_nic(node * nics + j, r, net_ports + i * nics + j);
                }
            }
        }
        x
    }
}

/// A built HyperX, as routing reads it.
#[derive(Debug, Clone)]
pub struct HyperX {
    pub dims: Vec<u32>,
    strides: Vec<u32>,
    /// The first port of each dimension's links.
    first_port: Vec<u32>,
    net_ports: u32,
}

impl HyperX {
    fn coord(&self, r: u32, d: usize) -> u32 {
        (r / self.strides[d]) % self.dims[d]
    }

    /// The local port of a router at coordinate `c` of dimension `d` to the router at `v`.
    fn port(&self, d: usize, c: u32, v: u32) -> u32 {
        self.first_port[d] + if v < c { v } else { v - 1 }
    }

    /// The hop at `router` (first port `base`) toward `dst_router` (not this one) in
    /// dimension `d`, or None when the coordinates agree there.
    #[inline]
    fn hop_in(&self, base: u32, router: u32, dst_router: u32, d: usize) -> Option<u32> {
        let (c, t) = (self.coord(router, d), self.coord(dst_router, d));
        (c != t).then(|| base + self.port(d, c, t))
    }

    /// Dimension order: the first coordinate that differs, corrected in one hop.
    #[inline]
    pub fn route(&self, base: u32, router: u32, dst_router: u32) -> Hop {
        let port = (0..self.dims.len())
            .find_map(|d| self.hop_in(base, router, dst_router, d))
            .expect("a packet at a router other than its destination has a coordinate left");
        Hop { port, class: 0 }
    }

    /// The ports at `router` of the dimensions still to correct toward `dst_router`, in
    /// dimension order (the first `n` of the array).
    #[inline]
    pub fn productive_ports(
        &self,
        ports: &Ports,
        router: u32,
        dst_router: u32,
    ) -> ([u32; 6], usize) {
        let base = ports.port_base[router as usize];
        let mut out = [0; 6];
        let mut n = 0;
        for d in 0..self.dims.len() {
            if let Some(port) = self.hop_in(base, router, dst_router, d) {
                out[n] = port;
                n += 1;
            }
        }
        (out, n)
    }

    /// Minimal adaptive: of the `productive` ports, the one `load` says is least loaded
    /// (ties: the lowest dimension, so an idle network routes in dimension order), on VC
    /// class `hops` (the hops taken so far).
    pub fn least_loaded(productive: &[u32], hops: u32, mut load: impl FnMut(u32) -> u64) -> Hop {
        let mut best = (u64::MAX, productive[0]);
        for &port in productive {
            let l = load(port);
            if l < best.0 {
                best = (l, port);
            }
        }
        Hop {
            port: best.1,
            class: hops.min(u8::MAX as u32) as u8,
        }
    }

    /// DAL's candidates at `router` toward `dst_router` into `out` as (port, dimension,
    /// minimal): the productive ports, and for each dimension still to correct that the
    /// packet has not derouted in yet (`derouted`: a bit per dimension), every other port
    /// of that dimension (a hop to another coordinate, from which one more hop corrects it).
    pub fn dal_candidates(
        &self,
        ports: &Ports,
        router: u32,
        dst_router: u32,
        derouted: u32,
        out: &mut Vec<(u32, u8, bool)>,
    ) {
        out.clear();
        let base = ports.port_base[router as usize];
        for d in 0..self.dims.len() {
            let (c, t) = (self.coord(router, d), self.coord(dst_router, d));
            if c == t {
                continue;
            }
            out.push((base + self.port(d, c, t), d as u8, true));
            if derouted & (1 << d) == 0 {
                for v in (0..self.dims[d]).filter(|&v| v != c && v != t) {
                    out.push((base + self.port(d, c, v), d as u8, false));
                }
            }
        }
    }

    /// DAL's choice among `candidates` (from `dal_candidates`) by `load`, with `own` (the
    /// packet's or message's own share) added to both sides: the least loaded minimal
    /// port, unless the least loaded deroute's load, times two for its extra hop and
    /// `threshold`, is below the minimal one's. Gives the port and, for a deroute, its
    /// dimension.
    pub fn dal_choice(
        candidates: &[(u32, u8, bool)],
        own: u64,
        threshold: f64,
        mut load: impl FnMut(u32) -> u64,
    ) -> (u32, Option<u8>) {
        let mut minimal = (u64::MAX, 0u32);
        let mut other: Option<(u64, u32, u8)> = None;
        for &(port, dim, is_minimal) in candidates {
            let l = load(port);
            if is_minimal {
                if l < minimal.0 {
                    minimal = (l, port);
                }
            } else if other.is_none_or(|(x, _, _)| l < x) {
                other = Some((l, port, dim));
            }
        }
        match other {
            Some((l, port, dim))
                if ((minimal.0 + own) as f64) > threshold * (2 * (l + own)) as f64 =>
            {
                (port, Some(dim))
            }
            _ => (minimal.1, None),
        }
    }

    /// VC classes DAL needs: one per hop, two in a dimension it may deroute in (size 3 or
    /// more).
    pub fn dal_classes(&self) -> u8 {
        let hops: u32 = self
            .dims
            .iter()
            .map(|&x| (x > 1) as u32 + (x > 2) as u32)
            .sum();
        hops.clamp(1, u8::MAX as u32) as u8
    }

    /// The most router-to-router hops of a minimal route: one per dimension (DAL: up to
    /// two, `dal_classes`).
    pub fn max_hops(&self) -> u32 {
        self.dims.iter().filter(|&&d| d > 1).count() as u32
    }

    /// VC classes adaptive routing needs (one per hop a route may take).
    pub fn adaptive_classes(&self) -> u8 {
        self.max_hops().max(1) as u8
    }

    /// Router-to-router ports of each router.
    pub fn network_ports(&self) -> u32 {
        self.net_ports
    }
}
