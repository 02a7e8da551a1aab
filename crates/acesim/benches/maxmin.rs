//! Micro-benchmark of the flow model's max-min solver (issue 18: at least a million flow
//! starts and ends per second), on the churn of `support/torus_flows.rs`: throughput in
//! starts and ends. `cargo bench -p acesim --bench maxmin`.

#[path = "support/torus_flows.rs"]
mod torus_flows;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use torus_flows::{churn, in_flight, Lcg};

/// Flows ending and starting with 10,000 in flight.
fn churn_10k(c: &mut Criterion) {
    // The flows share links end to end (one component of ~9,700 flows), but a change moves
    // the rates of about ten of them: a solve widens only that far.
    const STEPS: u64 = 200;
    let mut rng = Lcg(18);
    let (mut net, mut flows) = in_flight(&mut rng);
    let mut g = c.benchmark_group("maxmin");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2 * STEPS));
    g.bench_function("torus_10k_flows_start_end", |b| {
        b.iter(|| black_box(churn(&mut net, &mut flows, &mut rng, STEPS)))
    });
    g.finish();
}

criterion_group!(benches, churn_10k);
criterion_main!(benches);
