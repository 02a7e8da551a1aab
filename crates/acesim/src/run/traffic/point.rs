//! One load point: the point checked against the machine, then the generator run against
//! a network model.

use crate::engine::processes::gather_all;
use crate::engine::{run_processes, run_windows, Bounds, Exchange, Group, WindowCount};
use crate::error::{Error, Result};
use crate::machine::loaded::Machine;
use crate::machine::topology::{Shape as TopoShape, Topology};
use crate::network::packet::{check_bytes, PacketNetwork};
use crate::network::{NetStats, Network};
use crate::results::provenance::MachineId;
use crate::run::partition_report::PartitionCounter;
use crate::run::patterns::{Shape, Traffic};
use crate::run::progress::{Progress, Reporter, Status};
use crate::run::traffic::config::{check_load, check_packet, command_line, TrafficConfig};
use crate::run::traffic::injection::Injector;
use crate::run::traffic::measure::{Measurement, Parallel, Tally, TrafficPoint};
use crate::run::traffic::part::TrafficPart;
use crate::units::Ps;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

/// How often (in windows) the progress clock is looked at.
const PROGRESS_POLL: u64 = 64;

/// Runs one load point.
pub fn run_point(machine: &Machine, cfg: &TrafficConfig) -> Result<TrafficPoint> {
    run_point_with(machine, cfg, None)
}

/// Runs one load point, telling `progress` where it is.
pub fn run_point_with(
    machine: &Machine,
    cfg: &TrafficConfig,
    progress: Option<&Progress>,
) -> Result<TrafficPoint> {
    run_point_on(machine, cfg, progress, None)
}

/// Runs one load point on this process's threads, or with `processes` as one partition of
/// a run across processes (every process gets the point).
pub fn run_point_on(
    machine: &Machine,
    cfg: &TrafficConfig,
    progress: Option<&Progress>,
    processes: Option<&dyn Exchange>,
) -> Result<TrafficPoint> {
    let started = Instant::now();
    let processes = processes.filter(|ex| ex.count() > 1);
    if let Some(ex) = processes {
        agree(ex, machine, cfg)?;
    }
    let (topo, traffic) = check_point(machine, cfg)?;
    let mut parts = partitions(machine, cfg, topo, traffic, processes)?;
    let threads = parts.len() as u32;
    let mut reporter = Reporter::new(progress);
    let count = drive(&mut parts, cfg, &mut reporter, processes)?;
    let report = parts[0].counter.take().map(PartitionCounter::finish);
    let topo = parts[0].net.topology().clone();
    let mut shares: Vec<Share> = parts.into_iter().map(Share::of).collect();
    if let Some(ex) = processes {
        shares = gather_all(ex, &shares)
            .map_err(Error::Internal)?
            .into_iter()
            .flatten()
            .collect();
    }
    let last = shares.iter().map(|s| s.last).max().unwrap_or(0);
    let events = shares.iter().map(|s| s.events).sum();
    let (stats, window) = merge(shares)?;
    let mut point = window.point(cfg, (&topo, &stats), last, events, started);
    point.partitions = report;
    point.parallel = Some(Parallel {
        threads,
        processes: processes.map_or(1, |ex| ex.count() as u32),
        windows: count.windows,
        crossings: count.crossings,
    });
    point.machine = Some(MachineId::of(machine, &machine.name.0));
    Ok(point)
}

/// Checks that every process of a run was given the same machine and point.
fn agree(ex: &dyn Exchange, machine: &Machine, cfg: &TrafficConfig) -> Result<()> {
    let mine = format!("{} {cfg:?}", MachineId::of(machine, "").hash);
    let all = gather_all(ex, &mine).map_err(Error::Internal)?;
    match all.iter().position(|other| *other != all[0]) {
        None => Ok(()),
        Some(p) => Err(command_line(
            "mpirun",
            format!("the processes of the run were given different inputs (process {p} differs from process 0): give every process the same command line and files"),
        )),
    }
}

/// What a partition counted and measured, to be summed with the others' (sent between
/// processes when they are processes).
#[derive(Serialize, Deserialize)]
struct Share {
    stats: NetStats,
    window: Measurement,
    last: Ps,
    events: u64,
    /// Bytes alive in the network (with the checks on) or the invariant it broke.
    in_network: std::result::Result<Option<u64>, String>,
    overflow: Option<String>,
}

impl Share {
    fn of(mut p: TrafficPart) -> Share {
        Share {
            in_network: p.net.in_network_bytes(p.last),
            overflow: p.q.overflow().map(str::to_string),
            stats: std::mem::take(&mut p.net.stats),
            last: p.last,
            events: p.q.processed(),
            window: p.window,
        }
    }
}

