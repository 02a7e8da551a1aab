//! A rank's labels and `requires` / `irequires` lines turned into dependency lists, with
//! cycles rejected.

use crate::error::Result;
use crate::frontends::goal::text::err;
use crate::program::ops::{Adjacency, RankDeps, NONE};
use compact_str::CompactString;
use rustc_hash::FxHashMap as HashMap;

/// An operation of the rank block being read (its label borrowed from the text).
pub struct Labelled<'a> {
    pub label: &'a str,
    pub line: usize,
    /// The `cpu N` and `nic N` options (CPU 0 and no NIC when absent).
    pub cpu: u32,
    pub nic: u32,
}

/// `LABEL requires TARGET` (or `irequires`), where it was written: operation `op` of the
/// block waits for the operation labelled `target`, which may come later in the block.
pub struct Dep<'a> {
    pub op: u32,
    pub target: &'a str,
    pub line: usize,
    pub col: usize,
    /// `irequires`: the target need only have started.
    pub start: bool,
}

/// The dependency lists of rank `rank`'s operations `ops`, whose labels are `labels`,
/// from its `deps` lines (in the order written; sorted here by operation, which they
/// already are when each operation's lines follow it).
pub fn resolve(
    file: &str,
    rank: u32,
    ops: &[Labelled],
    deps: &mut [Dep],
    labels: &HashMap<&str, u32>,
) -> Result<RankDeps> {
    let n = ops.len();
    let mut d = RankDeps {
        requires: vec![0; n],
        irequires: vec![0; n],
        after_complete: Adjacency::default(),
        after_start: Adjacency::default(),
        labels: ops.iter().map(|x| CompactString::from(x.label)).collect(),
        cpu: if ops.iter().any(|x| x.cpu != 0) {
            ops.iter().map(|x| x.cpu).collect()
        } else {
            Vec::new()
        },
        nic: if ops.iter().any(|x| x.nic != NONE) {
            ops.iter().map(|x| x.nic).collect()
        } else {
            Vec::new()
        },
    };
    // (target, dependent) pairs, by dependent, each one's in the order its lines give them
    // (the order in which a completion releases its dependents).
    if !deps.is_sorted_by_key(|dep| dep.op) {
        deps.sort_by_key(|dep| dep.op);
    }
    let (mut on_complete, mut on_start) = (Vec::new(), Vec::new());
    for dep in deps.iter() {
        let (op, labelled) = (dep.op as usize, &ops[dep.op as usize]);
        let Some(&target) = labels.get(dep.target) else {
            return Err(err(
                file,
                dep.line,
                dep.col,
                Some("label"),
                format!("rank {rank}: label {} is not defined", dep.target),
            ));
        };
        if target as usize == op {
            return Err(err(
                file,
                dep.line,
                dep.col,
                Some("label"),
                format!(
                    "{} depends on itself: an operation can only require others",
                    labelled.label
                ),
            ));
        }
        if dep.start {
            d.irequires[op] += 1;
            on_start.push((target, op as u32));
        } else {
            d.requires[op] += 1;
            on_complete.push((target, op as u32));
        }
    }
    d.after_complete = Adjacency::from_pairs(n, &on_complete);
    d.after_start = Adjacency::from_pairs(n, &on_start);
    check_acyclic(file, rank, ops, &d)?;
    Ok(d)
}

/// Kahn's algorithm over both kinds of edge: whatever is left is on a cycle.
fn check_acyclic(file: &str, rank: u32, ops: &[Labelled], d: &RankDeps) -> Result<()> {
    let n = ops.len();
    let mut indeg: Vec<u32> = (0..n).map(|i| d.requires[i] + d.irequires[i]).collect();
    let mut stack: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut seen = 0;
    while let Some(i) = stack.pop() {
        seen += 1;
        for &j in d.after_complete.of(i).iter().chain(d.after_start.of(i)) {
            indeg[j as usize] -= 1;
            if indeg[j as usize] == 0 {
                stack.push(j as usize);
            }
        }
    }
    if seen == n {
        return Ok(());
    }
    let on_cycle: Vec<&str> = (0..n)
        .filter(|&i| indeg[i] > 0)
        .map(|i| ops[i].label)
        .take(8)
        .collect();
    let first = (0..n).find(|&i| indeg[i] > 0).unwrap_or(0);
    Err(err(
        file,
        ops[first].line,
        1,
        Some("requires"),
        format!(
            "rank {rank}: the dependencies form a cycle (involving {})",
            on_cycle.join(", ")
        ),
    ))
}
