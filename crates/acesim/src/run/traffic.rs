//! Synthetic traffic: every node injects packets of a pattern at an offered load, and the
//! latency and accepted throughput are measured over a window, as network architects do
//! with BookSim, SuperSim or SST/Merlin.
//!
//! A run has a warm-up, then a measurement window: packets created in the window are the
//! measured ones; generation stops at its end and the run continues until they have all
//! arrived (or a drain limit passes: the load is past saturation). Packets skip the DMA
//! engines: only the network is measured. Latency is from a packet's creation (so it counts
//! the time it waited in its source queue) to its tail reaching the destination NIC.
//! Offered and accepted loads are fractions of the injection link bandwidth.

use crate::engine::EventQueue;
use crate::error::{Error, Location, Result};
use crate::machine::loaded::Machine;
use crate::machine::topology::{LinkClass, Shape as TopoShape, Topology};
use crate::network::packet::{PacketEvent, PacketNetwork};
use crate::network::{Network, Notice};
use crate::rng::Rng;
use crate::run::events::Event;
use crate::run::patterns::{Pattern, Shape, Traffic};
use crate::units::{transfer_time, Ps};
use serde::Serialize;

/// How packets are generated at each node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injection {
    /// In each slot (one flit time) a packet starts with probability load·flit/packet.
    Bernoulli,
    /// Exactly one packet every packet/(load·bandwidth).
    Periodic,
}

