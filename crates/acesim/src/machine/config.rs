//! The machine description: what users write in TOML (or get from a preset).
//!
//! Every field has a default; the defaults are the NSIM-ACE Table 1 parameters where the
//! paper gives them, and documented acesim choices otherwise (see docs/machine.md).

use crate::program::collective_defaults::CollectivesConfig;
use crate::units::{Bandwidth, Bounded, Size, SwitchRate, Time};
use serde::{Deserialize, Serialize};

/// A machine as described by the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineConfig {
    pub topology: TopologyConfig,
    #[serde(default)]
    pub router: RouterConfig,
    /// Router-to-router links.
    #[serde(default)]
    pub link: LinkConfig,
    /// Router-to-NIC links; each field absent here takes its `[link]` value.
    #[serde(default, skip_serializing_if = "LinkOverride::is_empty")]
    pub nic_link: LinkOverride,
    /// Dragonfly global (inter-group, optical) links; each field absent here takes its
    /// `[link]` value.
    #[serde(default, skip_serializing_if = "LinkOverride::is_empty")]
    pub global_link: LinkOverride,
    #[serde(default)]
    pub nic: NicConfig,
    #[serde(default)]
    pub node: NodeConfig,
    #[serde(default)]
    pub mpi: MpiConfig,
    #[serde(default)]
    pub collectives: CollectivesConfig,
    #[serde(default)]
    pub placement: PlacementConfig,
}

/// Message-passing protocol parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MpiConfig {
    /// Messages up to this size are sent eagerly; larger ones use rendezvous.
    pub eager_threshold: Size,
    /// CPU time to issue a send; `node.overhead` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_overhead: Option<Time>,
    /// Time from a message's arrival to the receive's completion; `node.overhead` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recv_overhead: Option<Time>,
}

impl Default for MpiConfig {
    fn default() -> Self {
        MpiConfig {
            eager_threshold: Size(16 * 1024),
            send_overhead: None,
            recv_overhead: None,
        }
    }
}

/// How ranks are placed on nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlacementConfig {
    /// Ranks sharing a node (and its NICs and DMA engines).
    pub ranks_per_node: u32,
    /// `block` (ranks 0..k on node 0), `cyclic` (round-robin over nodes), `random`, `file`.
    pub policy: String,
    /// Seed of the `random` policy.
    pub seed: u64,
    /// `file` policy: one node number per line, line i for rank i.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Default for PlacementConfig {
    fn default() -> Self {
        PlacementConfig {
            ranks_per_node: 1,
            policy: "block".into(),
            seed: 1,
            file: None,
        }
    }
}

/// The topology, one flat table whose `kind` says which fields apply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyConfig {
    /// `crossbar`, `mesh`, `torus`, `fat_tree` (k-ary n-tree) or `leaf_spine`.
    pub kind: String,
    /// crossbar: number of nodes; absent means "as many as ranks".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// mesh/torus: routers per dimension (1 to 6 dimensions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<Vec<u32>>,
    /// mesh/torus: wrap-around link per dimension (torus default all true, mesh all false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrap: Option<Vec<bool>>,
    /// mesh/torus: nodes attached to each router (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes_per_router: Option<u32>,
    /// fat_tree: arity k (k nodes per leaf switch, k up and k down ports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// fat_tree: number of levels n (k^n nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    /// leaf_spine: number of leaf switches; absent means "enough for the ranks".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    /// leaf_spine: nodes attached to each leaf switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes_per_leaf: Option<u32>,
    /// leaf_spine: number of spine switches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    /// leaf_spine: parallel links between each leaf and each spine (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links_per_spine: Option<u32>,
    /// dragonfly: nodes per router.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<u32>,
    /// slimfly: the prime power q of the MMS graph (2q² routers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<u32>,
    /// dragonfly: routers per group (all-to-all local links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<u32>,
    /// dragonfly: global links per router.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h: Option<u32>,
    /// dragonfly: number of groups (default a·h + 1, at most a·h + 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub g: Option<u32>,
    /// dragonfly: `consecutive` (absolute) or `palmtree` (relative) global-link arrangement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrangement: Option<String>,
    /// dragonfly: fraction of the global links between each pair of groups that is wired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_population: Option<f64>,
    /// dragonfly: how a packet leaving its group picks one of the parallel global links to
    /// the next group: `hash` (by destination node, the default) or `load` (the one whose
    /// first port at the source router has the fewest bytes queued).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_choice: Option<String>,
    /// graph: the graph file (routers, nodes, links, routing tables), relative to the
    /// machine file's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// graph: how routes are chosen: `updown`, `layered` or `table` (default: `table` when
    /// the file has `route` lines, else `updown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes: Option<String>,
    /// graph, `updown`: the root router (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<u32>,
}

