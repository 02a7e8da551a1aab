//! Synthetic traffic patterns for latency/throughput curves.
//!
//! A [`Pattern`] names a classic synthetic workload (uniform random, permutation,
//! bit permutations, tornado, nearest neighbour, dragonfly adversarial patterns,
//! hot spots). [`Pattern::check`] validates it against a [`Shape`], and [`Traffic`]
//! binds the two together with a seeded [`Rng`] so that every run with the same
//! seed produces the same sequence of destinations.
//!
//! Grid node numbering: router coordinates are mixed-radix with dimension 0
//! fastest (`router = c0 + d0 * (c1 + d1 * (c2 + ...))`) and
//! `node = router * nodes_per_router + i`. Grid patterns move the router and keep
//! the node's index `i` within its router.

use crate::rng::Rng;
use std::fmt::Write as _;

/// Shape information patterns may need.
#[derive(Debug, Clone, Default)]
pub struct Shape {
    pub nodes: u32,
    /// Routers per dimension for mesh/torus/tofu (nodes_per_router nodes hang off each router, node = router * npr + i), else empty.
    pub dims: Vec<u32>,
    pub nodes_per_router: u32,
    /// Dragonfly: nodes per group (p * a) and number of groups; 0 if not a dragonfly.
    pub group_size: u32,
    pub groups: u32,
}

/// A synthetic traffic pattern.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    /// Uniformly random destination different from the source.
    Uniform,
    /// A fixed random permutation (no fixed points if N > 1), drawn once from the seed.
    Permutation,
    /// N = 2^(2k): swap the high and low halves of the address bits.
    Transpose,
    /// N = 2^k: `dst = !src & (N - 1)`.
    BitComplement,
    /// N = 2^k: reverse the k address bits.
    BitReverse,
    /// N = 2^k: rotate the address bits left by one.
    Shuffle,
    /// Grid: in every dimension move `ceil(k/2) - 1` positions in the + direction;
    /// without dims: `(src + ceil(N/2) - 1) mod N`.
    Tornado,
    /// Grid: +1 in dimension 0 (wrapping); without dims: `src + 1 mod N`.
    Neighbor,
    /// Dragonfly: a uniformly random node of group `(g + 1) mod G`.
    NearestGroup,
    /// Dragonfly: node j of group g sends to node j of group `(g + 1) mod G`
    /// (adversarial for minimal routing).
    WorstCase,
    /// With probability `fraction` a uniformly chosen hot node, else uniform.
    HotSpot { hot: Vec<u32>, fraction: f64 },
}

const VALID_NAMES: &str = "uniform, permutation, transpose, bitcomp (bit_complement), \
     bitrev (bit_reverse), shuffle, tornado, neighbor (nearest_neighbor), nearest_group, \
     worst_case, hotspot:N1,N2,...[:FRACTION]";

const DEFAULT_HOT_FRACTION: f64 = 0.5;

fn fraction_ok(fraction: f64) -> bool {
    fraction > 0.0 && fraction <= 1.0
}

impl Pattern {
    /// Parses "uniform", "permutation", "transpose", "bitcomp"/"bit_complement", "bitrev"/"bit_reverse", "shuffle", "tornado", "neighbor"/"nearest_neighbor", "nearest_group", "worst_case", and "hotspot:N1,N2,...:FRACTION" (fraction in (0,1], default 0.5 if omitted: "hotspot:0,5"). Errors are user-facing strings listing the valid names.
    pub fn parse(s: &str) -> Result<Pattern, String> {
        let text = s.trim().to_ascii_lowercase().replace('-', "_");
        let (head, rest) = match text.split_once(':') {
            Some((head, rest)) => (head, Some(rest)),
            None => (text.as_str(), None),
        };
        if head == "hotspot" || head == "hot_spot" {
            return parse_hotspot(rest.unwrap_or(""));
        }
        if rest.is_some() {
            return Err(format!(
                "traffic pattern '{}' takes no parameters; valid patterns: {VALID_NAMES}",
                s.trim()
            ));
        }
        let pattern = match head {
            "uniform" => Pattern::Uniform,
            "permutation" => Pattern::Permutation,
            "transpose" => Pattern::Transpose,
            "bitcomp" | "bit_complement" => Pattern::BitComplement,
            "bitrev" | "bit_reverse" => Pattern::BitReverse,
            "shuffle" => Pattern::Shuffle,
            "tornado" => Pattern::Tornado,
            "neighbor" | "nearest_neighbor" => Pattern::Neighbor,
            "nearest_group" => Pattern::NearestGroup,
            "worst_case" => Pattern::WorstCase,
            _ => {
                return Err(format!(
                    "unknown traffic pattern '{}'; valid patterns: {VALID_NAMES}",
                    s.trim()
                ))
            }
        };
        Ok(pattern)
    }

