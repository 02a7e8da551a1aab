//! The machine's choices that are words in its file (`router.routing = "ugal"`), as the
//! enums the code matches on. They are read once, when the machine is loaded
//! (`machine::validate`); nothing else reads the words.

/// How packets choose their path where the topology offers more than one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Routing {
    /// The topology's own minimal routing (`auto`, `minimal`): dimension order on grids,
    /// up/down on trees, minimal on a dragonfly.
    Minimal,
    /// Dragonfly: through a random intermediate group.
    Valiant,
    /// Dragonfly, at the source router: minimal or Valiant, whichever has less
    /// queued×hops (the minimal path is taken unless it is `threshold` times worse).
    Ugal { threshold: f64 },
    /// Fat tree: a random up port at every router on the way up (BookSim2's `nca`).
    RandomUp,
    /// Minimal adaptive, by the occupancy of the router's own ports (bytes queued in the
    /// packet model, flows in the flow model). Fat tree: at every router on the way up,
    /// the least loaded up port (ties keep the d-mod-k one). HyperX: the least loaded of
    /// the dimensions still to correct (ties: dimension order). Mesh and torus: the least
    /// loaded productive port with room on its adaptive VCs, else the dimension-order
    /// escape channels (Duato).
    Adaptive,
    /// HyperX: dimensionally-adaptive, load-balanced routing (Ahn et al., SC'09): at each
    /// hop, the least loaded minimal port, or a hop to another coordinate of a dimension
    /// still to correct (once per dimension) when the minimal port's queued bytes exceed
    /// `threshold` times twice the other's (`router.ugal_threshold`).
    Dal { threshold: f64 },
}

/// Which waiting packet a router output serves when its link frees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchAllocator {
    /// Round-robin over the input ports, from the one after the input served last.
    RoundRobin,
    /// The oldest packet (made first by its NIC); ties round-robin.
    Age,
}

/// Torus rings: how a packet's VC class is chosen (deadlock freedom).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dateline {
    /// Class 0 until the packet crosses the ring's wrap-around link, class 1 after.
    Crossing,
    /// Class 1 on the whole ring when the route crosses that link, else class 0
    /// (BookSim2's `dim_order`).
    Route,
}

/// How a rank picks among its node's NICs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NicSelection {
    /// Per rank, transfer by transfer.
    RoundRobin,
    /// The rank's index on its node.
    ByRank,
}

/// How a message between two ranks of one node moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntraNode {
    /// Through the node's NIC and its DMA engines (the papers' model).
    Nic,
    /// A copy in shared memory: latency + size / bandwidth, no NIC.
    Memory,
}

/// How ranks are placed on nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlacementPolicy {
    /// Ranks 0..k on node 0, and so on.
    Block,
    /// Round-robin over the nodes.
    Cyclic,
    /// The block layout shuffled with this seed.
    Random { seed: u64 },
    /// One node number per line of this file, line i for rank i.
    File(String),
}
