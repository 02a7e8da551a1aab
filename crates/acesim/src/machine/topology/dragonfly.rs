//! Dragonflies (`kind = "dragonfly"`): `g` groups of `a` routers, all-to-all inside a
//! group, `h` global links per router, `p` nodes per router; consecutive or palm-tree
//! arrangement of the global links, possibly partly populated. Routing is minimal
//! (local-global-local) or through an intermediate group (Valiant), chosen at the source
//! router (UGAL compares the two from the occupancy the network reports).

use super::check::{positive, Bad};
use super::ports::{Builder, Hop, Peer, Ports};
use crate::error::{did_you_mean, Result};
use crate::machine::config::TopologyConfig;
use crate::rng::Rng;

/// No intermediate group: the path is minimal.
pub const NO_GROUP: u32 = u32::MAX;

/// What the machine file says of a dragonfly.
#[derive(Debug, Clone, PartialEq)]
pub struct DragonflySpec {
    pub p: u32,
    pub a: u32,
    pub h: u32,
    pub g: u32,
    pub palmtree: bool,
    /// Fraction of the global links between each pair of groups that is wired.
    pub population: f64,
    /// The parallel global link to the next group is chosen by load, not by destination.
    pub by_load: bool,
}

impl DragonflySpec {
    pub const FIELDS: &'static [&'static str] = &[
        "p",
        "a",
        "h",
        "g",
        "arrangement",
        "global_population",
        "global_choice",
    ];

    pub fn from_config(t: &TopologyConfig, bad: Bad) -> Result<DragonflySpec> {
        let (Some(p), Some(a), Some(h)) = (t.p, t.a, t.h) else {
            return Err(bad("topology", "a dragonfly needs `p` (nodes per router), `a` (routers per group) and `h` (global links per router)".into()));
        };
        positive(bad, "p", Some(p))?;
        positive(bad, "a", Some(a))?;
        positive(bad, "h", Some(h))?;
        if a > 4096 || h > 4096 || p > 4096 {
            return Err(bad("topology.a", "p, a and h are at most 4096".into()));
        }
        let max_g = a * h + 1;
        let g = t.g.unwrap_or(max_g);
        if g == 0 {
            return Err(bad("topology.g", "g must be at least 1".into()));
        }
        if g > max_g {
            return Err(bad(
                "topology.g",
                format!("{g} groups cannot be wired: each group has a·h = {} global links, so at most a·h + 1 = {max_g} groups", a * h),
            ));
        }
        let palmtree = match t.arrangement.as_deref() {
            None | Some("consecutive") => false,
            Some("palmtree") => true,
            Some(arr) => {
                return Err(bad(
                    "topology.arrangement",
                    format!(
                        "unknown arrangement '{arr}'{} (expected consecutive or palmtree)",
                        did_you_mean(arr, ["consecutive", "palmtree"])
                    ),
                ))
            }
        };
        let by_load = match t.global_choice.as_deref() {
            None | Some("hash") => false,
            Some("load") => true,
            Some(c) => {
                return Err(bad(
                    "topology.global_choice",
                    format!(
                        "unknown global_choice '{c}'{} (expected hash or load)",
                        did_you_mean(c, ["hash", "load"])
                    ),
                ))
            }
        };
        let f = t.global_population.unwrap_or(1.0);
        if !(f > 0.0 && f <= 1.0) {
            return Err(bad(
                "topology.global_population",
                format!("global_population {f} is outside (0, 1]"),
            ));
        }
        if g > 1 {
            let m = (a * h) / (g - 1);
            if ((f * m as f64) + 1e-9).floor() < 1.0 {
                return Err(bad(
                    "topology.global_population",
                    format!(
                        "with {g} groups each pair of groups has {m} global link(s); a population of {f} leaves pairs unconnected (use fewer groups: g <= {} at this population)",
                        ((f * (a * h) as f64) + 1e-9).floor() as u32 + 1
                    ),
                ));
            }
        }
        if (p as u64) * (a as u64) * (g as u64) > 1 << 28 {
            return Err(bad("topology.g", "more than 2^28 nodes".into()));
        }
        Ok(DragonflySpec {
            p,
            a,
            h,
            g,
            palmtree,
            population: f,
            by_load,
        })
    }

    pub fn planned_nodes(&self) -> u64 {
        (self.p as u64)
            .saturating_mul(self.a as u64)
            .saturating_mul(self.g as u64)
    }

    /// Routers and router-to-router ports (local and global, wired or not).
    pub fn planned_routers(&self) -> (u64, u64) {
        let routers = self.a as u64 * self.g as u64;
        (routers, routers * (self.a as u64 - 1 + self.h as u64))
    }

    /// A router's ports: `a - 1` local, `h` global, then its NICs. Global link `k` of a
    /// group is port `k mod h` of router `k / h`; the `m` links to each other group are
    /// consecutive, and `wired` of them are populated.
    pub fn build(&self, nics: u32, b: &mut Builder) -> Dragonfly {
        let (p, a, h, g) = (self.p, self.a, self.h, self.g);
        let m = if g > 1 { a * h / (g - 1) } else { 0 };
        let wired = ((self.population * m as f64) + 1e-9).floor() as u32;
        let local = a - 1;
        for _ in 0..g * a {
            b.add_router(local + h + p * nics);
        }
        for grp in 0..g {
            for r in 0..a {
                let router = grp * a + r;
                // All-to-all inside the group.
                for r2 in (r + 1)..a {
                    b.connect(router, r2 - 1, grp * a + r2, r);
                }
                for i in 0..p {
                    for j in 0..nics {
                        let node = router * p + i;
                        b.attach_nic(node * nics + j, router, local + h + i * nics + j);
                    }
                }
            }
            for k in 0..(g - 1) * m {
                let (o, c) = (k / m, k % m);
                if c >= wired {
                    continue;
                }
                // The group at offset o, and this group's offset as seen from there.
                let (t2, o2) = if self.palmtree {
                    ((grp + o + 1) % g, g - 2 - o)
                } else {
                    let t2 = if o < grp { o } else { o + 1 };
                    (t2, if grp < t2 { grp } else { grp - 1 })
                };
                let k2 = o2 * m + c;
                if (grp, k) < (t2, k2) {
                    b.connect(
                        grp * a + k / h,
                        local + k % h,
                        t2 * a + k2 / h,
                        local + k2 % h,
                    );
                }
            }
        }
        Dragonfly {
            p,
            a,
            h,
            g,
            m,
            wired,
            palmtree: self.palmtree,
            by_load: self.by_load,
        }
    }
}