impl Injection {
    pub fn parse(s: &str) -> std::result::Result<Injection, String> {
        match s {
            "bernoulli" => Ok(Injection::Bernoulli),
            "periodic" => Ok(Injection::Periodic),
            other => Err(format!(
                "unknown injection '{other}' (bernoulli or periodic)"
            )),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TrafficConfig {
    pub pattern: Pattern,
    /// Offered load, a fraction of the injection link bandwidth (0, 1].
    pub load: f64,
    /// Packet size on the wire (header included).
    pub packet: u64,
    /// Slot of the Bernoulli process (BookSim's cycle: one flit time).
    pub flit: u64,
    pub injection: Injection,
    pub warmup: Ps,
    pub measure: Ps,
    /// Longest time after the window to wait for the measured packets.
    pub drain: Ps,
    pub seed: u64,
    /// Check the model's invariants as the run goes and when it stops (`--check`; always
    /// on in debug builds).
    pub check: bool,
}

impl TrafficConfig {
    /// A configuration with the documented defaults for what is not given: the flit is the
    /// packet, warm-up 1000 and measurement 5000 packet times on the injection link, drain
    /// 10 windows. The load is set per point (`run_loads`).
    #[allow(clippy::too_many_arguments)]
    pub fn with_defaults(
        machine: &Machine,
        pattern: Pattern,
        packet: u64,
        flit: Option<u64>,
        injection: Injection,
        warmup: Option<Ps>,
        measure: Option<Ps>,
        drain: Option<Ps>,
        seed: u64,
    ) -> Result<TrafficConfig> {
        // The packet first: the default windows are multiples of its time on the wire.
        check_packet(machine, packet, flit.unwrap_or(packet))?;
        let packet_time = transfer_time(packet, machine.nic_link().bandwidth.0);
        let measure = measure.unwrap_or(5000 * packet_time);
        if measure == 0 {
            return Err(Error::input(
                Location::file("command line").with_field("measure"),
                "the measurement window must be longer than 0",
            ));
        }
        Ok(TrafficConfig {
            pattern,
            load: 1.0,
            packet,
            flit: flit.unwrap_or(packet),
            injection,
            warmup: warmup.unwrap_or(1000 * packet_time),
            measure,
            drain: drain.unwrap_or(10 * measure),
            seed,
            check: false,
        })
    }
}

/// Runs `base` at each load: all of them, or (by default) stopping after two saturated.
pub fn run_loads(
    machine: &Machine,
    base: &TrafficConfig,
    loads: &[f64],
    all: bool,
) -> Result<Vec<TrafficPoint>> {
    let bad = |m: String| Error::input(Location::file("command line").with_field("load"), m);
    if loads.is_empty() {
        return Err(bad("give at least one load".into()));
    }
    if let Some(l) = loads.iter().find(|&&l| !(l > 0.0 && l <= 1.0)) {
        return Err(bad(format!("offered load {l} is outside (0, 1]")));
    }
    if all {
        loads
            .iter()
            .map(|&load| {
                run_point(
                    machine,
                    &TrafficConfig {
                        load,
                        ..base.clone()
                    },
                )
            })
            .collect()
    } else {
        run_curve(machine, base, loads)
    }
}

/// One point of a latency/throughput curve.
#[derive(Debug, Clone, Serialize)]
pub struct TrafficPoint {
    pub pattern: String,
    pub load: f64,
    /// Created bytes in the window, as a fraction of the injection bandwidth.
    pub offered: f64,
    /// Delivered bytes in the window, as a fraction of the injection bandwidth.
    pub accepted: f64,
    pub latency_mean_ns: f64,
    pub latency_p50_ns: f64,
    pub latency_p99_ns: f64,
    /// Mean router-to-router hops of the measured packets.
    pub hops_mean: f64,
    /// Fraction of packets routed minimally (1 unless routing is non-minimal or adaptive).
    pub minimal_fraction: f64,
    pub packets_measured: u64,
    /// Measured packets that had not arrived when the drain limit passed.
    pub packets_lost: u64,
    /// Mean latency of the measured packets created in the second half of the window over
    /// that of the first half: about 1 when stable, above 1 when source queues keep growing.
    pub latency_growth: f64,
    pub saturated: bool,
    /// Peak utilization per link class (network, local, global, injection, ejection).
    pub max_link_utilization: f64,
    pub events: u64,
    /// Link traversals of all packets (warm-up and drain included), for speed figures.
    pub packet_hops: u64,
    /// Packets delivered over the whole run.
    pub packets_delivered: u64,
    /// Time the simulation took; printed, never written to a file (outputs are
    /// byte-identical for the same inputs).
    #[serde(skip)]
    pub wall_seconds: f64,
}

/// The generator's own event: node `node` offers its next packet.
#[derive(Debug, Clone, Copy)]
struct Gen {
    node: u32,
}

/// The shape information patterns need.
pub fn pattern_shape(topo: &Topology) -> Shape {
    let mut shape = Shape {
        nodes: topo.num_nodes,
        nodes_per_router: topo.nodes_per_router().max(1),
        ..Default::default()
    };
    match &topo.shape {
        TopoShape::Grid(grid) => shape.dims = grid.dims.clone(),
        TopoShape::Dragonfly(d) => {
            shape.group_size = d.p * d.a;
            shape.groups = d.g;
        }
        TopoShape::Crossbar | TopoShape::FatTree(_) | TopoShape::LeafSpine(_) => {}
    }
    shape
}

/// Checks the packet and flit sizes against the machine's header and MTU.
fn check_packet(machine: &Machine, packet: u64, flit: u64) -> Result<()> {
    let bad =
        |field: &str, m: String| Error::input(Location::file("command line").with_field(field), m);
    let header = machine.nic.header.0;
    if packet <= header || packet > machine.nic.mtu.0 {
        return Err(bad(
            "packet",
            format!(
                "packet size {packet} B is out of range: a packet must be larger than the header ({header} B) and at most the MTU ({} B)",
                machine.nic.mtu.0
            ),
        ));
    }
    if flit == 0 || flit > packet {
        return Err(bad(
            "flit",
            "the flit must be between 1 byte and the packet size".into(),
        ));
    }
    Ok(())
}

/// Runs one load point.
pub fn run_point(machine: &Machine, cfg: &TrafficConfig) -> Result<TrafficPoint> {
    let started = std::time::Instant::now();
    let bad =
        |field: &str, m: String| Error::input(Location::file("command line").with_field(field), m);
    if !(cfg.load > 0.0 && cfg.load <= 1.0) {
        return Err(bad(
            "load",
            format!("offered load {} is outside (0, 1]", cfg.load),
        ));
    }
    let topo = Topology::build(machine, 1)?;
    let shape = pattern_shape(&topo);
    let mut traffic =
        Traffic::new(cfg.pattern.clone(), shape, cfg.seed).map_err(|m| bad("pattern", m))?;
    if topo.num_nodes < 2 {
        return Err(bad(
            "pattern",
            format!(
                "{} needs at least two nodes, and this machine has {}: traffic goes between nodes (a crossbar without `nodes` takes its size from --ranks)",
                cfg.pattern.name(),
                topo.num_nodes
            ),
        ));
    }
    // A pattern that maps every node to itself would measure nothing and look stable.
    let mut probe = traffic.clone();
    if (0..topo.num_nodes).all(|s| probe.destination(s) == s) {
        return Err(bad(
            "pattern",
            format!(
                "{} sends nothing on this machine: every one of its {} nodes is its own destination",
                cfg.pattern.name(),
                topo.num_nodes
            ),
        ));
    }
    check_packet(machine, cfg.packet, cfg.flit)?;
    let header = machine.nic.header.0;
    let nodes = topo.num_nodes;
    let nics = topo.nics_per_node();
    let bw = machine.nic_link().bandwidth.0;
    let slot = transfer_time(cfg.flit, bw).max(1);
    // Mean packets per slot: load·flit/packet.
    let p_slot = (cfg.load * cfg.flit as f64 / cfg.packet as f64).min(1.0);
    let period = (transfer_time(cfg.packet, bw) as f64 / cfg.load)
        .round()
        .max(1.0) as Ps;
    let mut net = PacketNetwork::new(topo, machine);
    if cfg.check || cfg!(debug_assertions) {
        net.enable_checks();
    }
    let mut q: EventQueue<Event<PacketEvent, Gen>> = EventQueue::default();
    let mut rng = Rng::new(cfg.seed ^ 0x5EED_0F7A_FF1C);
    // ln(1 - p), the denominator of every geometric draw.
    let ln_miss = (1.0 - p_slot).ln();
    let window_end = cfg.warmup + cfg.measure;
    let limit = window_end + cfg.drain;
    // First arrivals are spread so that nodes do not start in lockstep.
    // Bernoulli: a geometric number of slots until the next packet (at least one).
    let gap = |rng: &mut Rng| -> Ps {
        let u = rng.next_f64().max(f64::MIN_POSITIVE);
        let k = if p_slot >= 1.0 {
            1.0
        } else {
            (u.ln() / ln_miss).floor() + 1.0
        };
        (k as Ps).saturating_mul(slot)
    };
    // A periodic node's k-th packet is due at phase + k·period and starts at the first edge
    // of the slot clock (one flit time) at or after that: the times of a flit-clocked NIC.
    let on_clock = |t: Ps| t.div_ceil(slot) * slot;
    let mut due: Vec<Ps> = Vec::new();
    for node in 0..nodes {
        let first = match cfg.injection {
            Injection::Periodic => {
                due.push(rng.below(period));
                on_clock(due[node as usize])
            }
            Injection::Bernoulli => gap(&mut rng) - slot,
        };
        q.schedule(first, Event::Own(Gen { node }));
    }
    let mut created: Vec<Ps> = Vec::new();
    let mut measured: Vec<bool> = Vec::new();
    let mut latencies: Vec<Ps> = Vec::new();
    let mut hops_sum = 0u64;
    // Latency sums and counts of the packets created in each half of the window.
    let half = cfg.warmup + cfg.measure / 2;
    let mut halves = [(0u128, 0u64); 2];
    let mut outstanding = 0u64;
    let mut offered_bytes = 0u64;
    let mut accepted_bytes = 0u64;
    let mut nic_next = vec![0u32; nodes as usize];
    let payload = cfg.packet - header;
    let mut notices = Vec::new();
    let mut last = 0;
    while let Some((now, ev)) = q.pop() {
        if now < last {
            return Err(Error::Internal(format!(
                "event time went back from {last} ps to {now} ps"
            )));
        }
        if now > limit {
            break;
        }
        last = now;
        match ev {
            Event::Own(Gen { node }) => {
                if now >= window_end {
                    continue;
                }
                let dst = traffic.destination(node);
                if dst != node {
                    let token = created.len() as u64;
                    let in_window = now >= cfg.warmup;
                    created.push(now);
                    measured.push(in_window);
                    if in_window {
                        outstanding += 1;
                        offered_bytes += cfg.packet;
                    }
                    let i = nic_next[node as usize];
                    nic_next[node as usize] = (i + 1) % nics;
                    net.inject(&mut q, now, node * nics + i, dst * nics + i, payload, token);
                }
                let next = match cfg.injection {
                    Injection::Periodic => {
                        let d = &mut due[node as usize];
                        *d += period;
                        on_clock(*d)
                    }
                    Injection::Bernoulli => now + gap(&mut rng),
                };
                q.schedule(next, Event::Own(Gen { node }));
            }
            Event::Net(e) => net.handle(&mut q, now, e),
        }
        if !net.notices().is_empty() {
            std::mem::swap(&mut notices, net.notices());
            for n in notices.drain(..) {
                if let Notice::Landed { token, hops } = n {
                    if now >= cfg.warmup && now < window_end {
                        accepted_bytes += cfg.packet;
                    }
                    if measured[token as usize] {
                        let born = created[token as usize];
                        let h = &mut halves[(born >= half) as usize];
                        h.0 += (now - born) as u128;
                        h.1 += 1;
                        latencies.push(now - born);
                        hops_sum += hops as u64;
                        outstanding -= 1;
                    }
                }
            }
        }
        // Past the window, stop as soon as every measured packet has arrived.
        if now >= window_end && outstanding == 0 {
            break;
        }
    }
    // The run stops with packets still in the network (warm-up ones, or measured ones at
    // the drain limit): bytes injected = bytes delivered + bytes still in the network.
    net.check_stopped(last)
        .map_err(|v| Error::Internal(format!("model invariant broken: {v}")))?;
    let capacity = nodes as f64 * bw as f64 * (cfg.measure as f64 / 1e12);
    let offered = offered_bytes as f64 / capacity;
    let accepted = accepted_bytes as f64 / capacity;
    // Percentiles by selection (linear time), not by sorting a million latencies.
    let mut pct = |f: f64| -> f64 {
        if latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((latencies.len() as f64 * f).ceil() as usize).clamp(1, latencies.len()) - 1;
        *latencies.select_nth_unstable(i).1 as f64 / 1e3
    };
    let (p50, p99) = (pct(0.5), pct(0.99));
    let n = latencies.len().max(1) as f64;
    let mean = latencies.iter().sum::<Ps>() as f64 / n / 1e3;
    let stats = net.nic_stats();
    let injected: u64 = stats.iter().map(|s| s.ejected_packets).sum();
    let minimal: u64 = stats.iter().map(|s| s.minimal_packets).sum();
    let elapsed = last.max(1);
    let topo = net.topology();
    let max_util = (0..topo.num_links())
        .filter(|&l| topo.link_class(l) != LinkClass::Injection)
        .map(|l| net.link_stats(l).busy_ps as f64 / elapsed as f64)
        .fold(0.0, f64::max);
    let half_mean = |(sum, n): (u128, u64)| sum as f64 / n.max(1) as f64;
    let latency_growth = if halves[0].1 == 0 || halves[1].1 == 0 {
        1.0
    } else {
        half_mean(halves[1]) / half_mean(halves[0]).max(1.0)
    };
    // Past saturation the network cannot deliver what is offered (docs/traffic.md): measured
    // packets are still in flight at the drain limit, less than 95 % of the offered load is
    // accepted, or the latency runs away (packets created in the second half of the window
    // wait on average over 10 % longer than those of the first half).
    // Too few measured packets say nothing about saturation: their accepted rate and
    // latency trend are noise (a load of 1e-6 measures a handful of packets).
    let judged = latencies.len() as u64 + outstanding >= MIN_JUDGED_PACKETS;
    let saturated =
        outstanding > 0 || (judged && (accepted < 0.95 * offered || latency_growth > 1.1));
    Ok(TrafficPoint {
        pattern: cfg.pattern.name(),
        load: cfg.load,
        offered,
        accepted,
        latency_mean_ns: mean,
        latency_p50_ns: p50,
        latency_p99_ns: p99,
        hops_mean: hops_sum as f64 / n,
        minimal_fraction: if injected == 0 {
            1.0
        } else {
            minimal as f64 / injected as f64
        },
        packets_measured: latencies.len() as u64 + outstanding,
        packets_lost: outstanding,
        latency_growth,
        saturated,
        max_link_utilization: max_util,
        events: q.processed(),
        packet_hops: net.counters().packet_hops,
        packets_delivered: injected,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

/// The loads of a `FROM:TO:STEP` range (inclusive, rounded to avoid 0.30000000000000004).
pub fn parse_loads(s: &str) -> std::result::Result<Vec<f64>, String> {
    let num = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| format!("'{t}' is not a number"))
    };
    let parts: Vec<&str> = s.split(':').collect();
    let loads = match parts.as_slice() {
        [one] if !one.contains(',') => vec![num(one)?],
        [a, b, step] => {
            let (a, b, step) = (num(a)?, num(b)?, num(step)?);
            if step <= 0.0 || b < a {
                return Err(format!(
                    "'{s}': expected FROM:TO:STEP with FROM <= TO and STEP > 0"
                ));
            }
            let n = ((b - a) / step + 1e-9).floor() as usize;
            (0..=n)
                .map(|i| ((a + i as f64 * step) * 1e9).round() / 1e9)
                .collect()
        }
        _ => s
            .split(',')
            .map(num)
            .collect::<std::result::Result<Vec<_>, _>>()?,
    };
    if let Some(bad) = loads.iter().find(|&&l| !(l > 0.0 && l <= 1.0)) {
        return Err(format!("offered load {bad} is outside (0, 1]"));
    }
    Ok(loads)
}

/// Measured packets below which a point cannot be called saturated by its accepted rate
/// or latency trend (only by packets still in flight at the drain limit).
pub const MIN_JUDGED_PACKETS: u64 = 200;

/// Runs a sweep of loads; stops after the first two saturated points.
pub fn run_curve(
    machine: &Machine,
    base: &TrafficConfig,
    loads: &[f64],
) -> Result<Vec<TrafficPoint>> {
    let mut out = Vec::new();
    let mut saturated = 0;
    for &load in loads {
        let p = run_point(
            machine,
            &TrafficConfig {
                load,
                ..base.clone()
            },
        )?;
        saturated += p.saturated as u32;
        out.push(p);
        if saturated >= 2 {
            break;
        }
    }
    Ok(out)
}

/// The network's capacity under the pattern: the best accepted throughput of any point.
pub fn saturation_throughput(points: &[TrafficPoint]) -> Option<f64> {
    points.iter().map(|p| p.accepted).reduce(f64::max)
}

/// The highest offered load that was still stable.
pub fn last_stable_load(points: &[TrafficPoint]) -> Option<f64> {
    points
        .iter()
        .filter(|p| !p.saturated)
        .map(|p| p.load)
        .reduce(f64::max)
}
