//! Topologies as flat arrays of routers and ports, and their routing functions.
//!
//! Routers, ports, NICs and directed links are dense integer ids. Every router port is the
//! start of one directed link (router -> peer); every NIC has one more (NIC -> router).
//! Link id `p` is router port `p`; link id `num_ports + nic` is the NIC's injection link.

use crate::error::{Error, Location, Result};
use crate::machine::config::MachineConfig;

/// What sits at the other end of a router port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// Another router's port (global port id).
    Router(u32),
    /// A NIC (global NIC id).
    Nic(u32),
    /// An unconnected port (e.g. the minus port of a mesh edge).
    None,
}

/// Link classes reported in the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkClass {
    /// Router to router (mesh, torus, trees).
    Network,
    /// Dragonfly: router to router inside a group.
    Local,
    /// Dragonfly: router to router between groups.
    Global,
    /// NIC to router (injection).
    Injection,
    /// Router to NIC (ejection).
    Ejection,
}

impl LinkClass {
    pub fn name(self) -> &'static str {
        match self {
            LinkClass::Network => "network",
            LinkClass::Local => "local",
            LinkClass::Global => "global",
            LinkClass::Injection => "injection",
            LinkClass::Ejection => "ejection",
        }
    }
}

/// Where a directed link delivers its packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkEnd {
    /// The input buffer of a router port (global port id).
    RouterIn(u32),
    /// The input buffer of a NIC.
    NicIn(u32),
}

/// The shape-specific part, used by routing and for naming.
#[derive(Debug, Clone)]
pub enum Shape {
    Crossbar,
    /// Mesh/torus: routers per dimension, wrap per dimension.
    Grid {
        dims: Vec<u32>,
        wrap: Vec<bool>,
        strides: Vec<u32>,
        /// Rings choose the VC class by route (`router.dateline = "route"`): class 1 for the
        /// whole ring when the route crosses the wrap-around link, else class 0.
        dateline_by_route: bool,
    },
    /// k-ary n-tree: `k^(n-1)` switches per level.
    FatTree {
        k: u32,
        n: u32,
        per_level: u32,
    },
    /// Two-level tree: leaves first, then spines.
    LeafSpine {
        leaves: u32,
        spines: u32,
        links_per_spine: u32,
    },
    /// Dragonfly: `g` groups of `a` routers with `p` nodes and `h` global links each; `m`
    /// global links per pair of groups, of which `wired` are populated.
    Dragonfly {
        p: u32,
        a: u32,
        h: u32,
        g: u32,
        m: u32,
        wired: u32,
        palmtree: bool,
    },
}

#[derive(Debug, Clone)]
pub struct Topology {
    pub shape: Shape,
    pub kind: String,
    pub num_routers: u32,
    pub num_nodes: u32,
    pub nics_per_node: u32,
    pub nodes_per_router: u32,
    /// Router r's ports are `port_base[r] .. port_base[r + 1]`.
    pub port_base: Vec<u32>,
    /// Peer of every global port.
    pub peer: Vec<Peer>,
    /// Router owning every global port.
    pub port_router: Vec<u32>,
    /// Global port each NIC attaches to.
    pub nic_port: Vec<u32>,
    /// Number of VC classes routing needs to stay deadlock-free.
    pub vc_classes: u8,
    /// Grids: the coordinates of every router (router r's are `coords[r * dims ..]`), so
    /// that routing a packet does not divide.
    coords: Vec<u32>,
}

/// A routing decision: output port (global id) and VC class on the next link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub port: u32,
    pub class: u8,
}

/// The size a topology will have, computed from the machine without building it (for the
/// memory estimate that decides whether a run can start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedSize {
    pub nodes: u64,
    pub nics: u64,
    pub routers: u64,
    /// Router ports (each the start of one directed link, when connected).
    pub ports: u64,
}

impl PlannedSize {
    /// Directed links: one per router port and one per NIC (its injection link).
    pub fn links(&self) -> u64 {
        self.ports + self.nics
    }
}

