//! One row per directed link: what crossed it, how busy it was, and what waited for it.
//!
//! A million-node machine has millions of links, and most outputs read none of them (the
//! JSON leaves them out above `MAX_JSON_LINKS`). The table keeps the network's counts as
//! they were (moved, not copied) and each wired link's ends (20 bytes), and makes the
//! [`LinkResult`] with its name and utilization when a row is read.

use crate::machine::topology::{LinkClass, LinkEnd, Peer, Topology};
use crate::network::interface::LinkTotals;
use crate::network::Network;
use crate::results::rows::rows_on;
use crate::units::Ps;
use compact_str::{format_compact, CompactString};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct LinkResult {
    pub link: u32,
    /// Held in place (names are short).
    pub name: CompactString,
    pub class: &'static str,
    pub bandwidth_bytes_per_s: u64,
    pub bytes: u64,
    pub packets: u64,
    pub busy_ps: Ps,
    pub utilization: f64,
    /// Time packets waited for the link, and the link idled for want of buffer space
    /// downstream: absent where the model has no packets and no buffers (`flow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_ps: Option<Ps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_ps: Option<Ps>,
    /// Routers at the two ends (absent at a NIC end).
    pub src_router: Option<u32>,
    pub dst_router: Option<u32>,
}

/// A wired link as the table keeps it: its ends, as its name needs them (its counts are
/// in `LinkTable::stats`).
#[derive(Debug, Clone, Copy)]
pub struct LinkRow {
    link: u32,
    class: LinkClass,
    /// Its kind (`Topology::link_kind`), which sets its bandwidth.
    kind: u8,
    /// Injection: the NIC and its router. Ejection: the router, its port (counted from
    /// the router's first) and the NIC. Router to router: the two routers and the port.
    from: u32,
    port: u32,
    to: u32,
}

/// Every wired link of a run (router ports with no peer are left out), in link order.
#[derive(Debug, Clone, Default)]
pub struct LinkTable {
    rows: Vec<LinkRow>,
    /// Every link's counts, by link id (wired or not), as the network kept them.
    stats: LinkTotals,
    /// Bandwidth per link kind (`Topology::link_kind`): a graph's links of one class may
    /// each have their own.
    rates: Vec<u64>,
    /// The run's length, for utilizations.
    elapsed: Ps,
}

impl LinkTable {
    /// The links of `net` over a run of `elapsed`; their counts move out of `net`. A
    /// large table's rows are made on up to `threads` threads.
    pub fn new(net: &mut impl Network, elapsed: Ps, threads: usize) -> LinkTable {
        let topo = net.topology();
        let wired = |l: u32| l >= topo.num_ports() || topo.ports.peer[l as usize] != Peer::None;
        let rows: Vec<LinkRow> = if (0..topo.num_ports()).all(wired) {
            rows_on(topo.num_links() as usize, threads, |l| {
                row(topo, l as u32, topo.link_class(l as u32))
            })
        } else {
            (0..topo.num_links())
                .filter(|&l| wired(l))
                .map(|l| row(topo, l, topo.link_class(l)))
                .collect()
        };
        LinkTable {
            rows,
            stats: net.take_link_stats(),
            rates: net.kind_rates(),
            elapsed,
        }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows, made one by one.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = LinkResult> + '_ {
        self.rows.iter().map(|r| self.result(r))
    }

    /// The `i`-th row (in link order); panics past the end, like indexing.
    pub fn row_at(&self, i: usize) -> LinkResult {
        self.result(&self.rows[i])
    }

    /// Link `link` (by its id), if it is wired.
    pub fn by_id(&self, link: u32) -> Option<LinkResult> {
        let i = self.rows.binary_search_by_key(&link, |r| r.link).ok()?;
        Some(self.result(&self.rows[i]))
    }

