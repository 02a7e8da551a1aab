//! Builds a run's [`Results`] from the runtime and the network model at the end of the run.

use crate::network::Network;
use crate::results::collectives::collectives;
use crate::results::links::LinkTable;
use crate::results::nics::{self, nics};
use crate::results::operations::{Operations, Receives};
use crate::results::ranks::{per_rank, trace, unfinished};
use crate::results::regions::regions;
use crate::results::report::{Partial, Results, MAX_JSON_LINKS};
use crate::results::topology::{describe_topology, topology_detail};
use crate::runtime::Runtime;
use crate::units::format_time;

/// The results of a run that processed `events` events in `wall` seconds; `partial` says
/// where and why it stopped, when it stopped early. The runtime's transfer records move
/// into the results. A large run's per-rank and per-link rows are made on up to `threads`
/// threads; with `tables` off (`Options::no_tables`) none are made.
pub fn collect(
    net: &mut impl Network,
    rt: &mut Runtime,
    events: u64,
    wall: f64,
    partial: Option<Partial>,
    (threads, tables): (usize, bool),
) -> Results {
    // A stopped run's time is where it stopped: a lower bound of the full run's.
    let predicted = partial
        .as_ref()
        .map_or(rt.last_activity, |p| p.stopped_at_ps);
    let all_links = match tables {
        true => LinkTable::new(net, predicted, threads),
        false => LinkTable::default(),
    };
    let topo = net.topology();
    let links_omitted = all_links.len() > MAX_JSON_LINKS;
    let nic_stats = if tables { net.nic_stats() } else { &[] };
    let (mean_hops, minimal_fraction) = nics::over_all(nic_stats);
    // The receives and collectives read the transfers' records; then the records of the
    // user's own transfers become the operations (moved, not copied).
    // A run that kept no records (their slots were reused) lists none.
    let keeps = rt.keeps_records();
    // A parallel run's records were merged with its operations and receives in run order.
    let merged = rt.merged.take();
    let receives = match &merged {
        _ if !keeps => Receives::default(),
        Some(m) => Receives::new(m.1.iter().map(|&at| &rt.recvs[at as usize]), &rt.xfers),
        None => Receives::new(&rt.recvs, &rt.xfers),
    };
    let collectives = collectives(rt);
    let unmatched_messages = rt.unmatched_messages();
    let transfer_records = rt.xfers.len();
    Results {
        acesim_version: env!("CARGO_PKG_VERSION"),
        model: net.model().name(),
        topology: describe_topology(topo),
        machine: None,
        predicted_time_ps: predicted,
        partial,
        predicted_time: format_time(predicted),
        ranks: rt.program.ranks,
        events,
        packet_hops: net.counters().packet_hops,
        bytes_injected: net.counters().bytes_injected,
        wall_seconds: wall,
        // The summary reads a replay's traced windows from the ranks' rows.
        per_rank: if tables || rt.program.traced_windows.is_some() {
            per_rank(rt, predicted, threads)
        } else {
            Vec::new()
        },
        operation_count: rt.program_transfers,
        operations: match merged {
            _ if !keeps => Operations::default(),
            Some(m) => Operations::in_order(std::mem::take(&mut rt.xfers), m.0),
            None => Operations::new(std::mem::take(&mut rt.xfers)),
        },
        regions: regions(rt),
        unpolled_puts: rt.unpolled(),
        unmatched_messages,
        unmatched_receives: rt.unmatched_receives(),
        unfinished_requests: unfinished(rt),
        receives,
        collectives,
        topology_detail: topology_detail(topo),
        // Per NIC up to as many NICs as links in the JSON.
        nics: if nic_stats.len() > MAX_JSON_LINKS {
            Vec::new()
        } else {
            nics(nic_stats, topo)
        },
        mean_hops,
        minimal_fraction,
        links: if links_omitted {
            Vec::new()
        } else {
            all_links.iter().collect()
        },
        links_omitted,
        trace: trace(rt),
        link_activity: net.link_activity().map(<[_]>::to_vec),
        all_links,
        partitions: None,
        coupling: None,
        parallel: None,
        transfer_records,
    }
}
