//! A built topology: the port arrays, the shape that routes on them, and what every
//! model asks of a topology (link classes and names, routes, sizes).

use super::ports::{Builder, Hop, LinkClass, LinkEnd, Peer, PlannedSize, Ports};
use super::shape::Shape;
use crate::error::{Error, Location, Result};
use crate::machine::loaded::Machine;
use compact_str::{format_compact, CompactString};

#[derive(Debug, Clone)]
pub struct Topology {
    pub shape: Shape,
    pub ports: Ports,
    pub num_routers: u32,
    pub num_nodes: u32,
    /// Number of VC classes routing needs to stay deadlock-free.
    pub vc_classes: u8,
    /// The most router-to-router hops a route takes with the machine's routing.
    max_hops: u32,
}

/// The size `Topology::build(machine, ranks)` will have, without building it.
pub fn planned_size(machine: &Machine, ranks: u32) -> PlannedSize {
    machine.topology.planned_size(ranks, machine.nic.count)
}

impl Topology {
    /// Bytes a topology of `size` takes.
    pub fn estimate_bytes(size: &PlannedSize) -> u64 {
        // Grids also keep up to 6 coordinates per router (fat trees a level and an index).
        size.ports * (std::mem::size_of::<Peer>() as u64 + 4) + size.routers * 28 + size.nics * 4
    }

    /// Builds the topology of `machine`; `ranks` (nodes wanted) sizes the crossbar and
    /// leaf/spine trees that leave their size open. `run::simulate::layout` checks the
    /// capacity.
    pub fn build(machine: &Machine, ranks: u32) -> Result<Topology> {
        let spec = &machine.topology;
        let nics = machine.nic.count;
        let bad = |field: &str, msg: String| {
            Error::input(Location::file("machine").with_field(field), msg)
        };
        // Size check before building, in 64 bits, so nothing below can overflow.
        let nodes = spec.planned_nodes(ranks);
        if nodes.saturating_mul(nics as u64) > 1 << 28 {
            let msg = format!(
                "{nodes} nodes with {nics} NICs each is more than acesim supports (2^28 NICs)"
            );
            // A crossbar or leaf/spine without a fixed size is as large as the run.
            if spec.sized_by_run() {
                return Err(Error::input(
                    Location::file("command line").with_field("ranks"),
                    format!("{ranks} ranks need {nodes} nodes with {nics} NIC(s) each: more than acesim supports (2^28 NICs)"),
                ));
            }
            return Err(bad("nic.count", msg));
        }
        // Ports and links are numbered in 32 bits: check their count too (a leaf/spine with
        // many leaves and parallel links has far more ports than nodes).
        let ports = spec.planned_size(ranks, nics).ports;
        if ports.saturating_add(nodes * nics as u64) >= 1 << 32 {
            return Err(bad(
                "topology",
                format!("{ports} router ports is more than acesim supports (2^32 links)"),
            ));
        }
        let mut b = Builder::default();
        let built = spec.build(ranks, nics, machine.dateline, &mut b);
        let num_routers = b.num_routers();
        Ok(Topology {
            ports: b.finish(nics, built.nodes_per_router),
            num_routers,
            num_nodes: built.nodes,
            vc_classes: built.shape.vc_classes_with(machine.routing).max(1),
            max_hops: built.shape.max_route_hops_with(machine.routing),
            shape: built.shape,
        })
    }