/// Nodes of the machine `config` describes, for a run that needs `ranks` nodes (crossbars
/// and leaf/spine trees without a fixed size grow to fit). Saturates instead of overflowing.
fn planned_nodes(config: &MachineConfig, ranks: u32) -> u64 {
    let t = &config.topology;
    match t.kind.as_str() {
        "crossbar" => t.nodes.unwrap_or(ranks.max(1)) as u64,
        "mesh" | "torus" => {
            let per_router = t.nodes_per_router.unwrap_or(1) as u64;
            let dims = t.dims.iter().flatten();
            dims.fold(per_router, |n, &d| n.saturating_mul(d as u64))
        }
        "fat_tree" => (t.k.unwrap_or(2) as u64).saturating_pow(t.n.unwrap_or(1)),
        "dragonfly" => {
            let (a, h) = (t.a.unwrap_or(1) as u64, t.h.unwrap_or(1) as u64);
            let g = t.g.map_or(a.saturating_mul(h) + 1, |g| g as u64);
            (t.p.unwrap_or(1) as u64)
                .saturating_mul(a)
                .saturating_mul(g)
        }
        _ => {
            let m = t.nodes_per_leaf.unwrap_or(1).max(1) as u64;
            t.leaves
                .map_or((ranks.max(1) as u64).div_ceil(m), |l| l as u64)
                .saturating_mul(m)
        }
    }
}

/// The size `Topology::build(config, ranks)` will have (ports exactly as built,
/// unconnected ones included). Saturates instead of overflowing.
pub fn planned_size(config: &MachineConfig, ranks: u32) -> PlannedSize {
    let t = &config.topology;
    let nodes = planned_nodes(config, ranks);
    let nics = nodes.saturating_mul(config.nic.count as u64);
    let (routers, network_ports) = match t.kind.as_str() {
        "crossbar" => (1, 0),
        "mesh" | "torus" => {
            let dims = t.dims.as_deref().unwrap_or(&[]);
            let routers = dims.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64));
            (routers, routers.saturating_mul(2 * dims.len() as u64))
        }
        "fat_tree" => {
            let (k, n) = (t.k.unwrap_or(2) as u64, t.n.unwrap_or(1));
            let per_level = k.saturating_pow(n.saturating_sub(1));
            // k down ports above level 0 and k up ports below the top: 2(n-1) k per column.
            let ports = per_level
                .saturating_mul(k)
                .saturating_mul(2 * (n as u64 - 1));
            (per_level.saturating_mul(n as u64), ports)
        }
        "dragonfly" => {
            let (a, h) = (t.a.unwrap_or(1) as u64, t.h.unwrap_or(1) as u64);
            let routers = nodes / t.p.unwrap_or(1).max(1) as u64;
            (routers, routers.saturating_mul(a - 1 + h))
        }
        _ => {
            let m = t.nodes_per_leaf.unwrap_or(1).max(1) as u64;
            let leaves = nodes / m;
            let spines = t.spines.unwrap_or(1) as u64;
            let up = leaves
                .saturating_mul(spines)
                .saturating_mul(t.links_per_spine.unwrap_or(1) as u64);
            (leaves + spines, up.saturating_mul(2))
        }
    };
    let ports = nics.saturating_add(network_ports);
    PlannedSize {
        nodes,
        nics,
        routers,
        ports,
    }
}

impl Topology {
    /// Bytes a topology of `size` takes.
    pub fn estimate_bytes(size: &PlannedSize) -> u64 {
        // Grids also keep up to 6 coordinates per router.
        size.ports * (std::mem::size_of::<Peer>() as u64 + 4) + size.routers * 28 + size.nics * 4
    }

