//! The topology kinds, one variant each: [`TopologySpec`] is what the machine file says,
//! [`Shape`] the built topology as routing reads it. Every match here is exhaustive, so a
//! new kind cannot be forgotten anywhere (docs/architecture.md: adding a topology).

use super::check::Bad;
use super::crossbar::CrossbarSpec;
use super::dragonfly::{Dragonfly, DragonflySpec};
use super::fat_tree::{FatTree, FatTreeSpec};
use super::graph_file::{GraphNet, GraphSpec};
use super::grid::{Grid, GridSpec};
use super::hyperx::{HyperX, HyperXSpec};
use super::leaf_spine::{LeafSpine, LeafSpineSpec};
use super::ports::{Builder, PlannedSize};
use super::slim_fly::{SlimFly, SlimFlySpec};
use crate::error::{did_you_mean, Result};
use crate::machine::config::TopologyConfig;
use crate::machine::options::{Dateline, Routing};

/// The kinds a machine file may name (`topology.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Crossbar,
    Mesh,
    Torus,
    FatTree,
    LeafSpine,
    Dragonfly,
    HyperX,
    SlimFly,
    Graph,
}

impl Kind {
    /// The kind a word names, or the message saying which words are kinds.
    pub fn parse(word: &str) -> std::result::Result<Kind, String> {
        Ok(match word {
            "crossbar" => Kind::Crossbar,
            "mesh" => Kind::Mesh,
            "torus" => Kind::Torus,
            "fat_tree" => Kind::FatTree,
            "leaf_spine" => Kind::LeafSpine,
            "dragonfly" => Kind::Dragonfly,
            "hyperx" => Kind::HyperX,
            "slimfly" => Kind::SlimFly,
            "graph" => Kind::Graph,
            other => {
                return Err(format!(
                    "unknown topology '{other}'{} (expected crossbar, mesh, torus, fat_tree, leaf_spine, dragonfly, hyperx, slimfly or graph)",
                    did_you_mean(other, ["crossbar", "mesh", "torus", "fat_tree", "leaf_spine", "dragonfly", "hyperx", "slimfly", "graph"])
                ))
            }
        })
    }

    /// The fields of `[topology]` this kind accepts, so that a stray `k = 4` on a torus is
    /// reported, not ignored.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Kind::Crossbar => CrossbarSpec::FIELDS,
            Kind::Mesh | Kind::Torus => GridSpec::FIELDS,
            Kind::FatTree => FatTreeSpec::FIELDS,
            Kind::LeafSpine => LeafSpineSpec::FIELDS,
            Kind::Dragonfly => DragonflySpec::FIELDS,
            Kind::HyperX => HyperXSpec::FIELDS,
            Kind::SlimFly => SlimFlySpec::FIELDS,
            Kind::Graph => GraphSpec::FIELDS,
        }
    }
}

/// A topology as the machine file describes it, checked.
#[derive(Debug, Clone, PartialEq)]
pub enum TopologySpec {
    Crossbar(CrossbarSpec),
    Grid(GridSpec),
    FatTree(FatTreeSpec),
    LeafSpine(LeafSpineSpec),
    Dragonfly(DragonflySpec),
    HyperX(HyperXSpec),
    SlimFly(SlimFlySpec),
    Graph(GraphSpec),
}

impl TopologySpec {
    /// Reads and checks the `[topology]` table of a `kind` topology.
    pub fn from_config(kind: Kind, t: &TopologyConfig, bad: Bad) -> Result<TopologySpec> {
        Ok(match kind {
            Kind::Crossbar => TopologySpec::Crossbar(CrossbarSpec::from_config(t, bad)?),
            Kind::Mesh | Kind::Torus => {
                let torus = kind == Kind::Torus;
                TopologySpec::Grid(GridSpec::from_config(t, torus, bad)?)
            }
            Kind::FatTree => TopologySpec::FatTree(FatTreeSpec::from_config(t, bad)?),
            Kind::LeafSpine => TopologySpec::LeafSpine(LeafSpineSpec::from_config(t, bad)?),
            Kind::Dragonfly => TopologySpec::Dragonfly(DragonflySpec::from_config(t, bad)?),
            Kind::HyperX => TopologySpec::HyperX(HyperXSpec::from_config(t, bad)?),
            Kind::SlimFly => TopologySpec::SlimFly(SlimFlySpec::from_config(t, bad)?),
            Kind::Graph => TopologySpec::Graph(GraphSpec::from_config(t, bad)?),
        })
    }