/// A built dragonfly, as routing reads it.
#[derive(Debug, Clone, Copy)]
pub struct Dragonfly {
    pub p: u32,
    pub a: u32,
    pub h: u32,
    pub g: u32,
    /// Global links per pair of groups, and how many of them are wired.
    pub m: u32,
    pub wired: u32,
    pub palmtree: bool,
    /// Parallel global links chosen by load at the source router (`global_choice = "load"`).
    pub by_load: bool,
}

impl Dragonfly {
    pub fn group_of(&self, router: u32) -> u32 {
        router / self.a
    }

    /// Whether router port `local` (counted from the router's first) is a global link.
    pub fn is_global_port(&self, local: u32) -> bool {
        local >= self.a - 1
    }

    /// Parallel global links between two groups (wired ones), numbered `0..copies()`.
    pub fn copies(&self) -> u32 {
        self.wired.max(1)
    }

    /// The parallel global link a packet for `dst_nic` takes when chosen by destination:
    /// packets for one node keep one path, and destinations spread over the links.
    pub fn hashed_copy(&self, ports: &Ports, dst_nic: u32) -> u32 {
        (dst_nic / ports.nics_per_node) % self.copies()
    }

    /// The next hop toward `dst_nic`, through group `via` first unless it is [`NO_GROUP`]
    /// (minimal), over the parallel global links chosen by destination.
    pub fn route_via(&self, ports: &Ports, router: u32, dst_nic: u32, via: u32) -> Hop {
        self.route_copy(
            ports,
            router,
            dst_nic,
            via,
            self.hashed_copy(ports, dst_nic),
        )
    }

