//! The routes of a graph topology (`graph_file.rs`), one next hop per router and
//! destination router, worked out and checked when the machine is loaded:
//!
//! - `updown` (Autonet's up*/down*): routers are ranked by (distance from the root,
//!   number); a link toward a lower rank is "up". A route goes up zero or more times,
//!   then down: no packet turns from down to up, so no cycle of channels waits on
//!   itself and one VC class is deadlock-free. Where a down-only path exists it is taken
//!   (the shortest), else the up link whose router's route is shortest.
//! - `layered`: shortest paths (the lowest port among the equal ones), on VC class = hops
//!   taken, which only rises along a route: as many classes as the longest route's hops.
//! - `table`: the file's `route AT DEST via NEXT` lines, checked: every route from a
//!   router with nodes reaches its destination, none loops, and the channel dependency
//!   graph they make is acyclic (Dally and Seitz), on one VC class.

use crate::error::{Error, Location, Result};

/// No route (only for pairs no node needs).
const NO_PORT: u16 = u16::MAX;

/// How a graph's routes are chosen (`topology.routes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteScheme {
    UpDown,
    Layered,
    Table,
}

impl RouteScheme {
    pub fn name(self) -> &'static str {
        match self {
            RouteScheme::UpDown => "updown",
            RouteScheme::Layered => "layered",
            RouteScheme::Table => "table",
        }
    }
}

/// One `route AT DEST via NEXT` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableEntry {
    pub at: u32,
    pub dst: u32,
    pub via: u32,
    pub line: usize,
}

/// Every router's neighbours, by local port (the links in file order).
pub struct Adjacency {
    peers: Vec<Vec<u32>>,
}

impl Adjacency {
    /// From the links as (router, router) pairs, in file order.
    pub fn new(routers: u32, links: impl Iterator<Item = (u32, u32)>) -> Adjacency {
        let mut peers = vec![Vec::new(); routers as usize];
        for (a, b) in links {
            peers[a as usize].push(b);
            peers[b as usize].push(a);
        }
        Adjacency { peers }
    }

    fn len(&self) -> usize {
        self.peers.len()
    }

    /// Routers one hop from every router, by breadth-first search from `root`
    /// (`u32::MAX`: unreachable).
    fn distances(&self, root: u32) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.len()];
        let mut queue = std::collections::VecDeque::from([root]);
        dist[root as usize] = 0;
        while let Some(r) = queue.pop_front() {
            for &p in &self.peers[r as usize] {
                if dist[p as usize] == u32::MAX {
                    dist[p as usize] = dist[r as usize] + 1;
                    queue.push_back(p);
                }
            }
        }
        dist
    }
}

/// The next hop of every (router, destination router) pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Routes {
    pub scheme: RouteScheme,
    routers: u32,
    /// `next[r * routers + d]`: the local port at `r` toward `d`.
    next: Vec<u16>,
    /// The most router-to-router hops of a route between routers with nodes.
    pub diameter: u32,
}

impl Routes {
    /// Works out (or reads) the routes and checks them; errors name `path`.
    pub fn build(
        path: &str,
        adj: &Adjacency,
        has_nodes: &[bool],
        scheme: RouteScheme,
        root: u32,
        table: &[TableEntry],
    ) -> Result<Routes> {
        let n = adj.len();
        let whole =
            |field: &str, msg: String| Error::input(Location::file(path).with_field(field), msg);
        if let Some(r) = adj.peers.iter().position(|p| p.len() >= NO_PORT as usize) {
            return Err(whole(
                "link",
                format!(
                    "router {r} has {} links: at most {}",
                    adj.peers[r].len(),
                    NO_PORT - 1
                ),
            ));
        }
        let reach = adj.distances(0);
        if let Some(r) = reach.iter().position(|&d| d == u32::MAX) {
            return Err(whole(
                "link",
                format!(
                    "the network is disconnected: no path of links joins router {r} to router 0"
                ),
            ));
        }
        let mut routes = Routes {
            scheme,
            routers: n as u32,
            next: vec![NO_PORT; n * n],
            diameter: 0,
        };
        match scheme {
            RouteScheme::UpDown => routes.fill_up_down(adj, root),
            RouteScheme::Layered => routes.fill_shortest(adj),
            RouteScheme::Table => routes.fill_table(path, adj, table)?,
        }
        let lines = table_lines(n, table);
        routes.diameter = routes.check_reach(path, adj, has_nodes, &lines)?;
        if scheme == RouteScheme::Table {
            routes.check_deadlock_free(path, adj, has_nodes, &lines)?;
        }
        Ok(routes)
    }

    /// The local port at `router` toward `dst` (another router).
    #[inline]
    pub fn port(&self, router: u32, dst: u32) -> u32 {
        self.next[(router * self.routers + dst) as usize] as u32
    }

