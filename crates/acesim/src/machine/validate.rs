//! Checks what TOML types cannot express (ranges, combinations) and reads the file's words
//! into enums, once: the one place a machine's strings are matched. The checks run in a
//! fixed order, so a file with several mistakes always gets the same first error.

use crate::error::{did_you_mean, Error, Location, Result};
use crate::machine::config::{MachineConfig, TopologyConfig};
use crate::machine::loaded::Machine;
use crate::machine::options::{
    Dateline, IntraNode, NicSelection, PlacementPolicy, Routing, SwitchAllocator,
};
use crate::machine::topology::graph_routes::RouteScheme;
use crate::machine::topology::{Kind, TopologySpec};
use crate::program::collectives::{self, CollKind};
use crate::units::Bounded;

/// Checks `c` (errors located by `locate(field)`) and reads it into a [`Machine`].
pub fn validate(c: MachineConfig, locate: impl Fn(&str) -> Location) -> Result<Machine> {
    let bad = |field: &str, msg: String| Error::input(locate(field), msg);
    // A check between two fields blames the one the user wrote when the other is a default.
    let written = |f: &str| locate(f).line.is_some() || locate(f).file == "command line";
    let kind = Kind::parse(&c.topology.kind).map_err(|m| bad("topology.kind", m))?;
    check_fields(&c.topology, kind, &bad)?;
    let topology = TopologySpec::from_config(kind, &c.topology, &bad)?;
    let routing = routing(&c, kind, &bad)?;
    let dateline = one_of(
        &bad,
        ("router.dateline", "dateline", &c.router.dateline),
        &[("crossing", Dateline::Crossing), ("route", Dateline::Route)],
    )?;
    if c.router.switch_allocator.eq_ignore_ascii_case("islip") {
        return Err(bad(
            "router.switch_allocator",
            "iSLIP matches inputs to outputs in rounds, clock cycle by clock cycle; acesim's routers have no cycles: an output is allocated when its link frees, to the next input round-robin (`round_robin`) or to the oldest packet (`age`)".into(),
        ));
    }
    let switch_allocator = one_of(
        &bad,
        (
            "router.switch_allocator",
            "switch allocator",
            &c.router.switch_allocator,
        ),
        &[
            ("round_robin", SwitchAllocator::RoundRobin),
            ("age", SwitchAllocator::Age),
        ],
    )?;
    check_router(&c, &topology, routing, &bad, &written)?;
    let nic_selection = check_nic(&c, &bad)?;
    let placement_policy = placement(&c, &bad)?;
    check_collectives(&c, &bad)?;
    check_buffers(&c, &topology, &bad, &written)?;
    let intra_node = one_of(
        &bad,
        ("node.intra_node", "intra-node path", &c.node.intra_node),
        &[("nic", IntraNode::Nic), ("memory", IntraNode::Memory)],
    )?;
    Ok(Machine::new(
        c,
        topology,
        routing,
        nic_selection,
        placement_policy,
        (dateline, switch_allocator),
        intra_node,
    ))
}

type Bad<'a> = dyn Fn(&str, String) -> Error + 'a;

/// The choice a field's word names, or the error listing the words (`unknown dateline
/// 'x'; did you mean ...? (expected crossing or route)`).
fn one_of<T: Copy>(
    bad: &Bad,
    (field, what, word): (&str, &str, &str),
    choices: &[(&str, T)],
) -> Result<T> {
    if let Some(&(_, v)) = choices.iter().find(|(w, _)| *w == word) {
        return Ok(v);
    }
    let words: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
    let expected = match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => words.join(""),
    };
    Err(bad(
        field,
        format!(
            "unknown {what} '{word}'{} (expected {expected})",
            did_you_mean(word, words.iter().copied())
        ),
    ))
}