    /// The kind as the machine file names it.
    pub fn name(&self) -> &'static str {
        match self {
            TopologySpec::Crossbar(_) => "crossbar",
            TopologySpec::Grid(g) => g.name(),
            TopologySpec::FatTree(_) => "fat_tree",
            TopologySpec::LeafSpine(_) => "leaf_spine",
            TopologySpec::Dragonfly(_) => "dragonfly",
            TopologySpec::HyperX(_) => "hyperx",
            TopologySpec::SlimFly(_) => "slimfly",
            TopologySpec::Graph(_) => "graph",
        }
    }

    /// Whether the number of nodes is left to the run (`nodes`/`leaves` absent).
    pub fn sized_by_run(&self) -> bool {
        match self {
            TopologySpec::Crossbar(c) => c.nodes.is_none(),
            TopologySpec::LeafSpine(l) => l.leaves.is_none(),
            TopologySpec::Grid(_)
            | TopologySpec::FatTree(_)
            | TopologySpec::Dragonfly(_)
            | TopologySpec::HyperX(_)
            | TopologySpec::SlimFly(_)
            | TopologySpec::Graph(_) => false,
        }
    }

    /// Nodes of the machine for a run that needs `ranks` nodes. Saturates instead of
    /// overflowing.
    pub fn planned_nodes(&self, ranks: u32) -> u64 {
        match self {
            TopologySpec::Crossbar(c) => c.planned_nodes(ranks),
            TopologySpec::Grid(g) => g.planned_nodes(),
            TopologySpec::FatTree(f) => f.planned_nodes(),
            TopologySpec::LeafSpine(l) => l.planned_nodes(ranks),
            TopologySpec::Dragonfly(d) => d.planned_nodes(),
            TopologySpec::HyperX(h) => h.planned_nodes(),
            TopologySpec::SlimFly(s) => s.planned_nodes(),
            TopologySpec::Graph(g) => g.planned_nodes(),
        }
    }

    /// The size the built topology will have (ports exactly as built, unconnected ones
    /// included), with `nics` NICs per node. Saturates instead of overflowing.
    pub fn planned_size(&self, ranks: u32, nics: u32) -> PlannedSize {
        let nodes = self.planned_nodes(ranks);
        let nic_count = nodes.saturating_mul(nics as u64);
        let (routers, network_ports) = match self {
            TopologySpec::Crossbar(c) => c.planned_routers(),
            TopologySpec::Grid(g) => g.planned_routers(),
            TopologySpec::FatTree(f) => f.planned_routers(),
            TopologySpec::LeafSpine(l) => l.planned_routers(nodes),
            TopologySpec::Dragonfly(d) => d.planned_routers(),
            TopologySpec::HyperX(h) => h.planned_routers(),
            TopologySpec::SlimFly(s) => s.planned_routers(),
            TopologySpec::Graph(g) => g.planned_routers(),
        };
        PlannedSize {
            nodes,
            nics: nic_count,
            routers,
            ports: nic_count.saturating_add(network_ports),
        }
    }

    /// Builds the routers and links for `ranks` nodes (the kinds sized by the run) with
    /// `nics` NICs per node.
    pub fn build(&self, ranks: u32, nics: u32, dateline: Dateline, b: &mut Builder) -> Built {
        let (shape, nodes, per_router) = match self {
            TopologySpec::Crossbar(c) => {
                let nodes = c.build(ranks, nics, b);
                (Shape::Crossbar, nodes, nodes)
            }
            TopologySpec::Grid(g) => {
                let routers = g.planned_routers().0 as u32;
                let npr = g.nodes_per_router;
                (Shape::Grid(g.build(nics, dateline, b)), routers * npr, npr)
            }
            TopologySpec::FatTree(f) => {
                let t = f.build(nics, b);
                (Shape::FatTree(t.clone()), t.nodes(), t.k)
            }
            TopologySpec::LeafSpine(l) => {
                let t = l.build(ranks, nics, b);
                let m = l.nodes_per_leaf;
                (Shape::LeafSpine(t.clone()), t.leaves * m, m)
            }
            TopologySpec::Dragonfly(d) => {
                let t = d.build(nics, b);
                (Shape::Dragonfly(t), t.g * t.a * t.p, t.p)
            }
            TopologySpec::HyperX(h) => {
                let routers = h.planned_routers().0 as u32;
                let npr = h.nodes_per_router;
                (Shape::HyperX(h.build(nics, b)), routers * npr, npr)
            }
            TopologySpec::SlimFly(s) => {
                let npr = s.nodes_per_router;
                (Shape::SlimFly(s.build(nics, b)), s.routers() * npr, npr)
            }
            TopologySpec::Graph(g) => {
                let net = g.build(nics, b);
                let npr = net.nodes_per_router;
                (Shape::Graph(net), g.node_router.len() as u32, npr)
            }
        };
        Built {
            vc_classes: shape.vc_classes(),
            shape,
            nodes,
            nodes_per_router: per_router,
        }
    }
}

