//! What a run reports: the JSON summary and the per-link table.

use crate::machine::loaded::Machine;
use crate::machine::topology::{LinkEnd, Peer, Shape, Topology};
use crate::network::Network;
use crate::runtime::{Runtime, TraceKind, CATEGORIES};
use crate::units::{format_time, Ps, PS_PER_S};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Debug, Clone, Serialize)]
pub struct RankResult {
    pub rank: u32,
    pub node: u32,
    pub finish_ps: Ps,
    pub compute_ps: Ps,
    /// Library overheads paid on the CPU.
    pub overhead_ps: Ps,
    /// Time blocked, by call kind (inside a collective: the collective's kind).
    pub blocked_ps: BTreeMap<&'static str, Ps>,
}

/// Bytes of the results of a run with `ops` transfers, `recvs` receives, `links` links and
/// `ranks` ranks.
pub fn estimate_bytes(ops: u64, recvs: u64, links: u64, ranks: u64) -> u64 {
    use std::mem::size_of;
    ops * size_of::<OperationResult>() as u64
        + recvs * size_of::<ReceiveResult>() as u64
        + links * (size_of::<LinkResult>() as u64 + 32)
        + ranks * (size_of::<RankResult>() as u64 + 64)
}

/// `1 rank`, `2 ranks`.
fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Why a run stopped before its program finished (`max-events`, ... in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    MaxEvents,
    MaxSimTime,
    Interrupted,
}

