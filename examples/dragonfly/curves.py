#!/usr/bin/env python3
"""Latency/throughput curves of a 1,056-node dragonfly with minimal, Valiant and UGAL
routing under uniform random and worst-case (each group to the next) traffic.

    examples/dragonfly/curves.py [--out-md FILE] [--png FILE]
"""
import argparse
import csv
import io
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(ROOT, "target", "release", "acesim")
MACHINE = os.path.join(HERE, "dragonfly-1056.toml")


def curve(routing: str, pattern: str) -> list[dict]:
    out = subprocess.run(
        [BIN, "traffic", "-m", MACHINE, "--set", f"router.routing={routing}", "--pattern", pattern,
         "--load", "0.1:1.0:0.1", "--packet", "64B", "--warmup", "2us", "--measure", "4us", "--drain", "40us",
         "--csv", "/dev/stdout", "-q"],
        check=True, capture_output=True, text=True,
    ).stdout
    return list(csv.DictReader(io.StringIO(out)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-md")
    ap.add_argument("--png")
    args = ap.parse_args()
    curves = {}
    for pattern in ("uniform", "worst_case"):
        for routing in ("minimal", "valiant", "ugal"):
            curves[(pattern, routing)] = curve(routing, pattern)
            print(f"{pattern} {routing}: done", file=sys.stderr)
    lines = ["| pattern | routing | saturation throughput | last stable load | latency at 0.1 (ns) | minimal fraction at 0.1 | mean hops at 0.1 |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for (pattern, routing), rows in curves.items():
        best = max(float(r["accepted"]) for r in rows)
        stable = max((float(r["load"]) for r in rows if r["saturated"] == "false"), default=0.0)
        first = rows[0]
        lines.append(f"| {pattern} | {routing} | {best:.3f} | {stable:.1f} | {float(first['latency_mean_ns']):.0f} | "
                     f"{float(first['minimal_fraction']):.2f} | {float(first['hops_mean']):.2f} |")
    table = "\n".join(lines) + "\n"
    print(table, end="")
    if args.out_md:
        open(args.out_md, "w").write(table)
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
        for ax, pattern in zip(axes, ("uniform", "worst_case")):
            for routing in ("minimal", "valiant", "ugal"):
                rows = curves[(pattern, routing)]
                ax.plot([float(r["accepted"]) for r in rows], [float(r["latency_mean_ns"]) for r in rows], "o-", label=routing)
            ax.set_title(f"{pattern} traffic")
            ax.set_xlabel("accepted throughput (fraction of injection bandwidth)")
            ax.set_yscale("log")
            ax.grid(True, alpha=0.3)
        axes[0].set_ylabel("mean packet latency (ns)")
        axes[0].legend()
        fig.suptitle("1,056-node dragonfly (p=4, a=8, h=4, g=33)")
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
