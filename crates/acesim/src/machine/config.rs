//! The machine description: what users write in TOML (or get from a preset).
//!
//! Every field has a default; the defaults are the NSIM-ACE Table 1 parameters where the
//! paper gives them, and documented acesim choices otherwise (see docs/machine.md).

use crate::error::{did_you_mean, Error, Location, Result};
use crate::program::collective_defaults::CollectivesConfig;
use crate::program::collectives::{self, CollKind};
use crate::units::{format_bandwidth, Bandwidth, Bounded, Size, SwitchRate, Time};
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
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            overhead: Time(0),
            memory_bandwidth: Bounded::Unbounded,
        }
    }
}

/// Machines shipped with acesim, by name.
pub const PRESETS: &[(&str, &str)] = &[
    ("table1", include_str!("../../presets/table1.toml")),
    ("tofu", include_str!("../../presets/tofu.toml")),
];

/// Where a config came from, kept to point errors at the right line.
#[derive(Debug, Clone)]
pub struct MachineSource {
    /// File path or `preset NAME`.
    pub name: String,
    pub text: String,
    /// `--set` overrides applied on top, as given.
    pub overrides: Vec<String>,
}

impl MachineSource {
    /// Reads a machine file, or a preset when `spec` names one and is not a file.
    pub fn open(spec: &str) -> Result<Self> {
        if let Some((name, text)) = PRESETS.iter().find(|(n, _)| *n == spec) {
            if !std::path::Path::new(spec).exists() {
                return Ok(MachineSource {
                    name: format!("preset {name}"),
                    text: (*text).to_string(),
                    overrides: vec![],
                });
            }
        }
        let text = std::fs::read_to_string(spec).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
                Error::input(
                    Location::file(spec),
                    format!(
                        "no such machine file, and not a preset (presets: {})",
                        names.join(", ")
                    ),
                )
            } else {
                Error::io(spec, e)
            }
        })?;
        Ok(MachineSource {
            name: spec.to_string(),
            text,
            overrides: vec![],
        })
    }

    pub fn from_text(name: impl Into<String>, text: impl Into<String>) -> Self {
        MachineSource {
            name: name.into(),
            text: text.into(),
            overrides: vec![],
        }
    }

    pub fn with_overrides(mut self, overrides: &[String]) -> Self {
        self.overrides.extend(overrides.iter().cloned());
        self
    }

    /// Parses the text, applies the overrides and checks every field.
    pub fn load(&self) -> Result<MachineConfig> {
        let base: MachineConfig = parse_toml(&self.name, &self.text)?;
        let mut config = base;
        let mut text = self.text.clone();
        for ov in &self.overrides {
            text = apply_override(&text, ov)?;
            config = toml::from_str(&text).map_err(|e| {
                Error::input(
                    Location::file("command line").with_field(override_key(ov)),
                    format!("--set {ov}: {}", explain_serde_message(e.message())),
                )
            })?;
        }
        validate(&config, |field| self.locate(&text, field))?;
        Ok(config)
    }

    /// Location of a dotted field: the `--set` that changed it, or its place in the file.
    fn locate(&self, text: &str, field: &str) -> Location {
        if self.overrides.iter().any(|o| override_key(o) == field) {
            return Location::file("command line").with_field(field);
        }
        let loc = Location::file(&self.name).with_field(field);
        if let Ok(doc) = toml_edit::ImDocument::parse(text) {
            let mut item: Option<&toml_edit::Item> = None;
            for (i, part) in field.split('.').enumerate() {
                item = if i == 0 {
                    doc.get(part)
                } else {
                    item.and_then(|it| it.get(part))
                };
            }
            if let Some(span) = item.and_then(|it| it.span()) {
                let at = Location::in_text(&self.name, text, span.start, span.len());
                return Location {
                    field: Some(field.to_string()),
                    ..at
                };
            }
        }
        loc
    }
}

fn parse_toml<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let loc = match e.span() {
            Some(span) => Location::in_text(name, text, span.start, span.len()),
            None => Location::file(name),
        };
        Error::input(loc, explain_serde_message(e.message().trim()))
    })
}

