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
use super::graph_routes::{Adjacency, RouteScheme, Routes, TableEntry};
use super::ports::{Builder, Hop, LinkClass};
use crate::error::{did_you_mean, Error, Location, Result};
use crate::machine::config::TopologyConfig;
use crate::units::{parse_bandwidth, parse_time, Ps};
use std::sync::Arc;

/// Routers a graph may have: the routing table holds one entry per pair.
pub const MAX_ROUTERS: u32 = 4096;
/// Link kinds beyond the five classes: the distinct timings links set (kinds are a byte).
const MAX_TIMINGS: usize = 250;

/// A link's own timing, where it sets one (the machine's `[link]` fills the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkTiming {
    pub bandwidth: Option<u64>,
    pub latency: Option<Ps>,
}

/// One `link` line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GraphLink {
    pub a: u32,
    pub b: u32,
    /// Index into `GraphSpec::timings`, or `None` for the machine's link.
    pub timing: Option<u8>,
}

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
        let file = parse(path, &text)?;
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
        let adjacency = Adjacency::new(file.routers, &file.links);
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

/// A graph file, read.
struct GraphFile {
    routers: u32,
    node_router: Vec<u32>,
    links: Vec<GraphLink>,
    timings: Vec<LinkTiming>,
    table: Vec<TableEntry>,
}

/// One word of a line and the column it starts at.
struct Word<'a> {
    text: &'a str,
    column: usize,
}

