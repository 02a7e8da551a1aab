//! Timelines in the Chrome trace event format, which Perfetto and chrome://tracing open.
//!
//! Each rank is a process (`rank R`) with a `cpu` thread — compute, library overhead, time
//! blocked (named by the call) and collective calls, which contain the intervals inside
//! them — and a `regions` thread. Puts, gets and sends overlap freely, so each is an async
//! slice from issue to completion. Chosen links are counter tracks of their utilization
//! under a `network` process. Timestamps are microseconds, as the format wants.

use crate::results::report::Results;
use crate::units::Ps;
use serde_json::{json, Value};

/// Counter samples per link over the run.
const BINS: u64 = 200;

fn us(ps: Ps) -> f64 {
    ps as f64 / 1e6
}

/// Picks links by name, or `busiest:N` for the N most used.
pub fn select_links(results: &Results, spec: &[String]) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for s in spec {
        if let Some(n) = s.strip_prefix("busiest:") {
            let n: usize = n
                .parse()
                .map_err(|_| format!("'{s}': expected busiest:N with N a number"))?;
            out.extend(results.all_links.busiest(n));
            continue;
        }
        match results.all_links.by_name(s) {
            Some(l) => out.push(l),
            None => {
                let examples: Vec<_> = results.all_links.iter().take(4).map(|l| l.name).collect();
                return Err(format!(
                    "no link named '{s}' (links are named like {}; or use busiest:N)",
                    examples.join(", ")
                ));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The timeline of a traced run, with counter tracks for `links`.
pub fn chrome_trace(results: &Results, links: &[u32]) -> Result<String, String> {
    let trace = results
        .trace
        .as_ref()
        .ok_or("this run was not traced: run it with --timeline (or trace=True in Python)")?;
    let mut ev: Vec<Value> = Vec::new();
    for r in 0..results.ranks {
        let pid = r + 1;
        ev.push(json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": format!("rank {r}")}}));
        ev.push(
            json!({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": r}}),
        );
        ev.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": 1, "args": {"name": "cpu"}}));
        ev.push(json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": 2, "args": {"name": "regions"}}));
    }
    for e in trace {
        let tid = if e.kind == "region" { 2 } else { 1 };
        ev.push(json!({
            "ph": "X", "pid": e.rank + 1, "tid": tid, "cat": e.kind, "name": e.name,
            "ts": us(e.start_ps), "dur": us(e.end_ps - e.start_ps),
        }));
    }
    for (i, op) in results.operations.iter().enumerate() {
        let (Some(done), pid) = (op.complete_ps, op.rank + 1) else {
            continue;
        };
        let name = format!("{} {}->{} ({} B)", op.kind, op.src, op.dst, op.size);
        let args = json!({
            "src": op.src, "dst": op.dst, "size": op.size, "tag": op.tag,
            "issue_ps": op.issue_ps, "dma_start_ps": op.dma_start_ps, "landed_ps": op.landed_ps, "complete_ps": op.complete_ps,
        });
        ev.push(json!({"ph": "b", "cat": op.kind, "name": name, "id": i, "pid": pid, "tid": 1, "ts": us(op.issue_ps), "args": args}));
        ev.push(json!({"ph": "e", "cat": op.kind, "name": name, "id": i, "pid": pid, "tid": 1, "ts": us(done)}));
    }
    if !links.is_empty() {
        let activity = results
            .link_activity
            .as_ref()
            .ok_or("this run has no link activity")?;
        let end = results.predicted_time_ps.max(1);
        let bin = end.div_ceil(BINS).max(1);
        ev.push(json!({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "network"}}));
        for &l in links {
            let name = results
                .all_links
                .by_id(l)
                .map_or_else(|| format!("link {l}"), |x| x.name.to_string());
            let mut busy = vec![0u64; end.div_ceil(bin) as usize];
            for &(a, b) in &activity[l as usize] {
                // Spread the interval over the bins it covers.
                let mut t = a;
                while t < b {
                    let k = (t / bin) as usize;
                    let bin_end = ((k as u64) + 1) * bin;
                    let until = b.min(bin_end);
                    if let Some(slot) = busy.get_mut(k) {
                        *slot += until - t;
                    }
                    t = until;
                }
            }
            for (k, &b) in busy.iter().enumerate() {
                let u = b as f64 / bin as f64;
                ev.push(json!({"ph": "C", "pid": 0, "name": format!("{name} utilization"), "ts": us(k as u64 * bin), "args": {"utilization": u}}));
            }
            ev.push(json!({"ph": "C", "pid": 0, "name": format!("{name} utilization"), "ts": us(end), "args": {"utilization": 0.0}}));
        }
    }
    let doc = json!({"displayTimeUnit": "ns", "traceEvents": ev, "otherData": {"acesim_version": results.acesim_version, "predicted_time_ps": results.predicted_time_ps}});
    serde_json::to_string(&doc).map_err(|e| e.to_string())
}