/// The partitions a point runs in here: the whole machine for one thread (`cfg.threads`),
/// else blocks of routers (`Network::partition`) with the nodes attached to them, one per
/// thread, or this process's one of the blocks of a run on `processes`.
fn partitions(
    machine: &Machine,
    cfg: &TrafficConfig,
    topo: Topology,
    traffic: Traffic,
    processes: Option<&dyn Exchange>,
) -> Result<Vec<TrafficPart>> {
    let bandwidth = machine.nic_link().bandwidth.0;
    let payload = cfg.packet - machine.nic.header.0;
    let nodes = topo.num_nodes;
    let threads = threads(cfg, &topo)?;
    if processes.is_some() && cfg.partitions.is_some() {
        return Err(command_line(
            "partitions",
            "--partitions measures how a serial run would split: it runs in one process, so leave out mpirun".into(),
        ));
    }
    // Under mpirun, each process runs `threads` of the blocks.
    let (blocks, source) = match processes {
        Some(ex) => (ex.count() as u32 * threads, "mpirun -np"),
        None => (threads, "--threads"),
    };
    let generators = || {
        (
            traffic.clone(),
            Injector::new(cfg, bandwidth, nodes),
            Measurement::new(cfg, bandwidth, nodes),
        )
    };
    // The whole network, or partition `me` of the split `of_router`.
    let network = |topo: Topology, part: Option<(u32, &std::sync::Arc<Vec<u32>>)>| {
        let mut net = match part {
            None => PacketNetwork::new(topo, machine),
            Some((me, of_router)) => {
                PacketNetwork::new_partition(topo, machine, me, of_router.clone())
            }
        };
        if cfg.check || cfg!(debug_assertions) {
            net.enable_checks();
        }
        net
    };
    let node_router = |topo: &Topology, node: u32| topo.nic_router(topo.node_nic(node, 0));
    if blocks == 1 {
        let net = network(topo, None);
        let counter = match cfg.partitions {
            Some(parts) => {
                let t = net.topology();
                Some(PartitionCounter::for_network(
                    &net,
                    parts,
                    "command line",
                    nodes,
                    |node| node_router(t, node),
                )?)
            }
            None => None,
        };
        let mut part = TrafficPart::new(net, generators(), payload, |_| true);
        part.counter = counter;
        return Ok(vec![part]);
    }
    let split = PacketNetwork::partition_machine(&topo, machine, blocks, source)?;
    let of_router = Arc::new(split.of_router);
    let of_node: Vec<u32> = (0..nodes)
        .map(|n| of_router[node_router(&topo, n) as usize])
        .collect();
    // A node's NICs share its memory and its generator: they live in one partition.
    let nics = topo.nics_per_node();
    if let Some(node) = (0..nodes).find(|&n| {
        (1..nics).any(|i| {
            of_router[topo.nic_router(topo.node_nic(n, i)) as usize] != of_node[n as usize]
        })
    }) {
        return Err(command_line(
            "threads",
            format!("node {node} has NICs on routers of different partitions, so it cannot be split in {blocks}: use one thread and one process"),
        ));
    }
    let here: Vec<u32> = match processes {
        Some(ex) => (ex.me() as u32 * threads..(ex.me() as u32 + 1) * threads).collect(),
        None => (0..blocks).collect(),
    };
    Ok(here
        .into_iter()
        .map(|me| {
            let net = network(topo.clone(), Some((me, &of_router)));
            TrafficPart::new(net, generators(), payload, |n| of_node[n as usize] == me)
        })
        .collect())
}

/// The threads a point runs on: `cfg.threads`, 0 meaning every core.
fn threads(cfg: &TrafficConfig, topo: &Topology) -> Result<u32> {
    let threads = match cfg.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        n => n,
    };
    if threads > 1 && cfg.partitions.is_some() {
        return Err(command_line(
            "partitions",
            "--partitions measures how a serial run would split: it runs on one thread, so leave out --threads".into(),
        ));
    }
    // "Every core" gives each thread at least ROUTERS_PER_THREAD routers: a small
    // machine stays on one.
    Ok(if cfg.threads == 0 {
        threads.min(topo.num_routers / ROUTERS_PER_THREAD).max(1)
    } else {
        threads
    })
}

/// Routers a thread needs for threads to pay, when `--threads 0` chooses. Measured on
/// uniform traffic at load 0.1 (docs/performance.md), 2 threads against 1: 128 routers a
/// thread were 1.12x slower, 512 even (0.95), 1,152 took 0.58 of the time, 2,048 0.43–0.47.
const ROUTERS_PER_THREAD: u32 = 1024;