    /// The kind's name (`torus`, `dragonfly`, ...).
    pub fn kind(&self) -> &'static str {
        match &self.shape {
            Shape::Crossbar => "crossbar",
            Shape::Grid(g) if g.torus => "torus",
            Shape::Grid(_) => "mesh",
            Shape::FatTree(_) => "fat_tree",
            Shape::LeafSpine(_) => "leaf_spine",
            Shape::Dragonfly(_) => "dragonfly",
            Shape::HyperX(_) => "hyperx",
            Shape::SlimFly(_) => "slimfly",
            Shape::Graph(_) => "graph",
        }
    }

    pub fn num_ports(&self) -> u32 {
        self.ports.peer.len() as u32
    }
    pub fn num_nics(&self) -> u32 {
        self.ports.nic_port.len() as u32
    }
    pub fn num_links(&self) -> u32 {
        self.num_ports() + self.num_nics()
    }
    pub fn nics_per_node(&self) -> u32 {
        self.ports.nics_per_node
    }
    pub fn nodes_per_router(&self) -> u32 {
        self.ports.nodes_per_router
    }
    #[inline]
    pub fn nic_node(&self, nic: u32) -> u32 {
        self.ports.nic_node(nic)
    }
    pub fn node_nic(&self, node: u32, index: u32) -> u32 {
        node * self.ports.nics_per_node + index
    }
    /// The router a NIC is attached to.
    #[inline]
    pub fn nic_router(&self, nic: u32) -> u32 {
        self.ports.nic_router(nic)
    }

    /// The router link `link` leaves from: its port's router, or for a NIC's link (the
    /// links past the ports) the NIC's router.
    pub fn link_router(&self, link: u32) -> u32 {
        match link.checked_sub(self.num_ports()) {
            None => self.ports.port_router[link as usize],
            Some(nic) => self.nic_router(nic),
        }
    }

    /// Where link `link` delivers packets, or `None` for an unconnected port.
    pub fn link_end(&self, link: u32) -> Option<LinkEnd> {
        let np = self.num_ports();
        if link >= np {
            return Some(LinkEnd::RouterIn(self.ports.nic_port[(link - np) as usize]));
        }
        match self.ports.peer[link as usize] {
            Peer::Router(p) => Some(LinkEnd::RouterIn(p)),
            Peer::Nic(n) => Some(LinkEnd::NicIn(n)),
            Peer::None => None,
        }
    }

    /// The link that feeds the input buffer of router port `port`.
    pub fn link_into_port(&self, port: u32) -> Option<u32> {
        match self.ports.peer[port as usize] {
            Peer::Router(p) => Some(p),
            Peer::Nic(n) => Some(self.num_ports() + n),
            Peer::None => None,
        }
    }

    pub fn link_class(&self, link: u32) -> LinkClass {
        let np = self.num_ports();
        if link >= np {
            LinkClass::Injection
        } else if let Peer::Nic(_) = self.ports.peer[link as usize] {
            LinkClass::Ejection
        } else if let Shape::Dragonfly(d) = &self.shape {
            let local = link - self.ports.port_base[self.ports.port_router[link as usize] as usize];
            if d.is_global_port(local) {
                LinkClass::Global
            } else {
                LinkClass::Local
            }
        } else {
            LinkClass::Network
        }
    }

    /// The link's kind: its index into `network::link_kinds` (its class, or on a graph a
    /// link with its own timing).
    #[inline]
    pub fn link_kind(&self, link: u32) -> u8 {
        match &self.shape {
            Shape::Graph(g) if link < self.num_ports() => g.port_kind(link),
            _ => self.link_class(link) as u8,
        }
    }

    /// Dragonfly: the group of a router (0 on other topologies).
    pub fn group_of(&self, router: u32) -> u32 {
        match &self.shape {
            Shape::Dragonfly(d) => d.group_of(router),
            _ => 0,
        }
    }

    /// The most router-to-router hops any route takes (its diameter along the routing
    /// function): dimension order on grids, up/down on trees, and on a dragonfly
    /// local-global-local, twice over through an intermediate group when not minimal.
    pub fn max_route_hops(&self) -> u32 {
        self.max_hops
    }

    /// Human-readable name of a directed link: `r3.p1->r4`, `nic5->r2`, `r2->nic5`.
    pub fn link_name(&self, link: u32) -> CompactString {
        let np = self.num_ports();
        if link >= np {
            let nic = link - np;
            return format_compact!("nic{}->r{}", nic, self.nic_router(nic));
        }
        let r = self.ports.port_router[link as usize];
        let local = link - self.ports.port_base[r as usize];
        match self.ports.peer[link as usize] {
            Peer::Router(p) => {
                format_compact!("r{}.p{}->r{}", r, local, self.ports.port_router[p as usize])
            }
            Peer::Nic(n) => format_compact!("r{r}.p{local}->nic{n}"),
            Peer::None => format_compact!("r{r}.p{local}->none"),
        }
    }

    /// Routes a packet for `dst_nic` (coming from `src_nic`) at `router`.
    pub fn route(&self, router: u32, src_nic: u32, dst_nic: u32) -> Hop {
        let (src_router, dst_router) = (self.nic_router(src_nic), self.nic_router(dst_nic));
        self.route_between(router, src_router, dst_router, dst_nic)
    }

    /// `route` for a packet that knows the routers of its source and destination NICs
    /// (saves two lookups a hop): the shape's minimal, deterministic route.
    #[inline(always)]
    pub fn route_between(
        &self,
        router: u32,
        src_router: u32,
        dst_router: u32,
        dst_nic: u32,
    ) -> Hop {
        // Meshes and tori in place (a packet's every hop asks), the other shapes out of line.
        match &self.shape {
            Shape::Grid(g) if dst_router != router => g.route(
                self.ports.port_base[router as usize],
                router,
                src_router,
                dst_router,
            ),
            _ => self.route_by_shape(router, src_router, dst_router, dst_nic),
        }
    }

    #[inline(never)]
    fn route_by_shape(&self, router: u32, src_router: u32, dst_router: u32, dst_nic: u32) -> Hop {
        if dst_router == router {
            return Hop {
                port: self.ports.nic_port[dst_nic as usize],
                class: 0,
            };
        }
        let base = self.ports.port_base[router as usize];
        match &self.shape {
            Shape::Dragonfly(d) => d.route_via(&self.ports, router, dst_nic, u32::MAX),
            // Every NIC of a crossbar is on its one router (handled above).
            Shape::Crossbar => Hop {
                port: self.ports.nic_port[dst_nic as usize],
                class: 0,
            },
            Shape::Grid(g) => g.route(base, router, src_router, dst_router),
            Shape::FatTree(f) => f.route(&self.ports, base, router, dst_nic),
            Shape::LeafSpine(l) => l.route(&self.ports, base, router, dst_router, dst_nic),
            Shape::HyperX(h) => h.route(base, router, dst_router),
            // The class (hops taken) comes from the packet (`network::packet::routing`).
            Shape::SlimFly(s) => s.route(base, router, dst_router, 0),
            Shape::Graph(g) => g.route(base, router, dst_router),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::load::MachineSource;

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
                t.ports.port_router[hop.port as usize], r,
                "route left from a foreign port"
            );
            match t.ports.peer[hop.port as usize] {
                Peer::Nic(n) => {
                    assert_eq!(n, dst);
                    return path;
                }
                Peer::Router(p) => {
                    r = t.ports.port_router[p as usize];
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
            ("[topology]\nkind = \"hyperx\"\ndims = [4, 3, 2]\nnodes_per_router = 2", 48),
            ("[topology]\nkind = \"hyperx\"\ndims = [5]\n[nic]\ncount = 2", 5),
            ("[topology]\nkind = \"slimfly\"\nq = 5", 200),
            ("[topology]\nkind = \"slimfly\"\nq = 3\nnodes_per_router = 1\n[nic]\ncount = 2", 18),
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

    /// A fat tree's route at every switch to every NIC, worked digit by digit as the
    /// up/down rule states it (d-mod-k up, the node's digit down), against the route
    /// the topology computes with its powers of k.
    #[test]
    fn fat_tree_routes_follow_the_digits() {
        for (k, n, nics, t) in fat_trees() {
            let Shape::FatTree(f) = &t.shape else {
                panic!("a fat tree")
            };
            let digit = |x: u32, i: u32| (x / k.pow(i)) % k;
            for router in 0..t.num_routers {
                let (level, w) = (router / f.per_level, router % f.per_level);
                let base = t.ports.port_base[router as usize];
                for dst_nic in 0..t.num_nics() {
                    let dst_router = t.nic_router(dst_nic);
                    if dst_router == router {
                        continue;
                    }
                    let node = t.ports.nic_node(dst_nic);
                    let covers = (level..n - 1).all(|j| digit(w, j) == digit(node, j + 1));
                    let down = match (covers, level) {
                        (true, _) => 0,
                        (false, 0) => k * nics,
                        (false, _) => k,
                    };
                    let want = base + down + digit(node, level);
                    let hop = t.route_between(router, router, dst_router, dst_nic);
                    assert_eq!(
                        hop.port, want,
                        "k={k} n={n} router {router} to NIC {dst_nic}"
                    );
                }
            }
        }
    }

    /// Six k-ary n-trees (k, n, NICs a node, the tree), from one level to four.
    fn fat_trees() -> impl Iterator<Item = (u32, u32, u32, Topology)> {
        [
            (2u32, 1u32, 1u32),
            (2, 4, 1),
            (3, 3, 1),
            (4, 2, 2),
            (5, 3, 1),
            (3, 4, 2),
        ]
        .into_iter()
        .map(|(k, n, nics)| {
            let toml = format!("[topology]\nkind='fat_tree'\nk={k}\nn={n}\n[nic]\ncount={nics}");
            (k, n, nics, topo(&toml, 1))
        })
    }

    /// The ports a message from NIC `src` to NIC `dst` leaves routers by, following the
    /// routing function over the wiring hop by hop; `choose` may replace each hop.
    fn walk_ports(
        t: &Topology,
        (src, dst): (u32, u32),
        choose: impl Fn(u32, Hop) -> Hop,
    ) -> Vec<u32> {
        let (mut ports, mut router) = (Vec::new(), t.nic_router(src));
        loop {
            let hop = choose(router, t.route(router, src, dst));
            ports.push(hop.port);
            match t.ports.peer[hop.port as usize] {
                Peer::Router(p) => router = t.ports.port_router[p as usize],
                _ => return ports,
            }
        }
    }

    /// A mesh's or torus's whole path written at once is the walk of dimension order
    /// over the wiring, between every two NICs of different nodes.
    #[test]
    fn grid_paths_are_the_walk_of_dimension_order() {
        for (kind, dims, npr) in [
            ("torus", "[5]", 1u32),
            ("torus", "[4,3]", 2),
            ("torus", "[2,5,4]", 1),
            ("mesh", "[4,3]", 1),
            ("mesh", "[3,1,4]", 2),
            ("torus", "[6,6]", 1),
        ] {
            let t = topo(
                &format!("[topology]\nkind='{kind}'\ndims={dims}\nnodes_per_router={npr}"),
                1,
            );
            let Shape::Grid(g) = &t.shape else {
                panic!("a grid")
            };
            for src in 0..t.num_nics() {
                for dst in 0..t.num_nics() {
                    if t.ports.nic_node(src) == t.ports.nic_node(dst) {
                        continue;
                    }
                    let walked = walk_ports(&t, (src, dst), |_, hop| hop);
                    let mut path = Vec::new();
                    let ends = (t.nic_router(src), t.nic_router(dst));
                    let hops = g.path(&t.ports, ends, dst, &mut path);
                    assert_eq!(path, walked, "{kind} {dims}: NIC {src} to {dst}");
                    assert_eq!(hops as usize, walked.len() - 1);
                }
            }
        }
    }

    /// A fat tree's whole path written from the digits is the walk of the routing function
    /// over the wiring, hop by hop, between every two NICs of different nodes, with the
    /// d-mod-k up port and with any other up port chosen the same way on both.
    #[test]
    fn fat_tree_paths_are_the_walk_of_the_routing_function() {
        for (k, n, _, t) in fat_trees() {
            let Shape::FatTree(f) = &t.shape else {
                panic!("a fat tree")
            };
            // An up port that is not d-mod-k's, from the router's first up port and the
            // destination.
            let other = |first: u32, dst: u32| first + (first * 7 + dst * 3) % k;
            for src in 0..t.num_nics() {
                for dst in 0..t.num_nics() {
                    if t.ports.nic_node(src) == t.ports.nic_node(dst) {
                        continue;
                    }
                    for choose in [false, true] {
                        let walked = walk_ports(&t, (src, dst), |router, hop| {
                            match (choose, f.up_ports(&t.ports, router, hop)) {
                                (true, Some(first)) => Hop {
                                    port: other(first, dst),
                                    ..hop
                                },
                                _ => hop,
                            }
                        });
                        let mut path = Vec::new();
                        let hops = f.path(
                            &t.ports,
                            (t.ports.nic_node(src), dst),
                            |first, hop| match choose {
                                true => Hop {
                                    port: other(first, dst),
                                    ..hop
                                },
                                false => hop,
                            },
                            &mut path,
                        );
                        assert_eq!(path, walked, "k={k} n={n} NIC {src} to {dst}");
                        assert_eq!(hops as usize, walked.len() - 1);
                    }
                }
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
            .all(|p| matches!(df.ports.peer[p as usize], Peer::Router(_))));
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
    fn hyperx_links_every_pair_of_a_dimension_and_routes_minimally() {
        let t = topo(
            "[topology]\nkind='hyperx'\ndims=[4,3,2]\nnodes_per_router=2",
            48,
        );
        assert_eq!((t.num_routers, t.num_nodes), (24, 48));
        // Every router port is wired, to a router differing in exactly one coordinate,
        // and each such router is reached by exactly one port.
        let coords = |r: u32| [r % 4, (r / 4) % 3, r / 12];
        for r in 0..24 {
            let (base, end) = (
                t.ports.port_base[r as usize],
                t.ports.port_base[r as usize + 1],
            );
            let mut peers: Vec<u32> = (base..end)
                .filter_map(|p| match t.ports.peer[p as usize] {
                    Peer::Router(q) => Some(t.ports.port_router[q as usize]),
                    Peer::Nic(_) => None,
                    Peer::None => panic!("unconnected port {p}"),
                })
                .collect();
            assert_eq!(peers.len(), 3 + 2 + 1);
            peers.sort_unstable();
            peers.dedup();
            assert_eq!(peers.len(), 6);
            for q in peers {
                let differ = (0..3).filter(|&d| coords(r)[d] != coords(q)[d]).count();
                assert_eq!(differ, 1, "r{r} -> r{q}");
            }
        }
        // Dimension order: one hop per differing coordinate.
        for s in 0..48 {
            for d in 0..48 {
                let (a, b) = (coords(s / 2), coords(d / 2));
                let want = (0..3).filter(|&i| a[i] != b[i]).count();
                assert_eq!(walk(&t, s, d).len() - 1, want, "{s}->{d}");
            }
        }
        assert_eq!(t.max_route_hops(), 3);
        assert_eq!(t.kind(), "hyperx");
    }

    #[test]
    fn slim_fly_routes_reach_everything_in_two_hops() {
        let t = topo("[topology]\nkind='slimfly'\nq=7", 1);
        // 2q² routers of network radix (3q + 1)/2 = 11, ⌈11/2⌉ = 6 nodes each.
        assert_eq!((t.num_routers, t.num_nodes), (98, 588));
        assert_eq!(t.kind(), "slimfly");
        for s in (0..t.num_nics()).step_by(5) {
            for d in 0..t.num_nics() {
                assert!(walk(&t, s, d).len() <= 3, "{s}->{d}");
            }
        }
        // Four through an intermediate router (Valiant, UGAL), the bound under any routing.
        assert_eq!(t.max_route_hops(), 4);
        assert_eq!(t.vc_classes, 2);
    }

    #[test]
    fn crossbar_sizes_to_ranks() {
        let t = topo("[topology]\nkind='crossbar'", 8);
        assert_eq!((t.num_routers, t.num_nodes, t.num_ports()), (1, 8, 8));
        assert_eq!(walk(&t, 2, 5), vec![0]);
    }
}
