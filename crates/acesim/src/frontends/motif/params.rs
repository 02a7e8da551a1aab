//! A motif's name and parameters, parsed from `NAME=VALUE` arguments and checked against
//! the rank count.

use crate::error::{did_you_mean, Error, Location, Result};
use crate::program::ops::CollCall;
use crate::units::{parse_size, parse_time, Ps};

/// The communicator handles of an fft's grid rows and columns (0 is the world).
pub const ROW_COMM: u32 = 1;
pub const COLUMN_COMM: u32 = 2;

/// The motifs, by the name after `motif:`.
pub const NAMES: &[&str] = &[
    "halo2d",
    "halo3d",
    "sweep3d",
    "ring",
    "incast",
    "random_pairs",
    "allreduce",
    "fft",
    "bsp",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MotifKind {
    /// Exchange with the 4 (8 with corners) neighbours of a 2D grid of ranks.
    Halo2d,
    /// Exchange with the 6 (26 with corners) neighbours of a 3D grid of ranks.
    Halo3d,
    /// A wavefront across a 2D grid from rank 0's corner: receive from west and north,
    /// compute, send east and south.
    Sweep3d,
    /// Send to the next rank, receive from the previous one.
    Ring,
    /// Every rank but the root sends to the root.
    Incast,
    /// Each iteration, a new random permutation: send to its image, receive from the
    /// preimage.
    RandomPairs,
    /// An allreduce on every rank (SST Ember `allreduce`).
    Allreduce,
    /// The transposes of a 3D FFT on a 2D grid of ranks (pencils): an all-to-all among the
    /// ranks of each grid row, then among those of each column (SST Ember `fft`).
    Fft,
    /// A bulk-synchronous step: compute, a 3D halo exchange, then a small allreduce (the
    /// CTH-like pattern of the ACES studies: a time step's exchange and its reduction).
    Bsp,
}

/// A motif with its parameters in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Motif {
    pub kind: MotifKind,
    pub ranks: u32,
    pub iterations: u64,
    /// Bytes per message.
    pub size: u64,
    /// Compute per iteration (before the exchange; between receive and send in sweep3d).
    pub compute: Ps,
    /// Grid dimensions (halo2d, halo3d, sweep3d), their product the rank count.
    pub dims: Vec<u32>,
    /// Diagonal neighbours too (halo2d, halo3d).
    pub corners: bool,
    /// One neighbour at a time (its send and receive waited for before the next), instead
    /// of every send and receive posted and then waited for together.
    pub blocking: bool,
    /// The rank receiving (incast).
    pub root: u32,
    /// Seed of the permutations (random_pairs).
    pub seed: u64,
    /// Bytes of the allreduce ending each step (bsp).
    pub reduce: u64,
    /// The collective algorithm (allreduce, fft); empty for the machine's default.
    pub algorithm: String,
}

/// The parameters each motif takes (`iterations`, `size` and `compute` everywhere).
fn allowed(kind: MotifKind) -> &'static [&'static str] {
    match kind {
        MotifKind::Halo2d | MotifKind::Halo3d => &["dims", "corners", "blocking"],
        MotifKind::Sweep3d => &["dims"],
        MotifKind::Ring => &[],
        MotifKind::Incast => &["root"],
        MotifKind::RandomPairs => &["seed"],
        MotifKind::Allreduce => &["algo"],
        MotifKind::Fft => &["dims", "algo"],
        MotifKind::Bsp => &["dims", "corners", "reduce"],
    }
}

/// The most even factorisation of `n` into `k` dimensions, largest first (MPI_Dims_create).
fn even_dims(n: u32, k: usize) -> Vec<u32> {
    if k == 0 {
        return Vec::new();
    }
    let mut dims = vec![1u32; k];
    let mut rest = n;
    let mut f = 2;
    let mut factors = Vec::new();
    while rest > 1 {
        while rest.is_multiple_of(f) {
            factors.push(f);
            rest /= f;
        }
        f += 1;
    }
    for p in factors.into_iter().rev() {
        let smallest = (0..k).min_by_key(|&i| dims[i]).unwrap_or(0);
        dims[smallest] *= p;
    }
    dims.sort_unstable_by(|a, b| b.cmp(a));
    dims
}