    /// Builds the topology of `config`; `ranks` (nodes wanted) sizes the crossbar and
    /// leaf/spine trees that leave their size open. `sim::layout` checks the capacity.
    pub fn build(config: &MachineConfig, ranks: u32) -> Result<Topology> {
        let t = &config.topology;
        let nics = config.nic.count;
        let bad = |field: &str, msg: String| {
            Error::input(Location::file("machine").with_field(field), msg)
        };
        // Size check before building, in 64 bits, so nothing below can overflow.
        let nodes = planned_nodes(config, ranks);
        if nodes.saturating_mul(nics as u64) > 1 << 28 {
            // A crossbar or leaf/spine without a fixed size is as large as the run.
            let sized_by_run = (t.kind == "crossbar" && t.nodes.is_none())
                || (t.kind == "leaf_spine" && t.leaves.is_none());
            let msg = format!(
                "{nodes} nodes with {nics} NICs each is more than acesim supports (2^28 NICs)"
            );
            if sized_by_run {
                return Err(Error::input(
                    Location::file("command line").with_field("ranks"),
                    format!("{ranks} ranks need {nodes} nodes with {nics} NIC(s) each: more than acesim supports (2^28 NICs)"),
                ));
            }
            return Err(bad("nic.count", msg));
        }
        // Ports and links are numbered in 32 bits: check their count too (a leaf/spine with
        // many leaves and parallel links has far more ports than nodes).
        let ports = planned_size(config, ranks).ports;
        if ports.saturating_add(nodes * nics as u64) >= 1 << 32 {
            return Err(bad(
                "topology",
                format!("{ports} router ports is more than acesim supports (2^32 links)"),
            ));
        }
        let mut b = Builder::default();
        let shape = match t.kind.as_str() {
            "crossbar" => {
                let nodes = t.nodes.unwrap_or(ranks.max(1));
                b.nodes_per_router = nodes;
                b.add_router(nodes * nics);
                for node in 0..nodes {
                    for j in 0..nics {
                        b.attach_nic(node * nics + j, 0, node * nics + j);
                    }
                }
                b.num_nodes = nodes;
                Shape::Crossbar
            }
            "mesh" | "torus" => {
                let dims = t.dims.clone().unwrap_or_default();
                let wrap = t
                    .wrap
                    .clone()
                    .unwrap_or_else(|| vec![t.kind == "torus"; dims.len()]);
                let npr = t.nodes_per_router.unwrap_or(1);
                let mut strides = Vec::with_capacity(dims.len());
                let mut s = 1u32;
                for &d in &dims {
                    strides.push(s);
                    s = s
                        .checked_mul(d)
                        .ok_or_else(|| bad("topology.dims", "too many routers".into()))?;
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
                b.num_nodes = routers * npr;
                b.nodes_per_router = npr;
                if t.kind == "torus" || wrap.iter().any(|&w| w) {
                    b.vc_classes = 2;
                }
                Shape::Grid {
                    dims,
                    wrap,
                    strides,
                    dateline_by_route: config.router.dateline == "route",
                }
            }
            "fat_tree" => {
                let (k, n) = (t.k.unwrap_or(2), t.n.unwrap_or(1));
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
                b.num_nodes = per_level * k;
                b.nodes_per_router = k;
                Shape::FatTree { k, n, per_level }
            }
            "leaf_spine" => {
                let m = t.nodes_per_leaf.unwrap_or(1);
                let spines = t.spines.unwrap_or(1);
                let q = t.links_per_spine.unwrap_or(1);
                let leaves = t.leaves.unwrap_or_else(|| ranks.max(1).div_ceil(m));
                for _ in 0..leaves {
                    b.add_router(m * nics + spines * q);
                }
                for _ in 0..spines {
                    b.add_router(leaves * q);
                }
                for leaf in 0..leaves {
                    for s in 0..spines {
                        for link in 0..q {
                            b.connect(leaf, m * nics + s * q + link, leaves + s, leaf * q + link);
                        }
                    }
                    for i in 0..m {
                        for j in 0..nics {
                            let node = leaf * m + i;
                            b.attach_nic(node * nics + j, leaf, i * nics + j);
                        }
                    }
                }
                b.num_nodes = leaves * m;
                b.nodes_per_router = m;
                Shape::LeafSpine {
                    leaves,
                    spines,
                    links_per_spine: q,
                }
            }
            "dragonfly" => {
                let (p, a, h) = (t.p.unwrap_or(1), t.a.unwrap_or(1), t.h.unwrap_or(1));
                let g = t.g.unwrap_or(a * h + 1);
                let m = if g > 1 { a * h / (g - 1) } else { 0 };
                let wired = ((t.global_population.unwrap_or(1.0) * m as f64) + 1e-9).floor() as u32;
                let palmtree = t.arrangement.as_deref() == Some("palmtree");
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
                    // Global link k of the group is link j of router k / h.
                    for k in 0..(g - 1) * m {
                        let (o, c) = (k / m, k % m);
                        if c >= wired {
                            continue;
                        }
                        let (t2, o2) = if palmtree {
                            ((grp + o + 1) % g, g - 2 - o)
                        } else {
                            (
                                if o < grp { o } else { o + 1 },
                                if grp < (if o < grp { o } else { o + 1 }) {
                                    grp
                                } else {
                                    grp - 1
                                },
                            )
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
                b.num_nodes = g * a * p;
                b.nodes_per_router = p;
                b.vc_classes = 3;
                Shape::Dragonfly {
                    p,
                    a,
                    h,
                    g,
                    m,
                    wired,
                    palmtree,
                }
            }
            other => return Err(bad("topology.kind", format!("unknown topology '{other}'"))),
        };
        Ok(b.finish(shape, t.kind.clone(), nics))
    }

    pub fn num_ports(&self) -> u32 {
        self.peer.len() as u32
    }
    pub fn num_nics(&self) -> u32 {
        self.nic_port.len() as u32
    }
    pub fn num_links(&self) -> u32 {
        self.num_ports() + self.num_nics()
    }
    #[inline]
    pub fn nic_node(&self, nic: u32) -> u32 {
        // Most nodes have one NIC: no division then (it is on every packet's path).
        if self.nics_per_node == 1 {
            nic
        } else {
            nic / self.nics_per_node
        }
    }
    pub fn node_nic(&self, node: u32, index: u32) -> u32 {
        node * self.nics_per_node + index
    }
    /// The router a NIC is attached to.
    pub fn nic_router(&self, nic: u32) -> u32 {
        self.port_router[self.nic_port[nic as usize] as usize]
    }

    /// Where link `link` delivers packets, or `None` for an unconnected port.
    pub fn link_end(&self, link: u32) -> Option<LinkEnd> {
        let np = self.num_ports();
        if link >= np {
            return Some(LinkEnd::RouterIn(self.nic_port[(link - np) as usize]));
        }
        match self.peer[link as usize] {
            Peer::Router(p) => Some(LinkEnd::RouterIn(p)),
            Peer::Nic(n) => Some(LinkEnd::NicIn(n)),
            Peer::None => None,
        }
    }

    /// The link that feeds the input buffer of router port `port`.
    pub fn link_into_port(&self, port: u32) -> Option<u32> {
        match self.peer[port as usize] {
            Peer::Router(p) => Some(p),
            Peer::Nic(n) => Some(self.num_ports() + n),
            Peer::None => None,
        }
    }

    pub fn link_class(&self, link: u32) -> LinkClass {
        let np = self.num_ports();
        if link >= np {
            LinkClass::Injection
        } else if let Peer::Nic(_) = self.peer[link as usize] {
            LinkClass::Ejection
        } else if let Shape::Dragonfly { a, .. } = self.shape {
            let local = link - self.port_base[self.port_router[link as usize] as usize];
            if local < a - 1 {
                LinkClass::Local
            } else {
                LinkClass::Global
            }
        } else {
            LinkClass::Network
        }
    }

    /// Dragonfly: the group of a router.
    pub fn group_of(&self, router: u32) -> u32 {
        match self.shape {
            Shape::Dragonfly { a, .. } => router / a,
            _ => 0,
        }
    }

    /// Dragonfly: the next hop toward `dst_nic`, through group `via` first unless it is
    /// `u32::MAX` (minimal). The VC class is left to the caller (global hops taken).
    pub fn route_dragonfly(&self, router: u32, dst_nic: u32, via: u32) -> Hop {
        let Shape::Dragonfly {
            a,
            h,
            g,
            m,
            wired,
            palmtree,
            ..
        } = self.shape
        else {
            return self.route(router, 0, dst_nic);
        };
        let base = self.port_base[router as usize];
        let dst_port = self.nic_port[dst_nic as usize];
        let dst_router = self.port_router[dst_port as usize];
        let (grp, r) = (router / a, router % a);
        let target = if via != u32::MAX { via } else { dst_router / a };
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
        // The global link to the target group: copy chosen by destination to spread load.
        let o = if palmtree {
            (target + g - grp - 1) % g
        } else if target < grp {
            target
        } else {
            target - 1
        };
        let c = (dst_nic / self.nics_per_node) % wired.max(1);
        let k = o * m + c;
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

    /// The most router-to-router hops any route takes (its diameter along the routing
    /// function): dimension order on grids, up/down on trees, and on a dragonfly
    /// local-global-local, twice over through an intermediate group when not minimal.
    pub fn max_route_hops(&self) -> u32 {
        match &self.shape {
            Shape::Crossbar => 0,
            Shape::Grid { dims, wrap, .. } => dims
                .iter()
                .zip(wrap)
                .map(|(&k, &w)| if w { k / 2 } else { k.saturating_sub(1) })
                .sum(),
            Shape::FatTree { n, .. } => 2 * n.saturating_sub(1),
            Shape::LeafSpine { .. } => 2,
            Shape::Dragonfly { .. } => 5,
        }
    }

    /// Human-readable name of a directed link: `r3.p1->r4`, `nic5->r2`, `r2->nic5`.
    pub fn link_name(&self, link: u32) -> String {
        let np = self.num_ports();
        if link >= np {
            let nic = link - np;
            return format!("nic{}->r{}", nic, self.nic_router(nic));
        }
        let r = self.port_router[link as usize];
        let local = link - self.port_base[r as usize];
        match self.peer[link as usize] {
            Peer::Router(p) => format!("r{}.p{}->r{}", r, local, self.port_router[p as usize]),
            Peer::Nic(n) => format!("r{r}.p{local}->nic{n}"),
            Peer::None => format!("r{r}.p{local}->none"),
        }
    }

    /// Routes a packet for `dst_nic` (coming from `src_nic`) at `router`.
    pub fn route(&self, router: u32, src_nic: u32, dst_nic: u32) -> Hop {
        let (src_router, dst_router) = (self.nic_router(src_nic), self.nic_router(dst_nic));
        self.route_between(router, src_router, dst_router, dst_nic)
    }

    /// `route` for a packet that knows the routers of its source and destination NICs
    /// (saves two lookups a hop).
    pub fn route_between(
        &self,
        router: u32,
        src_router: u32,
        dst_router: u32,
        dst_nic: u32,
    ) -> Hop {
        if dst_router == router {
            return Hop {
                port: self.nic_port[dst_nic as usize],
                class: 0,
            };
        }
        let base = self.port_base[router as usize];
        match &self.shape {
            Shape::Dragonfly { .. } => self.route_dragonfly(router, dst_nic, u32::MAX),
            Shape::Crossbar => Hop {
                port: self.nic_port[dst_nic as usize],
                class: 0,
            },
            Shape::Grid {
                dims,
                wrap,
                dateline_by_route,
                ..
            } => {
                let n = dims.len();
                let here = &self.coords[router as usize * n..][..n];
                let there = &self.coords[dst_router as usize * n..][..n];
                for (d, &size) in dims.iter().enumerate() {
                    let (c, t) = (here[d], there[d]);
                    if c == t {
                        continue;
                    }
                    let s = self.coords[src_router as usize * n + d];
                    // Coordinates are below `size`: wrap around by comparing, not dividing.
                    // Written as selects, not branches: the direction is data, not a pattern
                    // a branch predictor learns.
                    let w = wrap[d];
                    let fwd = if t > c { t - c } else { t + size - c };
                    // Shortest direction; ties go plus so the choice is deterministic.
                    let plus = if w { fwd <= size - fwd } else { t > c };
                    // Dateline: once a packet has wrapped in this dimension it uses class 1
                    // (`crossing`); or, `route`, class 1 on every hop of this dimension when
                    // its route wraps: the packet entered the dimension at `s` (DOR changes
                    // one coordinate at a time) and goes plus to `t < s` or minus to `t > s`.
                    let up = if c + 1 == size { 0 } else { c + 1 };
                    let down = if c == 0 { size - 1 } else { c - 1 };
                    let next = if plus { up } else { down };
                    let (from, to) = if *dateline_by_route {
                        (t, s)
                    } else {
                        (next, s)
                    };
                    let wrapped = w & if plus { from < to } else { from > to };
                    let local = 2 * d as u32 + (!plus) as u32;
                    return Hop {
                        port: base + local,
                        class: wrapped as u8,
                    };
                }
                unreachable!("a packet at a router other than its destination has a dimension left")
            }
            Shape::FatTree { k, n, per_level } => {
                let (k, n, per_level) = (*k, *n, *per_level);
                let level = router / per_level;
                let w = router % per_level;
                let dst_node = self.nic_node(dst_nic);
                let digit = |x: u32, i: u32| (x / k.pow(i)) % k;
                // This switch reaches dst downwards when digits level..n-2 of its index match
                // digits level+1..n-1 of the destination node.
                let covers = (level..n - 1).all(|j| digit(w, j) == digit(dst_node, j + 1));
                if covers {
                    // Going down from level l changes index digit l-1 to node digit l.
                    Hop {
                        port: base + digit(dst_node, level),
                        class: 0,
                    }
                } else {
                    // Up, spreading destinations over the up ports (d-mod-k); with
                    // `router.routing = "random"` the network draws the up port instead
                    // (`Network::route`).
                    let down = if level == 0 {
                        k * self.nics_per_node
                    } else {
                        k
                    };
                    Hop {
                        port: base + down + digit(dst_node, level),
                        class: 0,
                    }
                }
            }
            Shape::LeafSpine {
                leaves,
                spines,
                links_per_spine,
            } => {
                let dst_node = self.nic_node(dst_nic);
                let q = *links_per_spine;
                let link = (dst_node / spines) % q;
                if router < *leaves {
                    let m_nics = self.nodes_per_router * self.nics_per_node;
                    let s = dst_node % spines;
                    Hop {
                        port: base + m_nics + s * q + link,
                        class: 0,
                    }
                } else {
                    Hop {
                        port: base + dst_router * q + link,
                        class: 0,
                    }
                }
            }
        }
    }
}

#[derive(Default)]
struct Builder {
    port_base: Vec<u32>,
    peer: Vec<Peer>,
    port_router: Vec<u32>,
    nic_port: Vec<(u32, u32)>,
    num_nodes: u32,
    nodes_per_router: u32,
    vc_classes: u8,
}

impl Builder {
    fn add_router(&mut self, ports: u32) {
        let r = self.port_base.len() as u32;
        self.port_base.push(self.peer.len() as u32);
        for _ in 0..ports {
            self.peer.push(Peer::None);
            self.port_router.push(r);
        }
    }
    fn global(&self, router: u32, local: u32) -> u32 {
        self.port_base[router as usize] + local
    }
    fn connect(&mut self, r1: u32, p1: u32, r2: u32, p2: u32) {
        let (g1, g2) = (self.global(r1, p1), self.global(r2, p2));
        self.peer[g1 as usize] = Peer::Router(g2);
        self.peer[g2 as usize] = Peer::Router(g1);
    }
    fn attach_nic(&mut self, nic: u32, router: u32, local: u32) {
        let g = self.global(router, local);
        self.peer[g as usize] = Peer::Nic(nic);
        self.nic_port.push((nic, g));
    }
    fn finish(mut self, shape: Shape, kind: String, nics: u32) -> Topology {
        self.nic_port.sort_unstable();
        let num_routers = self.port_base.len() as u32;
        self.port_base.push(self.peer.len() as u32);
        let mut topo = Topology {
            shape,
            kind,
            num_routers,
            num_nodes: self.num_nodes,
            nics_per_node: nics,
            nodes_per_router: self.nodes_per_router,
            port_base: self.port_base,
            peer: self.peer,
            port_router: self.port_router,
            nic_port: self.nic_port.into_iter().map(|(_, p)| p).collect(),
            vc_classes: self.vc_classes.max(1),
            coords: Vec::new(),
        };
        if let Shape::Grid { dims, strides, .. } = &topo.shape {
            topo.coords = (0..num_routers)
                .flat_map(|r| {
                    dims.iter()
                        .zip(strides)
                        .map(move |(&size, &st)| (r / st) % size)
                })
                .collect();
        }
        topo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::config::MachineSource;

    fn topo(toml: &str, ranks: u32) -> Topology {
        let c = MachineSource::from_text("t", toml).load().unwrap();
        Topology::build(&c, ranks).unwrap()
    }

    /// Follows the routing function from src to dst and returns the routers visited.
    pub(crate) fn walk(t: &Topology, src: u32, dst: u32) -> Vec<u32> {
        let mut r = t.nic_router(src);
        let mut path = vec![r];
        for _ in 0..10_000 {
            let hop = t.route(r, src, dst);
            assert_eq!(
                t.port_router[hop.port as usize], r,
                "route left from a foreign port"
            );
            match t.peer[hop.port as usize] {
                Peer::Nic(n) => {
                    assert_eq!(n, dst);
                    return path;
                }
                Peer::Router(p) => {
                    r = t.port_router[p as usize];
                    path.push(r);
                }
                Peer::None => panic!("routed to an unconnected port"),
            }
        }
        panic!("route did not terminate");
    }

    #[test]
    fn port_count_is_what_build_creates() {
        let machines = [
            ("[topology]\nkind = \"crossbar\"\n[nic]\ncount = 3", 5),
            ("[topology]\nkind = \"crossbar\"\nnodes = 7", 2),
            ("[topology]\nkind = \"mesh\"\ndims = [3, 2]\nnodes_per_router = 2", 4),
            ("[topology]\nkind = \"torus\"\ndims = [4, 1, 3]\n[nic]\ncount = 2", 4),
            ("[topology]\nkind = \"fat_tree\"\nk = 2\nn = 1", 2),
            ("[topology]\nkind = \"fat_tree\"\nk = 3\nn = 3\n[nic]\ncount = 2", 9),
            ("[topology]\nkind = \"leaf_spine\"\nnodes_per_leaf = 3\nspines = 2\nlinks_per_spine = 2", 7),
            ("[topology]\nkind = \"leaf_spine\"\nleaves = 2\nnodes_per_leaf = 1\nspines = 3", 2),
            ("[topology]\nkind = \"dragonfly\"\np = 2\na = 3\nh = 1\n[router]\nvcs = 3", 8),
            ("[topology]\nkind = \"dragonfly\"\np = 1\na = 1\nh = 2\ng = 2", 2),
        ];
        for (toml, ranks) in machines {
            let c = MachineSource::from_text("t", toml).load().unwrap();
            let t = Topology::build(&c, ranks).unwrap();
            assert_eq!(
                planned_size(&c, ranks).ports,
                t.num_ports() as u64,
                "{toml}"
            );
        }
    }

    #[test]
    fn too_many_ports_is_an_input_error() {
        // Fewer than 2^28 nodes, but 2^28 leaves with 2^16 ports each: the port numbers
        // would not fit in 32 bits (found while writing the fuzz targets).
        let c = MachineSource::from_text(
            "t",
            "[topology]\nkind = \"leaf_spine\"\nleaves = 268435456\nnodes_per_leaf = 1\nspines = 32767\nlinks_per_spine = 2",
        )
        .load()
        .unwrap();
        let e = Topology::build(&c, 8).unwrap_err().to_string();
        assert!(
            e.contains("router ports is more than acesim supports"),
            "{e}"
        );
        // A 2^28-node binary fat tree has 28 levels of 2^27 switches with 4 ports.
        let c = MachineSource::from_text("t", "[topology]\nkind = \"fat_tree\"\nk = 2\nn = 28")
            .load()
            .unwrap();
        assert_eq!(
            planned_size(&c, 1).ports,
            (1 << 29) + 27 * (1 << 29) - (1 << 28)
        );
        assert!(Topology::build(&c, 1).is_err());
    }

    #[test]
    fn torus_routes_are_minimal_and_reach_destination() {
        let t = topo("[topology]\nkind='torus'\ndims=[5,4,3]", 60);
        assert_eq!(t.num_nodes, 60);
        for s in 0..60 {
            for d in 0..60 {
                let path = walk(&t, s, d);
                let hops: u32 = [(5u32, 1u32), (4, 5), (3, 20)]
                    .iter()
                    .map(|&(n, st)| {
                        let (a, b) = ((s / st) % n, (d / st) % n);
                        let f = (b + n - a) % n;
                        f.min(n - f)
                    })
                    .sum();
                assert_eq!(path.len() as u32 - 1, hops, "{s}->{d}: {path:?}");
            }
        }
    }

    #[test]
    fn mesh_and_fat_tree_and_leaf_spine_route_everywhere() {
        let mesh = topo(
            "[topology]\nkind='mesh'\ndims=[4,3]\nnodes_per_router=2",
            24,
        );
        let ft = topo("[topology]\nkind='fat_tree'\nk=3\nn=3", 27);
        let ls = topo(
            "[topology]\nkind='leaf_spine'\nnodes_per_leaf=4\nspines=3\nlinks_per_spine=2",
            16,
        );
        let df = topo("[topology]\nkind='dragonfly'\np=2\na=4\nh=2", 1);
        let df_palm = topo(
            "[topology]\nkind='dragonfly'\np=1\na=3\nh=2\ng=4\narrangement='palmtree'",
            1,
        );
        for t in [&df, &df_palm] {
            for s in 0..t.num_nics() {
                for d in 0..t.num_nics() {
                    // Minimal: at most local, global, local.
                    assert!(walk(t, s, d).len() <= 4, "{s}->{d}");
                }
            }
        }
        assert_eq!(df.num_routers, 4 * 9);
        // Every global port of a full dragonfly is wired, and exactly once.
        let globals = (0..df.num_ports())
            .filter(|&p| df.link_class(p) == LinkClass::Global)
            .count();
        assert_eq!(globals, 9 * 4 * 2);
        assert!((0..df.num_ports())
            .filter(|&p| df.link_class(p) == LinkClass::Global)
            .all(|p| matches!(df.peer[p as usize], Peer::Router(_))));
        for t in [&mesh, &ft, &ls] {
            for s in 0..t.num_nics() {
                for d in 0..t.num_nics() {
                    let p = walk(t, s, d);
                    let mut seen = p.clone();
                    seen.sort_unstable();
                    seen.dedup();
                    assert_eq!(seen.len(), p.len(), "route revisits a router: {p:?}");
                }
            }
        }
        // Fat tree: nodes on one leaf meet at level 0; others climb to the common ancestor.
        assert_eq!(walk(&ft, 0, 1).len(), 1);
        assert_eq!(walk(&ft, 0, 3).len(), 3);
        assert_eq!(walk(&ft, 0, 26).len(), 5);
        assert_eq!(walk(&ls, 0, 5).len(), 3);
        assert_eq!(ls.num_routers, 4 + 3);
    }

    #[test]
    fn crossbar_sizes_to_ranks() {
        let t = topo("[topology]\nkind='crossbar'", 8);
        assert_eq!((t.num_routers, t.num_nodes, t.num_ports()), (1, 8, 8));
        assert_eq!(walk(&t, 2, 5), vec![0]);
    }
}