/// A field of `[topology]` that this kind does not have is an error, not ignored.
fn check_fields(t: &TopologyConfig, kind: Kind, bad: &Bad) -> Result<()> {
    let allowed = kind.fields();
    let present = [
        ("nodes", t.nodes.is_some()),
        ("dims", t.dims.is_some()),
        ("wrap", t.wrap.is_some()),
        ("nodes_per_router", t.nodes_per_router.is_some()),
        ("k", t.k.is_some()),
        ("n", t.n.is_some()),
        ("leaves", t.leaves.is_some()),
        ("nodes_per_leaf", t.nodes_per_leaf.is_some()),
        ("spines", t.spines.is_some()),
        ("links_per_spine", t.links_per_spine.is_some()),
        ("p", t.p.is_some()),
        ("q", t.q.is_some()),
        ("a", t.a.is_some()),
        ("h", t.h.is_some()),
        ("g", t.g.is_some()),
        ("arrangement", t.arrangement.is_some()),
        ("global_population", t.global_population.is_some()),
        ("global_choice", t.global_choice.is_some()),
        ("file", t.file.is_some()),
        ("routes", t.routes.is_some()),
        ("root", t.root.is_some()),
    ];
    for (name, is_set) in present {
        if is_set && !allowed.contains(&name) {
            return Err(bad(
                &format!("topology.{name}"),
                format!(
                    "'{name}' does not apply to a {} (its fields: {})",
                    t.kind,
                    allowed.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// `router.routing`, which must suit the topology.
fn routing(c: &MachineConfig, kind: Kind, bad: &Bad) -> Result<Routing> {
    let dragonfly = kind == Kind::Dragonfly;
    // Valiant and UGAL go through an intermediate group (dragonfly) or router (Slim Fly).
    let through = dragonfly || kind == Kind::SlimFly;
    Ok(match c.router.routing.as_str() {
        "auto" | "minimal" => Routing::Minimal,
        "valiant" if through => Routing::Valiant,
        "ugal" if through => Routing::Ugal {
            threshold: c.router.ugal_threshold,
        },
        "random" if kind == Kind::FatTree => Routing::RandomUp,
        "dal" if kind == Kind::HyperX => Routing::Dal {
            threshold: c.router.ugal_threshold,
        },
        "dal" => {
            return Err(bad(
                "router.routing",
                format!(
                    "'dal' routing is for hyperx; a {} routes with `auto`",
                    c.topology.kind
                ),
            ))
        }
        "adaptive" if matches!(kind, Kind::FatTree | Kind::HyperX | Kind::Mesh | Kind::Torus) => {
            Routing::Adaptive
        }
        "random" => {
            return Err(bad(
                "router.routing",
                format!(
                    "'random' routing (of the up ports) is for fat trees; a {} routes with `auto`",
                    c.topology.kind
                ),
            ))
        }
        "adaptive" => {
            return Err(bad(
                "router.routing",
                format!(
                    "'adaptive' routing is for meshes, tori, fat trees and hyperx (a dragonfly has `ugal`); a {} routes with `auto`",
                    c.topology.kind
                ),
            ))
        }
        "valiant" | "ugal" => {
            return Err(bad(
                "router.routing",
                format!(
                    "'{}' routing is for dragonflies and slim flies; a {} routes with `auto` (minimal)",
                    c.router.routing, c.topology.kind
                ),
            ))
        }
        other => {
            return Err(bad(
                "router.routing",
                format!(
                    "unknown routing '{other}'{} (expected auto, minimal, valiant, ugal, random, adaptive or dal)",
                    did_you_mean(other, ["auto", "minimal", "valiant", "ugal", "random", "adaptive", "dal"])
                ),
            ))
        }
    })
}

/// The UGAL threshold and the virtual channels routing needs.
fn check_router(
    c: &MachineConfig,
    topology: &TopologySpec,
    routing: Routing,
    bad: &Bad,
    written: &dyn Fn(&str) -> bool,
) -> Result<()> {
    if c.router.ugal_threshold.is_nan() || c.router.ugal_threshold <= 0.0 {
        return Err(bad(
            "router.ugal_threshold",
            "the UGAL threshold must be positive".into(),
        ));
    }
    check_vc_classes(c, topology, routing, bad, written)?;
    if c.router.vcs == 0 {
        return Err(bad(
            "router.vcs",
            "a router needs at least 1 virtual channel".into(),
        ));
    }
    if c.router.vcs > 64 {
        return Err(bad(
            "router.vcs",
            "at most 64 virtual channels per port".into(),
        ));
    }
    Ok(())
}

/// With finite buffers, the VC classes routing needs to stay deadlock-free: one per hop a
/// route may take on a HyperX routed adaptively (one per dimension) and on a Slim Fly, one
/// per global hop on a dragonfly. Blamed on `router.vcs` unless only the routing was written.
fn check_vc_classes(
    c: &MachineConfig,
    topology: &TopologySpec,
    routing: Routing,
    bad: &Bad,
    written: &dyn Fn(&str) -> bool,
) -> Result<()> {
    if c.router.buffer_per_vc.limit().is_none() {
        return Ok(());
    }
    let through = matches!(routing, Routing::Valiant | Routing::Ugal { .. });
    let (need, what, why) = match topology {
        TopologySpec::Graph(g) if g.routes.scheme == RouteScheme::Layered => (
            g.routes.diameter,
            "graph with layered routes",
            "one class per hop of its longest route",
        ),
        TopologySpec::Grid(g) if routing == Routing::Adaptive => (
            if g.torus || g.wrap.iter().any(|&w| w) { 3 } else { 2 },
            if g.torus { "torus" } else { "mesh" },
            "dimension order's escape classes, one for each side of the dateline on a ring, and one for the adaptive channels",
        ),
        TopologySpec::HyperX(h) if matches!(routing, Routing::Dal { .. }) => (
            h.dims.iter().map(|&x| (x > 1) as u32 + (x > 2) as u32).sum(),
            "hyperx",
            "one class per hop a route may take, two per dimension it may deroute in",
        ),
        TopologySpec::HyperX(_) if routing == Routing::Adaptive => {
            let dims = c.topology.dims.as_deref().unwrap_or(&[]);
            let classes = dims.iter().filter(|&&x| x > 1).count() as u32;
            (
                classes,
                "hyperx",
                "one class per hop a route may take, one per dimension",
            )
        }
        TopologySpec::SlimFly(_) => (
            if through { 4 } else { 2 },
            "slimfly",
            "one class per hop a route may take",
        ),
        TopologySpec::Dragonfly(_) => (
            if through { 3 } else { 2 },
            "dragonfly",
            "one class per global hop taken",
        ),
        _ => return Ok(()),
    };
    if c.router.vcs >= need {
        return Ok(());
    }
    let blame = if written("router.vcs") || !written("router.routing") {
        "router.vcs"
    } else {
        "router.routing"
    };
    let subject = match topology {
        TopologySpec::Graph(_) => format!("a {what}"),
        _ => format!("{} routing on a {what}", c.router.routing),
    };
    Err(bad(
        blame,
        format!(
            "{subject} with finite buffers needs {need} virtual channels ({why}), not router.vcs = {}",
            c.router.vcs
        ),
    ))
}

/// NICs per node, the MTU against the header, and how a rank picks its NIC.
fn check_nic(c: &MachineConfig, bad: &Bad) -> Result<NicSelection> {
    if c.nic.count == 0 {
        return Err(bad("nic.count", "a node needs at least 1 NIC".into()));
    }
    if c.nic.count > 64 {
        return Err(bad("nic.count", "at most 64 NICs per node".into()));
    }
    if c.nic.mtu.0 <= c.nic.header.0 {
        return Err(bad(
            "nic.mtu",
            format!(
                "MTU ({}) must be larger than the packet header ({}) to carry any payload",
                c.nic.mtu, c.nic.header
            ),
        ));
    }
    one_of(
        bad,
        ("nic.selection", "NIC selection", &c.nic.selection),
        &[
            ("round_robin", NicSelection::RoundRobin),
            ("by_rank", NicSelection::ByRank),
        ],
    )
}

/// `[placement]`: ranks per node and the policy (a file only with the `file` policy).
fn placement(c: &MachineConfig, bad: &Bad) -> Result<PlacementPolicy> {
    let pl = &c.placement;
    if pl.ranks_per_node == 0 || pl.ranks_per_node > 4096 {
        return Err(bad(
            "placement.ranks_per_node",
            "ranks_per_node must be between 1 and 4096".into(),
        ));
    }
    let policy = match pl.policy.as_str() {
        "block" => PlacementPolicy::Block,
        "cyclic" => PlacementPolicy::Cyclic,
        "random" => PlacementPolicy::Random { seed: pl.seed },
        "file" => {
            return match &pl.file {
                Some(file) => Ok(PlacementPolicy::File(file.clone())),
                None => Err(bad(
                    "placement.file",
                    "policy = \"file\" needs `file`, a path with one node number per rank".into(),
                )),
            }
        }
        other => {
            return Err(bad(
                "placement.policy",
                format!(
                    "unknown placement '{other}'{} (expected block, cyclic, random or file)",
                    did_you_mean(other, ["block", "cyclic", "random", "file"])
                ),
            ))
        }
    };
    if pl.file.is_some() {
        return Err(bad(
            "placement.file",
            format!(
                "a placement file needs policy = \"file\", not \"{}\"",
                pl.policy
            ),
        ));
    }
    Ok(policy)
}

/// `[collectives]`: the barrier's transport, each default algorithm, the segment size.
fn check_collectives(c: &MachineConfig, bad: &Bad) -> Result<()> {
    let transport = &c.collectives.barrier_transport;
    if transport != "msg" && transport != "rdma" {
        return Err(bad(
            "collectives.barrier_transport",
            format!(
                "unknown transport '{transport}'{} (expected msg or rdma)",
                did_you_mean(transport, ["msg", "rdma"])
            ),
        ));
    }
    for kind in CollKind::ALL {
        let field = format!("collectives.{}", kind.name());
        collectives::check_configured(kind, c.collectives.algorithm(kind.name()))
            .map_err(|m| bad(&field, m))?;
    }
    if c.collectives.segment.0 == 0 {
        return Err(bad(
            "collectives.segment",
            "the segment size must be at least 1 byte".into(),
        ));
    }
    Ok(())
}

/// The NIC's queue and packets against the routers' buffers: virtual cut-through needs a
/// whole packet to fit, and a torus ring needs its two dateline classes.
fn check_buffers(
    c: &MachineConfig,
    topology: &TopologySpec,
    bad: &Bad,
    written: &dyn Fn(&str) -> bool,
) -> Result<()> {
    if c.nic.injection_queue == 0 {
        return Err(bad(
            "nic.injection_queue",
            "the NIC needs room for at least 1 packet".into(),
        ));
    }
    if c.nic.control_packet.0 == 0 {
        return Err(bad(
            "nic.control_packet",
            "a control packet needs at least 1 byte".into(),
        ));
    }
    if let Bounded::Limit(buf) = c.router.buffer_per_vc {
        let largest = c.nic.mtu.0.max(c.nic.control_packet.0);
        if buf.0 < largest {
            let blame = if written("router.buffer_per_vc") {
                "router.buffer_per_vc"
            } else if c.nic.control_packet.0 > c.nic.mtu.0 {
                "nic.control_packet"
            } else {
                "nic.mtu"
            };
            return Err(bad(
                blame,
                format!(
                    "a virtual cut-through buffer must hold a whole packet: router.buffer_per_vc = {} is smaller than the largest packet ({} B)",
                    buf, largest
                ),
            ));
        }
        let ring = matches!(topology, TopologySpec::Grid(g) if g.has_ring());
        if ring && c.router.vcs < 2 {
            return Err(bad(
                "router.vcs",
                "a torus with finite buffers needs at least 2 virtual channels (dateline classes) to be deadlock-free".into(),
            ));
        }
    }
    Ok(())
}
