//! Who connects to what: routers, ports, NICs and directed links as dense integer ids.
//!
//! Every router port is the start of one directed link (router -> peer); every NIC has one
//! more (NIC -> router). Link id `p` is router port `p`; link id `num_ports + nic` is the
//! NIC's injection link. Shapes fill these arrays through a [`Builder`].

/// What sits at the other end of a router port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// Another router's port (global port id).
    Router(u32),
    /// A NIC (global NIC id).
    Nic(u32),
    /// An unconnected port (e.g. the minus port of a mesh edge).
    None,
}

/// Link classes reported in the statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkClass {
    /// Router to router (mesh, torus, trees).
    Network,
    /// Dragonfly: router to router inside a group.
    Local,
    /// Dragonfly: router to router between groups.
    Global,
    /// NIC to router (injection).
    Injection,
    /// Router to NIC (ejection).
    Ejection,
}

impl LinkClass {
    pub fn name(self) -> &'static str {
        match self {
            LinkClass::Network => "network",
            LinkClass::Local => "local",
            LinkClass::Global => "global",
            LinkClass::Injection => "injection",
            LinkClass::Ejection => "ejection",
        }
    }
}

/// Where a directed link delivers its packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkEnd {
    /// The input buffer of a router port (global port id).
    RouterIn(u32),
    /// The input buffer of a NIC.
    NicIn(u32),
}

/// A routing decision: output port (global id) and VC class on the next link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub port: u32,
    pub class: u8,
}

/// The size a topology will have, computed from the machine without building it (for the
/// memory estimate that decides whether a run can start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedSize {
    pub nodes: u64,
    pub nics: u64,
    pub routers: u64,
    /// Router ports (each the start of one directed link, when connected).
    pub ports: u64,
}

impl PlannedSize {
    /// Directed links: one per router port and one per NIC (its injection link).
    pub fn links(&self) -> u64 {
        self.ports + self.nics
    }
}

/// The port arrays of a built topology.
#[derive(Debug, Clone)]
pub struct Ports {
    /// Router r's ports are `port_base[r] .. port_base[r + 1]`.
    pub port_base: Vec<u32>,
    /// Peer of every global port.
    pub peer: Vec<Peer>,
    /// Router owning every global port.
    pub port_router: Vec<u32>,
    /// Global port each NIC attaches to.
    pub nic_port: Vec<u32>,
    pub nics_per_node: u32,
    pub nodes_per_router: u32,
}

impl Ports {
    #[inline]
    pub fn nic_node(&self, nic: u32) -> u32 {
        // Most nodes have one NIC: no division then (it is on every packet's path).
        if self.nics_per_node == 1 {
            nic
        } else {
            nic / self.nics_per_node
        }
    }

    /// The router a NIC is attached to.
    #[inline]
    pub fn nic_router(&self, nic: u32) -> u32 {
        self.port_router[self.nic_port[nic as usize] as usize]
    }
}

/// Fills the port arrays, router by router.
#[derive(Default)]
pub struct Builder {
    port_base: Vec<u32>,
    peer: Vec<Peer>,
    port_router: Vec<u32>,
    nic_port: Vec<(u32, u32)>,
}

impl Builder {
    /// A new router with `ports` ports, all unconnected.
    pub fn add_router(&mut self, ports: u32) {
        let r = self.port_base.len() as u32;
        self.port_base.push(self.peer.len() as u32);
        for _ in 0..ports {
            self.peer.push(Peer::None);
            self.port_router.push(r);
        }
    }

    fn global(&self, router: u32, local: u32) -> u32 {
        self.port_base[router as usize] + local
    }

    /// A full-duplex link between local port `p1` of router `r1` and `p2` of `r2`.
    pub fn connect(&mut self, r1: u32, p1: u32, r2: u32, p2: u32) {
        let (g1, g2) = (self.global(r1, p1), self.global(r2, p2));
        self.peer[g1 as usize] = Peer::Router(g2);
        self.peer[g2 as usize] = Peer::Router(g1);
    }

    /// NIC `nic` on local port `local` of `router`.
    pub fn attach_nic(&mut self, nic: u32, router: u32, local: u32) {
        let g = self.global(router, local);
        self.peer[g as usize] = Peer::Nic(nic);
        self.nic_port.push((nic, g));
    }

    pub fn num_routers(&self) -> u32 {
        self.port_base.len() as u32
    }

    pub fn finish(mut self, nics_per_node: u32, nodes_per_router: u32) -> Ports {
        self.nic_port.sort_unstable();
        self.port_base.push(self.peer.len() as u32);
        Ports {
            port_base: self.port_base,
            peer: self.peer,
            port_router: self.port_router,
            nic_port: self.nic_port.into_iter().map(|(_, p)| p).collect(),
            nics_per_node,
            nodes_per_router,
        }
    }
}
