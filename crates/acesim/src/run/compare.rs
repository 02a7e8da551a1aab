//! One program at both levels, packet and flow, and how far the flow level's predictions
//! are from the packet level's (`acesim compare-models`, `acesim.compare_models`): the
//! total time, the latency of every user operation, the bytes on every link, and the wall
//! time each level took.
//!
//! [`compare`] is a pure function of the two runs' [`Results`]; [`compare_models`] runs a
//! program at both levels and compares them. The packet level is the reference: an error
//! is `|flow - packet| / packet`.

use crate::error::{Error, Location, Result};
use crate::machine::loaded::Machine;
use crate::network::Model;
use crate::program::Program;
use crate::results::{LinkTable, OperationResult, Results, StopReason};
use crate::run::simulate::{simulate_with, Options};
use crate::units::{format_size, format_time, Ps};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;

/// One level's run, in brief.
#[derive(Debug, Clone, Serialize)]
pub struct LevelRun {
    /// `packet` or `flow`.
    pub model: &'static str,
    pub predicted_time_ps: Ps,
    pub predicted_time: String,
    pub events: u64,
    /// Seconds the run took; not in the JSON, which is the same for the same inputs.
    #[serde(skip)]
    pub wall_seconds: f64,
}

impl LevelRun {
    fn of(r: &Results) -> LevelRun {
        LevelRun {
            model: r.model,
            predicted_time_ps: r.predicted_time_ps,
            predicted_time: r.predicted_time.clone(),
            events: r.events,
            wall_seconds: r.wall_seconds,
        }
    }
}

/// One operation where the two levels differ most.
#[derive(Debug, Clone, Serialize)]
pub struct OperationDifference {
    /// Its row in the packet level's `operations` (and in the flow level's, `flow_index`).
    pub index: usize,
    pub flow_index: usize,
    pub kind: &'static str,
    pub rank: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub tag: i64,
    /// When the rank issued it at each level (they differ when earlier operations did).
    pub packet_issue_ps: Ps,
    pub flow_issue_ps: Ps,
    /// The interval measured (latency or landed - issue) at each level.
    pub packet_ps: Ps,
    pub flow_ps: Ps,
    /// `|flow - packet| / packet`.
    pub error: f64,
}

/// The absolute relative error of one interval over the operations that have it at both
/// levels. Quantiles are nearest-rank: the median of 8 errors is the 4th smallest.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorDistribution {
    /// Operations compared.
    pub operations: usize,
    /// Of which the two levels agree to the picosecond.
    pub exact: usize,
    pub median_error: f64,
    pub p95_error: f64,
    pub max_error: f64,
    /// The operation with the largest error (the first such row); absent when every
    /// operation is exact.
    pub worst: Option<OperationDifference>,
}

/// The user's operations (the `operations` rows: puts, gets and sends outside collectives).
#[derive(Debug, Clone, Serialize)]
pub struct OperationComparison {
    /// Rows at each level.
    pub packet_rows: usize,
    pub flow_rows: usize,
    /// Rows matched to a row of the other level: by index when both levels issued the
    /// operations in the same order, else by rank and (kind, src, dst, size, tag) in the
    /// order the rank issued them.
    pub matched: usize,
    /// Matched rows whose index differs between the levels (the ranks issued them in a
    /// different global order).
    pub reordered: usize,
    /// `latency_ps`: complete - issue.
    pub latency: ErrorDistribution,
    /// `landed_ps - issue_ps`, where both levels have it.
    pub landed: ErrorDistribution,
}

/// One link whose bytes differ most.
#[derive(Debug, Clone, Serialize)]
pub struct LinkDifference {
    pub link: u32,
    pub name: String,
    pub packet_bytes: u64,
    pub flow_bytes: u64,
}

/// The bytes every link carried at each level (identical unless routes depend on the
/// network's state or on chance: adaptive and random routing on a dragonfly).
#[derive(Debug, Clone, Serialize)]
pub struct LinkComparison {
    pub links: usize,
    /// Links whose bytes differ.
    pub differing: usize,
    /// The largest |flow - packet| bytes of a link.
    pub max_difference_bytes: u64,
    /// That link (the first such); absent when every link carried the same bytes.
    pub worst: Option<LinkDifference>,
    pub packet_bytes: u64,
    pub flow_bytes: u64,
}

