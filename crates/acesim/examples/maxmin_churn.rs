//! The max-min solver's churn of `benches/maxmin.rs` for a given number of steps, so that
//! instructions can be counted (the criterion bench runs as many as fit in its time):
//!
//!   cargo build --release -p acesim --example maxmin_churn
//!   valgrind --tool=callgrind target/release/examples/maxmin_churn 4000
//!
//! less the same with 0 steps (the set-up: 10,000 flows started and solved), over 8,000
//! starts and ends. Prints the starts and ends a second, the flows solved and the sum of
//! the rates (the same for two builds that solve alike).

#[path = "../benches/support/torus_flows.rs"]
mod torus_flows;

use torus_flows::{churn, in_flight, Lcg};

fn main() {
    let steps = match std::env::args().nth(1).map(|s| s.parse::<u64>()) {
        None => 2_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("error: the number of steps: {e}");
            std::process::exit(2);
        }
    };
    let mut rng = Lcg(18);
    let (mut net, mut flows) = in_flight(&mut rng);
    let started = std::time::Instant::now();
    let solved = churn(&mut net, &mut flows, &mut rng, steps);
    let seconds = started.elapsed().as_secs_f64();
    let rates: f64 = flows.iter().map(|&f| net.solver.rate(f)).sum();
    println!(
        "{} starts and ends in {seconds:.3} s ({:.0} a second), {solved} flows solved, rates summing to {rates:.12e}",
        2 * steps,
        (2 * steps) as f64 / seconds.max(1e-9)
    );
}