    /// The canonical name; `Pattern::parse(&p.name())` gives back `p`.
    pub fn name(&self) -> String {
        match self {
            Pattern::Uniform => "uniform".to_string(),
            Pattern::Permutation => "permutation".to_string(),
            Pattern::Transpose => "transpose".to_string(),
            Pattern::BitComplement => "bit_complement".to_string(),
            Pattern::BitReverse => "bit_reverse".to_string(),
            Pattern::Shuffle => "shuffle".to_string(),
            Pattern::Tornado => "tornado".to_string(),
            Pattern::Neighbor => "neighbor".to_string(),
            Pattern::NearestGroup => "nearest_group".to_string(),
            Pattern::WorstCase => "worst_case".to_string(),
            Pattern::HotSpot { hot, fraction } => {
                let mut out = String::from("hotspot:");
                for (i, node) in hot.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{node}");
                }
                let _ = write!(out, ":{fraction}");
                out
            }
        }
    }

    /// Checks the pattern against the shape: power-of-two needs (message like "bit_complement needs a power-of-two number of nodes, not 24"), transpose needs an even power of two, dragonfly patterns need a dragonfly, hot nodes in range, fraction in (0, 1]. Grid-based patterns fall back to the 1D rule when dims is empty.
    pub fn check(&self, shape: &Shape) -> Result<(), String> {
        let name = self.name();
        let n = shape.nodes;
        if n == 0 {
            return Err(format!("{name} needs at least one node"));
        }
        match self {
            Pattern::Uniform | Pattern::Permutation => Ok(()),
            Pattern::Transpose => {
                if n.is_power_of_two() && n.trailing_zeros().is_multiple_of(2) {
                    Ok(())
                } else {
                    Err(format!(
                        "transpose needs a number of nodes that is an even power of two \
                         (1, 4, 16, 64, ...), not {n}"
                    ))
                }
            }
            Pattern::BitComplement | Pattern::BitReverse | Pattern::Shuffle => {
                if n.is_power_of_two() {
                    Ok(())
                } else {
                    Err(format!(
                        "{name} needs a power-of-two number of nodes, not {n}"
                    ))
                }
            }
            Pattern::Tornado | Pattern::Neighbor => check_grid(&name, shape),
            Pattern::NearestGroup | Pattern::WorstCase => check_dragonfly(&name, shape),
            Pattern::HotSpot { hot, fraction } => {
                if hot.is_empty() {
                    return Err("hotspot needs at least one hot node".to_string());
                }
                if let Some(bad) = hot.iter().find(|&&h| h >= n) {
                    return Err(format!(
                        "hotspot node {bad} is out of range: there are {n} nodes (0..{})",
                        n - 1
                    ));
                }
                if !fraction_ok(*fraction) {
                    return Err(format!(
                        "hotspot fraction must be in (0, 1], not {fraction}"
                    ));
                }
                Ok(())
            }
        }
    }
}

fn parse_hotspot(rest: &str) -> Result<Pattern, String> {
    let usage = "expected hotspot:N1,N2,...[:FRACTION], e.g. hotspot:0,5:0.2";
    let (nodes_text, fraction_text) = match rest.split_once(':') {
        Some((nodes, fraction)) => (nodes, Some(fraction)),
        None => (rest, None),
    };
    if nodes_text.trim().is_empty() {
        return Err(format!("hotspot needs a list of hot nodes; {usage}"));
    }
    let mut hot = Vec::new();
    for item in nodes_text.split(',') {
        let item = item.trim();
        let node = item
            .parse::<u32>()
            .map_err(|_| format!("hotspot: '{item}' is not a node number; {usage}"))?;
        hot.push(node);
    }
    let fraction = match fraction_text {
        None => DEFAULT_HOT_FRACTION,
        Some(text) => {
            let text = text.trim();
            let fraction = text
                .parse::<f64>()
                .map_err(|_| format!("hotspot: '{text}' is not a fraction; {usage}"))?;
            if !fraction_ok(fraction) {
                return Err(format!("hotspot fraction must be in (0, 1], not {text}"));
            }
            fraction
        }
    };
    Ok(Pattern::HotSpot { hot, fraction })
}