/// How far the flow level is from the packet level on one program and machine.
#[derive(Debug, Clone, Serialize)]
pub struct ModelComparison {
    pub acesim_version: &'static str,
    pub topology: String,
    pub ranks: u32,
    pub packet: LevelRun,
    pub flow: LevelRun,
    /// `(flow - packet) / packet` of the predicted time; absent when the packet level
    /// predicts 0 and the flow level does not.
    pub time_difference: Option<f64>,
    pub operations: OperationComparison,
    pub links: LinkComparison,
}

/// `(other - reference) / reference`, 0 when both are 0, None when only the reference is.
fn relative(reference: Ps, other: Ps) -> Option<f64> {
    match (reference, other) {
        (0, 0) => Some(0.0),
        (0, _) => None,
        (r, o) => Some((o as f64 - r as f64) / r as f64),
    }
}

/// `|other - reference| / reference`; a zero reference counts as one picosecond.
fn abs_error(reference: Ps, other: Ps) -> f64 {
    reference.abs_diff(other) as f64 / reference.max(1) as f64
}

/// The value at nearest rank `ceil(q * n)` of ascending `sorted` (0 when empty).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

type OpKey = (u32, &'static str, u32, u32, u64, i64);

fn key(o: &OperationResult) -> OpKey {
    (o.rank, o.kind, o.src, o.dst, o.size, o.tag)
}

/// Pairs (packet row, flow row) of the same operation.
fn match_operations(packet: &[OperationResult], flow: &[OperationResult]) -> Vec<(usize, usize)> {
    let same_order =
        packet.len() == flow.len() && packet.iter().zip(flow).all(|(p, f)| key(p) == key(f));
    if same_order {
        return (0..packet.len()).map(|i| (i, i)).collect();
    }
    // Each rank issues its operations in its own order; the global order interleaves the
    // ranks by time, which the levels predict differently.
    let mut rows: HashMap<OpKey, std::collections::VecDeque<usize>> = HashMap::new();
    for (j, f) in flow.iter().enumerate() {
        rows.entry(key(f)).or_default().push_back(j);
    }
    packet
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            rows.get_mut(&key(p))
                .and_then(|q| q.pop_front())
                .map(|j| (i, j))
        })
        .collect()
}

/// The error of the interval `measure` gives over the matched operations.
fn distribution(
    packet: &[OperationResult],
    flow: &[OperationResult],
    pairs: &[(usize, usize)],
    measure: impl Fn(&OperationResult) -> Option<Ps>,
) -> ErrorDistribution {
    let mut errors = Vec::with_capacity(pairs.len());
    let mut exact = 0;
    let mut worst: Option<OperationDifference> = None;
    for &(i, j) in pairs {
        let (p, f) = (&packet[i], &flow[j]);
        let (Some(pv), Some(fv)) = (measure(p), measure(f)) else {
            continue;
        };
        let error = abs_error(pv, fv);
        errors.push(error);
        if pv == fv {
            exact += 1;
        } else if worst.as_ref().is_none_or(|w| error > w.error) {
            worst = Some(OperationDifference {
                index: i,
                flow_index: j,
                kind: p.kind,
                rank: p.rank,
                src: p.src,
                dst: p.dst,
                size: p.size,
                tag: p.tag,
                packet_issue_ps: p.issue_ps,
                flow_issue_ps: f.issue_ps,
                packet_ps: pv,
                flow_ps: fv,
                error,
            });
        }
    }
    errors.sort_by(f64::total_cmp);
    ErrorDistribution {
        operations: errors.len(),
        exact,
        median_error: quantile(&errors, 0.5),
        p95_error: quantile(&errors, 0.95),
        max_error: errors.last().copied().unwrap_or(0.0),
        worst,
    }
}

fn compare_links(packet: &LinkTable, flow: &LinkTable) -> LinkComparison {
    let mut differing = 0;
    let mut worst: Option<(u32, u64, u64)> = None;
    let mut max = 0;
    for ((link, p), (_, f)) in packet.bytes().zip(flow.bytes()) {
        let d = p.abs_diff(f);
        if d == 0 {
            continue;
        }
        differing += 1;
        if d > max {
            max = d;
            worst = Some((link, p, f));
        }
    }
    LinkComparison {
        links: packet.len(),
        differing,
        max_difference_bytes: max,
        worst: worst.map(|(link, packet_bytes, flow_bytes)| LinkDifference {
            link,
            name: packet
                .by_id(link)
                .map_or_else(|| format!("link {link}"), |l| l.name.to_string()),
            packet_bytes,
            flow_bytes,
        }),
        packet_bytes: packet.bytes().map(|(_, b)| b).sum(),
        flow_bytes: flow.bytes().map(|(_, b)| b).sum(),
    }
}