    fn set(&mut self, r: usize, d: usize, port: usize) {
        self.next[r * self.routers as usize + d] = port as u16;
    }

    /// up*/down* (see the module's notes), destination by destination.
    fn fill_up_down(&mut self, adj: &Adjacency, root: u32) {
        let n = adj.len();
        let level = adj.distances(root);
        let rank = |r: usize| (level[r], r as u32);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_unstable_by_key(|&r| rank(r));
        let mut down = vec![u32::MAX; n];
        let mut cost = vec![u32::MAX; n];
        for d in 0..n {
            // Down-only distance to d: down links lead to higher ranks, so work from the
            // highest rank back.
            down.fill(u32::MAX);
            down[d] = 0;
            for &r in order.iter().rev() {
                if r == d {
                    continue;
                }
                let mut best = (u32::MAX, NO_PORT as usize);
                for (port, &p) in adj.peers[r].iter().enumerate() {
                    let p = p as usize;
                    if rank(p) > rank(r) && down[p] != u32::MAX && down[p] + 1 < best.0 {
                        best = (down[p] + 1, port);
                    }
                }
                down[r] = best.0;
                if best.0 != u32::MAX {
                    self.set(r, d, best.1);
                }
            }
            // Otherwise up first: up links lead to lower ranks, so work from the root on.
            for &r in &order {
                if down[r] != u32::MAX {
                    cost[r] = down[r];
                    continue;
                }
                let mut best = (u32::MAX, NO_PORT as usize);
                for (port, &p) in adj.peers[r].iter().enumerate() {
                    let p = p as usize;
                    if rank(p) < rank(r) && cost[p] != u32::MAX && cost[p] + 1 < best.0 {
                        best = (cost[p] + 1, port);
                    }
                }
                // The root reaches every router going down, and every other router has an
                // up link (toward its breadth-first parent): `best` is always found.
                cost[r] = best.0;
                self.set(r, d, best.1);
            }
        }
    }

    /// Shortest paths, the lowest port among equals.
    fn fill_shortest(&mut self, adj: &Adjacency) {
        for d in 0..adj.len() {
            let dist = adj.distances(d as u32);
            for r in (0..adj.len()).filter(|&r| r != d) {
                if let Some(port) = adj.peers[r]
                    .iter()
                    .position(|&p| dist[p as usize] + 1 == dist[r])
                {
                    self.set(r, d, port);
                }
            }
        }
    }

    fn fill_table(&mut self, path: &str, adj: &Adjacency, table: &[TableEntry]) -> Result<()> {
        let n = adj.len();
        let mut seen = vec![0usize; n * n];
        for e in table {
            let err =
                |msg: String| Error::input(Location::at(path, e.line, 1).with_field("route"), msg);
            if e.at == e.dst {
                return Err(err(format!(
                    "a route at router {} toward itself (packets for a router's own nodes leave by their port)",
                    e.at
                )));
            }
            let Some(port) = adj.peers[e.at as usize].iter().position(|&p| p == e.via) else {
                return Err(err(format!(
                    "router {} has no link to router {} (its neighbours: {})",
                    e.at,
                    e.via,
                    list(&adj.peers[e.at as usize])
                )));
            };
            let k = e.at as usize * n + e.dst as usize;
            if seen[k] != 0 {
                return Err(err(format!(
                    "a second route at router {} toward router {} (the first is on line {})",
                    e.at, e.dst, seen[k]
                )));
            }
            seen[k] = e.line;
            self.set(e.at as usize, e.dst as usize, port);
        }
        Ok(())
    }

    /// Follows the routes from every router with nodes to every other: each must arrive,
    /// without a loop. Gives the most hops taken.
    fn check_reach(
        &self,
        path: &str,
        adj: &Adjacency,
        has_nodes: &[bool],
        lines: &[usize],
    ) -> Result<u32> {
        let n = adj.len();
        // hops[r]: hops from r to d (MAX: not known yet; MAX - 1: on the walk now).
        let (unknown, walking) = (u32::MAX, u32::MAX - 1);
        let mut hops = vec![unknown; n];
        let mut walk = Vec::new();
        let mut diameter = 0;
        for d in (0..n).filter(|&d| has_nodes[d]) {
            hops.fill(unknown);
            hops[d] = 0;
            for s in (0..n).filter(|&s| has_nodes[s]) {
                let mut r = s;
                walk.clear();
                while hops[r] == unknown {
                    let port = self.next[r * n + d];
                    if port == NO_PORT {
                        return Err(Error::input(
                            Location::file(path).with_field("route"),
                            format!("no route at router {r} toward router {d} (the route from router {s} passes there): add `route {r} {d} via NEXT`"),
                        ));
                    }
                    hops[r] = walking;
                    walk.push(r);
                    r = adj.peers[r][port as usize] as usize;
                }
                if hops[r] == walking {
                    let at = walk.iter().position(|&x| x == r).unwrap_or(0);
                    let cycle: Vec<String> = walk[at..]
                        .iter()
                        .chain(std::iter::once(&r))
                        .map(|x| x.to_string())
                        .collect();
                    let loc = match lines.get(r * n + d).copied().unwrap_or(0) {
                        0 => Location::file(path),
                        l => Location::at(path, l, 1),
                    };
                    return Err(Error::input(
                        loc.with_field("route"),
                        format!(
                            "the routes toward router {d} loop: {} (from router {s})",
                            cycle.join(" -> ")
                        ),
                    ));
                }
                for (i, &x) in walk.iter().rev().enumerate() {
                    hops[x] = hops[r] + 1 + i as u32;
                }
                diameter = diameter.max(hops[s]);
            }
        }
        Ok(diameter)
    }