/// What building a topology gives besides the port arrays.
pub struct Built {
    pub shape: Shape,
    pub nodes: u32,
    pub nodes_per_router: u32,
    pub vc_classes: u8,
}

/// A built topology, as routing reads it.
#[derive(Debug, Clone)]
pub enum Shape {
    Crossbar,
    Grid(Grid),
    FatTree(FatTree),
    LeafSpine(LeafSpine),
    Dragonfly(Dragonfly),
    HyperX(HyperX),
    SlimFly(SlimFly),
    Graph(GraphNet),
}

impl Shape {
    /// VC classes routing needs to stay deadlock-free.
    pub fn vc_classes(&self) -> u8 {
        match self {
            Shape::Grid(g) => g.vc_classes,
            // One class per global hop taken (at most two, through an intermediate group).
            Shape::Dragonfly(_) => 3,
            // One class per hop of a route of at most two.
            Shape::SlimFly(_) => 2,
            // One class per hop of the longest route when layered; up*/down* and checked
            // tables need one.
            Shape::Graph(g) if g.layered() => g.routes.diameter.clamp(1, u8::MAX as u32) as u8,
            // Dimension order needs one; adaptive routing one per hop (`with_routing`).
            Shape::Graph(_)
            | Shape::Crossbar
            | Shape::FatTree(_)
            | Shape::LeafSpine(_)
            | Shape::HyperX(_) => 1,
        }
    }

    /// `vc_classes` with the machine's routing: a HyperX routed adaptively takes VC class
    /// = hops taken, one class per dimension.
    pub fn vc_classes_with(&self, routing: Routing) -> u8 {
        match self {
            Shape::HyperX(h) if routing == Routing::Adaptive => h.adaptive_classes(),
            Shape::HyperX(h) if matches!(routing, Routing::Dal { .. }) => h.dal_classes(),
            // Dimension order's classes for escape, one more for the adaptive channels.
            Shape::Grid(g) if routing == Routing::Adaptive => g.adaptive_class() + 1,
            Shape::SlimFly(_) if matches!(routing, Routing::Valiant | Routing::Ugal { .. }) => 4,
            _ => self.vc_classes(),
        }
    }

    /// `max_route_hops` with the machine's routing: DAL on a HyperX may take two hops
    /// in a dimension.
    pub fn max_route_hops_with(&self, routing: Routing) -> u32 {
        match self {
            Shape::HyperX(h) if matches!(routing, Routing::Dal { .. }) => h.dal_classes() as u32,
            _ => self.max_route_hops(),
        }
    }

    /// The most router-to-router hops any route takes (its diameter along the routing
    /// function).
    pub fn max_route_hops(&self) -> u32 {
        match self {
            Shape::Crossbar => 0,
            Shape::Grid(g) => g.max_hops(),
            Shape::FatTree(f) => f.max_hops(),
            Shape::LeafSpine(l) => l.max_hops(),
            Shape::Dragonfly(d) => d.max_hops(),
            Shape::HyperX(h) => h.max_hops(),
            Shape::SlimFly(s) => s.max_hops(),
            Shape::Graph(g) => g.routes.diameter,
        }
    }
}
