//! Any network, read from a file (`kind = "graph"`, docs/graph-topologies.md): routers, the
//! nodes on each, full-duplex links with their own bandwidth and latency when they differ
//! from the machine's, and optionally routing tables. The file is read and every route
//! worked out and checked when the machine is loaded, so a dangling link, a node on no
//! router, a disconnected network or tables that loop or can deadlock stop the run before
//! it starts, with the file, line and field.
//!
//! ```text
//! router 0 nodes 0-3
//! router 1 nodes 4 5 6 7
//! link 0 1 bandwidth=50GB/s latency=40ns
//! route 0 1 via 1
//! ```

use super::check::Bad;
use super::graph_reader::{self, GraphLink, LinkTiming};
use super::graph_routes::{Adjacency, RouteScheme, Routes};
use super::ports::{Builder, Hop, LinkClass};
use crate::error::{did_you_mean, Error, Location, Result};
use crate::machine::config::TopologyConfig;
use std::sync::Arc;

/// What the machine file and the graph file say of a graph topology, checked, with its
/// routes worked out.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphSpec {
    pub path: String,
    pub routers: u32,
    /// The router of every node.
    pub node_router: Vec<u32>,
    pub links: Vec<GraphLink>,
    /// The distinct timings links set; link kind `5 + i` is timing `i`.
    pub timings: Vec<LinkTiming>,
    pub routes: Arc<Routes>,
}

impl GraphSpec {
    pub const FIELDS: &'static [&'static str] = &["file", "routes", "root"];

    pub fn from_config(t: &TopologyConfig, bad: Bad) -> Result<GraphSpec> {
        let Some(path) = &t.file else {
            return Err(bad(
                "topology",
                "a graph needs `file`, the graph file (docs/graph-topologies.md)".into(),
            ));
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_string(),
                std::io::ErrorKind::InvalidData => "not UTF-8 text: expected a graph file".into(),
                _ => e.to_string(),
            };
            bad(
                "topology.file",
                format!("cannot read the graph file {path}: {why}"),
            )
        })?;
        let file = graph_reader::read(path, &text)?;
        let scheme = match t.routes.as_deref() {
            None if file.table.is_empty() => RouteScheme::UpDown,
            None | Some("table") => RouteScheme::Table,
            Some("updown") => RouteScheme::UpDown,
            Some("layered") => RouteScheme::Layered,
            Some(other) => {
                return Err(bad(
                    "topology.routes",
                    format!(
                        "unknown routes '{other}'{} (expected updown, layered or table)",
                        did_you_mean(other, ["updown", "layered", "table"])
                    ),
                ))
            }
        };
        if scheme == RouteScheme::Table && file.table.is_empty() {
            return Err(bad(
                "topology.routes",
                format!("routes = \"table\" but {path} has no `route` lines"),
            ));
        }
        if scheme != RouteScheme::Table {
            if let Some(e) = file.table.first() {
                return Err(Error::input(
                    Location::at(path, e.line, 1).with_field("route"),
                    format!(
                        "the file gives routing tables but topology.routes = \"{}\": drop `routes` (or set \"table\") to use them",
                        t.routes.as_deref().unwrap_or("")
                    ),
                ));
            }
        }
        let root = t.root.unwrap_or(0);
        if root >= file.routers {
            return Err(bad(
                "topology.root",
                format!(
                    "root router {root} is not in the graph (routers 0..{})",
                    file.routers - 1
                ),
            ));
        }
        let adjacency = Adjacency::new(file.routers, file.links.iter().map(|l| (l.a, l.b)));
        let has_nodes = nodes_on(file.routers, &file.node_router);
        let routes = Routes::build(path, &adjacency, &has_nodes, scheme, root, &file.table)?;
        Ok(GraphSpec {
            path: path.clone(),
            routers: file.routers,
            node_router: file.node_router,
            links: file.links,
            timings: file.timings,
            routes: Arc::new(routes),
        })
    }

    pub fn planned_nodes(&self) -> u64 {
        self.node_router.len() as u64
    }

    /// Routers and router-to-router ports (two per link).
    pub fn planned_routers(&self) -> (u64, u64) {
        (self.routers as u64, 2 * self.links.len() as u64)
    }

    /// The network ports of a router come first, one per link in file order; its nodes'
    /// NICs follow, by node number.
    pub fn build(&self, nics: u32, b: &mut Builder) -> GraphNet {
        let n = self.routers as usize;
        let mut net_ports = vec![0u32; n];
        for l in &self.links {
            net_ports[l.a as usize] += 1;
            net_ports[l.b as usize] += 1;
        }
        let mut nodes = vec![0u32; n];
        for &r in &self.node_router {
            nodes[r as usize] += 1;
        }
        let mut port_kind = Vec::new();
        for r in 0..n {
            b.add_router(net_ports[r] + nodes[r] * nics);
            port_kind.extend(std::iter::repeat_n(
                LinkClass::Network as u8,
                net_ports[r] as usize,
            ));
            port_kind.extend(std::iter::repeat_n(
                LinkClass::Ejection as u8,
                (nodes[r] * nics) as usize,
            ));
        }
        let mut base = vec![0u32; n + 1];
        for r in 0..n {
            base[r + 1] = base[r] + net_ports[r] + nodes[r] * nics;
        }
        let mut next_free = vec![0u32; n];
        for l in &self.links {
            let (pa, pb) = (next_free[l.a as usize], next_free[l.b as usize]);
            next_free[l.a as usize] += 1;
            next_free[l.b as usize] += 1;
            b.connect(l.a, pa, l.b, pb);
            if let Some(t) = l.timing {
                let kind = 5 + t;
                port_kind[(base[l.a as usize] + pa) as usize] = kind;
                port_kind[(base[l.b as usize] + pb) as usize] = kind;
            }
        }
        for (node, &r) in self.node_router.iter().enumerate() {
            let local = next_free[r as usize];
            next_free[r as usize] += nics;
            for j in 0..nics {
                b.attach_nic(node as u32 * nics + j, r, local + j);
            }
        }
        GraphNet {
            routes: self.routes.clone(),
            port_kind,
            nodes_per_router: uniform(&nodes),
        }
    }
}

