//! A motif's operations, made an iteration at a time as each rank reaches them. Messages
//! carry the tag of their direction, so that a receive matches the neighbour's send of the
//! same exchange; every request is waited for within its iteration, so that the same
//! handles serve every iteration.

use super::params::{Motif, MotifKind, COLUMN_COMM, ROW_COMM};
use crate::error::Result;
use crate::program::ops::{Op, OpKind, SrcLoc};
use crate::program::stream::{is_structural, RankStream, StreamSource};
use std::sync::Arc;

/// Operations made per window, at least (whole iterations).
const WINDOW_OPS: usize = 1024;

pub(super) struct MotifSource {
    motif: Arc<Motif>,
    /// Directions of the exchanges (halo2d, halo3d).
    directions: Arc<Vec<Vec<i32>>>,
    file: u32,
}

impl MotifSource {
    pub(super) fn new(motif: Motif, file: u32) -> MotifSource {
        let k = match motif.kind {
            MotifKind::Halo2d => 2,
            MotifKind::Halo3d | MotifKind::Bsp => 3,
            _ => 0,
        };
        MotifSource {
            directions: Arc::new(directions(k, motif.corners)),
            motif: Arc::new(motif),
            file,
        }
    }
}

/// The neighbour offsets of a `k`-dimensional grid: the faces (±1 in one dimension) in
/// dimension order, then with `corners` every other non-zero offset.
fn directions(k: usize, corners: bool) -> Vec<Vec<i32>> {
    let mut out = Vec::new();
    for d in 0..k {
        for s in [1, -1] {
            let mut v = vec![0; k];
            v[d] = s;
            out.push(v);
        }
    }
    if corners && k > 0 {
        let total = 3usize.pow(k as u32);
        for code in 0..total {
            let v: Vec<i32> = (0..k)
                .map(|d| (code / 3usize.pow(d as u32) % 3) as i32 - 1)
                .collect();
            if v.iter().filter(|&&x| x != 0).count() > 1 {
                out.push(v);
            }
        }
    }
    out
}

impl StreamSource for MotifSource {
    fn open(&self, rank: u32) -> Result<Box<dyn RankStream>> {
        Ok(Box::new(MotifRank {
            motif: self.motif.clone(),
            directions: self.directions.clone(),
            rank,
            iteration: 0,
            file: self.file,
        }))
    }
}

/// The collective calls and communicator creations of rank `rank` of `motif`, in order:
/// the skeleton that is linked before the run (`program::stream`); the rank's stream makes
/// the same operations again, with its messages, as the run reaches them.
pub(super) fn skeleton(source: &MotifSource, rank: u32, ops: &mut Vec<Op>) {
    let mut r = MotifRank {
        motif: source.motif.clone(),
        directions: source.directions.clone(),
        rank,
        iteration: 0,
        file: source.file,
    };
    let mut lists = Vec::new();
    while r.iteration < r.motif.iterations {
        let mut e = Emit {
            ops,
            lists: &mut lists,
            loc: r.loc(),
            size: r.motif.size,
            reqs: Vec::new(),
            skeleton: true,
        };
        r.iteration(&mut e);
        r.iteration += 1;
    }
}

struct MotifRank {
    motif: Arc<Motif>,
    directions: Arc<Vec<Vec<i32>>>,
    rank: u32,
    iteration: u64,
    file: u32,
}

/// Builds one iteration's operations.
struct Emit<'a> {
    ops: &'a mut Vec<Op>,
    lists: &'a mut Vec<u32>,
    loc: SrcLoc,
    size: u64,
    /// Requests of the exchange being built.
    reqs: Vec<u32>,
    /// Only the collective calls and communicator creations (the skeleton).
    skeleton: bool,
}