    /// The channel dependency graph of the routes between routers with nodes (a channel
    /// is a router's output port; a packet holding one waits for the next) must be
    /// acyclic for one VC class to be deadlock-free.
    pub fn check_deadlock_free(
        &self,
        path: &str,
        adj: &Adjacency,
        has_nodes: &[bool],
        lines: &[usize],
    ) -> Result<()> {
        let n = adj.len();
        let mut first = vec![0u32; n + 1];
        for r in 0..n {
            first[r + 1] = first[r] + adj.peers[r].len() as u32;
        }
        let channel = |r: usize, port: u16| first[r] + port as u32;
        // Dependencies, with the destination that makes each (for the message).
        let mut deps: Vec<(u32, u32, u32)> = Vec::new();
        for d in (0..n).filter(|&d| has_nodes[d]) {
            let mut used = vec![false; n];
            for s in (0..n).filter(|&s| has_nodes[s]) {
                let mut r = s;
                while r != d && !used[r] {
                    used[r] = true;
                    let port = self.next[r * n + d];
                    let next = adj.peers[r][port as usize] as usize;
                    if next != d {
                        let c2 = channel(next, self.next[next * n + d]);
                        deps.push((channel(r, port), c2, d as u32));
                    }
                    r = next;
                }
            }
        }
        deps.sort_unstable();
        deps.dedup_by_key(|x| (x.0, x.1));
        let channels = first[n] as usize;
        let mut out_start = vec![0usize; channels + 1];
        for &(a, _, _) in &deps {
            out_start[a as usize + 1] += 1;
        }
        for c in 0..channels {
            out_start[c + 1] += out_start[c];
        }
        // Depth-first search; a channel met again on the stack closes a cycle.
        let mut state = vec![0u8; channels]; // 0 new, 1 on the stack, 2 done
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for start in 0..channels as u32 {
            if state[start as usize] != 0 {
                continue;
            }
            stack.push((start, out_start[start as usize]));
            state[start as usize] = 1;
            while let Some(&mut (c, ref mut i)) = stack.last_mut() {
                if *i == out_start[c as usize + 1] {
                    state[c as usize] = 2;
                    stack.pop();
                    continue;
                }
                let (_, to, d) = deps[*i];
                *i += 1;
                match state[to as usize] {
                    0 => {
                        state[to as usize] = 1;
                        stack.push((to, out_start[to as usize]));
                    }
                    1 => {
                        let at = stack.iter().position(|x| x.0 == to).unwrap_or(0);
                        let name = |c: u32| {
                            let r = first.partition_point(|&f| f <= c) - 1;
                            let p = adj.peers[r][(c - first[r]) as usize];
                            format!("{r}->{p}")
                        };
                        let cycle: Vec<String> = stack[at..].iter().map(|x| name(x.0)).collect();
                        let r = first.partition_point(|&f| f <= c) - 1;
                        let loc = match lines.get(r * n + d as usize).copied().unwrap_or(0) {
                            0 => Location::file(path),
                            l => Location::at(path, l, 1),
                        };
                        return Err(Error::input(
                            loc.with_field("route"),
                            format!(
                                "the routes can deadlock: the links {} wait on each other in a cycle, each for the next (with one VC class); break the cycle, or use topology.routes = \"updown\" or \"layered\"",
                                cycle.join(", ")
                            ),
                        ));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

/// The line of each table entry, by (router, destination); 0 where none.
fn table_lines(n: usize, table: &[TableEntry]) -> Vec<usize> {
    let mut lines = vec![0; if table.is_empty() { 0 } else { n * n }];
    for e in table {
        lines[e.at as usize * n + e.dst as usize] = e.line;
    }
    lines
}

fn list(routers: &[u32]) -> String {
    if routers.is_empty() {
        return "none".into();
    }
    routers
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
