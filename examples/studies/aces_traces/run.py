#!/usr/bin/env python3
"""The ACES dragonfly study driven by real MPI traces: each trace repeated to fill a
1,056-node dragonfly (`--jobs fill`), 1 and 4 traces per NIC, minimal, Valiant and UGAL
routing, all and half of the global links, messages truncated at 64 KiB as ACES did; then
ACES's Table 1: packets delivered in a fixed time against UGAL's threshold.

    .venv/bin/python examples/studies/aces_traces/run.py [--quick]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import ROOT, Findings, acesim, argv_quick, us, write, save_figure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MACHINE = os.path.join(ROOT, "examples", "studies", "dragonfly_halo", "dragonfly.toml")
SMALL = ["--set", "topology.g=9", "--set", "topology.h=4", "--set", "topology.a=4"]
TRACES = {
    # Blue Gene/P run: Isend/Irecv/Waitall, Alltoall on a sub-communicator, Barrier (7 ranks).
    "testbgp (DUMPI 1.1, 7 ranks)": os.path.join(ROOT, "tests", "data", "dumpi", "sst-macro-testbgp", "testbgp.meta"),
    # sst-dumpi's own test trace: a mix of point-to-point calls and collectives (4 ranks).
    "testtrace (DUMPI 1.0, 4 ranks)": os.path.join(ROOT, "tests", "data", "dumpi", "sst-dumpi-testtrace", "testtrace.meta"),
    # A CTH-like 2D halo (examples/mpi-traces/halo2d.c: 4 neighbours, 64 KiB edges, 10 steps)
    # on 16 ranks, recorded with `acesim trace record` (see README).
    "halo2d (recorded, 16 ranks)": os.path.join(HERE, "halo2d-16", "trace.meta"),
}
ROUTINGS = ("minimal", "valiant", "ugal")


def global_load(summary: dict) -> tuple[float, float]:
    """Mean and peak utilization of the global links."""
    allg = [l["utilization"] for l in summary["links"] if l["class"] == "global"]
    return (sum(allg) / max(len(allg), 1), max(allg, default=0.0))


def base_args(trace: str, rpn: int, quick: bool, compute: str) -> list[str]:
    return [trace, "--machine", MACHINE, *(SMALL if quick else []), "--ranks-per-node", str(rpn),
            "--jobs", "fill", "--max-message", "64KiB", "--placement", "random", "--compute-scale", compute]


def main() -> int:
    quick = argv_quick()
    f = Findings()
    rows = []
    by: dict = {}
    traces = dict(list(TRACES.items())[:1]) if quick else TRACES
    for name, trace in traces.items():
        for compute in ("0", "1"):
            for rpn in (1, 4):
                for routing in ROUTINGS:
                    for population in ("1.0", "0.5"):
                        if population == "0.5" and routing != "ugal":
                            continue
                        run = acesim([*base_args(trace, rpn, quick, compute), "--set", f"router.routing={routing}",
                                      "--set", f"topology.global_population={population}"])
                        by[(name, compute, rpn, routing, population)] = run
                        rows.append((name, compute, rpn, routing, population, run))
    lines = [
        "| trace | compute | traces per NIC | ranks | routing | global links | time µs | mean hops | packets per NIC (mean / max) | minimal fraction | global-link utilization (mean / peak) | wall s |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, compute, rpn, routing, population, run in rows:
        s = run.summary
        nics = [n["injected_packets"] for n in s["nics"]]
        mean_g, peak_g = global_load(s)
        lines.append(f"| {name} | {'traced' if compute == '1' else 'none'} | {rpn} | {s['ranks']} | {routing} | {float(population) * 100:.0f} % | "
                     f"{us(run.time_ps)} | {s['mean_hops']:.2f} | {sum(nics) / max(len(nics), 1):.0f} / {max(nics, default=0)} | "
                     f"{s['minimal_fraction']:.2f} | {mean_g:.3f} / {peak_g:.3f} | {run.wall:.2f} |")
    table = "\n".join(lines) + "\n"
    print(table)
    for name in traces:
        for rpn in (1, 4):
            key = lambda r, p="1.0", c="0": by[(name, c, rpn, r, p)]
            s = {r: key(r).summary for r in ROUTINGS}
            f.check(s["minimal"]["minimal_fraction"] == 1.0, f"{name}, {rpn}/NIC: minimal routing routes every packet minimally")
            f.check(s["valiant"]["mean_hops"] > s["minimal"]["mean_hops"], f"{name}, {rpn}/NIC: Valiant takes more hops than minimal ({s['minimal']['mean_hops']:.2f} -> {s['valiant']['mean_hops']:.2f})")
            f.check(s["ugal"]["mean_hops"] < s["valiant"]["mean_hops"], f"{name}, {rpn}/NIC: adaptive routing takes fewer hops than Valiant ({s['valiant']['mean_hops']:.2f} -> {s['ugal']['mean_hops']:.2f}; ACES 3.44 -> 3.21)")
            t = {r: key(r).time_ps for r in ROUTINGS}
            f.check(True, f"{name}, {rpn}/NIC, no compute: UGAL {100 * (t['ugal'] / t['valiant'] - 1):+.1f} % against Valiant, minimal {100 * (t['minimal'] / t['valiant'] - 1):+.1f} % (ACES: adaptive up to 25 % better than non-minimal)")
            half, full = key("ugal", "0.5").time_ps, key("ugal").time_ps
            f.check(True, f"{name}, {rpn}/NIC, no compute: half the global links {100 * (half / full - 1):+.1f} % (ACES: no degradation)")
            mean_g, _ = global_load(s["ugal"])
            f.check(mean_g < 0.5, f"{name}, {rpn}/NIC: global links lightly loaded (mean utilization {mean_g:.3f}; ACES: lightly loaded)")
            for c in ("0", "1"):
                for r in ROUTINGS:
                    u = key(r, c=c).summary
                    f.check(not u["unmatched_messages"] and not u["unfinished_requests"], f"{name}, {rpn}/NIC, {r}, compute {c}: every message received, every request complete")
        one = by[(name, "0", 1, "ugal", "1.0")].summary
        four = by[(name, "0", 4, "ugal", "1.0")].summary
        ratio = (four["bytes_injected"] / max(len(four["nics"]), 1)) / max(one["bytes_injected"] / max(len(one["nics"]), 1), 1)
        f.check(ratio > 1.5, f"{name}: 4 traces per NIC move {ratio:.1f}x the bytes per NIC of 1 (ACES: 1.9x)")
    # ACES's Table 1 on the CTH-like halo (on the small trace in the quick version).
    table1 = threshold_sweep(list(traces.values())[-1], quick, f)
    if not quick:
        write(os.path.join(HERE, "results.md"), table + "\n" + table1)
        plot(rows, os.path.join(HERE, "figure.png"))
    return f.exit_code()


def threshold_sweep(trace: str, quick: bool, f: Findings) -> str:
    """ACES Table 1: packets delivered in a fixed time, and the share routed minimally, for
    UGAL thresholds (non-minimal once the minimal path's queued bytes x hops exceed the
    threshold times the non-minimal one's), against Valiant and minimal."""
    args = base_args(trace, 4, quick, "0")
    # The fixed time: half of what minimal routing needs to finish.
    full = acesim([*args, "--set", "router.routing=minimal"]).time_ps
    window = full // 2
    results = []
    by_load = 'topology.global_choice="load"'
    for label, sets in [("minimal", ["router.routing=minimal"]), ("valiant (non-minimal)", ["router.routing=valiant"])] + [
        (f"ugal, threshold {t}", ["router.routing=ugal", f"router.ugal_threshold={t}"]) for t in ("0.5", "1.0", "1.33", "2.0", "4.0")
    ] + [
        # ACES: load-based against hash-based choice among the minimal paths (the parallel
        # global links between two groups).
        ("minimal, global link by load", ["router.routing=minimal", by_load]),
        ("ugal, threshold 1.33, global link by load", ["router.routing=ugal", "router.ugal_threshold=1.33", by_load]),
    ]:
        extra = [x for s in sets for x in ("--set", s)]
        run = acesim([*args, *extra, "--max-sim-time", f"{window}ps"], partial=True)
        delivered = sum(n["ejected_packets"] for n in run.summary["nics"])
        results.append((label, delivered, run.summary["minimal_fraction"]))
    lines = [
        f"Packets delivered in {us(window)} µs (half of minimal routing's time), trace {os.path.relpath(trace, ROOT)}, 4 traces per NIC, no compute:",
        "",
        "| routing | packets delivered | minimal fraction |",
        "|---|---:|---:|",
    ] + [f"| {l} | {d} | {m:.2f} |" for l, d, m in results]
    text = "\n".join(lines) + "\n"
    print(text)
    best = max(results, key=lambda r: r[1])
    val = dict((l, d) for l, d, _ in results)["valiant (non-minimal)"]
    f.check(True, f"threshold sweep: most packets with {best[0]} ({best[1]}; ACES: best near 1.33), {100 * (best[1] / max(val, 1) - 1):+.1f} % against Valiant (ACES: up to 25 %)")
    got = dict((l, d) for l, d, _ in results)
    for hashed in ("minimal", "ugal, threshold 1.33"):
        loaded = got[f"{hashed}, global link by load"]
        f.check(loaded > 0, f"{hashed}: global link by load delivers {100 * (loaded / max(got[hashed], 1) - 1):+.1f} % packets against by destination (ACES: load-based about 15 % better than hash-based)")
    fr = [m for l, _, m in results if l.startswith("ugal") and "by load" not in l]
    f.check(all(a <= b + 1e-9 for a, b in zip(fr, fr[1:])), "a higher threshold routes a larger share minimally")
    return text


def plot(rows: list, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sel = [r for r in rows if r[1] == "0"]
    names = sorted({r[0] for r in sel})
    fig, axes = plt.subplots(len(names), 3, figsize=(12, 3.4 * len(names)), squeeze=False)
    for i, name in enumerate(names):
        mine = [r for r in sel if r[0] == name]
        labels = [f"{r[3]}\n{float(r[4]) * 100:.0f} %\n{r[2]}/NIC" for r in mine]
        x = range(len(mine))
        axes[i][0].bar(x, [r[5].summary["mean_hops"] for r in mine], color="C0")
        axes[i][0].set_ylabel("mean hops per packet")
        per_nic = [[n["injected_packets"] for n in r[5].summary["nics"]] for r in mine]
        axes[i][1].boxplot(per_nic, showfliers=False)
        axes[i][1].set_ylabel("packets per NIC")
        axes[i][2].bar(x, [global_load(r[5].summary)[0] for r in mine], color="C2", label="mean")
        axes[i][2].plot(list(x), [global_load(r[5].summary)[1] for r in mine], "k^", label="peak")
        axes[i][2].set_ylabel("global-link utilization")
        axes[i][2].legend(fontsize=7)
        for ax in axes[i]:
            ax.set_xticks(list(range(1, len(mine) + 1)) if ax is axes[i][1] else list(x), labels, fontsize=6)
        axes[i][0].set_title(name, fontsize=9, loc="left")
    fig.suptitle("Real traces filling a 1,056-node dragonfly (ACES): communication only")
    save_figure(fig, path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
