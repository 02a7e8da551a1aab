//! The machine the run was on: its topology in one line, and its shape in enough detail to
//! draw it.

use crate::machine::config::MachineConfig;
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

/// The shape of `topo`, built from `machine`.
pub fn topology_detail(machine: &MachineConfig, topo: &Topology) -> TopologyDetail {
    let t = &machine.topology;
    TopologyDetail {
        kind: t.kind.clone(),
        routers: topo.num_routers,
        nodes: topo.num_nodes,
        nics_per_node: topo.nics_per_node,
        dims: t.dims.clone(),
        wrap: match &topo.shape {
            Shape::Grid { wrap, .. } => Some(wrap.clone()),
            _ => None,
        },
        nodes_per_router: topo.nodes_per_router,
        k: t.k,
        n: t.n,
        leaves: match &topo.shape {
            Shape::LeafSpine { leaves, .. } => Some(*leaves),
            _ => None,
        },
        spines: t.spines,
    }
}

/// `torus 4x4: 16 routers, 16 nodes, 1 NICs/node`.
pub fn describe_topology(machine: &MachineConfig, topo: &Topology) -> String {
    let t = &machine.topology;
    let shape = match t.kind.as_str() {
        "mesh" | "torus" => format!(
            "{} {}",
            t.kind,
            t.dims.as_ref().map_or(String::new(), |d| d
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("x"))
        ),
        other => other.to_string(),
    };
    format!(
        "{shape}: {} routers, {} nodes, {} NICs/node",
        topo.num_routers, topo.num_nodes, topo.nics_per_node
    )
}
