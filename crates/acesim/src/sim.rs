//! One simulation run: machine + program -> results.

use crate::config::MachineConfig;
use crate::engine::{EventQueue, Schedule};
use crate::error::{Error, Location, Result};
use crate::network::{NetEvent, Network};
use crate::program::{OpKind, Program, NONE};
use crate::results::{self, Results};
use crate::runtime::{Placement, RtEvent, RtParams, Runtime};
use crate::topology::Topology;
use crate::units::Ps;

/// Every event of a run.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    Net(NetEvent),
    Rt(RtEvent),
}

impl Schedule<NetEvent> for EventQueue<Event> {
    #[inline]
    fn at(&mut self, time: Ps, event: NetEvent) {
        self.schedule(time, Event::Net(event));
    }
    #[inline]
    fn reserve(&mut self) -> u64 {
        EventQueue::reserve(self)
    }
    #[inline]
    fn at_reserved(&mut self, time: Ps, seq: u64, event: NetEvent) {
        self.schedule_reserved(time, seq, Event::Net(event));
    }
}

impl Schedule<RtEvent> for EventQueue<Event> {
    #[inline]
    fn at(&mut self, time: Ps, event: RtEvent) {
        self.schedule(time, Event::Rt(event));
    }
    #[inline]
    fn reserve(&mut self) -> u64 {
        EventQueue::reserve(self)
    }
    #[inline]
    fn at_reserved(&mut self, time: Ps, seq: u64, event: RtEvent) {
        self.schedule_reserved(time, seq, Event::Rt(event));
    }
}

/// The topology for `ranks` ranks and where each rank lives.
pub fn layout(machine: &MachineConfig, ranks: u32) -> Result<(Topology, Placement)> {
    let nodes = crate::placement::nodes_needed(&machine.placement, ranks)?;
    let topo = Topology::build(machine, nodes)?;
    if nodes > topo.num_nodes {
        crate::placement::check_fits(&machine.placement, ranks, topo.num_nodes)?;
        let rpn = machine.placement.ranks_per_node;
        return Err(Error::input(
            Location::file("command line").with_field("ranks"),
            format!(
                "{ranks} ranks at {rpn} per node need {nodes} nodes but this {} has {} nodes",
                topo.kind, topo.num_nodes
            ),
        ));
    }
    let placement = crate::placement::place(&machine.placement, ranks)?;
    Ok((topo, placement))
}

/// Checks what a program asks of the machine (NIC indices) before running it.
pub fn check_program(machine: &MachineConfig, program: &Program) -> Result<()> {
    let nics = machine.nic.count;
    for (rank, ops) in program.ops.iter().enumerate() {
        for op in ops {
            if let OpKind::Put { nic, .. } | OpKind::Get { nic, .. } = op.kind {
                if nic != NONE && nic >= nics {
                    let (file, line) = program
                        .describe_loc(op.loc)
                        .rsplit_once(':')
                        .map_or((String::new(), None), |(f, l)| {
                            (f.to_string(), l.parse().ok())
                        });
                    let mut loc = Location::file(file).with_field("nic");
                    loc.line = line;
                    return Err(Error::input(loc, format!("rank {rank}: nic={nic} but the machine has {nics} NIC(s) per node (nic.count)")));
                }
            }
        }
    }
    Ok(())
}

/// How to run a simulation.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Record per-rank intervals and link activity (for timelines; costs memory).
    pub trace: bool,
}

/// Runs `program` on `machine` and returns the results (or why it could not finish).
pub fn simulate(machine: &MachineConfig, program: Program) -> Result<Results> {
    simulate_with(machine, program, &Options::default())
}

/// `simulate` with options.
pub fn simulate_with(
    machine: &MachineConfig,
    program: Program,
    options: &Options,
) -> Result<Results> {
    let started = std::time::Instant::now();
    let mut program = program;
    let (topo, placement) = layout(machine, program.ranks)?;
    check_program(machine, &program)?;
    crate::mpi::link(&mut program, &machine.collectives)?;
    let mut net = Network::new(topo, machine);
    let tpp = machine.node.overhead.0;
    let params = RtParams {
        overhead: tpp,
        send_overhead: machine.mpi.send_overhead.map_or(tpp, |t| t.0),
        recv_overhead: machine.mpi.recv_overhead.map_or(tpp, |t| t.0),
        eager_threshold: machine.mpi.eager_threshold.0,
        nics_per_node: machine.nic.count,
        nic_by_rank: machine.nic.selection == "by_rank",
    };
    let mut rt = Runtime::new(program, params, placement);
    if options.trace {
        rt.enable_trace();
        net.enable_trace();
    }
    let mut q: EventQueue<Event> = EventQueue::default();
    rt.start(&mut q);
    let mut notices = Vec::new();
    while let Some((now, ev)) = q.pop() {
        match ev {
            Event::Net(e) => net.handle(&mut q, now, e),
            Event::Rt(e) => rt.handle(&mut q, &mut net, now, e),
        }
        // Reacting to a notice may produce more (a same-node ack arrives at once).
        while !net.notices.is_empty() {
            std::mem::swap(&mut notices, &mut net.notices);
            for n in notices.drain(..) {
                rt.on_notice(&mut q, &mut net, now, n);
            }
        }
    }
    let now = q.now();
    if let Some(report) = rt.deadlock(now, &net) {
        return Err(Error::Deadlock(Box::new(report)));
    }
    if net.bytes_injected != net.bytes_delivered {
        return Err(Error::Internal(format!(
            "bytes injected ({}) != bytes delivered ({})",
            net.bytes_injected, net.bytes_delivered
        )));
    }
    let wall = started.elapsed().as_secs_f64();
    Ok(results::collect(machine, &net, &rt, q.processed(), wall))
}