    /// The next hop toward `dst_nic`, through group `via` first unless it is [`NO_GROUP`],
    /// over parallel global link `copy` (`0..copies()`) between groups. The VC class is left
    /// to the caller (the global hops taken).
    pub fn route_copy(&self, ports: &Ports, router: u32, dst_nic: u32, via: u32, copy: u32) -> Hop {
        let (a, h, g) = (self.a, self.h, self.g);
        let base = ports.port_base[router as usize];
        let dst_port = ports.nic_port[dst_nic as usize];
        let dst_router = ports.port_router[dst_port as usize];
        let (grp, r) = (router / a, router % a);
        let target = if via != NO_GROUP { via } else { dst_router / a };
        let local_port = |to: u32| base + if to < r { to } else { to - 1 };
        if target == grp {
            if dst_router == router {
                return Hop {
                    port: dst_port,
                    class: 0,
                };
            }
            return Hop {
                port: local_port(dst_router % a),
                class: 0,
            };
        }
        // The global link to the target group: the packet's copy of the parallel ones.
        let o = if self.palmtree {
            (target + g - grp - 1) % g
        } else if target < grp {
            target
        } else {
            target - 1
        };
        let k = o * self.m + copy % self.copies();
        let (owner, j) = (k / h, k % h);
        if owner == r {
            Hop {
                port: base + (a - 1) + j,
                class: 0,
            }
        } else {
            Hop {
                port: local_port(owner),
                class: 0,
            }
        }
    }

    /// Router-to-router hops from `router` to the destination's router along a path over
    /// parallel global link `copy`.
    pub fn path_hops(
        &self,
        ports: &Ports,
        mut router: u32,
        dst_nic: u32,
        mut via: u32,
        copy: u32,
    ) -> u64 {
        let dst_router = ports.nic_router(dst_nic);
        let mut n = 0;
        while router != dst_router && n < 8 {
            if via != NO_GROUP && self.group_of(router) == via {
                via = NO_GROUP;
            }
            let hop = self.route_copy(ports, router, dst_nic, via, copy);
            match ports.peer[hop.port as usize] {
                Peer::Router(p) => router = ports.port_router[p as usize],
                _ => break,
            }
            n += 1;
        }
        n.max(1)
    }

    /// Whether a packet leaving group `here` for `dst_group` may take a non-minimal path:
    /// there must be a third group to go through.
    pub fn has_intermediate(&self, here: u32, dst_group: u32) -> bool {
        here != dst_group && self.g > 2
    }

    /// A random intermediate group, neither `here` nor `dst_group`.
    pub fn draw_intermediate(&self, here: u32, dst_group: u32, rng: &mut Rng) -> u32 {
        let mut v = rng.below(self.g as u64 - 2) as u32;
        for skip in [here.min(dst_group), here.max(dst_group)] {
            if v >= skip {
                v += 1;
            }
        }
        v
    }

    /// UGAL: the non-minimal path wins when the minimal one's queued bytes × hops exceed
    /// `threshold` times its own.
    pub fn ugal_goes_around(minimal: (u64, u64), nonminimal: (u64, u64), threshold: f64) -> bool {
        let ((qm, hm), (qn, hn)) = (minimal, nonminimal);
        (qm * hm) as f64 > threshold * (qn * hn) as f64
    }

    /// Local, global, local; twice over through an intermediate group.
    pub fn max_hops(&self) -> u32 {
        5
    }
}
