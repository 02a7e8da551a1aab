//! One row per named region of the program: how long the ranks spent in it.

use crate::runtime::Runtime;
use crate::units::Ps;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct RegionResult {
    pub name: String,
    /// Ranks that entered it (counting repeated entries).
    pub count: u64,
    pub min_ps: Ps,
    pub max_ps: Ps,
    pub mean_ps: f64,
    pub first_begin_ps: Ps,
    pub last_end_ps: Ps,
}

/// The regions some rank entered, in the order the program names them.
pub fn regions(rt: &Runtime) -> Vec<RegionResult> {
    let mut regions: Vec<RegionResult> = Vec::new();
    for (id, name) in rt.program.regions.iter().enumerate() {
        let recs: Vec<_> = rt
            .regions
            .iter()
            .filter(|r| r.region as usize == id)
            .collect();
        if recs.is_empty() {
            continue;
        }
        let durs: Vec<Ps> = recs.iter().map(|r| r.end - r.begin).collect();
        regions.push(RegionResult {
            name: name.clone(),
            count: recs.len() as u64,
            min_ps: *durs.iter().min().unwrap_or(&0),
            max_ps: *durs.iter().max().unwrap_or(&0),
            mean_ps: durs.iter().sum::<Ps>() as f64 / durs.len() as f64,
            first_begin_ps: recs.iter().map(|r| r.begin).min().unwrap_or(0),
            last_end_ps: recs.iter().map(|r| r.end).max().unwrap_or(0),
        });
    }
    regions
}