impl Motif {
    /// The motif `name` on `ranks` ranks with `args` (`NAME=VALUE` each); errors are located
    /// at `spec` and the parameter.
    pub fn parse(spec: &str, name: &str, ranks: u32, args: &[String]) -> Result<Motif> {
        let at = |field: &str| Location::file(spec).with_field(field);
        let kind = match name {
            "halo2d" => MotifKind::Halo2d,
            "halo3d" => MotifKind::Halo3d,
            "sweep3d" => MotifKind::Sweep3d,
            "ring" => MotifKind::Ring,
            "incast" => MotifKind::Incast,
            "random_pairs" => MotifKind::RandomPairs,
            "allreduce" => MotifKind::Allreduce,
            "fft" => MotifKind::Fft,
            "bsp" => MotifKind::Bsp,
            _ => {
                return Err(Error::input(
                    Location::file(spec),
                    format!(
                        "unknown motif `{name}`{} (motifs: {})",
                        did_you_mean(name, NAMES.iter().copied()),
                        NAMES.join(", ")
                    ),
                ))
            }
        };
        let grid = match kind {
            MotifKind::Halo2d | MotifKind::Sweep3d | MotifKind::Fft => 2,
            MotifKind::Halo3d | MotifKind::Bsp => 3,
            _ => 0,
        };
        let mut m = Motif {
            kind,
            ranks,
            iterations: 10,
            size: 4096,
            compute: 0,
            dims: even_dims(ranks, grid),
            corners: false,
            blocking: false,
            root: 0,
            seed: 1,
            reduce: 8,
            algorithm: String::new(),
        };
        let mut names: Vec<&str> = vec!["iterations", "size", "compute"];
        names.extend_from_slice(allowed(kind));
        for arg in args {
            let Some((key, value)) = arg.split_once('=') else {
                return Err(Error::input(
                    at("arguments"),
                    format!(
                        "`{arg}`: a motif's arguments are NAME=VALUE (parameters of {name}: {})",
                        names.join(", ")
                    ),
                ));
            };
            let (key, value) = (key.trim(), value.trim());
            if !names.contains(&key) {
                return Err(Error::input(
                    at(key),
                    format!(
                        "{name} has no parameter `{key}`{} (its parameters: {})",
                        did_you_mean(key, names.iter().copied()),
                        names.join(", ")
                    ),
                ));
            }
            let bad = |what: &str| Error::input(at(key), format!("`{value}`: {what}"));
            m.set(key, value, grid, bad)?;
        }
        if grid > 0 {
            let product: u64 = m.dims.iter().map(|&d| u64::from(d)).product();
            if product != u64::from(ranks) {
                let dims: Vec<String> = m.dims.iter().map(u32::to_string).collect();
                return Err(Error::input(
                    at("dims"),
                    format!(
                        "dims {} hold {product} ranks, not the {ranks} of the run",
                        dims.join("x")
                    ),
                ));
            }
        }
        if kind == MotifKind::Incast && m.root >= ranks {
            return Err(Error::input(
                at("root"),
                format!("root {} is not one of the {ranks} ranks", m.root),
            ));
        }
        if ranks < 2
            && matches!(
                kind,
                MotifKind::Ring | MotifKind::Incast | MotifKind::RandomPairs
            )
        {
            return Err(Error::input(
                at("ranks"),
                format!("{name} needs at least 2 ranks"),
            ));
        }
        Ok(m)
    }

