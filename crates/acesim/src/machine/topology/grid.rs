//! Meshes and tori of 1 to 6 dimensions (`kind = "mesh"` / `"torus"`), with a wrap-around
//! choice per dimension and several nodes per router; dimension-order routing along the
//! shortest direction of each ring, deadlock-free with two VC classes (a dateline).

use super::check::{grid_dims, grid_routers, positive, Bad};
use super::ports::{Builder, Hop, Ports};
use crate::error::Result;
use crate::machine::config::TopologyConfig;
use crate::machine::options::Dateline;

/// What the machine file says of a mesh or torus.
#[derive(Debug, Clone, PartialEq)]
pub struct GridSpec {
    /// `torus` (wrap-around links by default) or `mesh`.
    pub torus: bool,
    /// Routers per dimension.
    pub dims: Vec<u32>,
    /// Wrap-around link per dimension (the torus default all true, the mesh's all false).
    pub wrap: Vec<bool>,
    pub nodes_per_router: u32,
}

impl GridSpec {
    pub const FIELDS: &'static [&'static str] = &["dims", "wrap", "nodes_per_router"];

    pub fn from_config(t: &TopologyConfig, torus: bool, bad: Bad) -> Result<GridSpec> {
        let dims = grid_dims(t, bad)?;
        if let Some(wrap) = &t.wrap {
            if wrap.len() != dims.len() {
                return Err(bad(
                    "topology.wrap",
                    format!(
                        "wrap has {} entries but dims has {} dimensions",
                        wrap.len(),
                        dims.len()
                    ),
                ));
            }
        }
        positive(bad, "nodes_per_router", t.nodes_per_router)?;
        let routers = grid_routers(dims);
        if routers > 1 << 28 {
            return Err(bad(
                "topology.dims",
                format!("{routers} routers is more than acesim supports (2^28)"),
            ));
        }
        Ok(GridSpec {
            torus,
            dims: dims.to_vec(),
            wrap: t.wrap.clone().unwrap_or_else(|| vec![torus; dims.len()]),
            nodes_per_router: t.nodes_per_router.unwrap_or(1),
        })
    }

    pub fn name(&self) -> &'static str {
        if self.torus {
            "torus"
        } else {
            "mesh"
        }
    }

    /// A ring longer than 2 whose wrap-around link exists: with finite buffers its
    /// packets need two VC classes to be deadlock-free.
    pub fn has_ring(&self) -> bool {
        self.dims.iter().zip(&self.wrap).any(|(&n, &w)| n > 2 && w)
    }

    fn routers(&self) -> u64 {
        grid_routers(&self.dims)
    }

    pub fn planned_nodes(&self) -> u64 {
        self.routers().saturating_mul(self.nodes_per_router as u64)
    }

    /// Routers and router-to-router ports (two per dimension, connected or not).
    pub fn planned_routers(&self) -> (u64, u64) {
        let routers = self.routers();
        (routers, routers.saturating_mul(2 * self.dims.len() as u64))
    }

    /// Port `2d` of a router is its plus link in dimension `d`, `2d + 1` its minus link;
    /// the NICs follow.
    pub fn build(&self, nics: u32, dateline: Dateline, b: &mut Builder) -> Grid {
        let (dims, wrap, npr) = (&self.dims, &self.wrap, self.nodes_per_router);
        let mut strides = Vec::with_capacity(dims.len());
        let mut s = 1u32;
        for &d in dims {
            strides.push(s);
            s *= d; // at most 2^28 routers (checked when read)
        }
        let routers = s;
        let net_ports = 2 * dims.len() as u32;
        for _ in 0..routers {
            b.add_router(net_ports + npr * nics);
        }
        for r in 0..routers {
            for (d, &size) in dims.iter().enumerate() {
                let c = (r / strides[d]) % size;
                // Plus link of dimension d: port 2d of r to port 2d+1 of the neighbour.
                let has_plus = c + 1 < size || (wrap[d] && size > 1);
                if has_plus {
                    let nc = (c + 1) % size;
                    let nr = r - c * strides[d] + nc * strides[d];
                    b.connect(r, 2 * d as u32, nr, 2 * d as u32 + 1);
                }
            }
            for i in 0..npr {
                for j in 0..nics {
                    let node = r * npr + i;
                    b.attach_nic(node * nics + j, r, net_ports + i * nics + j);
                }
            }
        }
        // The coordinates of every router, so that routing a packet does not divide.
        let coord = |r: u32, d: usize| (r / strides[d]) % dims[d];
        let coords = if dims.len() <= PACKED_DIMS && dims.iter().all(|&k| k <= PACKED_SIZE) {
            Coords::Packed(
                (0..routers)
                    .map(|r| {
                        (0..dims.len())
                            .map(|d| u64::from(coord(r, d)) << (PACKED_BITS * d as u32))
                            .sum()
                    })
                    .collect(),
            )
        } else {
            Coords::Wide(
                (0..routers)
                    .flat_map(|r| (0..dims.len()).map(move |d| coord(r, d)))
                    .collect(),
            )
        };
        Grid {
            torus: self.torus,
            dims: dims.clone(),
            wrap: wrap.clone(),
            vc_classes: if self.torus || wrap.iter().any(|&w| w) {
                2
            } else {
                1
            },
            dateline_by_route: dateline == Dateline::Route,
            coords,
        }
    }
}