/// Compares two complete runs of one program on one machine, `packet` the reference and
/// `flow` the other; the message says why two runs cannot be compared (another machine,
/// another rank count, a run stopped early).
pub fn compare(packet: &Results, flow: &Results) -> std::result::Result<ModelComparison, String> {
    for r in [packet, flow] {
        if let Some(p) = &r.partial {
            return Err(format!(
                "the {} run was stopped ({}) at {}: only complete runs can be compared",
                r.model,
                p.reason.name(),
                format_time(p.stopped_at_ps)
            ));
        }
    }
    if packet.topology != flow.topology || packet.all_links.len() != flow.all_links.len() {
        return Err(format!(
            "the runs are on different machines ({} and {})",
            packet.topology, flow.topology
        ));
    }
    if packet.ranks != flow.ranks {
        return Err(format!(
            "the runs have different rank counts ({} and {})",
            packet.ranks, flow.ranks
        ));
    }
    let (po, fo) = (&packet.operations.to_vec(), &flow.operations.to_vec());
    let pairs = match_operations(po, fo);
    Ok(ModelComparison {
        acesim_version: packet.acesim_version,
        topology: packet.topology.clone(),
        ranks: packet.ranks,
        packet: LevelRun::of(packet),
        flow: LevelRun::of(flow),
        time_difference: relative(packet.predicted_time_ps, flow.predicted_time_ps),
        operations: OperationComparison {
            packet_rows: po.len(),
            flow_rows: fo.len(),
            matched: pairs.len(),
            reordered: pairs.iter().filter(|(i, j)| i != j).count(),
            latency: distribution(po, fo, &pairs, |o| o.latency_ps),
            landed: distribution(po, fo, &pairs, |o| {
                o.landed_ps.map(|l| l.saturating_sub(o.issue_ps))
            }),
        },
        links: compare_links(&packet.all_links, &flow.all_links),
    })
}

/// Both runs and their comparison.
#[derive(Debug, Clone)]
pub struct ModelRuns {
    pub packet: Results,
    pub flow: Results,
    pub comparison: ModelComparison,
}

/// What stops a comparison at one level: a deadlock names the level (and what the other
/// level did), an invariant broken names it too, a run stopped early cannot be compared;
/// anything else is the error `acesim run` gives.
fn at_level(model: Model, e: Error, other: Option<&Result<Results>>) -> Error {
    match e {
        Error::Deadlock(mut report) => {
            report.model = Some(model.name());
            let other_model = match model {
                Model::Packet => Model::Flow,
                Model::Flow => Model::Packet,
            };
            report.note = match other {
                Some(Ok(r)) if r.partial.is_none() => Some(format!(
                    "the {} level finishes this program in {}",
                    other_model.name(),
                    r.predicted_time
                )),
                Some(Err(Error::Deadlock(o))) => Some(format!(
                    "the {} level cannot finish it either ({} rank{} blocked at {})",
                    other_model.name(),
                    o.blocked.len(),
                    if o.blocked.len() == 1 { "" } else { "s" },
                    format_time(o.time)
                )),
                _ => None,
            };
            Error::Deadlock(report)
        }
        Error::Internal(m) => Error::Internal(format!("at the {} level: {m}", model.name())),
        e => e,
    }
}

/// A run stopped early, as an error: Ctrl-C is an interruption, a limit cannot be compared.
fn complete(model: Model, r: Results) -> Result<Results> {
    match &r.partial {
        None => Ok(r),
        Some(p) if p.reason == StopReason::Interrupted => Err(Error::Interrupted(format!(
            "stopped while running the {} level",
            model.name()
        ))),
        Some(p) => Err(Error::input(
            Location::file("options").with_field(p.reason.name()),
            format!(
                "the {} level was stopped ({}) at {}: only complete runs can be compared",
                model.name(),
                p.reason.name(),
                format_time(p.stopped_at_ps)
            ),
        )),
    }
}