    /// Each link's id and bytes, without making its row.
    pub fn bytes(&self) -> impl ExactSizeIterator<Item = (u32, u64)> + '_ {
        self.rows
            .iter()
            .map(|r| (r.link, self.stats.counts(r.link).bytes))
    }

    /// The link named `name`.
    pub fn by_name(&self, name: &str) -> Option<u32> {
        self.rows
            .iter()
            .find(|r| row_name(r) == name)
            .map(|r| r.link)
    }

    /// The `n` busiest links' ids: the fabric's (router to router) first, longest busy time
    /// first, ties to the lower id; NIC links only where the fabric has fewer than `n`
    /// links that carried anything (a crossbar has none). Idle links are never picked.
    pub fn busiest(&self, n: usize) -> Vec<u32> {
        let mut by_use: Vec<(bool, Ps, u32)> = self
            .rows
            .iter()
            .map(|r| (r, self.stats.counts(r.link).busy_ps))
            .filter(|&(_, busy)| busy > 0)
            .map(|(r, busy)| {
                let nic = matches!(r.class, LinkClass::Injection | LinkClass::Ejection);
                (nic, busy, r.link)
            })
            .collect();
        let cmp = |a: &(bool, Ps, u32), b: &(bool, Ps, u32)| {
            a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2))
        };
        if n < by_use.len() {
            by_use.select_nth_unstable_by(n, cmp);
            by_use.truncate(n);
        }
        by_use.sort_unstable_by(cmp);
        by_use.into_iter().map(|(_, _, l)| l).collect()
    }

    fn result(&self, r: &LinkRow) -> LinkResult {
        let s = self.stats.counts(r.link);
        let waits = self.stats.waits(r.link);
        let (src_router, dst_router) = match r.class {
            LinkClass::Injection => (None, Some(r.to)),
            LinkClass::Ejection => (Some(r.from), None),
            LinkClass::Network | LinkClass::Local | LinkClass::Global => (Some(r.from), Some(r.to)),
        };
        LinkResult {
            link: r.link,
            name: row_name(r),
            class: r.class.name(),
            bandwidth_bytes_per_s: self.rates[r.kind as usize],
            bytes: s.bytes,
            packets: s.packets,
            busy_ps: s.busy_ps,
            utilization: if self.elapsed > 0 {
                s.busy_ps as f64 / self.elapsed as f64
            } else {
                0.0
            },
            wait_ps: waits.map(|w| w.0),
            stall_ps: waits.map(|w| w.1),
            src_router,
            dst_router,
        }
    }
}

/// The row of wired link `l`.
fn row(topo: &Topology, l: u32, class: LinkClass) -> LinkRow {
    let (from, port, to) = if l >= topo.num_ports() {
        let nic = l - topo.num_ports();
        let to = match topo.link_end(l) {
            Some(LinkEnd::RouterIn(p)) => topo.ports.port_router[p as usize],
            _ => topo.nic_router(nic),
        };
        (nic, 0, to)
    } else {
        let r = topo.ports.port_router[l as usize];
        let local = l - topo.ports.port_base[r as usize];
        let to = match topo.ports.peer[l as usize] {
            Peer::Router(p) => topo.ports.port_router[p as usize],
            Peer::Nic(n) => n,
            Peer::None => 0,
        };
        (r, local, to)
    };
    LinkRow {
        link: l,
        class,
        kind: topo.link_kind(l),
        from,
        port,
        to,
    }
}

/// A link's name, as [`Topology::link_name`] gives it: `r3.p1->r4`, `nic5->r2`, `r2.p4->nic5`.
fn row_name(r: &LinkRow) -> CompactString {
    match r.class {
        LinkClass::Injection => format_compact!("nic{}->r{}", r.from, r.to),
        LinkClass::Ejection => format_compact!("r{}.p{}->nic{}", r.from, r.port, r.to),
        LinkClass::Network | LinkClass::Local | LinkClass::Global => {
            format_compact!("r{}.p{}->r{}", r.from, r.port, r.to)
        }
    }
}
