//! What `acesim trace info` and `acesim trace record` print of a trace: its kind and ranks,
//! calls by kind, bytes, communicators and each rank's traced window.

use acesim::frontends::dumpi::TraceSummary;
use acesim::units::{format_time, Ps};
use std::fmt::Write as _;
use std::path::Path;

/// The human summary of a trace.
pub(crate) fn describe(path: &Path, s: &TraceSummary) -> String {
    let mut o = String::new();
    let kind = match s.version {
        _ if !s.format.is_empty() => s.format.to_string(),
        [0, 0, 0] => "SimGrid time-independent".to_string(),
        [a, b, c] => format!("DUMPI {a}.{b}.{c}"),
    };
    let _ = writeln!(o, "{}: {kind} trace, {} ranks", path.display(), s.ranks);
    let total: u64 = s.calls.values().sum();
    let _ = writeln!(
        o,
        "calls: {total} ({} collective), {} bytes sent point to point, {} communicator memberships created",
        s.collective_calls, s.p2p_bytes, s.comms_created
    );
    let mut calls: Vec<(&str, u64)> = s.calls.iter().map(|(k, v)| (*k, *v)).collect();
    calls.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
    for (name, n) in calls {
        let _ = writeln!(o, "  {name:<24} {n:>12}");
    }
    // SimGrid's traces have no clock: no windows.
    if let Some(w) = window_stats(&s.windows).filter(|w| w.max > 0) {
        let _ = writeln!(
            o,
            "traced window per rank: min {}, mean {}, max {} (rank {})",
            format_time(w.min),
            format_time(w.mean),
            format_time(w.max),
            w.max_rank
        );
    }
    // Every rank's window for small traces; --json has them all.
    if s.windows.len() <= 64 && s.windows.iter().any(|&w| w > 0) {
        for (r, w) in s.windows.iter().enumerate() {
            let _ = writeln!(o, "  rank {r:<5} {}", format_time(*w));
        }
    }
    o
}

struct WindowStats {
    min: Ps,
    mean: Ps,
    max: Ps,
    max_rank: usize,
}

fn window_stats(windows: &[Ps]) -> Option<WindowStats> {
    let (max_rank, &max) = windows
        .iter()
        .enumerate()
        .max_by_key(|&(r, w)| (*w, std::cmp::Reverse(r)))?;
    let sum: u128 = windows.iter().map(|&w| w as u128).sum();
    Some(WindowStats {
        min: windows.iter().copied().min().unwrap_or(0),
        mean: (sum / windows.len() as u128) as Ps,
        max,
        max_rank,
    })
}