/// Runs `program` on `machine` at the packet level, then at the flow level, with `base`
/// (its `model` is ignored), and compares them. A deadlock at one level is reported naming
/// it, with what the other level does with the program.
pub fn compare_models(machine: &Machine, program: Program, base: &Options) -> Result<ModelRuns> {
    let with = |model| Options {
        model,
        ..base.clone()
    };
    let run = |model, program| {
        simulate_with(machine, program, &with(model)).and_then(|r| complete(model, r))
    };
    let packet = run(Model::Packet, program.clone());
    // Input errors are the same at both levels; an interruption stops both.
    if let Err(e @ (Error::Input { .. } | Error::Program { .. } | Error::Io { .. })) = packet {
        return Err(e);
    }
    if let Err(e @ (Error::Interrupted(_) | Error::TooBig(_))) = packet {
        return Err(e);
    }
    let flow = run(Model::Flow, program);
    let (packet, flow) = match (packet, flow) {
        (Ok(p), Ok(f)) => (p, f),
        (Err(e), other) => return Err(at_level(Model::Packet, e, Some(&other))),
        (Ok(p), Err(e)) => return Err(at_level(Model::Flow, e, Some(&Ok(p)))),
    };
    let comparison = compare(&packet, &flow).map_err(Error::Internal)?;
    Ok(ModelRuns {
        packet,
        flow,
        comparison,
    })
}

/// `+1.234 %` (or `0.000 %` when equal).
fn percent_signed(x: Option<f64>) -> String {
    match x {
        None => "undefined: the packet level predicts 0".to_string(),
        Some(0.0) => "0.000 %".to_string(),
        Some(x) => format!("{:+.3} %", x * 100.0),
    }
}

/// `flow - packet` as a signed time (`+281.201 ns`, `0 ps`).
fn signed_time(packet: Ps, flow: Ps) -> String {
    let sign = match flow.cmp(&packet) {
        std::cmp::Ordering::Less => "-",
        std::cmp::Ordering::Equal => "",
        std::cmp::Ordering::Greater => "+",
    };
    format!("{sign}{}", format_time(flow.abs_diff(packet)))
}

/// A wall time: milliseconds below a second.
fn wall(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{seconds:.3} s")
    }
}

fn percent(x: f64) -> String {
    format!("{:.3} %", x * 100.0)
}

impl ModelComparison {
    /// How many times faster the flow level ran (packet wall time / flow wall time); None
    /// when the flow level took no measurable time.
    pub fn speedup(&self) -> Option<f64> {
        (self.flow.wall_seconds > 0.0).then(|| self.packet.wall_seconds / self.flow.wall_seconds)
    }

