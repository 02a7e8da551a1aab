#!/usr/bin/env python3
"""HyperX, dragonfly and fat tree of similar size and cost, on the ACES CTH-like pattern
(a 3D halo exchange ending each step with a small allreduce: the `bsp` motif) and on
uniform random traffic, each with its deterministic and its adaptive routing.

The three machines have 64 nodes (the dragonfly 72) and 90 to 160 router-to-router cables,
on Table 1 routers and links: a 4-ary 3-tree (48 switches of radix 8, 128 cables), a
dragonfly p=2 a=4 h=2 (36 routers of radix 7 in 9 groups, 90 cables) and an 8x4 HyperX with
2 nodes per router (32 routers of radix 12, 160 cables).

    .venv/bin/python examples/studies/topologies/run.py [--quick]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import BIN, Findings, acesim, argv_quick, ensure_built, us, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

MACHINES = {
    "fat tree 4-ary 3-tree": ["topology.kind=\"fat_tree\"", "topology.k=4", "topology.n=3"],
    "dragonfly p=2 a=4 h=2": ["topology.kind=\"dragonfly\"", "topology.p=2", "topology.a=4", "topology.h=2", "router.vcs=3"],
    "hyperx 8x4, 2 per router": ["topology.kind=\"hyperx\"", "topology.dims=[8,4]", "topology.nodes_per_router=2"],
}
# Each machine's deterministic routing and its adaptive one.
ROUTINGS = {
    "fat tree 4-ary 3-tree": ("minimal", "adaptive"),
    "dragonfly p=2 a=4 h=2": ("minimal", "ugal"),
    "hyperx 8x4, 2 per router": ("minimal", "adaptive"),
}


def sets(fields: list[str]) -> list[str]:
    return [a for f in fields for a in ("--set", f)]


def params(**kv: object) -> list[str]:
    return [a for k, v in kv.items() for a in ("--param", f"{k}={v}")]


def shape(machine: list[str]) -> tuple[int, int, int]:
    """Routers, router-to-router cables and nodes of a machine (`acesim machine`)."""
    run = acesim(["motif:ring", "--machine", "table1", *sets(machine), "--ranks", "2", "--param", "iterations=1"])
    topo = run.summary["topology_detail"]
    cables = sum(1 for l in run.summary["links"] if l["class"] in ("network", "local", "global")) // 2
    return topo["routers"], cables, topo["nodes"]


def saturation(machine: list[str], routing: str, quick: bool) -> tuple[float, float]:
    """Uniform traffic of 64-byte packets: the accepted load at 0.9 offered, and the
    highest offered load that stays stable (of 0.1, 0.2, ...)."""
    ensure_built()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    loads = "0.3,0.6,0.9" if quick else "0.1:1.0:0.1"
    try:
        subprocess.run([BIN, "traffic", "--machine", "table1", *sets(machine), "--set", f"router.routing=\"{routing}\"",
                        "--pattern", "uniform", "--load", loads, "--all-loads", "--json", out, "-q"], check=True)
        with open(out) as fh:
            points = json.load(fh)
    finally:
        os.unlink(out)
    at = {round(p["offered"], 1): p for p in points}
    high = at.get(0.9, points[-1])
    stable = max((p["offered"] for p in points if not p["saturated"]), default=0.0)
    return high["accepted"], stable


def main() -> int:
    quick = argv_quick()
    f = Findings()
    iterations = 2 if quick else 10
    rows = []
    results: dict[tuple[str, str], tuple[int, float, float]] = {}
    mean_hops: dict[tuple[str, str], float] = {}
    for name, machine in MACHINES.items():
        routers, cables, nodes = shape(machine)
        for routing in ROUTINGS[name]:
            t0 = time.perf_counter()
            run = acesim(["motif:bsp", "--machine", "table1", *sets(machine), "--set", f"router.routing=\"{routing}\"",
                          "--ranks", "64", *params(iterations=iterations, size="64KiB", compute="20us", dims="4x4x4")])
            accepted, stable = saturation(machine, routing, quick)
            wall = time.perf_counter() - t0
            results[(name, routing)] = (run.time_ps, accepted, stable)
            s = run.summary
            mean_hops[(name, routing)] = s["mean_hops"]
            rows.append(f"| {name} | {routers} | {cables} | {nodes} | {routing} | {us(run.time_ps)} | {s['mean_hops']:.2f} | "
                        f"{accepted:.3f} | {stable:.1f} | {wall:.1f} |")
    table = (
        f"CTH-like step: `motif:bsp`, 64 ranks on a 4x4x4 grid, {iterations} steps of 20 µs compute, a 64 KiB halo "
        "with the 6 face neighbours and an 8-byte allreduce; uniform: `acesim traffic`, 64-byte packets, the "
        "accepted load at 0.9 offered and the highest stable offered load. Table 1 routers and links everywhere.\n\n"
        "| machine | routers | cables | nodes | routing | CTH-like time (µs) | mean hops | uniform accepted at 0.9 | highest stable load | wall s (both runs) |\n"
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n"
    )
    print(table)
    # What the model's equations bound, whatever the routing: each step moves each rank's
    # six 64 KiB messages (fewer at the grid's faces) through its one DMA engine at 2.8 GB/s
    # after 20 us of compute; and no network accepts more than it is offered.
    dma_bound = iterations * (20e6 + 6 * 65536 / 2.8e9 * 1e12)
    for (name, routing), (t, accepted, _) in results.items():
        f.check(t >= dma_bound, f"{name}, {routing}: the CTH-like step takes at least its DMA time ({us(t)} >= {us(dma_bound)} µs)")
        f.check(accepted <= 0.9 * 1.01, f"{name}, {routing}: accepts no more than offered ({accepted:.3f} <= 0.9)")
    hops = {name: mean_hops[(name, "minimal")] for name in MACHINES}
    f.check(hops["hyperx 8x4, 2 per router"] < min(hops["fat tree 4-ary 3-tree"], hops["dragonfly p=2 a=4 h=2"]),
            f"the HyperX's routes are the shortest (mean hops {', '.join(f'{k}: {v:.2f}' for k, v in hops.items())})")
    d = results[("dragonfly p=2 a=4 h=2", "minimal")][0], results[("dragonfly p=2 a=4 h=2", "ugal")][0]
    f.check(d[1] < d[0], f"on the dragonfly UGAL beats minimal routing on the CTH-like pattern, as ACES found ({us(d[0])} -> {us(d[1])} µs)")
    if not quick:
        write(os.path.join(HERE, "results.md"), table)
    return f.exit_code()


if __name__ == "__main__":
    sys.exit(main())