impl Emit<'_> {
    fn op(&mut self, kind: OpKind) {
        if self.skeleton && !is_structural(&kind) {
            return;
        }
        self.ops.push(Op {
            kind,
            loc: self.loc,
        });
    }

    fn irecv(&mut self, src: u32, tag: i64) {
        let req = self.reqs.len() as u32;
        self.reqs.push(req);
        let size = self.size;
        self.op(OpKind::Irecv {
            src,
            size,
            tag,
            comm: 0,
            req,
        });
    }

    fn isend(&mut self, dst: u32, tag: i64) {
        let req = self.reqs.len() as u32;
        self.reqs.push(req);
        let size = self.size;
        self.op(OpKind::Isend {
            dst,
            size,
            tag,
            comm: 0,
            req,
        });
    }

    /// Collective call `call` (`Motif::collective_calls`).
    fn collective(&mut self, call: u32) {
        self.op(OpKind::Coll { call });
    }

    /// Waits for the exchange's requests; the next exchange takes the same handles again.
    fn wait(&mut self) {
        match self.reqs.len() {
            0 => {}
            1 => self.op(OpKind::Wait { req: 0 }),
            n => {
                let list = self.lists.len() as u32;
                self.lists.extend_from_slice(&self.reqs);
                self.op(OpKind::WaitAll {
                    list,
                    count: n as u32,
                });
            }
        }
        self.reqs.clear();
    }
}

/// A rank's grid coordinates (the first dimension varies fastest).
fn coords(rank: u32, dims: &[u32]) -> Vec<i64> {
    let mut r = rank;
    dims.iter()
        .map(|&d| {
            let c = r % d;
            r /= d;
            i64::from(c)
        })
        .collect()
}

/// The rank at `c + offset`, or None past the grid's edge (grids do not wrap).
fn neighbour(c: &[i64], offset: &[i32], dims: &[u32]) -> Option<u32> {
    let mut rank = 0i64;
    let mut stride = 1i64;
    for ((&x, &o), &d) in c.iter().zip(offset).zip(dims) {
        let y = x + i64::from(o);
        if y < 0 || y >= i64::from(d) {
            return None;
        }
        rank += y * stride;
        stride *= i64::from(d);
    }
    u32::try_from(rank).ok()
}

/// A 64-bit mix of `x` (splitmix64's finaliser): the permutations of random_pairs.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The inverse of `a` modulo `n` (gcd(a, n) = 1).
fn inverse(a: u64, n: u64) -> u64 {
    let (mut t, mut new_t, mut r, mut new_r) = (0i128, 1i128, i128::from(n), i128::from(a));
    while new_r != 0 {
        let q = r / new_r;
        (t, new_t) = (new_t, t - q * new_t);
        (r, new_r) = (new_r, r - q * new_r);
    }
    (t.rem_euclid(i128::from(n))) as u64
}

/// Iteration `i`'s permutation of `n` ranks, r -> (a·r + b) mod n, with a coprime to n.
fn permutation(seed: u64, i: u64, n: u64) -> (u64, u64) {
    let h = mix(seed ^ mix(i));
    let mut a = 1 + mix(h) % n.max(1);
    while gcd(a, n) != 1 {
        a = 1 + (a % n);
    }
    (a % n.max(1), mix(h ^ 0x5555) % n.max(1))
}

impl MotifRank {
    /// Where the current iteration's operations are (`motif:NAME:ITERATION`).
    fn loc(&self) -> SrcLoc {
        SrcLoc {
            file: self.file,
            line: u32::try_from(self.iteration + 1).unwrap_or(u32::MAX),
        }
    }

    /// The exchange with the grid neighbours (halo2d, halo3d, bsp).
    fn halo(&self, e: &mut Emit<'_>) {
        let m = &*self.motif;
        let c = coords(self.rank, &m.dims);
        for (tag, d) in self.directions.iter().enumerate() {
            let back: Vec<i32> = d.iter().map(|x| -x).collect();
            if let Some(src) = neighbour(&c, &back, &m.dims) {
                e.irecv(src, tag as i64);
            }
            if let Some(dst) = neighbour(&c, d, &m.dims) {
                e.isend(dst, tag as i64);
            }
            if m.blocking {
                e.wait();
            }
        }
        e.wait();
    }