    /// The JSON text (no wall times: the same inputs give the same text).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    pub fn write_json(&self, w: impl std::io::Write) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(w);
        serde_json::to_writer_pretty(&mut w, self).map_err(std::io::Error::other)?;
        std::io::Write::write_all(&mut w, b"\n")?;
        std::io::Write::flush(&mut w)
    }

    /// The human report, wall times included.
    pub fn report(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "machine: {}   ranks: {}", self.topology, self.ranks);
        for l in [&self.packet, &self.flow] {
            let _ = writeln!(
                s,
                "{:<14}predicted {} ({} ps), {} events, wall {}",
                format!("{} level:", l.model),
                l.predicted_time,
                l.predicted_time_ps,
                l.events,
                wall(l.wall_seconds)
            );
        }
        let _ = writeln!(
            s,
            "total time: flow - packet = {} ({})",
            signed_time(self.packet.predicted_time_ps, self.flow.predicted_time_ps),
            percent_signed(self.time_difference)
        );
        self.write_operations(&mut s);
        self.write_links(&mut s);
        let _ = match self.speedup() {
            Some(x) => writeln!(
                s,
                "speed-up of the flow level: {x:.1}x ({} against {})",
                wall(self.flow.wall_seconds),
                wall(self.packet.wall_seconds)
            ),
            None => writeln!(
                s,
                "speed-up of the flow level: not measurable (it took no time)"
            ),
        };
        s
    }

    fn write_operations(&self, s: &mut String) {
        let o = &self.operations;
        let _ = write!(s, "operations: {} compared", o.matched);
        if o.packet_rows != o.matched || o.flow_rows != o.matched {
            let _ = write!(
                s,
                " ({} rows at the packet level, {} at the flow level)",
                o.packet_rows, o.flow_rows
            );
        }
        if o.reordered > 0 {
            let _ = write!(s, ", {} issued in another order", o.reordered);
        }
        let _ = writeln!(s);
        for (name, d) in [
            ("latency (complete - issue)", &o.latency),
            ("landed - issue", &o.landed),
        ] {
            if d.operations == 0 {
                continue;
            }
            if d.exact == d.operations {
                let _ = writeln!(
                    s,
                    "  {name}: error 0 on all {} operations (exact to the picosecond)",
                    d.operations
                );
                continue;
            }
            let _ = writeln!(
                s,
                "  {name}: error median {}, p95 {}, max {}; {} of {} exact",
                percent(d.median_error),
                percent(d.p95_error),
                percent(d.max_error),
                d.exact,
                d.operations
            );
            if let Some(w) = &d.worst {
                let issue = if w.packet_issue_ps == w.flow_issue_ps {
                    format!("issued at {}", format_time(w.packet_issue_ps))
                } else {
                    format!(
                        "issued at {} (packet) and {} (flow)",
                        format_time(w.packet_issue_ps),
                        format_time(w.flow_issue_ps)
                    )
                };
                let _ = writeln!(
                    s,
                    "    worst: operation {}, {} {} -> {}, {}, tag {}, {issue}: packet {}, flow {} ({})",
                    w.index,
                    w.kind,
                    w.src,
                    w.dst,
                    format_size(w.size),
                    w.tag,
                    format_time(w.packet_ps),
                    format_time(w.flow_ps),
                    percent_signed(relative(w.packet_ps, w.flow_ps))
                );
            }
        }
    }

    fn write_links(&self, s: &mut String) {
        let l = &self.links;
        match &l.worst {
            None => {
                let _ = writeln!(
                    s,
                    "links: the same bytes on all {} links ({} in all)",
                    l.links,
                    format_size(l.packet_bytes)
                );
            }
            Some(w) => {
                let _ = writeln!(
                    s,
                    "links: {} of {} links carry different bytes; largest difference {} on {} (packet {}, flow {})",
                    l.differing,
                    l.links,
                    format_size(l.max_difference_bytes),
                    w.name,
                    format_size(w.packet_bytes),
                    format_size(w.flow_bytes)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(rank: u32, dst: u32, issue: Ps, latency: Ps) -> OperationResult {
        OperationResult {
            kind: "put",
            rank,
            src: rank,
            dst,
            size: 64,
            tag: 0,
            issue_ps: issue,
            dma_start_ps: Some(issue),
            landed_ps: Some(issue + latency / 2),
            complete_ps: Some(issue + latency),
            latency_ps: Some(latency),
            network_latency_ps: Some(latency),
            bandwidth_bytes_per_s: None,
        }
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=8).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 4.0);
        assert_eq!(quantile(&v, 0.95), 8.0);
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&v, 0.5), 50.0);
        assert_eq!(quantile(&v, 0.95), 95.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
        assert_eq!(quantile(&[3.0], 0.95), 3.0);
    }

    #[test]
    fn operations_issued_in_another_order_are_matched_by_rank_and_identity() {
        // Rank 1's two puts to 0 and rank 2's put, interleaved differently by time.
        let packet = [op(1, 0, 0, 100), op(2, 0, 0, 100), op(1, 0, 100, 100)];
        let flow = [op(1, 0, 0, 110), op(1, 0, 110, 100), op(2, 0, 0, 200)];
        let pairs = match_operations(&packet, &flow);
        assert_eq!(pairs, vec![(0, 0), (1, 2), (2, 1)]);
        let d = distribution(&packet, &flow, &pairs, |o| o.latency_ps);
        assert_eq!((d.operations, d.exact), (3, 1));
        assert_eq!(d.max_error, 1.0);
        assert_eq!(d.median_error, 0.1);
        let w = d.worst.expect("a worst operation");
        assert_eq!((w.index, w.flow_index, w.rank), (1, 2, 2));
        assert_eq!((w.packet_ps, w.flow_ps), (100, 200));
    }

    #[test]
    fn the_same_order_matches_by_index_and_exact_runs_name_no_worst() {
        let ops = [op(1, 0, 0, 100), op(2, 0, 5, 70)];
        let pairs = match_operations(&ops, &ops);
        assert_eq!(pairs, vec![(0, 0), (1, 1)]);
        let d = distribution(&ops, &ops, &pairs, |o| o.latency_ps);
        assert_eq!((d.exact, d.max_error), (2, 0.0));
        assert!(d.worst.is_none());
    }

    #[test]
    fn relative_differences() {
        assert_eq!(relative(0, 0), Some(0.0));
        assert_eq!(relative(0, 5), None);
        assert_eq!(relative(200, 100), Some(-0.5));
        assert_eq!(abs_error(0, 3), 3.0);
        assert_eq!(signed_time(100, 100), "0 ps");
        assert_eq!(signed_time(2_000, 1_000), "-1.000 ns");
        assert_eq!(percent_signed(Some(0.0)), "0.000 %");
        assert_eq!(percent_signed(Some(0.001476)), "+0.148 %");
    }
}
