//! One load point: the point checked against the machine, then the generator run against
//! a network model.

use crate::engine::EventQueue;
use crate::error::{Error, Result};
use crate::machine::loaded::Machine;
use crate::machine::topology::{Shape as TopoShape, Topology};
use crate::network::packet::PacketNetwork;
use crate::network::{Network, Notice};
use crate::results::partitions::PartitionReport;
use crate::results::provenance::MachineId;
use crate::run::events::Event;
use crate::run::partition_report::PartitionCounter;
use crate::run::patterns::{Shape, Traffic};
use crate::run::progress::{Progress, Reporter, Status};
use crate::run::traffic::config::{check_load, check_packet, command_line, TrafficConfig};
use crate::run::traffic::injection::{Gen, Injector};
use crate::run::traffic::measure::{Measurement, TrafficPoint};
use crate::units::Ps;
use std::time::Instant;

/// How often (in events) the progress clock is looked at.
const PROGRESS_POLL: u64 = 4096;

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
    let started = Instant::now();
    let (topo, traffic) = check_point(machine, cfg)?;
    let bandwidth = machine.nic_link().bandwidth.0;
    let injector = Injector::new(cfg, bandwidth, topo.num_nodes);
    let mut window = Measurement::new(cfg, bandwidth, topo.num_nodes);
    let payload = cfg.packet - machine.nic.header.0;
    let mut net = PacketNetwork::new(topo, machine);
    let mut reporter = Reporter::new(progress);
    let run = (traffic, injector, &mut window, &mut reporter);
    let (last, events, partitions) = drive(&mut net, cfg, run, payload)?;
    let mut point = window.point(cfg, &net, last, events, started);
    point.partitions = partitions;
    point.machine = Some(MachineId::of(machine, &machine.name.0));
    Ok(point)
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
    let mut probe = traffic.clone();
    if (0..topo.num_nodes).all(|s| probe.destination(s) == s) {
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
        TopoShape::Dragonfly(d) => {
            shape.group_size = d.p * d.a;
            shape.groups = d.g;
        }
        TopoShape::Crossbar | TopoShape::FatTree(_) | TopoShape::LeafSpine(_) => {}
    }
    shape
}

/// Runs the generator against network model `net`: every node offers packets of
/// `payload` bytes to the pattern's destinations, through its NICs in turn, until the end
/// of the window; then the run goes on until `window` has seen every measured packet
/// arrive, or the drain limit passes. Returns when the last event happened, how many
/// events there were and, with `cfg.partitions`, how the run would split among them.
fn drive<N: Network>(
    net: &mut N,
    cfg: &TrafficConfig,
    (mut traffic, mut injector, window, reporter): (
        Traffic,
        Injector,
        &mut Measurement,
        &mut Reporter,
    ),
    payload: u64,
) -> Result<(Ps, u64, Option<PartitionReport>)> {
    if cfg.check || cfg!(debug_assertions) {
        net.enable_checks();
    }
    let nodes = net.topology().num_nodes;
    let nics = net.topology().nics_per_node();
    let limit = window.end() + cfg.drain;
    // Origins of event keys (the generators, then the network's entities) only when the
    // partitions are measured: otherwise the order events were scheduled in.
    let topo = net.topology();
    let mut partitions = match cfg.partitions {
        Some(parts) => Some(PartitionCounter::for_network(
            net,
            parts,
            "command line",
            nodes,
            |node| topo.nic_router(topo.node_nic(node, 0)),
        )?),
        None => None,
    };
    let mut q: EventQueue<Event<N::Event, Gen>> = EventQueue::new(if partitions.is_some() {
        nodes + net.entities()
    } else {
        1
    });
    for node in 0..nodes {
        q.set_origin(node);
        q.schedule(injector.first(node), Event::Own(Gen { node }));
    }
    let mut nic_next = vec![0u32; nodes as usize];
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
        if let Some(p) = &mut partitions {
            let origin = match ev {
                Event::Own(Gen { node }) => node,
                Event::Net(e) => nodes + net.origin(e),
            };
            q.set_origin(origin);
            p.count(&q, now, q.current_key().1, origin);
        }
        match ev {
            Event::Own(Gen { node }) => {
                if now >= window.end() {
                    continue;
                }
                let dst = traffic.destination(node);
                if dst != node {
                    let token = window.create(now);
                    let i = nic_next[node as usize];
                    nic_next[node as usize] = (i + 1) % nics;
                    net.inject(&mut q, now, node * nics + i, dst * nics + i, payload, token);
                }
                q.schedule(injector.next(node, now), Event::Own(Gen { node }));
            }
            Event::Net(e) => net.handle(&mut q, now, e),
        }
        if !net.notices().is_empty() {
            std::mem::swap(&mut notices, net.notices());
            for n in notices.drain(..) {
                if let Notice::Landed { token, hops } = n {
                    window.land(now, token, hops);
                }
            }
        }
        // Past the window, stop as soon as every measured packet has arrived.
        if window.complete(now) {
            break;
        }
        if q.processed().is_multiple_of(PROGRESS_POLL) && reporter.due() {
            let (measured, needed) = window.measured();
            reporter.report(Status::Traffic {
                load: cfg.load,
                sim_ps: now,
                window_end_ps: window.end(),
                events: q.processed(),
                measured,
                needed,
            });
        }
    }
    // The run stops with packets still in the network (warm-up ones, or measured ones at
    // the drain limit): bytes injected = bytes delivered + bytes still in the network.
    net.check_stopped(last)
        .and_then(|()| q.overflow().map_or(Ok(()), |v| Err(v.to_string())))
        .map_err(|v| Error::Internal(format!("model invariant broken: {v}")))?;
    Ok((
        last,
        q.processed(),
        partitions.map(PartitionCounter::finish),
    ))
}
