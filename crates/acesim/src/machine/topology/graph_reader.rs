//! The text of a graph file (`graph_file.rs`, docs/graph-topologies.md): one statement
//! per line, `router`, `link` or `route`, each checked as it is read, then the checks of
//! the whole (routers and nodes numbered without gaps, no link to an undeclared router).

use super::graph_routes::TableEntry;
use crate::error::{did_you_mean, Error, Location, Result};
use crate::units::{parse_bandwidth, parse_time, Ps};

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

/// A graph file, read.
pub struct GraphFile {
    pub routers: u32,
    pub node_router: Vec<u32>,
    pub links: Vec<GraphLink>,
    pub timings: Vec<LinkTiming>,
    pub table: Vec<TableEntry>,
}

/// Reads `text` (the file `path`).
pub fn read(path: &str, text: &str) -> Result<GraphFile> {
    let mut r = Reader {
        path,
        text,
        line: 0,
        declared: Vec::new(),
        node_at: Vec::new(),
        links: Vec::new(),
        link_columns: Vec::new(),
        timings: Vec::new(),
        table: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        r.line = i + 1;
        let w = words(line);
        let Some(first) = w.first() else { continue };
        match first.text {
            "router" => r.router(&w)?,
            "link" => r.link(&w)?,
            "route" => r.route(&w)?,
            other => {
                return Err(r.err(
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
    r.finish()
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

struct Reader<'a> {
    path: &'a str,
    text: &'a str,
    /// The line being read (from 1).
    line: usize,
    /// The line that declared each router.
    declared: Vec<Option<usize>>,
    /// The router and line of each node.
    node_at: Vec<Option<(u32, usize)>>,
    links: Vec<GraphLink>,
    /// The line and the columns of the two routers of each link.
    link_columns: Vec<(usize, usize, usize)>,
    timings: Vec<LinkTiming>,
    table: Vec<TableEntry>,
}

impl Reader<'_> {
    fn err(&self, word: &Word, field: &str, msg: String) -> Error {
        self.err_at(self.line, word.column, field, msg)
    }

    fn err_at(&self, line: usize, column: usize, field: &str, msg: String) -> Error {
        Error::input(
            Location::at(self.path, line, column)
                .with_field(field)
                .with_source_line(self.text, 1),
            msg,
        )
    }

    fn number(&self, word: &Word, field: &str, what: &str) -> Result<u32> {
        word.text.parse::<u32>().map_err(|_| {
            self.err(
                word,
                field,
                format!("'{}' is not a {what} number", word.text),
            )
        })
    }

    /// `router ID [nodes N A-B ...]`.
    fn router(&mut self, w: &[Word]) -> Result<()> {
        let Some(id) = w.get(1) else {
            return Err(self.err(&w[0], "router", "expected `router ID [nodes N ...]`".into()));
        };
        let r = self.number(id, "router", "router")?;
        if r >= MAX_ROUTERS {
            return Err(self.err(
                id,
                "router",
                format!("router {r}: a graph has at most {MAX_ROUTERS} routers (its routing table has one entry per pair)"),
            ));
        }
        if self.declared.len() <= r as usize {
            self.declared.resize(r as usize + 1, None);
        }
        if let Some(before) = self.declared[r as usize] {
            return Err(self.err(
                id,
                "router",
                format!("router {r} is already declared on line {before}"),
            ));
        }
        self.declared[r as usize] = Some(self.line);
        match w.get(2) {
            None => Ok(()),
            Some(k) if k.text == "nodes" => {
                if w.len() == 3 {
                    return Err(self.err(
                        k,
                        "nodes",
                        "`nodes` lists at least one node number or range (0-3)".into(),
                    ));
                }
                w[3..].iter().try_for_each(|item| self.nodes(r, item))
            }
            Some(k) => Err(self.err(
                k,
                "router",
                format!("expected `nodes` after the router number, not '{}'", k.text),
            )),
        }
    }

    /// One item of a `nodes` list (`4` or `0-3`) on router `r`.
    fn nodes(&mut self, r: u32, item: &Word) -> Result<()> {
        let (lo, hi) = match item.text.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok(), b.parse::<u32>().ok()),
            None => (item.text.parse().ok(), item.text.parse().ok()),
        };
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Err(self.err(
                item,
                "nodes",
                format!(
                    "'{}' is not a node number or range (e.g. 4 or 0-3)",
                    item.text
                ),
            ));
        };
        if lo > hi || hi >= 1 << 24 {
            return Err(self.err(
                item,
                "nodes",
                format!("'{}' is not a range of node numbers below 2^24", item.text),
            ));
        }
        if self.node_at.len() <= hi as usize {
            self.node_at.resize(hi as usize + 1, None);
        }
        for node in lo..=hi {
            if let Some((other, l)) = self.node_at[node as usize] {
                return Err(self.err(
                    item,
                    "nodes",
                    format!("node {node} is already on router {other} (line {l})"),
                ));
            }
            self.node_at[node as usize] = Some((r, self.line));
        }
        Ok(())
    }

    /// `link A B [bandwidth=RATE] [latency=TIME]`.
    fn link(&mut self, w: &[Word]) -> Result<()> {
        let (Some(a), Some(b)) = (w.get(1), w.get(2)) else {
            return Err(self.err(
                &w[0],
                "link",
                "expected `link A B [bandwidth=..] [latency=..]`".into(),
            ));
        };
        let (ra, rb) = (
            self.number(a, "link", "router")?,
            self.number(b, "link", "router")?,
        );
        if ra == rb {
            return Err(self.err(b, "link", format!("a link from router {ra} to itself")));
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
                    let bw = parse_bandwidth(v).map_err(|m| self.err(opt, "bandwidth", spaced(m)))?;
                    timing.bandwidth = Some(bw);
                }
                Some(("latency", v)) => {
                    let t = parse_time(v).map_err(|m| self.err(opt, "latency", spaced(m)))?;
                    timing.latency = Some(t);
                }
                _ => {
                    return Err(self.err(opt, "link", format!("'{}': a link takes bandwidth=RATE and latency=TIME, written without spaces (bandwidth=50GB/s)", opt.text)))
                }
            }
        }
        let timing = match timing {
            LinkTiming {
                bandwidth: None,
                latency: None,
            } => None,
            t => Some(self.timing_index(t, &w[0])?),
        };
        self.links.push(GraphLink {
            a: ra,
            b: rb,
            timing,
        });
        self.link_columns.push((self.line, a.column, b.column));
        Ok(())
    }

    /// The index of timing `t` among the graph's distinct ones.
    fn timing_index(&mut self, t: LinkTiming, at: &Word) -> Result<u8> {
        if let Some(k) = self.timings.iter().position(|x| *x == t) {
            return Ok(k as u8);
        }
        if self.timings.len() == MAX_TIMINGS {
            return Err(self.err(
                at,
                "link",
                format!("more than {MAX_TIMINGS} different link timings in one graph"),
            ));
        }
        self.timings.push(t);
        Ok((self.timings.len() - 1) as u8)
    }

    /// `route AT DEST via NEXT`.
    fn route(&mut self, w: &[Word]) -> Result<()> {
        if w.len() != 5 || w[3].text != "via" {
            return Err(self.err(
                &w[0],
                "route",
                "expected `route AT DEST via NEXT` (routers)".into(),
            ));
        }
        let at = self.number(&w[1], "route", "router")?;
        let dst = self.number(&w[2], "route", "router")?;
        let via = self.number(&w[4], "route", "router")?;
        self.table.push(TableEntry {
            at,
            dst,
            via,
            line: self.line,
        });
        Ok(())
    }

    /// The checks of the whole file.
    fn finish(self) -> Result<GraphFile> {
        let routers = self.declared.len() as u32;
        let whole = |field: &str, msg: String| {
            Error::input(Location::file(self.path).with_field(field), msg)
        };
        if routers == 0 {
            return Err(whole(
                "router",
                "the graph declares no router (`router 0 nodes 0-3`)".into(),
            ));
        }
        if let Some(r) = self.declared.iter().position(Option::is_none) {
            return Err(whole(
                "router",
                format!("router {r} is not declared, but router {} is: routers are numbered 0.. without gaps", routers - 1),
            ));
        }
        if self.node_at.is_empty() {
            return Err(whole(
                "nodes",
                "no router has nodes (`router 0 nodes 0-3`)".into(),
            ));
        }
        if let Some(node) = self.node_at.iter().position(Option::is_none) {
            return Err(whole(
                "nodes",
                format!("node {node} is on no router, but node {} is: nodes are numbered 0.. without gaps", self.node_at.len() - 1),
            ));
        }
        for (l, &(line, ca, cb)) in self.links.iter().zip(&self.link_columns) {
            for (r, col) in [(l.a, ca), (l.b, cb)] {
                if r >= routers {
                    return Err(self.err_at(
                        line,
                        col,
                        "link",
                        format!(
                            "dangling link: router {r} is not declared (routers 0..{})",
                            routers - 1
                        ),
                    ));
                }
            }
        }
        for e in &self.table {
            for r in [e.at, e.dst, e.via] {
                if r >= routers {
                    return Err(self.err_at(
                        e.line,
                        1,
                        "route",
                        format!("router {r} is not declared (routers 0..{})", routers - 1),
                    ));
                }
            }
        }
        Ok(GraphFile {
            routers,
            node_router: self
                .node_at
                .into_iter()
                .map(|x| x.map_or(0, |(r, _)| r))
                .collect(),
            links: self.links,
            timings: self.timings,
            table: self.table,
        })
    }
}