/// A built mesh or torus, as routing reads it.
#[derive(Debug, Clone)]
pub struct Grid {
    pub torus: bool,
    pub dims: Vec<u32>,
    pub wrap: Vec<bool>,
    pub vc_classes: u8,
    /// Rings choose the VC class by route (`router.dateline = "route"`): class 1 for the
    /// whole ring when the route crosses the wrap-around link, else class 0.
    pub dateline_by_route: bool,
    coords: Coords,
}

/// Bits of a coordinate in a packed router's coordinates, and how many fit in a `u64`.
const PACKED_BITS: u32 = 16;
const PACKED_DIMS: usize = 4;
const PACKED_SIZE: u32 = 1 << PACKED_BITS;

/// Every router's coordinates.
#[derive(Debug, Clone)]
enum Coords {
    /// Up to four dimensions of at most 65,536 routers (every grid users build): router r's
    /// coordinate in dimension d is bits `16d..16d+16` of `r`'s word, so the first dimension
    /// a packet has left is found from the two routers' words at once, without a loop.
    Packed(Vec<u64>),
    /// Any other: router r's coordinates are `[r * dims ..]`.
    Wide(Vec<u32>),
}

impl Coords {
    /// Router `r`'s coordinate in dimension `d` of `n`.
    #[inline]
    fn get(&self, r: u32, d: usize, n: usize) -> u32 {
        match self {
            Coords::Packed(p) => {
                (p[r as usize] >> (PACKED_BITS * d as u32)) as u32 & (PACKED_SIZE - 1)
            }
            Coords::Wide(w) => w[r as usize * n + d],
        }
    }

    /// The first dimension in which routers `a` and `b` differ, with `a`'s and `b`'s
    /// coordinates there; `None` when they are the same router.
    #[inline(always)]
    fn first_difference(&self, a: u32, b: u32, n: usize) -> Option<(usize, u32, u32)> {
        match self {
            Coords::Packed(p) => {
                let (x, y) = (p[a as usize], p[b as usize]);
                let differ = std::num::NonZeroU64::new(x ^ y)?;
                let d = (differ.trailing_zeros() / PACKED_BITS) as usize;
                let at = |w: u64| (w >> (PACKED_BITS * d as u32)) as u32 & (PACKED_SIZE - 1);
                Some((d, at(x), at(y)))
            }
            Coords::Wide(w) => {
                let (x, y) = (&w[a as usize * n..][..n], &w[b as usize * n..][..n]);
                (0..n).find(|&d| x[d] != y[d]).map(|d| (d, x[d], y[d]))
            }
        }
    }
}

impl Grid {
    /// The next hop at `router` (whose first port is `base`) of a packet that entered the
    /// network at `src_router` and goes to `dst_router` (not this one).
    #[inline]
    pub fn route(&self, base: u32, router: u32, src_router: u32, dst_router: u32) -> Hop {
        self.dimension_order(base, router, src_router, dst_router, self.dateline_by_route)
    }

    /// Minimal adaptive routing's escape hop (Duato): dimension order from here, on class
    /// 1 while the rest of its way round this ring crosses the wrap-around link, else 0.
    /// The rule needs no memory of where the packet came from, so a packet may join the
    /// escape channels at any router; on them it waits only for escape channels, whose
    /// dependencies are those of dimension order with a dateline: acyclic.
    #[inline]
    pub fn escape_hop(&self, base: u32, router: u32, dst_router: u32) -> Hop {
        self.dimension_order(base, router, router, dst_router, true)
    }