    /// Sets parameter `key` (one of the motif's) to `value`; `bad` locates an error.
    fn set(
        &mut self,
        key: &str,
        value: &str,
        grid: usize,
        bad: impl Fn(&str) -> Error,
    ) -> Result<()> {
        let m = self;
        match key {
            "iterations" => {
                m.iterations = value
                    .parse()
                    .map_err(|_| bad("expected a whole number of iterations"))?
            }
            "size" => m.size = parse_size(value).map_err(|e| bad(&e))?,
            "compute" => m.compute = parse_time(value).map_err(|e| bad(&e))?,
            "corners" | "blocking" => {
                let v = match value {
                    "true" | "yes" | "1" => true,
                    "false" | "no" | "0" => false,
                    _ => return Err(bad("expected true or false")),
                };
                if key == "corners" {
                    m.corners = v;
                } else {
                    m.blocking = v;
                }
            }
            "root" => m.root = value.parse().map_err(|_| bad("expected a rank"))?,
            "seed" => m.seed = value.parse().map_err(|_| bad("expected a whole number"))?,
            "reduce" => m.reduce = parse_size(value).map_err(|e| bad(&e))?,
            "algo" => {
                if value.is_empty() || !value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    return Err(bad("expected an algorithm name (docs/collectives.md)"));
                }
                m.algorithm = value.to_string();
            }
            "dims" => {
                let dims: std::result::Result<Vec<u32>, _> = value
                    .split(['x', 'X', ','])
                    .map(|d| d.trim().parse::<u32>())
                    .collect();
                m.dims = dims
                    .ok()
                    .filter(|d| d.len() == grid && d.iter().all(|&x| x > 0))
                    .ok_or_else(|| {
                        bad(&format!(
                            "expected {grid} dimensions like {}",
                            ["4", "4", "4"][..grid].join("x")
                        ))
                    })?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The collective calls the motif makes, by the index its operations name (every rank
    /// makes the same ones, on the same communicator handles).
    pub fn collective_calls(&self) -> Vec<CollCall> {
        let call = |kind: &str, size: u64, comm: u32| CollCall {
            kind: kind.into(),
            algorithm: self.algorithm.clone(),
            transport: String::new(),
            size,
            root: 0,
            segment: 0,
            comm,
            sizes: Vec::new(),
        };
        match self.kind {
            MotifKind::Allreduce => vec![call("allreduce", self.size, 0)],
            MotifKind::Fft => vec![
                call("alltoall", self.size, ROW_COMM),
                call("alltoall", self.size, COLUMN_COMM),
            ],
            MotifKind::Bsp => vec![call("allreduce", self.reduce, 0)],
            _ => Vec::new(),
        }
    }

    /// Communicator handles a rank holds (the world's, and the fft's rows and columns).
    pub fn communicators(&self) -> u32 {
        if self.kind == MotifKind::Fft {
            3
        } else {
            1
        }
    }

    /// Requests a rank uses at once (its handles).
    pub fn requests(&self) -> u32 {
        let neighbours = match self.kind {
            MotifKind::Halo2d => {
                if self.corners {
                    8
                } else {
                    4
                }
            }
            MotifKind::Halo3d | MotifKind::Bsp => {
                if self.corners {
                    26
                } else {
                    6
                }
            }
            MotifKind::Sweep3d => 2,
            MotifKind::Ring | MotifKind::RandomPairs => 1,
            MotifKind::Incast => self.ranks.saturating_sub(1).max(1),
            MotifKind::Allreduce | MotifKind::Fft => 0,
        };
        2 * neighbours
    }
}

#[cfg(test)]
mod tests {
    use super::even_dims;

    #[test]
    fn dims_are_as_even_as_the_rank_count_allows() {
        assert_eq!(even_dims(64, 3), vec![4, 4, 4]);
        assert_eq!(even_dims(12, 2), vec![4, 3]);
        assert_eq!(even_dims(7, 2), vec![7, 1]);
        assert_eq!(even_dims(32, 3), vec![4, 4, 2]);
        assert_eq!(even_dims(1, 2), vec![1, 1]);
        assert_eq!(even_dims(5, 0), Vec::<u32>::new());
    }
}