/// serde's "unknown field `vc`, expected one of `vcs`, ..." with the likely intended name
/// first: "unknown field `vc`; did you mean `vcs`? (expected one of ...)".
fn explain_serde_message(message: &str) -> String {
    for what in ["unknown field", "unknown variant"] {
        let Some(rest) = message.strip_prefix(what) else {
            continue;
        };
        let names: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
        let Some((word, candidates)) = names.split_first() else {
            continue;
        };
        let hint = did_you_mean(word, candidates.iter().copied());
        if hint.is_empty() {
            return message.to_string();
        }
        let expected = rest.split_once(", ").map_or("", |(_, e)| e);
        return format!("{what} `{word}`{hint} ({expected})");
    }
    message.to_string()
}

fn override_key(ov: &str) -> &str {
    ov.split_once('=').map_or(ov, |(k, _)| k.trim())
}

/// Applies `a.b.c=value` to the TOML text. The value is read as TOML when it parses
/// (`2`, `true`, `[8, 8]`), else as a string (`100ns`, `4 GB/s`).
pub fn apply_override(text: &str, ov: &str) -> Result<String> {
    let cmdline = || Location::file("command line");
    let (key, value) = ov.split_once('=').ok_or_else(|| {
        Error::input(
            cmdline(),
            format!("--set {ov}: expected FIELD=VALUE, e.g. router.switch_latency=100ns"),
        )
    })?;
    let key = key.trim();
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(Error::input(
            cmdline(),
            format!("--set {ov}: '{key}' is not a field path like router.vcs"),
        ));
    }
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| Error::input(cmdline(), format!("--set {ov}: {e}")))?;
    let value_text = value.trim();
    let parsed: toml_edit::Value = format!("v = {value_text}")
        .parse::<toml_edit::DocumentMut>()
        .ok()
        .and_then(|d| d.get("v").and_then(|v| v.as_value().cloned()))
        .unwrap_or_else(|| toml_edit::Value::from(value_text));
    let mut table = doc.as_table_mut();
    for part in &parts[..parts.len() - 1] {
        let item = table
            .entry(part)
            .or_insert(toml_edit::Item::Table(toml_edit::Table::new()));
        if let Some(inline) = item.as_inline_table() {
            *item = toml_edit::Item::Table(inline.clone().into_table());
        }
        table = item.as_table_mut().ok_or_else(|| {
            Error::input(
                cmdline().with_field(key),
                format!("--set {ov}: '{part}' is not a table"),
            )
        })?;
    }
    let last = parts[parts.len() - 1];
    table.insert(last, toml_edit::Item::Value(parsed));
    Ok(doc.to_string())
}