impl StopReason {
    pub fn name(self) -> &'static str {
        match self {
            StopReason::MaxEvents => "max-events",
            StopReason::MaxSimTime => "max-sim-time",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// Present when the run was stopped before the program finished (`--max-events`,
/// `--max-sim-time`, Ctrl-C): every figure covers the run up to `stopped_at_ps` only.
#[derive(Debug, Clone, Serialize)]
pub struct Partial {
    pub reason: StopReason,
    pub stopped_at_ps: Ps,
    pub ranks_finished: u32,
}

/// A rank that reached its end with requests (isend/irecv, put, get) not complete.
#[derive(Debug, Clone, Serialize)]
pub struct UnfinishedResult {
    pub rank: u32,
    pub count: u32,
    /// What the first pending request waits for.
    pub first: String,
}

/// One receive and the message it matched.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiveResult {
    pub rank: u32,
    /// The sender of the matched message and its tag (absent if it never matched).
    pub src: Option<u32>,
    pub tag: Option<i64>,
    pub size: Option<u64>,
    pub protocol: Option<&'static str>,
    pub posted_ps: Ps,
    /// Its data in memory.
    pub landed_ps: Option<Ps>,
    pub complete_ps: Option<Ps>,
}

/// One collective call.
#[derive(Debug, Clone, Serialize)]
pub struct CollectiveResult {
    pub kind: String,
    pub algorithm: String,
    pub comm: String,
    pub size: u64,
    pub root: u32,
    pub ranks: u32,
    /// First rank in, last rank out.
    pub start_ps: Ps,
    pub end_ps: Ps,
    pub duration_ps: Ps,
    /// Mean time a rank spent in the call.
    pub mean_rank_ps: f64,
    /// Messages (or puts) its algorithm sent, and their bytes.
    pub messages: u64,
    pub bytes: u64,
}

/// One put or get. Times are picoseconds from the start of the run.
#[derive(Debug, Clone, Serialize)]
pub struct OperationResult {
    pub kind: &'static str,
    /// The rank that issued it.
    pub rank: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub tag: i64,
    pub issue_ps: Ps,
    /// First DMA of the data starts.
    pub dma_start_ps: Option<Ps>,
    /// Last byte in the destination's memory (`T_end`).
    pub landed_ps: Option<Ps>,
    pub complete_ps: Option<Ps>,
    /// `complete - issue`: what the rank waited, including the issue overhead and any wait
    /// for the NIC's DMA engine.
    pub latency_ps: Option<Ps>,
    /// `complete - dma_start`: from the first DMA of the data (the 2015 paper's `T_start`)
    /// to completion, without the wait for a busy DMA engine. The paper's put latency
    /// `T_pp + (T_end - T_start) + T_control + T_pp` is this plus the issue overhead.
    pub network_latency_ps: Option<Ps>,
    /// `size / (complete - issue)`, bytes per second.
    pub bandwidth_bytes_per_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RegionResult {
    pub name: String,
    /// Ranks that entered it (counting repeated entries).
    pub count: u64,
    pub min_ps: Ps,
    pub max_ps: Ps,
    pub mean_ps: f64,
    pub first_begin_ps: Ps,
    pub last_end_ps: Ps,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkResult {
    pub link: u32,
    pub name: String,
    pub class: &'static str,
    pub bandwidth_bytes_per_s: u64,
    pub bytes: u64,
    pub packets: u64,
    pub busy_ps: Ps,
    pub utilization: f64,
    pub wait_ps: Ps,
    pub stall_ps: Ps,
    /// Routers at the two ends (absent at a NIC end).
    pub src_router: Option<u32>,
    pub dst_router: Option<u32>,
}

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

/// Packets of one NIC and their paths (ACES reports hop counts per NIC).
#[derive(Debug, Clone, Serialize)]
pub struct NicResult {
    pub nic: u32,
    pub node: u32,
    pub injected_packets: u64,
    pub ejected_packets: u64,
    /// Mean router-to-router hops of the packets it injected.
    pub mean_hops: f64,
    /// Fraction of the packets it injected that were routed minimally.
    pub minimal_fraction: f64,
}

/// One interval of a rank's time (present when the run was traced).
#[derive(Debug, Clone, Serialize)]
pub struct TraceEntry {
    pub rank: u32,
    /// `compute`, `overhead`, `blocked`, `region` or `collective`.
    pub kind: &'static str,
    /// What it was: the call kind for `blocked`, the region or collective name.
    pub name: String,
    pub start_ps: Ps,
    pub end_ps: Ps,
}

/// Above this many links the JSON summary leaves them out (use --links-csv).
pub const MAX_JSON_LINKS: usize = 100_000;

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub acesim_version: &'static str,
    pub topology: String,
    pub predicted_time_ps: Ps,
    /// Set when the run stopped early; absent for a complete run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
    pub predicted_time: String,
    pub ranks: u32,
    pub events: u64,
    pub packet_hops: u64,
    pub bytes_injected: u64,
    /// Time the simulation took; in the printed summary only, so that output files are
    /// byte-identical for the same inputs.
    #[serde(skip)]
    pub wall_seconds: f64,
    pub per_rank: Vec<RankResult>,
    pub operations: Vec<OperationResult>,
    /// Receives of user messages (collective-internal ones are summarised in `collectives`).
    pub receives: Vec<ReceiveResult>,
    pub regions: Vec<RegionResult>,
    pub collectives: Vec<CollectiveResult>,
    /// Puts that landed but no poll consumed: (rank, tag, count).
    pub unpolled_puts: Vec<(u32, i64, u32)>,
    /// Messages that no receive matched: (src, dst, tag, count).
    pub unmatched_messages: Vec<(u32, u32, i64, u32)>,
    /// Receives still posted at the end (their rank finished with requests pending).
    pub unmatched_receives: usize,
    /// Ranks that finished with requests still pending.
    pub unfinished_requests: Vec<UnfinishedResult>,
    pub topology_detail: TopologyDetail,
    /// Per NIC (left out above 100 000 NICs), and over all NICs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<NicResult>,
    pub mean_hops: f64,
    pub minimal_fraction: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkResult>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub links_omitted: bool,
    /// Per-rank intervals, when traced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<TraceEntry>>,
    /// Links' busy intervals, when traced (for timelines; not in the JSON).
    #[serde(skip)]
    pub link_activity: Option<Vec<Vec<(Ps, Ps)>>>,
    /// All links, also when left out of the JSON.
    #[serde(skip)]
    pub all_links: Vec<LinkResult>,
}

pub fn collect(
    _machine: &Machine,
    net: &impl Network,
    rt: &Runtime,
    events: u64,
    wall: f64,
    partial: Option<Partial>,
) -> Results {
    // A stopped run's time is where it stopped: a lower bound of the full run's.
    let predicted = partial
        .as_ref()
        .map_or(rt.last_activity, |p| p.stopped_at_ps);
    let ranks = rt.program.ranks;
    let per_rank = (0..ranks)
        .map(|r| {
            let st = rt.rank_stats(r);
            RankResult {
                rank: r,
                node: rt.placement.node[r as usize],
                finish_ps: rt.rank_finish(r).unwrap_or(predicted),
                compute_ps: st.compute_ps,
                overhead_ps: st.overhead_ps,
                blocked_ps: CATEGORIES
                    .iter()
                    .zip(&st.blocked_ps)
                    .filter(|(_, &t)| t > 0)
                    .map(|(c, &t)| (*c, t))
                    .collect(),
            }
        })
        .collect();
    let receives = rt
        .recvs
        .iter()
        .filter(|rv| rv.ctx % 2 == 0)
        .map(|rv| {
            let x = rt.xfers.get(rv.xfer as usize);
            ReceiveResult {
                rank: rv.rank,
                src: x.map(|x| x.src_rank),
                tag: x.map(|x| x.tag),
                size: x.map(|x| x.size),
                protocol: x.map(|x| if x.rendezvous { "rendezvous" } else { "eager" }),
                posted_ps: rv.posted,
                landed_ps: x.and_then(|x| x.landed),
                complete_ps: rv.complete,
            }
        })
        .collect();
    // Collective steps are summarised per call, not listed one by one.
    let mut coll_traffic = vec![(0u64, 0u64); rt.program.collectives.len()];
    for x in rt.xfers.iter().filter(|x| x.coll != crate::program::NONE) {
        let t = &mut coll_traffic[x.coll as usize];
        t.0 += 1;
        t.1 += x.size;
    }
    let collectives = rt
        .program
        .collectives
        .iter()
        .zip(&rt.colls)
        .zip(&coll_traffic)
        .map(|((c, rec), &(messages, bytes))| CollectiveResult {
            kind: c.kind.clone(),
            algorithm: c.algorithm.clone(),
            comm: rt
                .program
                .comms
                .get(c.comm as usize)
                .map_or_else(String::new, |m| m.name.clone()),
            size: c.size,
            root: c.root,
            ranks: rec.ranks,
            start_ps: if rec.ranks == 0 { 0 } else { rec.first_begin },
            end_ps: rec.last_end,
            duration_ps: rec.last_end.saturating_sub(if rec.ranks == 0 {
                rec.last_end
            } else {
                rec.first_begin
            }),
            mean_rank_ps: if rec.ranks == 0 {
                0.0
            } else {
                rec.sum_ps as f64 / rec.ranks as f64
            },
            messages,
            bytes,
        })
        .collect();
    let operations = rt
        .xfers
        .iter()
        .filter(|x| x.coll == crate::program::NONE)
        .map(|x| {
            let latency = x.complete.map(|c| c - x.issue);
            OperationResult {
                kind: x.kind.name(),
                rank: x.rank,
                src: x.src_rank,
                dst: x.dst_rank,
                size: x.size,
                tag: x.tag,
                issue_ps: x.issue,
                dma_start_ps: x.dma_start,
                landed_ps: x.landed,
                complete_ps: x.complete,
                latency_ps: latency,
                network_latency_ps: x
                    .complete
                    .zip(x.dma_start)
                    .map(|(c, d)| c.saturating_sub(d)),
                bandwidth_bytes_per_s: latency
                    .filter(|&l| l > 0)
                    .map(|l| x.size as f64 * PS_PER_S as f64 / l as f64),
            }
        })
        .collect();
    let mut regions: Vec<RegionResult> = Vec::new();
    for (id, name) in rt.program.regions.iter().enumerate() {
        let recs: Vec<_> = rt
            .regions
            .iter()
            .filter(|r| r.region as usize == id)
            .collect();
        if recs.is_empty() {
            continue;
        }
        let durs: Vec<Ps> = recs.iter().map(|r| r.end - r.begin).collect();
        regions.push(RegionResult {
            name: name.clone(),
            count: recs.len() as u64,
            min_ps: *durs.iter().min().unwrap_or(&0),
            max_ps: *durs.iter().max().unwrap_or(&0),
            mean_ps: durs.iter().sum::<Ps>() as f64 / durs.len() as f64,
            first_begin_ps: recs.iter().map(|r| r.begin).min().unwrap_or(0),
            last_end_ps: recs.iter().map(|r| r.end).max().unwrap_or(0),
        });
    }
    let topo = net.topology();
    let links = (0..topo.num_links())
        .filter(|&l| l >= topo.num_ports() || topo.ports.peer[l as usize] != Peer::None)
        .map(|l| {
            let s = net.link_stats(l);
            LinkResult {
                link: l,
                name: topo.link_name(l),
                class: topo.link_class(l).name(),
                bandwidth_bytes_per_s: net.link_rate(l),
                bytes: s.bytes,
                packets: s.packets,
                busy_ps: s.busy_ps,
                utilization: if predicted > 0 {
                    s.busy_ps as f64 / predicted as f64
                } else {
                    0.0
                },
                wait_ps: s.wait_ps,
                stall_ps: s.stall_ps,
                src_router: if l >= topo.num_ports() {
                    None
                } else {
                    Some(topo.ports.port_router[l as usize])
                },
                dst_router: match topo.link_end(l) {
                    Some(LinkEnd::RouterIn(p)) => Some(topo.ports.port_router[p as usize]),
                    _ => None,
                },
            }
        })
        .collect::<Vec<LinkResult>>();
    let (grid, fat_tree, leaf_spine) = match &topo.shape {
        Shape::Grid(g) => (Some(g), None, None),
        Shape::FatTree(f) => (None, Some(f), None),
        Shape::LeafSpine(l) => (None, None, Some(l)),
        Shape::Crossbar | Shape::Dragonfly(_) => (None, None, None),
    };
    let topology_detail = TopologyDetail {
        kind: topo.kind().to_string(),
        routers: topo.num_routers,
        nodes: topo.num_nodes,
        nics_per_node: topo.nics_per_node(),
        dims: grid.map(|g| g.dims.clone()),
        wrap: grid.map(|g| g.wrap.clone()),
        nodes_per_router: topo.nodes_per_router(),
        k: fat_tree.map(|f| f.k),
        n: fat_tree.map(|f| f.n),
        leaves: leaf_spine.map(|l| l.leaves),
        spines: leaf_spine.map(|l| l.spines),
    };
    let trace = rt.trace.as_ref().map(|intervals| {
        let mut v: Vec<TraceEntry> = intervals
            .iter()
            .map(|i| {
                let (kind, name) = match i.kind {
                    TraceKind::Compute => ("compute", "compute".to_string()),
                    TraceKind::Overhead => ("overhead", "overhead".to_string()),
                    TraceKind::Blocked(c) => ("blocked", CATEGORIES[c as usize].to_string()),
                    TraceKind::Collective(c) => {
                        let call = &rt.program.collectives[c as usize];
                        ("collective", format!("{} ({})", call.kind, call.algorithm))
                    }
                };
                TraceEntry {
                    rank: i.rank,
                    kind,
                    name,
                    start_ps: i.start,
                    end_ps: i.end,
                }
            })
            .collect();
        v.extend(rt.regions.iter().map(|r| TraceEntry {
            rank: r.rank,
            kind: "region",
            name: rt.program.regions[r.region as usize].clone(),
            start_ps: r.begin,
            end_ps: r.end,
        }));
        v.sort_by_key(|e| (e.rank, e.start_ps, std::cmp::Reverse(e.end_ps)));
        v
    });
    let links_omitted = links.len() > MAX_JSON_LINKS;
    let ns = net.nic_stats();
    let nics: Vec<NicResult> = if ns.len() > MAX_JSON_LINKS {
        Vec::new()
    } else {
        ns.iter()
            .enumerate()
            .filter(|(_, s)| s.injected_packets > 0 || s.ejected_packets > 0)
            .map(|(i, s)| NicResult {
                nic: i as u32,
                node: topo.nic_node(i as u32),
                injected_packets: s.injected_packets,
                ejected_packets: s.ejected_packets,
                mean_hops: if s.injected_packets == 0 {
                    0.0
                } else {
                    s.hops as f64 / s.injected_packets as f64
                },
                minimal_fraction: if s.injected_packets == 0 {
                    1.0
                } else {
                    s.minimal_packets as f64 / s.injected_packets as f64
                },
            })
            .collect()
    };
    let injected_all: u64 = ns.iter().map(|s| s.injected_packets).sum();
    let mean_hops = if injected_all == 0 {
        0.0
    } else {
        ns.iter().map(|s| s.hops).sum::<u64>() as f64 / injected_all as f64
    };
    let minimal_fraction = if injected_all == 0 {
        1.0
    } else {
        ns.iter().map(|s| s.minimal_packets).sum::<u64>() as f64 / injected_all as f64
    };
    Results {
        acesim_version: env!("CARGO_PKG_VERSION"),
        topology: describe_topology(topo),
        predicted_time_ps: predicted,
        partial,
        predicted_time: format_time(predicted),
        ranks,
        events,
        packet_hops: net.counters().packet_hops,
        bytes_injected: net.counters().bytes_injected,
        wall_seconds: wall,
        per_rank,
        operations,
        regions,
        unpolled_puts: rt.unpolled(),
        unmatched_messages: rt.unmatched_messages(),
        unmatched_receives: rt.unmatched_receives(),
        unfinished_requests: rt
            .unfinished
            .iter()
            .map(|u| UnfinishedResult {
                rank: u.rank,
                count: u.count,
                first: u.first.clone(),
            })
            .collect(),
        receives,
        collectives,
        topology_detail,
        nics,
        mean_hops,
        minimal_fraction,
        links: if links_omitted {
            Vec::new()
        } else {
            links.clone()
        },
        links_omitted,
        trace,
        link_activity: net.link_activity().map(<[_]>::to_vec),
        all_links: links,
    }
}

fn describe_topology(topo: &Topology) -> String {
    let shape = match &topo.shape {
        Shape::Grid(g) => format!(
            "{} {}",
            topo.kind(),
            g.dims
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("x")
        ),
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

impl Results {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// Streams the JSON summary (same text as `to_json`) without building it in memory:
    /// a run with millions of operations would otherwise hold gigabytes of text.
    pub fn write_json(&self, w: impl std::io::Write) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
        serde_json::to_writer_pretty(&mut w, self).map_err(std::io::Error::other)?;
        std::io::Write::flush(&mut w)
    }

    /// One row per directed link.
    pub fn links_csv(&self) -> String {
        let mut out = String::from("link,name,class,bandwidth_bytes_per_s,bytes,packets,busy_ps,utilization,wait_ps,stall_ps\n");
        for l in &self.all_links {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{:.6},{},{}",
                l.link,
                l.name,
                l.class,
                l.bandwidth_bytes_per_s,
                l.bytes,
                l.packets,
                l.busy_ps,
                l.utilization,
                l.wait_ps,
                l.stall_ps
            );
        }
        out
    }

    /// A short human summary.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        if let Some(p) = &self.partial {
            let _ = writeln!(
                s,
                "PARTIAL RESULTS: the run was stopped ({}) at {} with {} of {} ranks finished; the time below is a lower bound",
                p.reason.name(),
                format_time(p.stopped_at_ps),
                p.ranks_finished,
                self.ranks
            );
        }
        let _ = writeln!(
            s,
            "{} execution time: {} ({} ps)",
            if self.partial.is_some() {
                "simulated"
            } else {
                "predicted"
            },
            self.predicted_time,
            self.predicted_time_ps
        );
        let _ = writeln!(s, "machine: {}", self.topology);
        // Collective steps are not listed as operations; say they ran.
        let in_collectives = if self.collectives.is_empty() {
            String::new()
        } else {
            let messages: u64 = self.collectives.iter().map(|c| c.messages).sum();
            format!(
                " (+{messages} in {} collective calls)",
                self.collectives.len()
            )
        };
        let _ = writeln!(
            s,
            "ranks: {}   operations: {}{in_collectives}   events: {}   packet-hops: {}   wall: {:.3} s",
            self.ranks,
            self.operations.len(),
            self.events,
            self.packet_hops,
            self.wall_seconds
        );
        for r in &self.regions {
            let _ = writeln!(
                s,
                "region {}: {} entries, min {}, mean {}, max {}",
                r.name,
                r.count,
                format_time(r.min_ps),
                format_time(r.mean_ps as Ps),
                format_time(r.max_ps)
            );
        }
        if !self.collectives.is_empty() {
            let mut by: BTreeMap<(&str, &str), (u64, Ps)> = BTreeMap::new();
            for c in &self.collectives {
                let e = by.entry((&c.kind, &c.algorithm)).or_insert((0, 0));
                e.0 += 1;
                e.1 += c.duration_ps;
            }
            for ((kind, algo), (n, total)) in by {
                let _ = writeln!(
                    s,
                    "{kind} ({algo}): {n} calls, mean {}",
                    format_time(total / n)
                );
            }
        }
        if !self.unmatched_messages.is_empty() {
            let n: u32 = self.unmatched_messages.iter().map(|m| m.3).sum();
            let _ = writeln!(
                s,
                "warning: {n} messages were never received ({} sender/receiver/tag combinations; see unmatched_messages in --json)",
                self.unmatched_messages.len()
            );
        }
        if !self.unfinished_requests.is_empty() {
            let n: u32 = self.unfinished_requests.iter().map(|u| u.count).sum();
            let first = &self.unfinished_requests[0];
            let _ = writeln!(
                s,
                "warning: {} finished with {n} request{} pending (rank {}: {}; see unfinished_requests in --json)",
                plural(self.unfinished_requests.len() as u64, "rank"),
                if n == 1 { "" } else { "s" },
                first.rank,
                first.first
            );
        }
        if !self.unpolled_puts.is_empty() {
            let n: u32 = self.unpolled_puts.iter().map(|u| u.2).sum();
            let _ = writeln!(
                s,
                "note: {n} puts landed but were never polled (see unpolled_puts in --json)"
            );
        }
        s
    }
}
