//! The max-min solver's churn (issue 18: at least a million flow starts and ends per
//! second): 10,000 flows in flight on a 16x16x24 torus (36,864 network links, an injection
//! and an ejection link and a send and a receive DMA engine per node: 73,728 resources),
//! each flow on its sender's DMA engine, its injection link, 2 to 8 network links in
//! dimension order, its ejection link and its receiver's DMA engine (4 to 10 links), the
//! DMA engines at the payload's share of the wire bytes (weight 0.97). Each step ends a
//! flow (remove_flow + solve) and starts one (add_flow + solve). Shared by the criterion
//! bench (`benches/maxmin.rs`) and `examples/maxmin_churn.rs`, which runs a given number of
//! steps (for `valgrind --tool=callgrind`).

use acesim::network::flow::MaxMin;

/// A small deterministic generator (the benches need no external randomness).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const DIMS: [u64; 3] = [16, 16, 24];
/// Bytes per picosecond: 4 GB/s links, DMA engines a little faster.
const LINK: f64 = 0.004;
const DMA: f64 = 0.0045;
/// Payload share of the wire bytes (4 KiB packets with 128-byte headers).
const PAYLOAD: f64 = 4096.0 / 4224.0;
pub const IN_FLIGHT: usize = 10_000;

/// The torus's resources: network links (router × 6 ports), then per node its injection
/// and ejection links and its send and receive DMA engines.
pub struct Net {
    pub solver: MaxMin,
    routers: u64,
}

impl Net {
    pub fn new() -> Net {
        let routers = DIMS.iter().product::<u64>();
        let mut solver = MaxMin::default();
        for _ in 0..routers * 8 {
            solver.add_resource(LINK);
        }
        for _ in 0..routers * 2 {
            solver.add_resource(DMA);
        }
        Net { solver, routers }
    }

    fn link(&self, router: u64, port: u64) -> u32 {
        (router * 6 + port) as u32
    }

    /// A random flow's resources and weights.
    pub fn route(&self, rng: &mut Lcg) -> Vec<(u32, f64)> {
        let (n, links) = (self.routers, self.routers * 6);
        let src = rng.below(n);
        // Hops per dimension (2 to 8 in all, each in one direction), in dimension order.
        let hops = 2 + rng.below(7);
        let mut per_dim = [0u64; 3];
        for _ in 0..hops {
            per_dim[rng.below(3) as usize] += 1;
        }
        let mut uses = vec![
            ((n * 8 + src) as u32, PAYLOAD), // send DMA
            ((links + src) as u32, 1.0),     // injection link
        ];
        let mut coords = [src % 16, src / 16 % 16, src / 256];
        for d in 0..3 {
            let up = rng.below(2) == 0;
            for _ in 0..per_dim[d] {
                let here = coords[0] + coords[1] * 16 + coords[2] * 256;
                uses.push((self.link(here, d as u64 * 2 + u64::from(!up)), 1.0));
                coords[d] = if up {
                    (coords[d] + 1) % DIMS[d]
                } else {
                    (coords[d] + DIMS[d] - 1) % DIMS[d]
                };
            }
        }
        let dst = coords[0] + coords[1] * 16 + coords[2] * 256;
        uses.push(((links + n + dst) as u32, 1.0)); // ejection link
        uses.push(((n * 9 + dst) as u32, PAYLOAD)); // receive DMA
        uses.sort_unstable_by_key(|u| u.0);
        uses
    }
}

/// The torus with its 10,000 flows started and solved, and the flows' ids.
pub fn in_flight(rng: &mut Lcg) -> (Net, Vec<u32>) {
    let mut net = Net::new();
    let flows = (0..IN_FLIGHT)
        .map(|_| {
            let uses = net.route(rng);
            net.solver.add_flow(&uses)
        })
        .collect();
    net.solver.solve(&mut Vec::new());
    (net, flows)
}

/// `steps` steps of churn: a random flow ends and a new one starts, each followed by a
/// solve. Returns the flows solved in all.
pub fn churn(net: &mut Net, flows: &mut [u32], rng: &mut Lcg, steps: u64) -> usize {
    let mut changed = Vec::new();
    let mut solved = 0;
    for _ in 0..steps {
        let i = rng.below(flows.len() as u64) as usize;
        net.solver.remove_flow(flows[i]);
        net.solver.solve(&mut changed);
        solved += changed.len();
        let uses = net.route(rng);
        flows[i] = net.solver.add_flow(&uses);
        net.solver.solve(&mut changed);
        solved += changed.len();
    }
    solved
}
