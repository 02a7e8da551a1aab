//! The points of a curve as tables: CSV for files, aligned text for a terminal. Both come
//! from one list of columns, so a column cannot be added to one and forgotten in the other.

use super::measure::TrafficPoint;
use std::fmt::Write as _;

/// How a column shows one point.
type Value = fn(&TrafficPoint) -> String;

/// One column: its CSV header and value, and, when the terminal shows it, its heading, its
/// width and its value there (right-aligned).
struct Column {
    csv: &'static str,
    csv_value: Value,
    shown: Option<(&'static str, usize, Value)>,
}

const fn both(
    csv: &'static str,
    csv_value: Value,
    heading: &'static str,
    width: usize,
    value: Value,
) -> Column {
    Column {
        csv,
        csv_value,
        shown: Some((heading, width, value)),
    }
}

const fn file_only(csv: &'static str, csv_value: Value) -> Column {
    Column {
        csv,
        csv_value,
        shown: None,
    }
}

const COLUMNS: &[Column] = &[
    file_only("pattern", |p| p.pattern.clone()),
    both(
        "load",
        |p| p.load.to_string(),
        "load",
        6,
        |p| format!("{:.3}", p.load),
    ),
    both(
        "offered",
        |p| format!("{:.6}", p.offered),
        "offered",
        8,
        |p| format!("{:.4}", p.offered),
    ),
    both(
        "accepted",
        |p| format!("{:.6}", p.accepted),
        "accepted",
        8,
        |p| format!("{:.4}", p.accepted),
    ),
    both(
        "latency_mean_ns",
        |p| format!("{:.3}", p.latency_mean_ns),
        "mean ns",
        11,
        |p| format!("{:.1}", p.latency_mean_ns),
    ),
    both(
        "latency_p50_ns",
        |p| format!("{:.3}", p.latency_p50_ns),
        "p50 ns",
        11,
        |p| format!("{:.1}", p.latency_p50_ns),
    ),
    both(
        "latency_p99_ns",
        |p| format!("{:.3}", p.latency_p99_ns),
        "p99 ns",
        11,
        |p| format!("{:.1}", p.latency_p99_ns),
    ),
    both(
        "hops_mean",
        |p| format!("{:.4}", p.hops_mean),
        "hops",
        6,
        |p| format!("{:.2}", p.hops_mean),
    ),
    both(
        "minimal_fraction",
        |p| format!("{:.4}", p.minimal_fraction),
        "minimal",
        7,
        |p| format!("{:.3}", p.minimal_fraction),
    ),
    file_only("packets_measured", |p| p.packets_measured.to_string()),
    file_only("packets_lost", |p| p.packets_lost.to_string()),
    file_only("saturated", |p| p.saturated.to_string()),
    file_only("max_link_utilization", |p| {
        format!("{:.6}", p.max_link_utilization)
    }),
    file_only("events", |p| p.events.to_string()),
    file_only("latency_growth", |p| format!("{:.3}", p.latency_growth)),
    // Where the point came from (so that CSVs of many sweeps can be concatenated).
    file_only("packet_bytes", |p| p.packet_bytes.to_string()),
    file_only("seed", |p| p.seed.to_string()),
    file_only("routing", |p| {
        p.machine
            .as_ref()
            .map_or(String::new(), |m| m.routing.clone())
    }),
    file_only("machine", |p| {
        p.machine
            .as_ref()
            .map_or(String::new(), |m| csv_text(&m.name))
    }),
    file_only("machine_hash", |p| {
        p.machine.as_ref().map_or(String::new(), |m| m.hash.clone())
    }),
    file_only("model", |p| p.model.to_string()),
    file_only("acesim_version", |p| p.acesim_version.to_string()),
];

/// Text as a CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_text(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The points as CSV, one row per load, with a header line.
pub fn points_csv(points: &[TrafficPoint]) -> String {
    let header: Vec<&str> = COLUMNS.iter().map(|c| c.csv).collect();
    let mut out = header.join(",") + "\n";
    for p in points {
        let row: Vec<String> = COLUMNS.iter().map(|c| (c.csv_value)(p)).collect();
        out += &row.join(",");
        out.push('\n');
    }
    out
}

/// The points as an aligned table for a terminal, with the wall time each took and its
/// status (stable or saturated).
pub fn points_table(points: &[TrafficPoint]) -> String {
    let shown: Vec<_> = COLUMNS.iter().filter_map(|c| c.shown).collect();
    let mut out = String::new();
    for (i, (heading, width, _)) in shown.iter().enumerate() {
        let sep = if i == 0 { "" } else { " " };
        let _ = write!(out, "{sep}{heading:>width$}");
    }
    let _ = writeln!(out, " {:>8}  status", "wall s");
    for p in points {
        for (i, (_, width, value)) in shown.iter().enumerate() {
            let sep = if i == 0 { "" } else { " " };
            let _ = write!(out, "{sep}{:>width$}", value(p));
        }
        let status = if p.saturated { "saturated" } else { "stable" };
        let _ = writeln!(out, " {:>8.3}  {status}", p.wall_seconds);
    }
    out
}
