//! A single switch with every NIC on it (`kind = "crossbar"`).

use super::check::{positive, Bad};
use super::ports::Builder;
use crate::error::Result;
use crate::machine::config::TopologyConfig;

/// `nodes`: the switch's nodes; absent, it has as many as the run has ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossbarSpec {
    pub nodes: Option<u32>,
}

impl CrossbarSpec {
    pub const FIELDS: &'static [&'static str] = &["nodes"];

    pub fn from_config(t: &TopologyConfig, bad: Bad) -> Result<CrossbarSpec> {
        positive(bad, "nodes", t.nodes)?;
        if t.nodes.is_some_and(|n| n > 1 << 20) {
            return Err(bad(
                "topology.nodes",
                "a crossbar has at most 2^20 ports".into(),
            ));
        }
        Ok(CrossbarSpec { nodes: t.nodes })
    }

    pub fn planned_nodes(&self, ranks: u32) -> u64 {
        self.nodes.unwrap_or(ranks.max(1)) as u64
    }

    /// Routers and router-to-router ports.
    pub fn planned_routers(&self) -> (u64, u64) {
        (1, 0)
    }

    /// One router whose ports are the NICs, node by node.
    pub fn build(&self, ranks: u32, nics: u32, b: &mut Builder) -> u32 {
        let nodes = self.nodes.unwrap_or(ranks.max(1));
        b.add_router(nodes * nics);
        for node in 0..nodes {
            for j in 0..nics {
                b.attach_nic(node * nics + j, 0, node * nics + j);
            }
        }
        nodes
    }
}
