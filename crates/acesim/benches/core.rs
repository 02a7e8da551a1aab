//! Micro-benchmarks of the hot core (`cargo bench -p acesim`): the event queue on the
//! operation mix of a packet-level run, grid routing, and whole small runs of the packet
//! network (synthetic traffic and a put-based program). `scripts/bench` measures the
//! issue's whole-run cases; these isolate the parts for design studies
//! (docs/performance.md).

use acesim::engine::EventQueue;
use acesim::frontends::schedule;
use acesim::machine::topology::Topology;
use acesim::run::patterns::Pattern;
use acesim::run::traffic::{run_point, Injection, TrafficConfig};
use acesim::{simulate, Machine, MachineSource};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;

fn machine(text: &str) -> Machine {
    MachineSource::from_text("bench.toml", text.to_string())
        .load()
        .expect("the benchmark machine loads")
}

/// A small deterministic generator (the benches need no external randomness).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// Delay after the current time of a pushed event, in the proportions of the 16x16 torus
/// run at half its saturation load (its queue operations recorded and counted): a cable
/// latency (600 ps), the router pipeline (140 ns), the current time, a serialization time
/// and its credit (64 ns, 64.6 ns), two of them, and a spread of others up to 1 µs (on a
/// 4 ns grid).
fn delay(rng: &mut Lcg) -> u64 {
    match rng.next() % 100 {
        0..=35 => 600,
        36..=65 => 140_000,
        66..=73 => 0,
        74..=79 => 64_600,
        80..=84 => 64_000,
        85..=87 => 128_000,
        _ => 4_000 * (rng.next() % 250),
    }
}

/// Each popped event schedules about one more, a tenth of them with a number reserved a
/// little earlier (as the network's link-free and credit events are), around 2,000 pending.
fn event_queue(c: &mut Criterion) {
    const OPS: u64 = 200_000;
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(OPS));
    g.bench_function("torus_traffic_mix", |b| {
        b.iter_batched(
            || Lcg(7),
            |mut rng| {
                let mut q: EventQueue<u64> = EventQueue::default();
                // Injections on a 4 ns slot, as the Bernoulli process makes them, so that
                // events share their times as in a run.
                for i in 0..2_000 {
                    q.schedule(4_000 * (rng.next() % 250), i);
                }
                let mut reserved: Vec<(u64, u64)> = Vec::new();
                let mut sum = 0u64;
                for _ in 0..OPS {
                    let Some((now, e)) = q.pop() else { break };
                    sum = sum.wrapping_add(e);
                    if rng.next() % 10 == 0 {
                        let t = now + 1 + delay(&mut rng);
                        reserved.push((q.reserve(t), t));
                    }
                    if let Some((r, t)) = (reserved.len() > 3).then(|| reserved.remove(0)) {
                        q.schedule_reserved(t.max(now + 1), r, r);
                    } else {
                        let t = now + delay(&mut rng);
                        q.schedule(t, sum);
                    }
                }
                black_box(sum)
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// Dimension-order routing on a 3D torus between random routers.
fn routing(c: &mut Criterion) {
    let m = machine("[topology]\nkind='torus'\ndims=[16,16,16]");
    let topo = Topology::build(&m, 1).expect("the torus builds");
    let n = topo.num_routers;
    let mut rng = Lcg(3);
    let pairs: Vec<(u32, u32, u32)> = (0..4096)
        .map(|_| {
            let (a, b) = (
                (rng.next() % n as u64) as u32,
                (rng.next() % n as u64) as u32,
            );
            (a, b, b * topo.nics_per_node() * topo.nodes_per_router())
        })
        .collect();
    let mut g = c.benchmark_group("routing");
    g.throughput(Throughput::Elements(pairs.len() as u64));
    g.bench_function("torus_16x16x16_hop", |b| {
        b.iter(|| {
            let mut ports = 0u64;
            for &(here, dst, nic) in &pairs {
                ports += topo.route_between(here, here, dst, nic).port as u64;
            }
            black_box(ports)
        })
    });
    g.finish();
}

/// Whole packet-level runs, small enough for criterion's repetitions; throughput in
/// packet-hops.
fn runs(c: &mut Criterion) {
    let torus = machine(
        "[topology]\nkind='torus'\ndims=[8,8]\n[router]\nvcs=4\nbuffer_per_vc='2 KiB'\n[nic]\nmtu='256 B'\nheader='16 B'\ncontrol_packet='16 B'",
    );
    let cfg = TrafficConfig {
        pattern: Pattern::Uniform,
        load: 0.2,
        packet: 256,
        flit: 256,
        injection: Injection::Bernoulli,
        warmup: 5_000_000,
        measure: 40_000_000,
        drain: 400_000_000,
        seed: 1,
        check: false,
        partitions: None,
        threads: 1,
    };
    let hops = run_point(&torus, &cfg).expect("traffic runs").packet_hops;
    let mut g = c.benchmark_group("runs");
    g.sample_size(20);
    g.throughput(Throughput::Elements(hops));
    g.bench_function("uniform_8x8_torus_packet_hops", |b| {
        b.iter(|| black_box(run_point(&torus, &cfg).expect("traffic runs").packet_hops))
    });

    // Every rank puts 64 KiB to a rank eight ahead on the Table 1 machine, then polls.
    let ranks = 64;
    let mut text = format!("ranks {ranks}\n");
    for r in 0..ranks {
        text += &format!("rank {r}\nput {} 64KiB tag=1\npoll 1\n", (r + 8) % ranks);
    }
    let program = schedule::parse("ring.sched", &text).expect("the program parses");
    let table1 = MachineSource::open("table1")
        .and_then(|m| m.load())
        .expect("the table1 preset loads");
    let hops = simulate(&table1, program.clone())
        .expect("the program runs")
        .packet_hops;
    g.throughput(Throughput::Elements(hops));
    g.bench_function("puts_64_ranks_packet_hops", |b| {
        b.iter_batched(
            || program.clone(),
            |p| black_box(simulate(&table1, p).expect("the program runs").packet_hops),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, event_queue, routing, runs);
criterion_main!(benches);
