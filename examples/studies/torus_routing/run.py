#!/usr/bin/env python3
"""Adaptive versus deterministic routing on a torus, under tornado (the pattern that defeats
minimal routing on rings), transpose and uniform traffic; and the same exchanges as
programs (every rank puts 256 KiB to its tornado or transpose partner) on Table 1 routers.

Routings: dimension order with the dateline on crossing (acesim's default) or by route
(BookSim2's `dim_order`), and minimal adaptive with escape channels (Duato).

    .venv/bin/python examples/studies/torus_routing/run.py [--quick]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import BIN, Findings, acesim, argv_quick, ensure_built, us, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MACHINE = os.path.join(HERE, "torus8x8.toml")
ROUTINGS = {
    "dimension order (crossing)": ["router.routing=\"auto\""],
    "dimension order (route)": ["router.routing=\"auto\"", "router.dateline=\"route\""],
    "minimal adaptive": ["router.routing=\"adaptive\""],
}
# The channel-load bound of each pattern on an 8x8 torus, as a fraction of the injection
# bandwidth (links and injection both 16 GB/s): uniform 8/k = 1; tornado sends every
# packet 3 hops the same way round both rings, 3 flows per + link: 1/3. Transpose's
# depends on the routes (none given).
BOUNDS = {"tornado": 1 / 3, "transpose": None, "uniform": 1.0}
K = 8


def sets(fields: list[str]) -> list[str]:
    return [a for f in fields for a in ("--set", f)]


def curve(routing: list[str], pattern: str, quick: bool) -> list[dict]:
    ensure_built()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    loads = "0.2,0.35,1.0" if quick else "0.1:1.0:0.1"
    try:
        subprocess.run([BIN, "traffic", "--machine", MACHINE, *sets(routing), "--pattern", pattern, "--packet", "16B",
                        "--load", loads, "--all-loads", "--json", out, "-q"], check=True)
        with open(out) as fh:
            return json.load(fh)
    finally:
        os.unlink(out)


def partner(rank: int, pattern: str) -> int:
    x, y = rank % K, rank // K
    if pattern == "tornado":
        return (x + K // 2 - 1) % K + K * ((y + K // 2 - 1) % K)
    return y + K * x  # transpose


def exchange(pattern: str, path: str) -> None:
    """Every rank puts 256 KiB to its partner (none to itself) and waits for its own."""
    lines = [f"ranks {K * K}"]
    for r in range(K * K):
        p = partner(r, pattern)
        if p != r:
            lines += [f"rank {r}", f"put {p} 256KiB"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main() -> int:
    quick = argv_quick()
    f = Findings()
    rows = []
    best: dict[tuple[str, str], float] = {}
    at_full: dict[tuple[str, str], float] = {}
    hops: dict[tuple[str, str], float] = {}
    for pattern, bound in BOUNDS.items():
        for name, routing in ROUTINGS.items():
            points = curve(routing, pattern, quick)
            top = max(p["accepted"] for p in points)
            stable = max((p["offered"] for p in points if not p["saturated"]), default=0.0)
            full = points[-1]["accepted"]
            best[(pattern, name)], at_full[(pattern, name)] = top, full
            hops[(pattern, name)] = points[0]["hops_mean"]
            low = points[0]
            rows.append(f"| {pattern} | {name} | {'%.3f' % bound if bound else '-'} | {top:.3f} | {stable:.2f} | {full:.3f} | "
                        f"{low['latency_mean_ns']:.1f} | {low['hops_mean']:.2f} |")
    table = (
        f"`acesim traffic` on an 8x8 torus of BookSim2-like routers ([torus8x8.toml](torus8x8.toml)): one-flit "
        f"16-byte packets, loads {'0.2, 0.35, 1.0' if quick else '0.1 to 1.0'} of the injection bandwidth. Saturation "
        "throughput = the best accepted load; latency and hops at the lowest load.\n\n"
        "| pattern | routing | channel-load bound | saturation throughput | highest stable load | accepted at 1.0 | latency ns | hops |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n"
    )
    # The same exchanges as programs, on Table 1 routers (4 VCs for the adaptive classes).
    prog_rows = []
    times: dict[tuple[str, str], int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for pattern in ("tornado", "transpose"):
            sched = os.path.join(tmp, f"{pattern}.sched")
            exchange(pattern, sched)
            for name, routing in ROUTINGS.items():
                run = acesim([sched, "--machine", "table1", "--set", "topology.kind=\"torus\"", "--set", "topology.dims=[8,8]",
                              "--set", "router.vcs=4", *sets(routing)])
                times[(pattern, name)] = run.time_ps
                prog_rows.append(f"| {pattern} | {name} | {us(run.time_ps)} | {run.summary['mean_hops']:.2f} |")
    programs = (
        "\nEvery rank puts 256 KiB to its tornado or transpose partner at once, on Table 1 routers and links "
        "(4 GB/s, 2.8 GB/s DMA) with 4 VCs, as a schedule (packet level).\n\n"
        "| exchange | routing | time (µs) | mean hops |\n|---|---|---:|---:|\n" + "\n".join(prog_rows) + "\n"
    )
    print(table + programs)
    for (pattern, name), top in best.items():
        bound = BOUNDS[pattern]
        if bound:
            f.check(top <= bound + 0.01, f"{pattern}, {name}: within the channel-load bound ({top:.3f} <= {bound:.3f})")
    for pattern in BOUNDS:
        h = {hops[(pattern, n)] for n in ROUTINGS}
        f.check(max(h) - min(h) < 0.05, f"{pattern}: every routing is minimal (mean hops {sorted(h)})")
    dor, dor_route, ada = ROUTINGS
    f.check(best[("transpose", ada)] > 2 * best[("transpose", dor)],
            f"transpose: adaptive routing more than doubles dimension order's saturation throughput "
            f"({best[('transpose', dor)]:.3f} -> {best[('transpose', ada)]:.3f})")
    f.check(at_full[("tornado", ada)] > at_full[("tornado", dor)],
            f"tornado past saturation: adaptive keeps more than dimension order with the crossing dateline "
            f"({at_full[('tornado', dor)]:.3f} -> {at_full[('tornado', ada)]:.3f} at 1.0)")
    f.check(times[("transpose", ada)] < times[("transpose", dor)],
            f"the transpose exchange ends sooner adaptively ({us(times[('transpose', dor)])} -> {us(times[('transpose', ada)])} µs)")
    if not quick:
        write(os.path.join(HERE, "results.md"), table + programs)
    return f.exit_code()


if __name__ == "__main__":
    sys.exit(main())
