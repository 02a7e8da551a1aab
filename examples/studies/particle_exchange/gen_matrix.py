#!/usr/bin/env python3
"""Particle model: the put-size matrix of a particle exchange after a domain re-decomposition.

Stands in for the GADGET-2 snapshots the papers used (which we do not have):

1. N particles (default 128^3, the papers' run) at uniformly random positions in the periodic
   unit cube (seeded).
2. Decomposition into P domains of equal particle count along a space-filling order:
   - `morton` (default): sort by the Morton (Z-order) key of the position on a 2^21 grid per
     axis and cut the sorted list into P contiguous pieces (what tree codes such as GADGET-2
     do with a Peano-Hilbert curve);
   - `slab`: sort by x and cut into P slabs.
   Piece k holds particles floor(k N / P) .. floor((k+1) N / P) - 1 of the order.
3. Every particle moves by an independent Gaussian displacement per axis with standard
   deviation `sigma` cell widths (default 0.1), a cell being the mean interparticle spacing
   N^(-1/3); positions wrap around the periodic box.
4. The decomposition is recomputed from scratch on the new positions (same rule: equal counts,
   re-split at the new quantiles), so the domain boundaries shift too.
5. matrix[src][dst] = number of particles owned by rank src before and by dst != src after.

Output (text): first line P, then P lines of P integers (particle counts; diagonal 0).

    gen_matrix.py P OUT [--n N] [--decomp morton|slab] [--sigma S] [--seed K]
"""
from __future__ import annotations

import argparse

import numpy as np

BITS = 21  # Morton grid: 2^21 per axis, 63-bit keys


def spread_bits(v: np.ndarray) -> np.ndarray:
    """Spreads the low 21 bits of v so that bit i goes to bit 3i."""
    v = v.astype(np.uint64) & np.uint64(0x1FFFFF)
    v = (v | (v << np.uint64(32))) & np.uint64(0x1F00000000FFFF)
    v = (v | (v << np.uint64(16))) & np.uint64(0x1F0000FF0000FF)
    v = (v | (v << np.uint64(8))) & np.uint64(0x100F00F00F00F00F)
    v = (v | (v << np.uint64(4))) & np.uint64(0x10C30C30C30C30C3)
    v = (v | (v << np.uint64(2))) & np.uint64(0x1249249249249249)
    return v


def morton_key(pos: np.ndarray) -> np.ndarray:
    q = np.minimum((pos * (1 << BITS)).astype(np.int64), (1 << BITS) - 1)
    return (spread_bits(q[:, 0]) << np.uint64(2)) | (spread_bits(q[:, 1]) << np.uint64(1)) | spread_bits(q[:, 2])


def owners(pos: np.ndarray, p: int, decomp: str) -> np.ndarray:
    """Owner rank of every particle: equal-count pieces of the space-filling order."""
    n = len(pos)
    key = morton_key(pos) if decomp == "morton" else pos[:, 0]
    order = np.argsort(key, kind="stable")
    owner = np.empty(n, dtype=np.int64)
    owner[order] = (np.arange(n, dtype=np.int64) * p) // n
    return owner


def exchange_matrix(n: int, p: int, decomp: str = "morton", sigma: float = 0.1, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pos = rng.random((n, 3))
    before = owners(pos, p, decomp)
    cell = n ** (-1.0 / 3.0)
    pos = np.mod(pos + rng.normal(0.0, sigma * cell, size=(n, 3)), 1.0)
    after = owners(pos, p, decomp)
    moved = before != after
    m = np.bincount(before[moved] * p + after[moved], minlength=p * p).reshape(p, p)
    return m


def write_matrix(m: np.ndarray, path: str) -> None:
    p = m.shape[0]
    with open(path, "w") as f:
        f.write(f"{p}\n")
        for row in m:
            f.write(" ".join(str(int(c)) for c in row) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("p", type=int, help="number of ranks")
    ap.add_argument("out", help="output file")
    ap.add_argument("--n", type=int, default=128**3, help="particles (default 128^3)")
    ap.add_argument("--decomp", choices=["morton", "slab"], default="morton")
    ap.add_argument("--sigma", type=float, default=0.1, help="displacement, in mean interparticle spacings")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    m = exchange_matrix(a.n, a.p, a.decomp, a.sigma, a.seed)
    write_matrix(m, a.out)
    print(f"P={a.p} N={a.n} {a.decomp}: {int(m.sum())} particles move, "
          f"{int((m > 0).sum())} puts, largest {int(m.max()) * 48} B")


if __name__ == "__main__":
    main()