fn words(line: &str) -> Vec<Word<'_>> {
    let code = line.split('#').next().unwrap_or("");
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in code
        .char_indices()
        .chain(std::iter::once((code.len(), ' ')))
    {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push(Word {
                    text: &code[s..i],
                    column: s + 1,
                });
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Reads the lines of a graph file and checks what one line can show; the checks of the
/// whole (every node placed, routers numbered without gaps) follow.
fn parse(path: &str, text: &str) -> Result<GraphFile> {
    let mut declared: Vec<Option<usize>> = Vec::new(); // router -> line
    let mut node_at: Vec<Option<(u32, usize)>> = Vec::new(); // node -> (router, line)
    let mut links = Vec::new();
    let mut link_lines = Vec::new();
    let mut timings: Vec<LinkTiming> = Vec::new();
    let mut table = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let w = words(line);
        let Some(first) = w.first() else { continue };
        let err = |word: &Word, field: &str, msg: String| {
            Error::input(
                Location::at(path, n, word.column)
                    .with_field(field)
                    .with_source_line(text, 1),
                msg,
            )
        };
        let number = |word: &Word, field: &str, what: &str| -> Result<u32> {
            word.text.parse::<u32>().map_err(|_| {
                err(
                    word,
                    field,
                    format!("'{}' is not a {what} number", word.text),
                )
            })
        };
        match first.text {
            "router" => {
                let Some(id) = w.get(1) else {
                    return Err(err(
                        first,
                        "router",
                        "expected `router ID [nodes N ...]`".into(),
                    ));
                };
                let r = number(id, "router", "router")?;
                if r >= MAX_ROUTERS {
                    return Err(err(
                        id,
                        "router",
                        format!("router {r}: a graph has at most {MAX_ROUTERS} routers (its routing table has one entry per pair)"),
                    ));
                }
                if declared.len() <= r as usize {
                    declared.resize(r as usize + 1, None);
                }
                if let Some(before) = declared[r as usize] {
                    return Err(err(
                        id,
                        "router",
                        format!("router {r} is already declared on line {before}"),
                    ));
                }
                declared[r as usize] = Some(n);
                match w.get(2) {
                    None => {}
                    Some(k) if k.text == "nodes" => {
                        if w.len() == 3 {
                            return Err(err(
                                k,
                                "nodes",
                                "`nodes` lists at least one node number or range (0-3)".into(),
                            ));
                        }
                        for item in &w[3..] {
                            let (lo, hi) = match item.text.split_once('-') {
                                Some((a, b)) => (a.parse::<u32>().ok(), b.parse::<u32>().ok()),
                                None => (item.text.parse().ok(), item.text.parse().ok()),
                            };
                            let (Some(lo), Some(hi)) = (lo, hi) else {
                                return Err(err(
                                    item,
                                    "nodes",
                                    format!(
                                        "'{}' is not a node number or range (e.g. 4 or 0-3)",
                                        item.text
                                    ),
                                ));
                            };
                            if lo > hi || hi >= 1 << 24 {
                                return Err(err(
                                    item,
                                    "nodes",
                                    format!(
                                        "'{}' is not a range of node numbers below 2^24",
                                        item.text
                                    ),
                                ));
                            }
                            if node_at.len() <= hi as usize {
                                node_at.resize(hi as usize + 1, None);
                            }
                            for node in lo..=hi {
                                if let Some((other, l)) = node_at[node as usize] {
                                    return Err(err(
                                        item,
                                        "nodes",
                                        format!(
                                            "node {node} is already on router {other} (line {l})"
                                        ),
                                    ));
                                }
                                node_at[node as usize] = Some((r, n));
                            }
                        }
                    }
                    Some(k) => {
                        return Err(err(
                            k,
                            "router",
                            format!("expected `nodes` after the router number, not '{}'", k.text),
                        ))
                    }
                }
            }
            "link" => {
                let (Some(a), Some(b)) = (w.get(1), w.get(2)) else {
                    return Err(err(
                        first,
                        "link",
                        "expected `link A B [bandwidth=..] [latency=..]`".into(),
                    ));
                };
                let (ra, rb) = (number(a, "link", "router")?, number(b, "link", "router")?);
                if ra == rb {
                    return Err(err(b, "link", format!("a link from router {ra} to itself")));
                }
                let mut timing = LinkTiming {
                    bandwidth: None,
                    latency: None,
                };
                for (k, opt) in w.iter().enumerate().skip(3) {
                    // `bandwidth=5 GB/s`: the unit was split off as the next word.
                    let spaced = |m: String| match w.get(k + 1) {
                        Some(next) if !next.text.contains('=') => {
                            format!(
                                "{m}; write the value without spaces ({}{})",
                                opt.text, next.text
                            )
                        }
                        _ => m,
                    };
                    match opt.text.split_once('=') {
                        Some(("bandwidth", v)) => {
                            let bw = parse_bandwidth(v).map_err(|m| err(opt, "bandwidth", spaced(m)))?;
                            timing.bandwidth = Some(bw);
                        }
                        Some(("latency", v)) => {
                            let t = parse_time(v).map_err(|m| err(opt, "latency", spaced(m)))?;
                            timing.latency = Some(t);
                        }
                        _ => {
                            return Err(err(opt, "link", format!("'{}': a link takes bandwidth=RATE and latency=TIME, written without spaces (bandwidth=50GB/s)", opt.text)))
                        }
                    }
                }
                let timing = match timing {
                    LinkTiming {
                        bandwidth: None,
                        latency: None,
                    } => None,
                    t => Some(match timings.iter().position(|x| *x == t) {
                        Some(k) => k as u8,
                        None if timings.len() < MAX_TIMINGS => {
                            timings.push(t);
                            (timings.len() - 1) as u8
                        }
                        None => {
                            return Err(err(
                                first,
                                "link",
                                format!(
                                    "more than {MAX_TIMINGS} different link timings in one graph"
                                ),
                            ))
                        }
                    }),
                };
                links.push(GraphLink {
                    a: ra,
                    b: rb,
                    timing,
                });
                link_lines.push((n, a.column, b.column));
            }
            "route" => {
                let ok = w.len() == 5 && w[3].text == "via";
                if !ok {
                    return Err(err(
                        first,
                        "route",
                        "expected `route AT DEST via NEXT` (routers)".into(),
                    ));
                }
                let at = number(&w[1], "route", "router")?;
                let dst = number(&w[2], "route", "router")?;
                let via = number(&w[4], "route", "router")?;
                table.push(TableEntry {
                    at,
                    dst,
                    via,
                    line: n,
                });
            }
            other => {
                return Err(err(
                    first,
                    "line",
                    format!(
                        "unknown statement '{other}'{} (expected router, link or route)",
                        did_you_mean(other, ["router", "link", "route"])
                    ),
                ))
            }
        }
    }
    let routers = declared.len() as u32;
    let whole =
        |field: &str, msg: String| Error::input(Location::file(path).with_field(field), msg);
    if routers == 0 {
        return Err(whole(
            "router",
            "the graph declares no router (`router 0 nodes 0-3`)".into(),
        ));
    }
    if let Some(r) = declared.iter().position(Option::is_none) {
        return Err(whole(
            "router",
            format!("router {r} is not declared, but router {} is: routers are numbered 0.. without gaps", routers - 1),
        ));
    }
    if node_at.is_empty() {
        return Err(whole(
            "nodes",
            "no router has nodes (`router 0 nodes 0-3`)".into(),
        ));
    }
    if let Some(node) = node_at.iter().position(Option::is_none) {
        return Err(whole(
            "nodes",
            format!(
                "node {node} is on no router, but node {} is: nodes are numbered 0.. without gaps",
                node_at.len() - 1
            ),
        ));
    }
    for (l, &(line, ca, cb)) in links.iter().zip(&link_lines) {
        for (r, col) in [(l.a, ca), (l.b, cb)] {
            if r >= routers {
                return Err(Error::input(
                    Location::at(path, line, col)
                        .with_field("link")
                        .with_source_line(text, 1),
                    format!(
                        "dangling link: router {r} is not declared (routers 0..{})",
                        routers - 1
                    ),
                ));
            }
        }
    }
    for e in &table {
        for r in [e.at, e.dst, e.via] {
            if r >= routers {
                return Err(Error::input(
                    Location::at(path, e.line, 1).with_field("route"),
                    format!("router {r} is not declared (routers 0..{})", routers - 1),
                ));
            }
        }
    }
    Ok(GraphFile {
        routers,
        node_router: node_at
            .into_iter()
            .map(|x| x.map_or(0, |(r, _)| r))
            .collect(),
        links,
        timings,
        table,
    })
}
