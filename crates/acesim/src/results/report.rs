//! What a run reports, whole: [`Results`], why a run stopped early, and the JSON summary.

use crate::results::collectives::CollectiveResult;
use crate::results::links::{LinkResult, LinkRow, LinkTable};
use crate::results::nics::NicResult;
use crate::results::operations::{Operations, Receives};
use crate::results::ranks::{RankResult, TraceEntry, UnfinishedResult};
use crate::results::regions::RegionResult;
use crate::results::topology::TopologyDetail;
use crate::units::Ps;
use serde::Serialize;

/// Bytes of the results of a run with `ops` transfers, `recvs` receives, `links` links and
/// `ranks` ranks (the operations are the runtime's records, moved; a receive is a
/// compact row).
pub fn estimate_bytes(ops: u64, recvs: u64, links: u64, ranks: u64) -> u64 {
    use std::mem::size_of;
    ops * size_of::<crate::runtime::Xfer>() as u64
        + recvs * size_of::<crate::results::operations::ReceiveRow>() as u64
        + links * size_of::<LinkRow>() as u64
        + ranks * (size_of::<RankResult>() as u64 + 64)
}

/// Why a run stopped before its program finished (`max-events`, ... in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    MaxEvents,
    MaxSimTime,
    Interrupted,
}

impl StopReason {
    pub fn name(self) -> &'static str {
        match self {
            StopReason::MaxEvents => "max-events",
            StopReason::MaxSimTime => "max-sim-time",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// Present when the run was stopped before the program finished (`--max-events`,
/// `--max-sim-time`, Ctrl-C): every figure covers the run up to `stopped_at_ps` only.
#[derive(Debug, Clone, Serialize)]
pub struct Partial {
    pub reason: StopReason,
    pub stopped_at_ps: Ps,
    pub ranks_finished: u32,
}

/// Above this many links the JSON summary leaves them out (use --links-csv), and above
/// this many NICs the rows per NIC.
pub const MAX_JSON_LINKS: usize = 100_000;

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub acesim_version: &'static str,
    /// The network model: `packet` or `flow`.
    pub model: &'static str,
    pub topology: String,
    /// The machine the run used: name, hash, routing, packet size, seeds (set by
    /// `simulate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<crate::results::provenance::MachineId>,
    pub predicted_time_ps: Ps,
    /// Set when the run stopped early; absent for a complete run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
    pub predicted_time: String,
    pub ranks: u32,
    pub events: u64,
    pub packet_hops: u64,
    pub bytes_injected: u64,
    /// Time the simulation took; in the printed summary only, so that output files are
    /// byte-identical for the same inputs.
    #[serde(skip)]
    pub wall_seconds: f64,
    #[serde(serialize_with = "crate::results::skeleton::long_list")]
    pub per_rank: Vec<RankResult>,
    /// The program's own transfers (puts, gets, messages; collective steps excluded) that
    /// were issued, also when their records were not kept.
    #[serde(skip)]
    pub operation_count: u64,
    /// One row per transfer of the program, unless the run kept none
    /// (`Options::summary_only`).
    pub operations: Operations,
    /// Receives of user messages (collective-internal ones are summarised in `collectives`).
    pub receives: Receives,
    pub regions: Vec<RegionResult>,
    pub collectives: Vec<CollectiveResult>,
    /// Puts that landed but no poll consumed: (rank, tag, count).
    pub unpolled_puts: Vec<(u32, i64, u32)>,
    /// Messages that no receive matched: (src, dst, tag, count).
    pub unmatched_messages: Vec<(u32, u32, i64, u32)>,
    /// Receives still posted at the end (their rank finished with requests pending).
    pub unmatched_receives: usize,
    /// Ranks that finished with requests still pending.
    pub unfinished_requests: Vec<UnfinishedResult>,
    pub topology_detail: TopologyDetail,
    /// Per NIC (left out above 100 000 NICs), and over all NICs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<NicResult>,
    pub mean_hops: f64,
    pub minimal_fraction: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkResult>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub links_omitted: bool,
    /// Per-rank intervals, when traced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<TraceEntry>>,
    /// Links' busy intervals, when traced (for timelines; not in the JSON).
    #[serde(skip)]
    pub link_activity: Option<Vec<Vec<(Ps, Ps)>>>,
    /// All links, also when left out of the JSON (their rows are made when read).
    #[serde(skip)]
    pub all_links: LinkTable,
    /// How the run would split into partitions, when measured (`--partitions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<crate::results::partitions::PartitionReport>,
    /// How the flow model's solves would tie partitions together, when measured
    /// (`--partitions` at flow level).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coupling: Option<crate::network::flow::CouplingReport>,
    /// How a run on several threads ran (not in the JSON: it is the same on any number).
    #[serde(skip)]
    pub parallel: Option<crate::results::partitions::Parallel>,
    /// The most transfer records the runtime held at once: the program's own transfers
    /// and the collective steps in flight (a finished step's record is reused).
    #[serde(skip)]
    pub transfer_records: usize,
}

impl Results {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// Streams the JSON summary (same text as `to_json`) without building it in memory:
    /// a run with millions of operations would otherwise hold gigabytes of text.
    pub fn write_json(&self, w: impl std::io::Write) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, w);
        serde_json::to_writer_pretty(&mut w, self).map_err(std::io::Error::other)?;
        std::io::Write::flush(&mut w)
    }
}