/// Checks ranges and combinations that TOML types cannot express.
pub fn validate(c: &MachineConfig, locate: impl Fn(&str) -> Location) -> Result<()> {
    let err = |field: &str, msg: String| Err(Error::input(locate(field), msg));
    // A check between two fields blames the one the user wrote when the other is a default.
    let written = |f: &str| locate(f).line.is_some() || locate(f).file == "command line";
    let t = &c.topology;
    // Fields each kind accepts, so a stray `k = 4` on a torus is reported, not ignored.
    let allowed: &[&str] = match t.kind.as_str() {
        "crossbar" => &["nodes"],
        "mesh" | "torus" => &["dims", "wrap", "nodes_per_router"],
        "fat_tree" => &["k", "n"],
        "leaf_spine" => &["leaves", "nodes_per_leaf", "spines", "links_per_spine"],
        "dragonfly" => &["p", "a", "h", "g", "arrangement", "global_population"],
        other => {
            return err(
                "topology.kind",
                format!(
                    "unknown topology '{other}'{} (expected crossbar, mesh, torus, fat_tree, leaf_spine or dragonfly)",
                    did_you_mean(other, ["crossbar", "mesh", "torus", "fat_tree", "leaf_spine", "dragonfly"])
                ),
            )
        }
    };
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
        ("a", t.a.is_some()),
        ("h", t.h.is_some()),
        ("g", t.g.is_some()),
        ("arrangement", t.arrangement.is_some()),
        ("global_population", t.global_population.is_some()),
    ];
    for (name, is_set) in present {
        if is_set && !allowed.contains(&name) {
            return err(
                &format!("topology.{name}"),
                format!(
                    "'{name}' does not apply to a {} (its fields: {})",
                    t.kind,
                    allowed.join(", ")
                ),
            );
        }
    }
    let positive = |field: &str, v: Option<u32>| -> Result<()> {
        if v == Some(0) {
            return err(
                &format!("topology.{field}"),
                format!("{field} must be at least 1"),
            );
        }
        Ok(())
    };
    match t.kind.as_str() {
        "crossbar" => {
            positive("nodes", t.nodes)?;
            if t.nodes.is_some_and(|n| n > 1 << 20) {
                return err("topology.nodes", "a crossbar has at most 2^20 ports".into());
            }
        }
        "mesh" | "torus" => {
            let Some(dims) = &t.dims else {
                return err(
                    "topology",
                    format!("a {} needs `dims`, e.g. dims = [8, 8]", t.kind),
                );
            };
            if dims.is_empty() || dims.len() > 6 {
                return err(
                    "topology.dims",
                    format!("a {} has 1 to 6 dimensions, not {}", t.kind, dims.len()),
                );
            }
            if let Some(i) = dims.iter().position(|&d| d == 0) {
                return err("topology.dims", format!("dimension {i} has size 0"));
            }
            if let Some(wrap) = &t.wrap {
                if wrap.len() != dims.len() {
                    return err(
                        "topology.wrap",
                        format!(
                            "wrap has {} entries but dims has {} dimensions",
                            wrap.len(),
                            dims.len()
                        ),
                    );
                }
            }
            positive("nodes_per_router", t.nodes_per_router)?;
            let routers = dims.iter().fold(1u64, |n, &d| n.saturating_mul(d as u64));
            if routers > 1 << 28 {
                return err(
                    "topology.dims",
                    format!("{routers} routers is more than acesim supports (2^28)"),
                );
            }
        }
        "fat_tree" => {
            let (Some(k), Some(n)) = (t.k, t.n) else {
                return err(
                    "topology",
                    "a fat_tree needs `k` (arity) and `n` (levels)".into(),
                );
            };
            if k < 2 {
                return err("topology.k", "k must be at least 2".into());
            }
            if n < 1 {
                return err("topology.n", "n must be at least 1".into());
            }
            if (k as u64).saturating_pow(n) > 1 << 28 {
                return err(
                    "topology.n",
                    format!("{k}^{n} nodes is more than acesim supports (2^28)"),
                );
            }
        }
        "leaf_spine" => {
            let (Some(_), Some(_)) = (t.nodes_per_leaf, t.spines) else {
                return err(
                    "topology",
                    "a leaf_spine needs `nodes_per_leaf` and `spines` (and optionally `leaves`)"
                        .into(),
                );
            };
            positive("nodes_per_leaf", t.nodes_per_leaf)?;
            positive("spines", t.spines)?;
            positive("leaves", t.leaves)?;
            positive("links_per_spine", t.links_per_spine)?;
            let m = t.nodes_per_leaf.unwrap_or(1) as u64;
            let spines = t.spines.unwrap_or(1) as u64 * t.links_per_spine.unwrap_or(1) as u64;
            if m + spines > 1 << 16 {
                return err(
                    "topology.spines",
                    "a leaf switch has at most 2^16 ports".into(),
                );
            }
            if t.leaves.unwrap_or(1) as u64 * m > 1 << 28 {
                return err("topology.leaves", "more than 2^28 nodes".into());
            }
        }
        "dragonfly" => {
            let (Some(p), Some(a), Some(h)) = (t.p, t.a, t.h) else {
                return err("topology", "a dragonfly needs `p` (nodes per router), `a` (routers per group) and `h` (global links per router)".into());
            };
            positive("p", Some(p))?;
            positive("a", Some(a))?;
            positive("h", Some(h))?;
            if a > 4096 || h > 4096 || p > 4096 {
                return err("topology.a", "p, a and h are at most 4096".into());
            }
            let max_g = a * h + 1;
            let g = t.g.unwrap_or(max_g);
            if g == 0 {
                return err("topology.g", "g must be at least 1".into());
            }
            if g > max_g {
                return err(
                    "topology.g",
                    format!("{g} groups cannot be wired: each group has a·h = {} global links, so at most a·h + 1 = {max_g} groups", a * h),
                );
            }
            if let Some(arr) = &t.arrangement {
                if arr != "consecutive" && arr != "palmtree" {
                    return err(
                        "topology.arrangement",
                        format!(
                            "unknown arrangement '{arr}'{} (expected consecutive or palmtree)",
                            did_you_mean(arr, ["consecutive", "palmtree"])
                        ),
                    );
                }
            }
            let f = t.global_population.unwrap_or(1.0);
            if !(f > 0.0 && f <= 1.0) {
                return err(
                    "topology.global_population",
                    format!("global_population {f} is outside (0, 1]"),
                );
            }
            if g > 1 {
                let m = (a * h) / (g - 1);
                if ((f * m as f64) + 1e-9).floor() < 1.0 {
                    return err(
                        "topology.global_population",
                        format!(
                            "with {g} groups each pair of groups has {m} global link(s); a population of {f} leaves pairs unconnected (use fewer groups: g <= {} at this population)",
                            ((f * (a * h) as f64) + 1e-9).floor() as u32 + 1
                        ),
                    );
                }
            }
            if (p as u64) * (a as u64) * (g as u64) > 1 << 28 {
                return err("topology.g", "more than 2^28 nodes".into());
            }
        }
        _ => unreachable!("kind checked above"),
    }
    let dragonfly = t.kind == "dragonfly";
    match c.router.routing.as_str() {
        "auto" | "minimal" => {}
        "valiant" | "ugal" if dragonfly => {}
        "random" if t.kind == "fat_tree" => {}
        "random" => {
            return err(
                "router.routing",
                format!(
                    "'random' routing (random up ports) is for fat trees; a {} routes with `auto`",
                    t.kind
                ),
            )
        }
        "valiant" | "ugal" => {
            return err(
                "router.routing",
                format!(
                    "'{}' routing is for dragonflies; a {} routes with `auto` (minimal)",
                    c.router.routing, t.kind
                ),
            )
        }
        other => {
            return err(
                "router.routing",
                format!(
                    "unknown routing '{other}'{} (expected auto, minimal, valiant, ugal or random)",
                    did_you_mean(other, ["auto", "minimal", "valiant", "ugal", "random"])
                ),
            )
        }
    }
    match c.router.dateline.as_str() {
        "crossing" | "route" => {}
        other => {
            return err(
                "router.dateline",
                format!(
                    "unknown dateline '{other}'{} (expected crossing or route)",
                    did_you_mean(other, ["crossing", "route"])
                ),
            )
        }
    }
    if c.router.ugal_threshold.is_nan() || c.router.ugal_threshold <= 0.0 {
        return err(
            "router.ugal_threshold",
            "the UGAL threshold must be positive".into(),
        );
    }
    if dragonfly && c.router.buffer_per_vc.limit().is_some() {
        let need = if matches!(c.router.routing.as_str(), "valiant" | "ugal") {
            3
        } else {
            2
        };
        if c.router.vcs < need {
            let blame = if written("router.vcs") || !written("router.routing") {
                "router.vcs"
            } else {
                "router.routing"
            };
            return err(
                blame,
                format!("{} routing on a dragonfly with finite buffers needs {need} virtual channels (one class per global hop taken), not router.vcs = {}", c.router.routing, c.router.vcs),
            );
        }
    }
    if c.router.vcs == 0 {
        return err(
            "router.vcs",
            "a router needs at least 1 virtual channel".into(),
        );
    }
    if c.router.vcs > 64 {
        return err("router.vcs", "at most 64 virtual channels per port".into());
    }
    if c.nic.count == 0 {
        return err("nic.count", "a node needs at least 1 NIC".into());
    }
    if c.nic.count > 64 {
        return err("nic.count", "at most 64 NICs per node".into());
    }
    if c.nic.mtu.0 <= c.nic.header.0 {
        return err(
            "nic.mtu",
            format!(
                "MTU ({}) must be larger than the packet header ({}) to carry any payload",
                c.nic.mtu, c.nic.header
            ),
        );
    }
    if c.nic.selection != "round_robin" && c.nic.selection != "by_rank" {
        return err(
            "nic.selection",
            format!(
                "unknown NIC selection '{}'{} (expected round_robin or by_rank)",
                c.nic.selection,
                did_you_mean(&c.nic.selection, ["round_robin", "by_rank"])
            ),
        );
    }
    let pl = &c.placement;
    if pl.ranks_per_node == 0 || pl.ranks_per_node > 4096 {
        return err(
            "placement.ranks_per_node",
            "ranks_per_node must be between 1 and 4096".into(),
        );
    }
    match pl.policy.as_str() {
        "block" | "cyclic" | "random" => {
            if pl.file.is_some() {
                return err(
                    "placement.file",
                    format!(
                        "a placement file needs policy = \"file\", not \"{}\"",
                        pl.policy
                    ),
                );
            }
        }
        "file" => {
            if pl.file.is_none() {
                return err(
                    "placement.file",
                    "policy = \"file\" needs `file`, a path with one node number per rank".into(),
                );
            }
        }
        other => {
            return err(
                "placement.policy",
                format!(
                    "unknown placement '{other}'{} (expected block, cyclic, random or file)",
                    did_you_mean(other, ["block", "cyclic", "random", "file"])
                ),
            )
        }
    }
    if c.collectives.barrier_transport != "msg" && c.collectives.barrier_transport != "rdma" {
        return err(
            "collectives.barrier_transport",
            format!(
                "unknown transport '{}'{} (expected msg or rdma)",
                c.collectives.barrier_transport,
                did_you_mean(&c.collectives.barrier_transport, ["msg", "rdma"])
            ),
        );
    }
    for kind in CollKind::ALL {
        let field = format!("collectives.{}", kind.name());
        collectives::check_configured(kind, c.collectives.algorithm(kind.name()))
            .or_else(|m| err(&field, m))?;
    }
    if c.collectives.segment.0 == 0 {
        return err(
            "collectives.segment",
            "the segment size must be at least 1 byte".into(),
        );
    }
    if c.nic.injection_queue == 0 {
        return err(
            "nic.injection_queue",
            "the NIC needs room for at least 1 packet".into(),
        );
    }
    if c.nic.control_packet.0 == 0 {
        return err(
            "nic.control_packet",
            "a control packet needs at least 1 byte".into(),
        );
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
            return err(
                blame,
                format!(
                    "a virtual cut-through buffer must hold a whole packet: router.buffer_per_vc = {} is smaller than the largest packet ({} B)",
                    buf, largest
                ),
            );
        }
        let torus_wraps = t.kind == "torus"
            && t.dims.as_ref().is_some_and(|d| {
                d.iter()
                    .enumerate()
                    .any(|(i, &n)| n > 2 && t.wrap.as_ref().is_none_or(|w| w[i]))
            });
        let mesh_wraps = t.kind == "mesh"
            && t.dims.as_ref().is_some_and(|d| {
                d.iter()
                    .enumerate()
                    .any(|(i, &n)| n > 2 && t.wrap.as_ref().is_some_and(|w| w[i]))
            });
        if (torus_wraps || mesh_wraps) && c.router.vcs < 2 {
            return err(
                "router.vcs",
                "a torus with finite buffers needs at least 2 virtual channels (dateline classes) to be deadlock-free".into(),
            );
        }
    }
    Ok(())
}

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

    /// The same machine with every field that is in force written out (the links the
    /// defaults derive from `[link]`, the MPI overheads from `node.overhead`), for
    /// `acesim machine`: it loads back to a machine that behaves identically.
    pub fn in_force(&self) -> MachineConfig {
        let mut c = self.clone();
        let full = |l: LinkConfig| LinkOverride {
            bandwidth: Some(l.bandwidth),
            latency: Some(l.latency),
        };
        c.nic_link = full(self.nic_link());
        c.global_link = if self.topology.kind == "dragonfly" {
            full(self.global_link())
        } else {
            self.global_link
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
            if self.topology.kind == "dragonfly" {
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
