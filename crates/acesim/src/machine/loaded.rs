//! A machine as loaded: the file as the user wrote it ([`MachineConfig`], which reads and
//! prints it) and its words read into enums once (topology kind and parameters, routing,
//! NIC selection, placement, dateline). Everything downstream takes a [`Machine`].

use crate::machine::config::{LinkConfig, LinkOverride, MachineConfig};
use crate::machine::options::{
    Dateline, IntraNode, NicSelection, PlacementPolicy, Routing, SwitchAllocator,
};
use crate::machine::topology::TopologySpec;
use crate::units::{format_bandwidth, SwitchRate};

/// A checked machine. Its plain numbers (bandwidths, delays, sizes) are read through the
/// file's fields (`machine.router.vcs`); its choices through the typed fields here.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    config: MachineConfig,
    pub topology: TopologySpec,
    pub routing: Routing,
    pub nic_selection: NicSelection,
    pub placement_policy: PlacementPolicy,
    /// Torus rings: how a packet's VC class is chosen.
    pub dateline: Dateline,
    /// Messages within a node: through the NIC or copied in memory.
    pub intra_node: IntraNode,
    /// Which waiting packet a router output serves next.
    pub switch_allocator: SwitchAllocator,
    /// The name the user gave it (a file, a preset), for the outputs' provenance.
    pub name: MachineName,
}

/// The name a machine was given: not part of what it is (two machines are equal when
/// their every field is, whatever they were called).
#[derive(Debug, Clone, Default)]
pub struct MachineName(pub String);

impl PartialEq for MachineName {
    fn eq(&self, _: &MachineName) -> bool {
        true
    }
}

impl std::ops::Deref for Machine {
    type Target = MachineConfig;
    fn deref(&self) -> &MachineConfig {
        &self.config
    }
}

impl Machine {
    /// Built by `machine::validate`, the one reader of the file's words.
    pub(crate) fn new(
        config: MachineConfig,
        topology: TopologySpec,
        routing: Routing,
        nic_selection: NicSelection,
        placement_policy: PlacementPolicy,
        (dateline, switch_allocator): (Dateline, SwitchAllocator),
        intra_node: IntraNode,
    ) -> Machine {
        Machine {
            config,
            topology,
            routing,
            nic_selection,
            placement_policy,
            dateline,
            intra_node,
            switch_allocator,
            name: MachineName::default(),
        }
    }

    /// A shared-memory copy within a node (bytes per second, latency), or `None` when
    /// messages within a node go through the NIC. The bandwidth follows the node's memory
    /// bandwidth, else the NIC's DMA rate, unless `node.intra_node_bandwidth` says.
    pub fn intra_node_copy(&self) -> Option<(u64, u64)> {
        match self.intra_node {
            IntraNode::Nic => None,
            IntraNode::Memory => {
                let bw = self.node.intra_node_bandwidth.map_or_else(
                    || {
                        self.node
                            .memory_bandwidth
                            .limit()
                            .map_or(self.nic.dma_rate.0, |b| b.0)
                    },
                    |b| b.0,
                );
                Some((bw, self.node.intra_node_latency.0))
            }
        }
    }

    /// The file as the user wrote it (with `--set` applied).
    pub fn config(&self) -> &MachineConfig {
        &self.config
    }

    /// The file's fields, to change a plain number of an already checked machine in a
    /// test (a machine validation would refuse): nothing is checked again, and the choices
    /// read into enums do not follow a changed word.
    #[doc(hidden)]
    pub fn config_mut(&mut self) -> &mut MachineConfig {
        &mut self.config
    }

    fn is_dragonfly(&self) -> bool {
        matches!(self.topology, TopologySpec::Dragonfly(_))
    }

    /// The same machine with every field that is in force written out (the links the
    /// defaults derive from `[link]`, the MPI overheads from `node.overhead`), for
    /// `acesim machine`: it loads back to a machine that behaves identically.
    pub fn in_force(&self) -> MachineConfig {
        let mut c = self.config.clone();
        let full = |l: LinkConfig| LinkOverride {
            bandwidth: Some(l.bandwidth),
            latency: Some(l.latency),
        };
        c.nic_link = full(self.nic_link());
        c.global_link = if self.is_dragonfly() {
            full(self.global_link())
        } else {
            self.config.global_link
        };
        c.mpi.send_overhead = Some(self.mpi.send_overhead.unwrap_or(self.node.overhead));
        c.mpi.recv_overhead = Some(self.mpi.recv_overhead.unwrap_or(self.node.overhead));
        c
    }

    /// Settings that are valid but probably not what the user meant (printed as warnings).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let SwitchRate::Limit(switch) = self.router.switch_throughput {
            let mut links = vec![("link.bandwidth", self.link.bandwidth)];
            links.push(("nic_link.bandwidth", self.nic_link().bandwidth));
            if self.is_dragonfly() {
                links.push(("global_link.bandwidth", self.global_link().bandwidth));
            }
            // The first of the fastest: `[link]` when the others only follow it.
            let fastest = links
                .into_iter()
                .reduce(|a, b| if b.1 .0 > a.1 .0 { b } else { a });
            if let Some((field, fastest)) = fastest {
                if switch.0 < fastest.0 {
                    w.push(format!(
                        "router.switch_throughput ({}) is below {field} ({}): every router output is capped at {}; remove switch_throughput (or set it to \"link\") for outputs at their links' bandwidth",
                        format_bandwidth(switch.0),
                        format_bandwidth(fastest.0),
                        format_bandwidth(switch.0)
                    ));
                }
            }
        }
        w
    }
}
