//! What a link's class fixes, for every network model: its rate, its cable latency and the
//! pipeline delay of the element that sends on it. Router outputs run at `min(link, switch)`
//! (`router.switch_throughput`); a NIC sends at its link's own rate, with no pipeline.

use crate::machine::loaded::Machine;
use crate::machine::topology::{LinkClass, TopologySpec};
use crate::units::Ps;

/// The timing of one class of link.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkKind {
    /// Serialization rate in bytes/s.
    pub rate: u64,
    pub latency: Ps,
    /// Pipeline delay of the element that sends on this link (0 for a NIC).
    pub sender_delay: Ps,
}

/// The router pipeline: routing, VC allocation, switch allocation and switch latency.
pub fn router_delay(machine: &Machine) -> Ps {
    let r = &machine.router;
    r.routing_delay.0 + r.vc_allocation_delay.0 + r.switch_allocation_delay.0 + r.switch_latency.0
}

/// Every kind's timing, indexed by `Topology::link_kind`: the five classes
/// (`LinkClass as usize`), then on a graph the links with their own timing.
pub fn link_kinds(machine: &Machine) -> Vec<LinkKind> {
    let switch = machine.router.switch_throughput;
    let delay = router_delay(machine);
    let nic_link = machine.nic_link();
    let global = machine.global_link();
    let mut kinds = vec![LinkKind::default(); 5];
    for class in [
        LinkClass::Network,
        LinkClass::Local,
        LinkClass::Global,
        LinkClass::Injection,
        LinkClass::Ejection,
    ] {
        kinds[class as usize] = match class {
            LinkClass::Network | LinkClass::Local => LinkKind {
                rate: switch.output(machine.link.bandwidth.0),
                latency: machine.link.latency.0,
                sender_delay: delay,
            },
            LinkClass::Global => LinkKind {
                rate: switch.output(global.bandwidth.0),
                latency: global.latency.0,
                sender_delay: delay,
            },
            LinkClass::Ejection => LinkKind {
                rate: switch.output(nic_link.bandwidth.0),
                latency: nic_link.latency.0,
                sender_delay: delay,
            },
            LinkClass::Injection => LinkKind {
                rate: nic_link.bandwidth.0,
                latency: nic_link.latency.0,
                sender_delay: 0,
            },
        };
    }
    if let TopologySpec::Graph(g) = &machine.topology {
        kinds.extend(g.timings.iter().map(|t| LinkKind {
            rate: switch.output(t.bandwidth.unwrap_or(machine.link.bandwidth.0)),
            latency: t.latency.unwrap_or(machine.link.latency.0),
            sender_delay: delay,
        }));
    }
    kinds
}