    fn iteration(&self, e: &mut Emit<'_>) {
        let m = &*self.motif;
        let r = self.rank;
        let n = m.ranks;
        if self.iteration == 0 && m.kind == MotifKind::Fft {
            // The grid's rows and columns, ordered along them.
            let c = coords(r, &m.dims);
            for (result, color, key) in [(ROW_COMM, c[1], c[0]), (COLUMN_COMM, c[0], c[1])] {
                e.op(OpKind::CommSplit {
                    parent: 0,
                    color,
                    key,
                    result,
                });
            }
        }
        if m.compute > 0 && m.kind != MotifKind::Sweep3d {
            e.op(OpKind::Compute { ps: m.compute });
        }
        match m.kind {
            MotifKind::Halo2d | MotifKind::Halo3d => self.halo(e),
            MotifKind::Bsp => {
                self.halo(e);
                e.collective(0);
            }
            MotifKind::Allreduce => e.collective(0),
            MotifKind::Fft => {
                e.collective(0);
                if m.compute > 0 {
                    e.op(OpKind::Compute { ps: m.compute });
                }
                e.collective(1);
            }
            MotifKind::Sweep3d => {
                let c = coords(r, &m.dims);
                let size = m.size;
                for (k, tag) in [(0usize, 0i64), (1, 1)] {
                    let mut back = [0i32, 0];
                    back[k] = -1;
                    if let Some(src) = neighbour(&c, &back, &m.dims) {
                        e.op(OpKind::Recv {
                            src,
                            size,
                            tag,
                            comm: 0,
                        });
                    }
                }
                if m.compute > 0 {
                    e.op(OpKind::Compute { ps: m.compute });
                }
                for (k, tag) in [(0usize, 0i64), (1, 1)] {
                    let mut ahead = [0i32, 0];
                    ahead[k] = 1;
                    if let Some(dst) = neighbour(&c, &ahead, &m.dims) {
                        e.op(OpKind::Send {
                            dst,
                            size,
                            tag,
                            comm: 0,
                        });
                    }
                }
            }
            MotifKind::Ring => {
                e.irecv((r + n - 1) % n, 0);
                e.isend((r + 1) % n, 0);
                e.wait();
            }
            MotifKind::Incast => {
                if r == m.root {
                    for src in (0..n).filter(|&s| s != m.root) {
                        e.irecv(src, 0);
                    }
                } else {
                    e.isend(m.root, 0);
                }
                e.wait();
            }
            MotifKind::RandomPairs => {
                let (n64, r64) = (u64::from(n), u64::from(r));
                let (a, b) = permutation(m.seed, self.iteration, n64);
                let dst =
                    ((u128::from(a) * u128::from(r64) + u128::from(b)) % u128::from(n64)) as u32;
                if dst != r {
                    let src = (u128::from(inverse(a, n64)) * u128::from((r64 + n64 - b) % n64)
                        % u128::from(n64)) as u32;
                    e.irecv(src, 0);
                    e.isend(dst, 0);
                    e.wait();
                }
            }
        }
    }
}

impl RankStream for MotifRank {
    fn next_ops(&mut self, ops: &mut Vec<Op>, lists: &mut Vec<u32>) -> Result<bool> {
        ops.clear();
        lists.clear();
        while ops.len() < WINDOW_OPS && self.iteration < self.motif.iterations {
            let mut e = Emit {
                ops,
                lists,
                loc: self.loc(),
                size: self.motif.size,
                reqs: Vec::new(),
                skeleton: false,
            };
            self.iteration(&mut e);
            self.iteration += 1;
        }
        Ok(!ops.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_pairs_are_permutations_and_their_inverses() {
        for n in [2u64, 3, 16, 60, 97] {
            for i in 0..5 {
                let (a, b) = permutation(7, i, n);
                let image: std::collections::BTreeSet<u64> =
                    (0..n).map(|r| (a * r + b) % n).collect();
                assert_eq!(image.len() as u64, n, "n {n}");
                let inv = inverse(a, n);
                for r in 0..n {
                    let d = (a * r + b) % n;
                    assert_eq!(inv * ((d + n - b) % n) % n, r);
                }
            }
        }
    }

    #[test]
    fn grid_neighbours_stop_at_the_edges() {
        assert_eq!(directions(2, false).len(), 4);
        assert_eq!(directions(2, true).len(), 8);
        assert_eq!(directions(3, true).len(), 26);
        let dims = [4, 3];
        let c = coords(0, &dims);
        assert_eq!(neighbour(&c, &[1, 0], &dims), Some(1));
        assert_eq!(neighbour(&c, &[0, 1], &dims), Some(4));
        assert_eq!(neighbour(&c, &[-1, 0], &dims), None);
        assert_eq!(coords(11, &dims), vec![3, 2]);
    }
}
