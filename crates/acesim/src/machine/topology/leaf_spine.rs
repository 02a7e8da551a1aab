//! Two-level trees of leaf and spine switches (`kind = "leaf_spine"`), with parallel links
//! between each leaf and each spine; the spine and the link are chosen by destination.

use super::check::{positive, Bad};
use super::ports::{Builder, Hop, Ports};
use crate::error::Result;
use crate::machine::config::TopologyConfig;

/// `leaves` (absent: enough for the ranks), nodes per leaf, spines, links per spine.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafSpineSpec {
    pub leaves: Option<u32>,
    pub nodes_per_leaf: u32,
    pub spines: u32,
    pub links_per_spine: u32,
}

impl LeafSpineSpec {
    pub const FIELDS: &'static [&'static str] =
        &["leaves", "nodes_per_leaf", "spines", "links_per_spine"];

    pub fn from_config(t: &TopologyConfig, bad: Bad) -> Result<LeafSpineSpec> {
        let (Some(m), Some(spines)) = (t.nodes_per_leaf, t.spines) else {
            return Err(bad(
                "topology",
                "a leaf_spine needs `nodes_per_leaf` and `spines` (and optionally `leaves`)".into(),
            ));
        };
        positive(bad, "nodes_per_leaf", t.nodes_per_leaf)?;
        positive(bad, "spines", t.spines)?;
        positive(bad, "leaves", t.leaves)?;
        positive(bad, "links_per_spine", t.links_per_spine)?;
        let q = t.links_per_spine.unwrap_or(1);
        if m as u64 + spines as u64 * q as u64 > 1 << 16 {
            return Err(bad(
                "topology.spines",
                "a leaf switch has at most 2^16 ports".into(),
            ));
        }
        if t.leaves.unwrap_or(1) as u64 * m as u64 > 1 << 28 {
            return Err(bad("topology.leaves", "more than 2^28 nodes".into()));
        }
        Ok(LeafSpineSpec {
            leaves: t.leaves,
            nodes_per_leaf: m,
            spines,
            links_per_spine: q,
        })
    }

    pub fn planned_nodes(&self, ranks: u32) -> u64 {
        let m = self.nodes_per_leaf as u64;
        self.leaves
            .map_or((ranks.max(1) as u64).div_ceil(m), |l| l as u64)
            .saturating_mul(m)
    }

    /// Routers and router-to-router ports for `nodes` nodes.
    pub fn planned_routers(&self, nodes: u64) -> (u64, u64) {
        let leaves = nodes / self.nodes_per_leaf as u64;
        let spines = self.spines as u64;
        let up = leaves
            .saturating_mul(spines)
            .saturating_mul(self.links_per_spine as u64);
        (leaves + spines, up.saturating_mul(2))
    }

    /// Leaves first (their NICs, then their up links spine by spine), then spines.
    pub fn build(&self, ranks: u32, nics: u32, b: &mut Builder) -> LeafSpine {
        let (m, spines, q) = (self.nodes_per_leaf, self.spines, self.links_per_spine);
        let leaves = self.leaves.unwrap_or_else(|| ranks.max(1).div_ceil(m));
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
        LeafSpine {
            leaves,
            spines,
            links_per_spine: q,
        }
    }
}

/// A built leaf/spine tree.
#[derive(Debug, Clone)]
pub struct LeafSpine {
    pub leaves: u32,
    pub spines: u32,
    pub links_per_spine: u32,
}

impl LeafSpine {
    /// Up to spine `dst_node mod spines` on link `(dst_node / spines) mod q`, then down.
    #[inline]
    pub fn route(
        &self,
        ports: &Ports,
        base: u32,
        router: u32,
        dst_router: u32,
        dst_nic: u32,
    ) -> Hop {
        let dst_node = ports.nic_node(dst_nic);
        let q = self.links_per_spine;
        let link = (dst_node / self.spines) % q;
        if router < self.leaves {
            let m_nics = ports.nodes_per_router * ports.nics_per_node;
            let s = dst_node % self.spines;
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

    pub fn max_hops(&self) -> u32 {
        2
    }
}
