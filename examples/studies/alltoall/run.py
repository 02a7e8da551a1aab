#!/usr/bin/env python3
"""All-to-all algorithms of the MFS paper (simple spread, 2D spread, pairwise exchange) on 2D
tori of 100-256 nodes and on fat trees up to ~3,000 nodes; one alltoall per configuration, at
packet level and at flow level (MFS's own kind of model) side by side.

    .venv/bin/python examples/studies/alltoall/run.py [--quick]
"""

from __future__ import annotations

import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import Findings, acesim, argv_quick, us, write, save_figure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ALGOS = ["simple_spread", "spread_2d", "pairwise"]
# The MFS paper's run times on the tori (MFS, BigSimulator on 7 cores), Table 2.
MFS = {100: (0.06, 11.79), 121: (0.09, 16.25), 144: (0.14, 23.10), 169: (0.19, 31.48)}


def allowed(algo: str, p: int) -> bool:
    if algo == "spread_2d":
        return math.isqrt(p) ** 2 == p
    if algo == "pairwise":
        return p & (p - 1) == 0
    return True


MODELS = ["packet", "flow"]


def run(machine_args: list[str], p: int, size: str, algo: str, tmp: str) -> dict:
    """The alltoall at both levels: {model: Run}."""
    sched = os.path.join(tmp, f"a{p}.sched")
    with open(sched, "w") as f:
        f.write(f"ranks {p}\n")
        for r in range(p):
            f.write(f"rank {r}\nalltoall {size} algo={algo}\n")
    return {m: acesim([sched, *machine_args, "--model", m]) for m in MODELS}


def main() -> int:
    quick = argv_quick()
    tori = [16, 36, 64] if quick else [100, 121, 144, 169, 196, 225, 256]
    trees = [(4, 3, 64)] if quick else [(4, 4, 256), (32, 2, 1024), (14, 3, 2704)]
    size_torus = "1KiB" if quick else "4KiB"
    size_tree = "1KiB"
    f = Findings()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in tori:
            k = math.isqrt(n)
            machine = ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{k},{k}]"]
            res = {a: run(machine, n, size_torus, a, tmp) for a in ALGOS if allowed(a, n)}
            rows.append((f"torus {k}x{k}", n, size_torus, res))
        for kk, nn, p in trees:
            machine = ["--machine", "table1", "--set", 'topology.kind="fat_tree"', "--set", f"topology.k={kk}", "--set", f"topology.n={nn}"]
            res = {a: run(machine, p, size_tree, a, tmp) for a in ALGOS if allowed(a, p)}
            rows.append((f"fat tree {kk}-ary {nn}-tree", p, size_tree, res))
    lines = [
        "| network | ranks | size per pair | simple spread µs, packet / flow | 2D spread | pairwise | acesim wall s (max), packet / flow | peak MiB | MFS / BigSimulator wall s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for net, p, size, res in rows:
        cell = lambda a: f"{us(res[a]['packet'].time_ps)} / {us(res[a]['flow'].time_ps)}" if a in res else "—"
        wall = {m: max(r[m].wall for r in res.values()) for m in MODELS}
        peak = max(r[m].peak_mib for r in res.values() for m in MODELS)
        mfs = MFS.get(p) if net.startswith("torus") else None
        lines.append(f"| {net} | {p} | {size} | {cell('simple_spread')} | {cell('spread_2d')} | {cell('pairwise')} | "
                     f"{wall['packet']:.3f} / {wall['flow']:.3f} | {peak:.0f} | " + (f"{mfs[0]} / {mfs[1]}" if mfs else "—") + " |")
        per_byte = 1e12 / 4e9
        nbytes = int(size.replace("KiB", "")) * 1024
        for a, both in res.items():
            for m, r in both.items():
                # Every rank injects (p-1)·size through one 4 GB/s link: a hard lower bound.
                f.check(r.time_ps >= (p - 1) * nbytes * per_byte, f"{net}, {a}, {m} level: above the injection bound")
                f.check(not r.summary["unmatched_messages"], f"{net}, {a}, {m} level: every message received")
            gap = (both["flow"].time_ps - both["packet"].time_ps) / both["packet"].time_ps
            if net.startswith("fat tree") and p <= 1024:
                # DMA engines and injection links limit these fat trees' all-to-alls: both
                # levels agree.
                f.check(abs(gap) <= 0.02, f"{net}, {a}: flow level within 2 % of packet level ({100 * gap:+.2f} %)")
            else:
                # Elsewhere routers limit (tori: docs/flow.md), or 1 KiB messages of one
                # packet share a link in turn where the flow level shares it at once.
                f.check(True, f"{net}, {a}: flow level {100 * gap:+.2f} % from packet level")
    table = "\n".join(lines) + "\n"
    print(table)
    last_torus = [r for r in rows if r[0].startswith("torus")][-1]
    res = {a: both["packet"] for a, both in last_torus[3].items()}
    best = min(res, key=lambda a: res[a].time_ps)
    f.check(True, f"fastest on the largest torus ({last_torus[0]}): {best}")
    if "pairwise" in res:
        f.check(res["pairwise"].time_ps <= res["simple_spread"].time_ps, "pairwise exchange beats simple spread on the largest torus")
    if not quick:
        write(os.path.join(HERE, "results.md"), table)
        plot(rows, os.path.join(HERE, "figure.png"))
    return f.exit_code()


def plot(rows: list, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2))
    labels = [f"{net}\n{p} ranks, {size}" for net, p, size, _ in rows]
    width = 0.27
    for i, algo in enumerate(ALGOS):
        xs = [j + (i - 1) * width for j in range(len(rows))]
        ys = [res[algo]["packet"].time_ps / 1e6 if algo in res else 0 for _, _, _, res in rows]
        ax.bar(xs, ys, width, label=algo.replace("_", " "))
    ax.set_xticks(range(len(rows)), labels, fontsize=6, rotation=30, ha="right")
    ax.set_ylabel("alltoall time (µs)")
    ax.set_yscale("log")
    ax.legend()
    ax.set_title("All-to-all algorithms (MFS): tori and fat trees, Table 1 links")
    save_figure(fig, path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
