//! The machine the run was on: its topology in one line, and its shape in enough detail to
//! draw it.

use crate::machine::topology::{Shape, Topology};
use serde::Serialize;

/// The shape of the topology, enough to draw it.
#[derive(Debug, Clone, Serialize)]
pub struct TopologyDetail {
    pub kind: String,
    pub routers: u32,
    pub nodes: u32,
    pub nics_per_node: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dims: Option<Vec<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrap: Option<Vec<bool>>,
    pub nodes_per_router: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
}

/// The shape of `topo`.
pub fn topology_detail(topo: &Topology) -> TopologyDetail {
    let (grid, fat_tree, leaf_spine) = match &topo.shape {
        Shape::Grid(g) => (Some(g), None, None),
        Shape::FatTree(f) => (None, Some(f), None),
        Shape::LeafSpine(l) => (None, None, Some(l)),
        Shape::Crossbar
        | Shape::Dragonfly(_)
        | Shape::HyperX(_)
        | Shape::SlimFly(_)
        | Shape::Graph(_) => (None, None, None),
    };
    TopologyDetail {
        kind: topo.kind().to_string(),
        routers: topo.num_routers,
        nodes: topo.num_nodes,
        nics_per_node: topo.nics_per_node(),
        dims: match &topo.shape {
            Shape::HyperX(h) => Some(h.dims.clone()),
            _ => grid.map(|g| g.dims.clone()),
        },
        wrap: grid.map(|g| g.wrap.clone()),
        nodes_per_router: topo.nodes_per_router(),
        k: fat_tree.map(|f| f.k),
        n: fat_tree.map(|f| f.n),
        leaves: leaf_spine.map(|l| l.leaves),
        spines: leaf_spine.map(|l| l.spines),
    }
}

/// `torus 4x4: 16 routers, 16 nodes, 1 NICs/node`.
pub fn describe_topology(topo: &Topology) -> String {
    let dims = |dims: &[u32]| {
        dims.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("x")
    };
    let shape = match &topo.shape {
        Shape::Grid(g) => format!("{} {}", topo.kind(), dims(&g.dims)),
        Shape::HyperX(h) => format!("{} {}", topo.kind(), dims(&h.dims)),
        Shape::SlimFly(s) => format!("{} q={}", topo.kind(), s.q),
        Shape::Graph(g) => format!("{} ({} routes)", topo.kind(), g.routes.scheme.name()),
        Shape::Crossbar | Shape::FatTree(_) | Shape::LeafSpine(_) | Shape::Dragonfly(_) => {
            topo.kind().to_string()
        }
    };
    format!(
        "{shape}: {} routers, {} nodes, {} NICs/node",
        topo.num_routers,
        topo.num_nodes,
        topo.nics_per_node()
    )
}