fn check_grid(name: &str, shape: &Shape) -> Result<(), String> {
    if shape.dims.is_empty() {
        // Neighbours of a machine without dimensions are its nodes in a ring; tornado is
        // defined only along the rings of a mesh or torus (docs/traffic.md).
        if name == "tornado" {
            return Err(format!(
                "{name} moves half-way along the dimensions of a mesh or torus; this machine has none (use uniform, permutation, bit_complement, ...)"
            ));
        }
        return Ok(());
    }
    if shape.nodes_per_router == 0 {
        return Err(format!("{name}: nodes_per_router must be at least 1"));
    }
    if let Some(d) = shape.dims.iter().position(|&k| k == 0) {
        return Err(format!("{name}: dimension {d} has no routers"));
    }
    let total = shape
        .dims
        .iter()
        .try_fold(u64::from(shape.nodes_per_router), |acc, &k| {
            acc.checked_mul(u64::from(k))
        });
    if total != Some(u64::from(shape.nodes)) {
        let total = total.map_or_else(|| "too many".to_string(), |t| t.to_string());
        return Err(format!(
            "{name}: dims {:?} with {} nodes per router give {total} nodes, but there are {}",
            shape.dims, shape.nodes_per_router, shape.nodes
        ));
    }
    Ok(())
}

fn check_dragonfly(name: &str, shape: &Shape) -> Result<(), String> {
    if shape.group_size == 0 || shape.groups == 0 {
        return Err(format!("{name} needs a dragonfly topology"));
    }
    if shape.groups < 2 {
        return Err(format!(
            "{name} needs a dragonfly with at least two groups, not {}",
            shape.groups
        ));
    }
    if u64::from(shape.group_size) * u64::from(shape.groups) != u64::from(shape.nodes) {
        return Err(format!(
            "{name}: {} groups of {} nodes do not add up to {} nodes",
            shape.groups, shape.group_size, shape.nodes
        ));
    }
    Ok(())
}

/// A pattern bound to a shape (precomputes the permutation).
#[derive(Debug, Clone)]
pub struct Traffic {
    pattern: Pattern,
    shape: Shape,
    /// `Permutation`: the destination of every node.
    perm: Vec<u32>,
    /// `HotSpot`: the hot nodes, sorted and without duplicates.
    hot: Vec<u32>,
    /// log2(nodes) for the bit patterns.
    bits: u32,
}

impl Traffic {
    /// Fails with the `check` message.
    pub fn new(pattern: Pattern, shape: Shape, seed: u64) -> Result<Traffic, String> {
        pattern.check(&shape)?;
        let mut rng = Rng::new(seed);
        let perm = if pattern == Pattern::Permutation {
            random_derangement(shape.nodes, &mut rng)
        } else {
            Vec::new()
        };
        let hot = match &pattern {
            Pattern::HotSpot { hot, .. } => {
                let mut hot = hot.clone();
                hot.sort_unstable();
                hot.dedup();
                hot
            }
            _ => Vec::new(),
        };
        let bits = shape.nodes.trailing_zeros();
        Ok(Traffic {
            pattern,
            shape,
            perm,
            hot,
            bits,
        })
    }

    /// Destination for a packet from `src`, drawing from `rng` (the source's own stream)
    /// if the pattern draws. May return `src` only when the pattern inherently maps a node to itself (e.g. transpose of a diagonal node, bit reverse of palindromes); the caller skips such packets.
    ///
    /// # Panics
    /// If `src` is not a node of the shape.
    pub fn destination(&self, src: u32, rng: &mut Rng) -> u32 {
        let n = self.shape.nodes;
        assert!(src < n, "source node {src} out of range (0..{n})");
        let mask = n - 1; // only meaningful for power-of-two patterns
        let bits = self.bits;
        match &self.pattern {
            Pattern::Uniform => self.uniform_other(src, rng),
            Pattern::Permutation => self.perm[src as usize],
            Pattern::Transpose => {
                let half = bits / 2;
                if half == 0 {
                    src
                } else {
                    ((src << half) | (src >> half)) & mask
                }
            }
            Pattern::BitComplement => !src & mask,
            Pattern::BitReverse => {
                if bits == 0 {
                    src
                } else {
                    src.reverse_bits() >> (32 - bits)
                }
            }
            Pattern::Shuffle => {
                if bits == 0 {
                    src
                } else {
                    ((src << 1) | (src >> (bits - 1))) & mask
                }
            }
            Pattern::Tornado => {
                if self.shape.dims.is_empty() {
                    let shift = n.div_ceil(2) - 1;
                    ((u64::from(src) + u64::from(shift)) % u64::from(n)) as u32
                } else {
                    self.grid_move(src, |_, k| k.div_ceil(2) - 1)
                }
            }
            Pattern::Neighbor => {
                if self.shape.dims.is_empty() {
                    ((u64::from(src) + 1) % u64::from(n)) as u32
                } else {
                    self.grid_move(src, |d, _| u32::from(d == 0))
                }
            }
            Pattern::NearestGroup => {
                let gs = self.shape.group_size;
                let next = (src / gs + 1) % self.shape.groups;
                next * gs + rng.below(u64::from(gs)) as u32
            }
            Pattern::WorstCase => {
                let gs = self.shape.group_size;
                let next = (src / gs + 1) % self.shape.groups;
                next * gs + src % gs
            }
            Pattern::HotSpot { fraction, .. } => {
                let fraction = *fraction;
                if rng.next_f64() < fraction {
                    let len = self.hot.len() as u64;
                    match self.hot.binary_search(&src) {
                        // A hot source picks one of the other hot nodes.
                        Ok(pos) if len > 1 => {
                            let mut idx = rng.below(len - 1) as usize;
                            if idx >= pos {
                                idx += 1;
                            }
                            return self.hot[idx];
                        }
                        // The only hot node cannot send to itself: uniform instead.
                        Ok(_) => {}
                        Err(_) => return self.hot[rng.below(len) as usize],
                    }
                }
                self.uniform_other(src, rng)
            }
        }
    }