/// The count every router with nodes has, or 0 when they differ.
fn uniform(nodes: &[u32]) -> u32 {
    let mut with = nodes.iter().filter(|&&k| k > 0);
    let first = with.next().copied().unwrap_or(0);
    if with.all(|&k| k == first) {
        first
    } else {
        0
    }
}

fn nodes_on(routers: u32, node_router: &[u32]) -> Vec<bool> {
    let mut has = vec![false; routers as usize];
    for &r in node_router {
        has[r as usize] = true;
    }
    has
}

/// A built graph, as routing reads it.
#[derive(Debug, Clone)]
pub struct GraphNet {
    pub routes: Arc<Routes>,
    /// The kind of every router port: a class, or `5 + i` for a link with timing `i`.
    port_kind: Vec<u8>,
    /// Nodes on each router when every router with nodes has the same number, else 0.
    pub nodes_per_router: u32,
}

impl GraphNet {
    /// The kind of the link that starts at router port `port`.
    #[inline]
    pub fn port_kind(&self, port: u32) -> u8 {
        self.port_kind[port as usize]
    }

    /// The next hop at `router` (first port `base`) toward `dst_router` (not this one), on
    /// class 0 (`layered` routes take the packet's hops as class, `network::packet`).
    #[inline]
    pub fn route(&self, base: u32, router: u32, dst_router: u32) -> Hop {
        Hop {
            port: base + self.routes.port(router, dst_router),
            class: 0,
        }
    }

    /// Whether the VC class is the hops a packet took.
    pub fn layered(&self) -> bool {
        self.routes.scheme == RouteScheme::Layered
    }
}
