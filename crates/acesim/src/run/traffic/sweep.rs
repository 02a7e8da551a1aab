//! A curve: loads parsed from the command line, run one after another, and what the points
//! say of the network.

use crate::engine::Exchange;
use crate::error::Result;
use crate::machine::loaded::Machine;
use crate::run::progress::Progress;
use crate::run::traffic::config::{check_load, command_line, TrafficConfig};
use crate::run::traffic::measure::TrafficPoint;
use crate::run::traffic::point::run_point_on;

/// Runs `base` at each load: all of them, or (by default) stopping after two saturated;
/// `progress` is told where each point is.
pub fn run_loads(
    machine: &Machine,
    base: &TrafficConfig,
    loads: &[f64],
    all: bool,
    progress: Option<&Progress>,
) -> Result<Vec<TrafficPoint>> {
    run_loads_on(machine, base, loads, all, progress, None)
}

/// `run_loads`, each point run across `processes` when given (every process gets every
/// point, so all take the same decisions).
pub fn run_loads_on(
    machine: &Machine,
    base: &TrafficConfig,
    loads: &[f64],
    all: bool,
    progress: Option<&Progress>,
    processes: Option<&dyn Exchange>,
) -> Result<Vec<TrafficPoint>> {
    if loads.is_empty() {
        return Err(command_line("load", "give at least one load".into()));
    }
    for &load in loads {
        check_load(load).map_err(|m| command_line("load", m))?;
    }
    let mut out = Vec::new();
    let mut saturated = 0;
    for &load in loads {
        let p = run_point_on(machine, &base.at_load(load), progress, processes)?;
        saturated += p.saturated as u32;
        out.push(p);
        // Unless every load is asked for, the sweep stops after two saturated points.
        if saturated >= 2 && !all {
            break;
        }
    }
    Ok(out)
}

/// Runs a sweep of loads; stops after the first two saturated points.
pub fn run_curve(
    machine: &Machine,
    base: &TrafficConfig,
    loads: &[f64],
    progress: Option<&Progress>,
) -> Result<Vec<TrafficPoint>> {
    run_loads_on(machine, base, loads, false, progress, None)
}

/// The loads of a `FROM:TO:STEP` range (inclusive, rounded to avoid 0.30000000000000004).
pub fn parse_loads(s: &str) -> std::result::Result<Vec<f64>, String> {
    let num = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| format!("'{t}' is not a number"))
    };
    let parts: Vec<&str> = s.split(':').collect();
    let loads = match parts.as_slice() {
        [one] if !one.contains(',') => vec![num(one)?],
        [a, b, step] => {
            let (a, b, step) = (num(a)?, num(b)?, num(step)?);
            if step <= 0.0 || b < a {
                return Err(format!(
                    "'{s}': expected FROM:TO:STEP with FROM <= TO and STEP > 0"
                ));
            }
            let n = ((b - a) / step + 1e-9).floor() as usize;
            (0..=n)
                .map(|i| ((a + i as f64 * step) * 1e9).round() / 1e9)
                .collect()
        }
        _ => s
            .split(',')
            .map(num)
            .collect::<std::result::Result<Vec<_>, _>>()?,
    };
    loads.iter().try_for_each(|&l| check_load(l))?;
    Ok(loads)
}

/// The network's capacity under the pattern: the best accepted throughput of any point.
pub fn saturation_throughput(points: &[TrafficPoint]) -> Option<f64> {
    points.iter().map(|p| p.accepted).reduce(f64::max)
}

/// The highest offered load that was still stable.
pub fn last_stable_load(points: &[TrafficPoint]) -> Option<f64> {
    points
        .iter()
        .filter(|p| !p.saturated)
        .map(|p| p.load)
        .reduce(f64::max)
}