    /// Minimal adaptive routing's class: the one after the escape classes.
    pub fn adaptive_class(&self) -> u8 {
        self.vc_classes
    }

    /// The ports at `router` (first port `base`) that bring a packet closer to
    /// `dst_router`: one per dimension left, both ways round a ring where they are equally
    /// short; in dimension order (the escape hop's port first among equals).
    #[inline]
    pub fn productive_ports(&self, base: u32, router: u32, dst_router: u32) -> ([u32; 12], usize) {
        let n = self.dims.len();
        let (mut out, mut k) = ([0u32; 12], 0);
        for (d, &size) in self.dims.iter().enumerate() {
            let (c, t) = (
                self.coords.get(router, d, n),
                self.coords.get(dst_router, d, n),
            );
            if c == t {
                continue;
            }
            let fwd = if t > c { t - c } else { t + size - c };
            let (plus, minus) = if self.wrap[d] {
                (fwd <= size - fwd, fwd >= size - fwd)
            } else {
                (t > c, t < c)
            };
            for (go, local) in [(plus, 2 * d as u32), (minus, 2 * d as u32 + 1)] {
                if go {
                    out[k] = base + local;
                    k += 1;
                }
            }
        }
        (out, k)
    }

    /// Dimension order from `router`, for a packet that entered the network at
    /// `src_router`; `by_route` chooses the dateline rule (see `dateline_by_route`).
    #[inline(always)]
    fn dimension_order(
        &self,
        base: u32,
        router: u32,
        src_router: u32,
        dst_router: u32,
        by_route: bool,
    ) -> Hop {
        let n = self.dims.len();
        let Some((d, c, t)) = self.coords.first_difference(router, dst_router, n) else {
            unreachable!("a packet at a router other than its destination has a dimension left")
        };
        let size = self.dims[d];
        let s = self.coords.get(src_router, d, n);
        // Written as selects, not branches: the direction is data, not a pattern
        // a branch predictor learns.
        let w = self.wrap[d];
        let (plus, _) = way(size, w, c, t);
        // Dateline: once a packet has wrapped in this dimension it uses class 1
        // (`crossing`); or, `route`, class 1 on every hop of this dimension when
        // its route wraps: the packet entered the dimension at `s` (DOR changes
        // one coordinate at a time) and goes plus to `t < s` or minus to `t > s`.
        let up = if c + 1 == size { 0 } else { c + 1 };
        let down = if c == 0 { size - 1 } else { c - 1 };
        let next = if plus { up } else { down };
        let (from, to) = if by_route { (t, s) } else { (next, s) };
        let wrapped = w & if plus { from < to } else { from > to };
        let local = 2 * d as u32 + (!plus) as u32;
        Hop {
            port: base + local,
            class: wrapped as u8,
        }
    }

    /// The whole dimension-order way from `src_router` to NIC `dst_nic` (on `dst_router`)
    /// that `route` gives hop by hop, written at once: each dimension's direction is the
    /// same on every hop of it, and the next router is one stride on (round the ring at its
    /// end), so no hop waits for a load of the last. The ports it leaves routers by go
    /// into `links`; it returns the router-to-router hops.
    pub fn path(
        &self,
        ports: &Ports,
        (src_router, dst_router): (u32, u32),
        dst_nic: u32,
        links: &mut Vec<u32>,
    ) -> u32 {
        let n = self.dims.len();
        let (mut router, mut stride, mut hops) = (src_router, 1u32, 0);
        for (d, (&size, &wrap)) in self.dims.iter().zip(&self.wrap).enumerate() {
            let (mut c, t) = (
                self.coords.get(src_router, d, n),
                self.coords.get(dst_router, d, n),
            );
            if c != t {
                let (plus, fwd) = way(size, wrap, c, t);
                let (steps, local) = match plus {
                    true => (fwd, 2 * d as u32),
                    false => (size - fwd, 2 * d as u32 + 1),
                };
                for _ in 0..steps {
                    links.push(ports.port_base[router as usize] + local);
                    (c, router) = match (plus, c) {
                        (true, c) if c + 1 == size => (0, router - c * stride),
                        (true, c) => (c + 1, router + stride),
                        (false, 0) => (size - 1, router + (size - 1) * stride),
                        (false, c) => (c - 1, router - stride),
                    };
                }
                hops += steps;
            }
            stride *= size;
        }
        links.push(ports.nic_port[dst_nic as usize]);
        hops
    }