/// A pipelined, input-buffered, virtual cut-through router.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RouterConfig {
    /// Routing function: `auto` (dimension order on mesh/torus, up/down on trees, minimal on
    /// a dragonfly), or on a dragonfly `minimal`, `valiant` or `ugal`.
    pub routing: String,
    /// UGAL: go non-minimal when occupancy×hops of the minimal path exceeds this many
    /// times that of the non-minimal path.
    pub ugal_threshold: f64,
    /// Seed of the random choices of routing (Valiant intermediate groups, random up ports).
    pub routing_seed: u64,
    /// Torus rings: how a packet's VC class is chosen. `crossing`: class 0 until it crosses
    /// the ring's wrap-around link, class 1 after; `route`: class 1 on the whole ring when
    /// its route crosses that link, else class 0 (BookSim2's `dim_order`).
    pub dateline: String,
    /// Which waiting packet an output serves when its link frees: `round_robin` (the
    /// first input after the one served last) or `age` (the oldest packet, by when its
    /// NIC made it; ties round-robin).
    pub switch_allocator: String,
    pub routing_delay: Time,
    pub vc_allocation_delay: Time,
    pub switch_allocation_delay: Time,
    pub switch_latency: Time,
    /// Rate at which a packet crosses the crossbar: `link` (each output at its link's
    /// bandwidth) or a bandwidth; an output's rate is min(link, switch).
    pub switch_throughput: SwitchRate,
    /// Virtual channels per input port (a torus needs 2 for its dateline classes).
    pub vcs: u32,
    /// Input buffer per virtual channel, or `"unbounded"` (no backpressure).
    pub buffer_per_vc: Bounded<Size>,
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            routing: "auto".into(),
            ugal_threshold: 1.0,
            routing_seed: 1,
            dateline: "crossing".into(),
            switch_allocator: "round_robin".into(),
            routing_delay: Time(4_000),
            vc_allocation_delay: Time(4_000),
            switch_allocation_delay: Time(4_000),
            switch_latency: Time(128_000),
            switch_throughput: SwitchRate::Link,
            vcs: 2,
            buffer_per_vc: Bounded::Limit(Size(16 * 1024)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkConfig {
    pub bandwidth: Bandwidth,
    /// Cable (propagation) latency.
    pub latency: Time,
}

/// A link table whose absent fields come from `[link]` (`[nic_link]`, `[global_link]`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkOverride {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Bandwidth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<Time>,
}

impl LinkOverride {
    pub fn is_empty(&self) -> bool {
        self.bandwidth.is_none() && self.latency.is_none()
    }

    /// The link this describes, with `base` for what it leaves out.
    pub fn over(&self, base: &LinkConfig) -> LinkConfig {
        LinkConfig {
            bandwidth: self.bandwidth.unwrap_or(base.bandwidth),
            latency: self.latency.unwrap_or(base.latency),
        }
    }
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            bandwidth: Bandwidth(4_000_000_000),
            latency: Time(600),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicConfig {
    /// NICs per node, each with its own DMA engines and link to the router.
    pub count: u32,
    /// Rate of each DMA engine (memory to NIC on send, NIC to memory on receive).
    pub dma_rate: Bandwidth,
    /// Largest packet on the wire, header included.
    pub mtu: Size,
    /// Header bytes carried by every data packet.
    pub header: Size,
    /// Size on the wire of a control packet (put acknowledgement, get request).
    pub control_packet: Size,
    /// Packets the NIC can hold ready to send; its send DMA engine pauses while they fill
    /// it (backpressure reaches memory instead of queueing without bound in the NIC).
    pub injection_queue: u32,
    /// How a rank picks among its node's NICs: `round_robin` (per rank, transfer by
    /// transfer) or `by_rank` (the rank's index on its node).
    pub selection: String,
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            count: 1,
            dma_rate: Bandwidth(2_800_000_000),
            mtu: Size(2048),
            header: Size(32),
            control_packet: Size(32),
            injection_queue: 4,
            selection: "round_robin".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NodeConfig {
    /// Communication-library overhead `T_pp`, paid on issue and on completion.
    pub overhead: Time,
    /// Memory bandwidth shared by the node's DMA engines, or `"unbounded"`.
    pub memory_bandwidth: Bounded<Bandwidth>,
    /// How a message between two ranks of one node moves: `nic` (through the NIC's DMA
    /// engines, the papers' model) or `memory` (a copy in shared memory, as MPI libraries do).
    pub intra_node: String,
    /// A shared-memory copy's bandwidth (default: `memory_bandwidth` when finite, else the
    /// NIC's DMA rate, so that choosing `memory` alone changes no rate).
    pub intra_node_bandwidth: Option<Bandwidth>,
    /// A shared-memory copy's latency (and a handshake's, for rendezvous within the node).
    pub intra_node_latency: Time,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            overhead: Time(0),
            memory_bandwidth: Bounded::Unbounded,
            intra_node: "nic".into(),
            intra_node_bandwidth: None,
            intra_node_latency: Time(0),
        }
    }
}

/// Machines shipped with acesim, by name.
pub const PRESETS: &[(&str, &str)] = &[
    ("table1", include_str!("../../presets/table1.toml")),
    ("tofu", include_str!("../../presets/tofu.toml")),
    ("tofu-d", include_str!("../../presets/tofu-d.toml")),
    (
        "hdr-fat-tree",
        include_str!("../../presets/hdr-fat-tree.toml"),
    ),
    (
        "ndr-fat-tree",
        include_str!("../../presets/ndr-fat-tree.toml"),
    ),
    ("slingshot", include_str!("../../presets/slingshot.toml")),
];

impl MachineConfig {
    /// Dragonfly global link parameters.
    pub fn global_link(&self) -> LinkConfig {
        self.global_link.over(&self.link)
    }

    /// Router-to-NIC link parameters.
    pub fn nic_link(&self) -> LinkConfig {
        self.nic_link.over(&self.link)
    }

    /// The config as TOML text that loads back to an identical config.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot serialize: {e}\n"))
    }
}