    /// A uniformly random node other than `src` (`src` itself only if N = 1).
    fn uniform_other(&self, src: u32, rng: &mut Rng) -> u32 {
        let n = self.shape.nodes;
        if n <= 1 {
            return src;
        }
        let r = rng.below(u64::from(n - 1)) as u32;
        if r >= src {
            r + 1
        } else {
            r
        }
    }

    /// Moves the router of `src` by `offset(dim, k)` positions (wrapping) in every
    /// dimension and keeps the node's index within its router.
    fn grid_move(&self, src: u32, offset: impl Fn(usize, u32) -> u32) -> u32 {
        let npr = self.shape.nodes_per_router;
        let index = src % npr;
        let mut rest = src / npr;
        let mut router: u64 = 0;
        let mut stride: u64 = 1;
        for (d, &k) in self.shape.dims.iter().enumerate() {
            let c = rest % k;
            rest /= k;
            let moved = (u64::from(c) + u64::from(offset(d, k) % k)) % u64::from(k);
            router += moved * stride;
            stride *= u64::from(k);
        }
        (router * u64::from(npr) + u64::from(index)) as u32
    }
}

/// A uniformly random permutation of `0..n` without fixed points (identity for
/// n = 1): Fisher-Yates shuffles rejected until none has a fixed point, which
/// takes about e attempts on average.
fn random_derangement(n: u32, rng: &mut Rng) -> Vec<u32> {
    let mut perm: Vec<u32> = (0..n).collect();
    if n < 2 {
        return perm;
    }
    loop {
        for i in (1..perm.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            perm.swap(i, j);
        }
        if perm.iter().enumerate().all(|(i, &p)| p as usize != i) {
            return perm;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(nodes: u32) -> Shape {
        Shape {
            nodes,
            ..Shape::default()
        }
    }

    fn grid(dims: &[u32], npr: u32) -> Shape {
        Shape {
            nodes: dims.iter().product::<u32>() * npr,
            dims: dims.to_vec(),
            nodes_per_router: npr,
            ..Shape::default()
        }
    }

    fn dragonfly(group_size: u32, groups: u32) -> Shape {
        Shape {
            nodes: group_size * groups,
            group_size,
            groups,
            ..Shape::default()
        }
    }

    /// Destinations drawn from one stream per test thread: the tests look at what a
    /// pattern draws, not at which stream it draws from.
    trait Draw {
        fn draw(&self, src: u32) -> u32;
    }

    impl Draw for Traffic {
        fn draw(&self, src: u32) -> u32 {
            thread_local!(static RNG: std::cell::RefCell<Rng> = std::cell::RefCell::new(Rng::new(99)));
            RNG.with(|r| self.destination(src, &mut r.borrow_mut()))
        }
    }

    fn traffic(pattern: Pattern, shape: Shape) -> Traffic {
        Traffic::new(pattern, shape, 42).expect("valid pattern")
    }

    fn all_patterns() -> Vec<Pattern> {
        vec![
            Pattern::Uniform,
            Pattern::Permutation,
            Pattern::Transpose,
            Pattern::BitComplement,
            Pattern::BitReverse,
            Pattern::Shuffle,
            Pattern::Tornado,
            Pattern::Neighbor,
            Pattern::NearestGroup,
            Pattern::WorstCase,
            Pattern::HotSpot {
                hot: vec![0, 3],
                fraction: 0.25,
            },
        ]
    }

    #[test]
    fn every_pattern_stays_in_range() {
        let shapes = vec![
            flat(1),
            flat(16),
            flat(24),
            flat(64),
            flat(256),
            grid(&[8, 8], 1),
            grid(&[4, 4], 4),
            grid(&[3, 5, 2], 2),
            dragonfly(8, 9),
            dragonfly(4, 4),
        ];
        let mut checked = 0;
        for shape in &shapes {
            for pattern in all_patterns() {
                let Ok(t) = Traffic::new(pattern.clone(), shape.clone(), 7) else {
                    continue;
                };
                checked += 1;
                for round in 0..4 {
                    for src in 0..shape.nodes {
                        let dst = t.draw(src);
                        assert!(
                            dst < shape.nodes,
                            "{} on {shape:?} round {round}: {src} -> {dst}",
                            pattern.name()
                        );
                    }
                }
            }
        }
        // Every pattern must have been exercised on at least one shape.
        assert!(checked >= all_patterns().len() * 2, "only {checked} pairs");
    }

    #[test]
    fn uniform_never_self_and_roughly_uniform() {
        let n = 16u32;
        let t = traffic(Pattern::Uniform, flat(n));
        let src = 3;
        let draws = 150_000u32;
        let mut counts = vec![0u32; n as usize];
        for _ in 0..draws {
            let dst = t.draw(src);
            assert_ne!(dst, src);
            counts[dst as usize] += 1;
        }
        assert_eq!(counts[src as usize], 0);
        let expected = f64::from(draws) / f64::from(n - 1);
        let chi2: f64 = counts
            .iter()
            .enumerate()
            .filter(|&(i, _)| i as u32 != src)
            .map(|(_, &c)| (f64::from(c) - expected).powi(2) / expected)
            .sum();
        // 14 degrees of freedom: mean 14, p(chi2 > 40) is about 2e-4.
        assert!(chi2 < 40.0, "chi-square {chi2} counts {counts:?}");

        // Every source also avoids itself.
        for src in 0..n {
            for _ in 0..100 {
                assert_ne!(t.draw(src), src);
            }
        }
    }

    #[test]
    fn permutation_is_a_derangement_and_seeded() {
        for n in [2u32, 3, 5, 64, 1000] {
            let t = Traffic::new(Pattern::Permutation, flat(n), 11).unwrap();
            let mut seen = vec![false; n as usize];
            for src in 0..n {
                let dst = t.draw(src);
                assert_ne!(dst, src, "fixed point at {src} for n={n}");
                assert!(!seen[dst as usize], "{dst} hit twice for n={n}");
                seen[dst as usize] = true;
                // Fixed: asking again gives the same answer.
                assert_eq!(t.draw(src), dst);
            }
            assert!(seen.iter().all(|&s| s));
        }
        let perm = |seed| {
            let t = Traffic::new(Pattern::Permutation, flat(64), seed).unwrap();
            (0..64).map(|s| t.draw(s)).collect::<Vec<_>>()
        };
        assert_eq!(perm(1), perm(1));
        assert_ne!(perm(1), perm(2));
        // A single node has only itself.
        let one = Traffic::new(Pattern::Permutation, flat(1), 3).unwrap();
        assert_eq!(one.draw(0), 0);
    }

    #[test]
    fn bit_patterns_exact_values() {
        let transpose = traffic(Pattern::Transpose, flat(16));
        assert_eq!(transpose.draw(0b0110), 0b1001);
        assert_eq!(transpose.draw(0b0001), 0b0100);
        assert_eq!(transpose.draw(0b1110), 0b1011);
        assert_eq!(transpose.draw(0b0101), 0b0101); // diagonal
        let transpose64 = traffic(Pattern::Transpose, flat(64));
        assert_eq!(transpose64.draw(0b000_111), 0b111_000);
        assert_eq!(transpose64.draw(0b101_001), 0b001_101);

        let bitcomp = traffic(Pattern::BitComplement, flat(16));
        assert_eq!(bitcomp.draw(3), 12);
        assert_eq!(bitcomp.draw(0), 15);
        assert_eq!(bitcomp.draw(10), 5);
        let bitcomp8 = traffic(Pattern::BitComplement, flat(8));
        assert_eq!(bitcomp8.draw(1), 6);

        let bitrev = traffic(Pattern::BitReverse, flat(16));
        assert_eq!(bitrev.draw(1), 8);
        assert_eq!(bitrev.draw(0b0011), 0b1100);
        assert_eq!(bitrev.draw(0b0010), 0b0100);
        assert_eq!(bitrev.draw(0b1001), 0b1001); // palindrome
        let bitrev8 = traffic(Pattern::BitReverse, flat(8));
        assert_eq!(bitrev8.draw(0b110), 0b011);

        let shuffle = traffic(Pattern::Shuffle, flat(16));
        assert_eq!(shuffle.draw(0b1001), 0b0011);
        assert_eq!(shuffle.draw(0b0100), 0b1000);
        assert_eq!(shuffle.draw(0b1000), 0b0001);
        assert_eq!(shuffle.draw(0b1111), 0b1111);

        // Bit permutations are bijections.
        for pattern in [
            Pattern::Transpose,
            Pattern::BitComplement,
            Pattern::BitReverse,
            Pattern::Shuffle,
        ] {
            let t = traffic(pattern.clone(), flat(256));
            let mut dsts: Vec<u32> = (0..256).map(|s| t.draw(s)).collect();
            dsts.sort_unstable();
            assert_eq!(dsts, (0..256).collect::<Vec<_>>(), "{}", pattern.name());
        }
    }

    /// Router coordinates of `node` with dimension 0 fastest.
    fn coords(node: u32, shape: &Shape) -> (Vec<u32>, u32) {
        let mut router = node / shape.nodes_per_router;
        let index = node % shape.nodes_per_router;
        let mut out = Vec::new();
        for &k in &shape.dims {
            out.push(router % k);
            router /= k;
        }
        (out, index)
    }

    #[test]
    fn tornado_on_grids_and_rings() {
        let shape = grid(&[8, 8], 1);
        let t = traffic(Pattern::Tornado, shape.clone());
        assert_eq!(t.draw(0), 3 + 8 * 3);
        assert_eq!(t.draw(7 + 8 * 6), 2 + 8);
        for src in 0..shape.nodes {
            let (c, _) = coords(src, &shape);
            let (d, _) = coords(t.draw(src), &shape);
            for dim in 0..2 {
                assert_eq!(d[dim], (c[dim] + 3) % 8, "src {src} dim {dim}");
            }
        }

        // Mixed radix with several nodes per router keeps the node index.
        let shape = grid(&[4, 5, 3], 2);
        let t = traffic(Pattern::Tornado, shape.clone());
        for src in 0..shape.nodes {
            let (c, i) = coords(src, &shape);
            let (d, j) = coords(t.draw(src), &shape);
            assert_eq!(i, j);
            assert_eq!(d[0], (c[0] + 1) % 4);
            assert_eq!(d[1], (c[1] + 2) % 5);
            assert_eq!(d[2], (c[2] + 1) % 3);
        }
    }

    #[test]
    fn tornado_third_dimension_of_three_moves_one() {
        // ceil(3/2) - 1 = 1; ceil(1/2) - 1 = 0 for the degenerate dimensions.
        let shape = grid(&[1, 1, 3], 1);
        let t = traffic(Pattern::Tornado, shape);
        assert_eq!(t.draw(0), 1);
        assert_eq!(t.draw(2), 0);
    }

    #[test]
    fn tornado_without_dims_is_refused() {
        // Tornado is defined along a mesh's or torus's rings (issue 16: a fat tree took it).
        let e = Pattern::Tornado.check(&flat(8)).unwrap_err();
        assert!(e.contains("mesh or torus"), "{e}");
        assert!(Pattern::Neighbor.check(&flat(8)).is_ok());
    }

    #[test]
    fn neighbor_wraps() {
        let t = traffic(Pattern::Neighbor, flat(10));
        assert_eq!(t.draw(0), 1);
        assert_eq!(t.draw(9), 0);

        let shape = grid(&[4, 3], 2);
        let t = traffic(Pattern::Neighbor, shape.clone());
        for src in 0..shape.nodes {
            let (c, i) = coords(src, &shape);
            let (d, j) = coords(t.draw(src), &shape);
            assert_eq!(i, j);
            assert_eq!(d[0], (c[0] + 1) % 4);
            assert_eq!(d[1], c[1]);
        }
        // Router 3 (last in dimension 0), node index 1 -> router 0, index 1.
        assert_eq!(t.draw(3 * 2 + 1), 1);
    }

    #[test]
    fn dragonfly_patterns_hit_the_next_group() {
        let shape = dragonfly(6, 5);
        let near = traffic(Pattern::NearestGroup, shape.clone());
        let worst = traffic(Pattern::WorstCase, shape.clone());
        let mut seen = vec![false; shape.nodes as usize];
        for round in 0..50 {
            for src in 0..shape.nodes {
                let next = (src / 6 + 1) % 5;
                let d = near.draw(src);
                assert_eq!(d / 6, next, "round {round}: {src} -> {d}");
                if src / 6 == 0 {
                    seen[d as usize] = true;
                }
                let w = worst.draw(src);
                assert_eq!(w / 6, next);
                assert_eq!(w % 6, src % 6);
            }
        }
        // Nearest group spreads over every node of the next group.
        assert!((6..12).all(|d| seen[d]));
        assert_eq!(worst.draw(29), 5);
    }

    #[test]
    fn hotspot_fraction_respected() {
        let n = 64u32;
        let fraction = 0.3;
        let t = traffic(
            Pattern::HotSpot {
                hot: vec![5],
                fraction,
            },
            flat(n),
        );
        let draws = 100_000;
        let mut hits = 0u32;
        for k in 0..draws {
            let src = [0u32, 17, 63][k % 3];
            let d = t.draw(src);
            assert_ne!(d, src);
            if d == 5 {
                hits += 1;
            }
        }
        let expected = fraction + (1.0 - fraction) / f64::from(n - 1);
        let got = f64::from(hits) / draws as f64;
        assert!((got - expected).abs() < 0.01, "got {got}, want {expected}");

        // Several hot nodes share the hot traffic evenly; a hot source never picks itself.
        let t = traffic(
            Pattern::HotSpot {
                hot: vec![2, 9, 2],
                fraction: 1.0,
            },
            flat(16),
        );
        let mut counts = [0u32; 16];
        for _ in 0..10_000 {
            counts[t.draw(0) as usize] += 1;
            assert_eq!(t.draw(2), 9);
            assert_eq!(t.draw(9), 2);
        }
        assert_eq!(counts[2] + counts[9], 10_000);
        assert!((4_500..5_500).contains(&counts[2]), "{counts:?}");

        // The only hot node sends uniform traffic instead of to itself.
        let t = traffic(
            Pattern::HotSpot {
                hot: vec![4],
                fraction: 1.0,
            },
            flat(8),
        );
        for _ in 0..1000 {
            assert_ne!(t.draw(4), 4);
        }
    }

    #[test]
    fn check_errors() {
        for pattern in [
            Pattern::BitComplement,
            Pattern::BitReverse,
            Pattern::Shuffle,
        ] {
            let err = pattern.check(&flat(24)).unwrap_err();
            assert_eq!(
                err,
                format!(
                    "{} needs a power-of-two number of nodes, not 24",
                    pattern.name()
                )
            );
            assert!(pattern.check(&flat(32)).is_ok());
        }
        assert!(Pattern::Transpose.check(&flat(24)).is_err());
        let err = Pattern::Transpose.check(&flat(32)).unwrap_err();
        assert!(
            err.contains("even power of two") && err.contains("32"),
            "{err}"
        );
        assert!(Pattern::Transpose.check(&flat(64)).is_ok());

        let torus = grid(&[4, 4], 1);
        for pattern in [Pattern::NearestGroup, Pattern::WorstCase] {
            let err = pattern.check(&torus).unwrap_err();
            assert!(err.contains("dragonfly"), "{err}");
            assert!(pattern.check(&dragonfly(4, 3)).is_ok());
            assert!(pattern.check(&dragonfly(4, 1)).is_err());
        }
        let mismatched = Shape {
            nodes: 30,
            group_size: 4,
            groups: 8,
            ..Shape::default()
        };
        assert!(Pattern::WorstCase.check(&mismatched).is_err());

        let hot = |hot: Vec<u32>, fraction: f64| Pattern::HotSpot { hot, fraction };
        let err = hot(vec![1, 16], 0.5).check(&flat(16)).unwrap_err();
        assert!(err.contains("16") && err.contains("out of range"), "{err}");
        assert!(hot(vec![1, 15], 0.5).check(&flat(16)).is_ok());
        assert!(hot(vec![1], 0.0).check(&flat(16)).is_err());
        assert!(hot(vec![1], 1.5).check(&flat(16)).is_err());
        assert!(hot(vec![1], f64::NAN).check(&flat(16)).is_err());
        assert!(hot(vec![1], 1.0).check(&flat(16)).is_ok());
        assert!(hot(vec![], 0.5).check(&flat(16)).is_err());

        // Grid patterns need consistent dims, but fall back to 1D without them.
        let bad_grid = Shape {
            nodes: 20,
            dims: vec![4, 4],
            nodes_per_router: 1,
            ..Shape::default()
        };
        assert!(Pattern::Tornado.check(&bad_grid).is_err());
        assert!(Pattern::Neighbor.check(&flat(20)).is_ok());
        assert!(Pattern::Uniform.check(&flat(0)).is_err());

        // Traffic::new reports the same message.
        let err = Traffic::new(Pattern::BitReverse, flat(24), 1)
            .err()
            .unwrap();
        assert_eq!(err, Pattern::BitReverse.check(&flat(24)).unwrap_err());
    }

    #[test]
    fn parse_names_and_errors() {
        let cases = [
            ("uniform", Pattern::Uniform),
            ("permutation", Pattern::Permutation),
            ("transpose", Pattern::Transpose),
            ("bitcomp", Pattern::BitComplement),
            ("bit_complement", Pattern::BitComplement),
            ("bitrev", Pattern::BitReverse),
            ("bit_reverse", Pattern::BitReverse),
            ("shuffle", Pattern::Shuffle),
            ("tornado", Pattern::Tornado),
            ("neighbor", Pattern::Neighbor),
            ("nearest_neighbor", Pattern::Neighbor),
            ("nearest_group", Pattern::NearestGroup),
            ("worst_case", Pattern::WorstCase),
            (" Uniform ", Pattern::Uniform),
        ];
        for (text, want) in cases {
            assert_eq!(Pattern::parse(text).unwrap(), want, "{text}");
        }
        assert_eq!(
            Pattern::parse("hotspot:0,5").unwrap(),
            Pattern::HotSpot {
                hot: vec![0, 5],
                fraction: 0.5
            }
        );
        assert_eq!(
            Pattern::parse("hotspot:3:0.2").unwrap(),
            Pattern::HotSpot {
                hot: vec![3],
                fraction: 0.2
            }
        );
        // name() round-trips through parse().
        for pattern in all_patterns() {
            assert_eq!(Pattern::parse(&pattern.name()).unwrap(), pattern);
        }
        assert_eq!(
            Pattern::HotSpot {
                hot: vec![0, 5],
                fraction: 1.0
            }
            .name(),
            "hotspot:0,5:1"
        );

        let err = Pattern::parse("zigzag").unwrap_err();
        assert!(err.contains("zigzag"), "{err}");
        for name in ["uniform", "bit_complement", "nearest_group", "hotspot"] {
            assert!(err.contains(name), "{err} lacks {name}");
        }
        for bad in [
            "",
            "hotspot",
            "hotspot:",
            "hotspot:a,b",
            "hotspot:1,,2",
            "hotspot:1:x",
            "hotspot:1:0",
            "hotspot:1:1.5",
            "hotspot:1:-0.5",
            "uniform:3",
        ] {
            assert!(Pattern::parse(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn same_seed_and_stream_same_sequence() {
        let shapes = [flat(64), dragonfly(8, 8), grid(&[8, 8], 1)];
        let draws = |t: &Traffic, stream: u64, n: u32| -> Vec<u32> {
            let mut rng = Rng::new(stream);
            (0..2000).map(|k| t.destination(k % n, &mut rng)).collect()
        };
        for shape in shapes {
            for pattern in all_patterns() {
                let make = |seed| Traffic::new(pattern.clone(), shape.clone(), seed).ok();
                let (Some(a), Some(b)) = (make(99), make(99)) else {
                    continue;
                };
                let n = shape.nodes;
                assert_eq!(draws(&a, 5, n), draws(&b, 5, n), "{}", pattern.name());
            }
        }
        // Another stream draws other destinations; another seed, another permutation.
        let uniform = Traffic::new(Pattern::Uniform, flat(64), 1).unwrap();
        assert_ne!(draws(&uniform, 1, 64), draws(&uniform, 2, 64));
        let perm = |seed| Traffic::new(Pattern::Permutation, flat(64), seed).unwrap();
        assert_ne!(draws(&perm(1), 1, 64), draws(&perm(2), 1, 64));
    }

    #[test]
    fn rng_basics() {
        let mut a = Rng::new(5);
        let mut b = Rng::new(5);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(5).next_u64(), Rng::new(6).next_u64());
        let mut r = Rng::new(0);
        let mut sum = 0.0;
        for _ in 0..100_000 {
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x));
            sum += x;
        }
        let mean = sum / 100_000.0;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        let mut counts = [0u32; 7];
        for _ in 0..70_000 {
            counts[r.below(7) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(r.below(1), 0);
        // Huge ranges stay in range.
        let big = u64::MAX - 3;
        for _ in 0..1000 {
            assert!(r.below(big) < big);
        }
    }
}