    /// The most router-to-router hops of a route: half of each ring, all of each line.
    pub fn max_hops(&self) -> u32 {
        self.dims
            .iter()
            .zip(&self.wrap)
            .map(|(&k, &w)| if w { k / 2 } else { k.saturating_sub(1) })
            .sum()
    }
}

/// Which way dimension order goes along a dimension of `size` from coordinate `c` to `t`
/// (`c != t`), and the hops the plus way takes: on a ring the shorter way (ties go plus, so
/// the choice is deterministic), on a line towards `t`.
#[inline(always)]
fn way(size: u32, wrap: bool, c: u32, t: u32) -> (bool, u32) {
    // Coordinates are below `size`: wrap around by comparing, not dividing.
    let fwd = if t > c { t - c } else { t + size - c };
    (if wrap { fwd <= size - fwd } else { t > c }, fwd)
}
#[cfg(test)]
mod tests {
    use super::*;

    fn grid(dims: &[u32], wrap: &[bool], dateline: Dateline) -> Grid {
        let spec = GridSpec {
            torus: wrap.iter().any(|&w| w),
            dims: dims.to_vec(),
            wrap: wrap.to_vec(),
            nodes_per_router: 1,
        };
        spec.build(1, dateline, &mut Builder::default())
    }

    /// The same grid with its coordinates in the general layout.
    fn wide(g: &Grid) -> Grid {
        let n = g.dims.len();
        let routers: u32 = g.dims.iter().product();
        let coords = (0..routers)
            .flat_map(|r| (0..n).map(move |d| (r, d)))
            .map(|(r, d)| g.coords.get(r, d, n))
            .collect();
        Grid {
            coords: Coords::Wide(coords),
            ..g.clone()
        }
    }

    /// Packed coordinates (up to four dimensions of up to 65,536) route every packet as the
    /// general layout does: every (source, here, destination) of small meshes and tori,
    /// with both dateline rules.
    #[test]
    fn packed_and_wide_coordinates_route_alike() {
        let cases: [(&[u32], &[bool]); 4] = [
            (&[5], &[true]),
            (&[4, 3], &[true, false]),
            (&[3, 2, 4], &[true, true, true]),
            (&[2, 3, 2, 3], &[false, true, true, false]),
        ];
        for (dims, wrap) in cases {
            for dateline in [Dateline::Route, Dateline::Crossing] {
                let packed = grid(dims, wrap, dateline);
                assert!(matches!(packed.coords, Coords::Packed(_)));
                let general = wide(&packed);
                let routers: u32 = dims.iter().product();
                for src in 0..routers {
                    for here in 0..routers {
                        for dst in (0..routers).filter(|&d| d != here) {
                            let base = here * 2 * dims.len() as u32;
                            let a = packed.route(base, here, src, dst);
                            let b = general.route(base, here, src, dst);
                            assert_eq!(
                                (a.port, a.class),
                                (b.port, b.class),
                                "{dims:?} {src} {here} {dst}"
                            );
                            assert_eq!(
                                packed.productive_ports(base, here, dst),
                                general.productive_ports(base, here, dst)
                            );
                        }
                    }
                }
            }
        }
    }

    /// Five dimensions, or a ring longer than 65,536, keep the general layout.
    #[test]
    fn grids_beyond_the_packed_layout_keep_every_coordinate() {
        let five = grid(&[2, 2, 2, 2, 3], &[true; 5], Dateline::Route);
        assert!(matches!(five.coords, Coords::Wide(_)));
        let last = 2 * 2 * 2 * 2 * 3 - 1;
        assert_eq!(
            (0..5)
                .map(|d| five.coords.get(last, d, 5))
                .collect::<Vec<_>>(),
            [1, 1, 1, 1, 2]
        );
        let long = grid(&[65_537, 1], &[true, false], Dateline::Route);
        assert!(matches!(long.coords, Coords::Wide(_)));
        assert_eq!(long.coords.get(65_536, 0, 2), 65_536);
        // The first hop from router 0 to router 65,536 goes minus round the ring (1 hop).
        assert_eq!(long.route(0, 0, 0, 65_536).port, 1);
        let edge = grid(&[65_536, 1], &[true, false], Dateline::Route);
        assert!(matches!(edge.coords, Coords::Packed(_)));
        assert_eq!(edge.coords.get(65_535, 0, 2), 65_535);
    }
}