/// Adds up what the partitions counted and measured, after checking the invariants of a
/// run stopped with packets in flight: returns the network's counters and the window.
fn merge(shares: Vec<Share>) -> Result<(NetStats, Measurement)> {
    let broken = |v: String| Error::Internal(format!("model invariant broken: {v}"));
    let mut in_network = Some(0u64);
    for s in &shares {
        if let Some(v) = &s.overflow {
            return Err(broken(v.clone()));
        }
        let bytes = s.in_network.clone().map_err(broken)?;
        in_network = in_network.zip(bytes).map(|(a, b)| a + b);
    }
    let mut shares = shares.into_iter();
    let first = shares
        .next()
        .ok_or_else(|| Error::Internal("a run with no partition".into()))?;
    let (mut stats, mut window) = (first.stats, first.window);
    for s in shares {
        stats.add(&s.stats);
        window.add(s.window);
    }
    // The run stops with packets still in the network (warm-up ones, or measured ones at
    // the drain limit): bytes injected = bytes delivered + bytes still in the network.
    if let Some(in_network) = in_network {
        let c = &stats.counters;
        check_bytes(c.bytes_injected, c.bytes_delivered, in_network).map_err(broken)?;
    }
    Ok((stats, window))
}

/// Checks the point against the machine, and returns what it runs on: the topology, and
/// the pattern's destinations on it.
fn check_point(machine: &Machine, cfg: &TrafficConfig) -> Result<(Topology, Traffic)> {
    check_load(cfg.load).map_err(|m| command_line("load", m))?;
    let topo = Topology::build(machine, 1)?;
    let shape = pattern_shape(&topo);
    let traffic = Traffic::new(cfg.pattern.clone(), shape, cfg.seed)
        .map_err(|m| command_line("pattern", m))?;
    if topo.num_nodes < 2 {
        return Err(command_line(
            "pattern",
            format!(
                "{} needs at least two nodes, and this machine has {}: traffic goes between nodes (a crossbar without `nodes` takes its size from --ranks)",
                cfg.pattern.name(),
                topo.num_nodes
            ),
        ));
    }
    // A pattern that maps every node to itself would measure nothing and look stable.
    // (A probe stream: the run's own streams start afresh.)
    let mut probe = crate::rng::Rng::new(cfg.seed);
    if (0..topo.num_nodes).all(|s| traffic.destination(s, &mut probe) == s) {
        return Err(command_line(
            "pattern",
            format!(
                "{} sends nothing on this machine: every one of its {} nodes is its own destination",
                cfg.pattern.name(),
                topo.num_nodes
            ),
        ));
    }
    check_packet(machine, cfg.packet, cfg.flit)?;
    Ok((topo, traffic))
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
        TopoShape::HyperX(h) => shape.dims = h.dims.clone(),
        TopoShape::Dragonfly(d) => {
            shape.group_size = d.p * d.a;
            shape.groups = d.g;
        }
        TopoShape::Crossbar
        | TopoShape::FatTree(_)
        | TopoShape::LeafSpine(_)
        | TopoShape::SlimFly(_)
        | TopoShape::Graph(_) => {}
    }
    shape
}

/// Runs the partitions window by window: every node offers packets to the pattern's
/// destinations until the end of the measurement window; then the run goes on until every
/// measured packet has arrived (checked at the end of each window), or the drain limit
/// passes. Returns when the last event happened and how the windows went.
fn drive(
    parts: &mut [TrafficPart],
    cfg: &TrafficConfig,
    reporter: &mut Reporter,
    processes: Option<&dyn Exchange>,
) -> Result<WindowCount> {
    let gen_end = cfg.warmup + cfg.measure;
    let stop = |at: Ps, t: &[(Tally, u64)]| {
        at >= gen_end && t.iter().map(|t| t.0.outstanding).sum::<i64>() <= 0
    };
    let bounds = Bounds {
        grid: parts[0].net.window_grid(),
        limit: gen_end + cfg.drain,
        stop: &stop,
        no_stop_before: gen_end,
    };
    let load = cfg.load;
    let mut windows = 0u64;
    let mut watch = |at: Ps, t: &[(Tally, u64)]| {
        // The clock is read every so many windows, not at every one.
        windows += 1;
        if windows.is_multiple_of(PROGRESS_POLL) && reporter.due() {
            let sum = Tally::sum(t.iter().map(|t| t.0));
            reporter.report(Status::Traffic {
                load,
                sim_ps: at,
                window_end_ps: gen_end,
                events: t.iter().map(|t| t.1).sum(),
                measured: sum.arrived,
                needed: sum.arrived + sum.outstanding.max(0) as u64,
            });
        }
    };
    let count = match processes {
        Some(ex) => {
            let first = ex.me() * parts.len();
            let total = ex.count() * parts.len();
            let mut group = Group::new(parts, (first, total), sum_tallies);
            let count = run_processes(&mut group, ex, &bounds, &mut watch);
            let within = gather_all(ex, &group.crossings).map_err(Error::Internal)?;
            count.map(|mut c| {
                c.crossings += within.iter().sum::<u64>();
                c
            })
        }
        None => run_windows(parts, &bounds, &mut watch),
    };
    count.map_err(Error::Internal)
}

/// A process's tally: its partitions' added up.
fn sum_tallies(tallies: &[(Tally, u64)]) -> (Tally, u64) {
    (
        Tally::sum(tallies.iter().map(|t| t.0)),
        tallies.iter().map(|t| t.1).sum(),
    )
}
