#!/usr/bin/env python3
"""Compares the speed of acesim binaries on the synthetic-traffic cases of the suite.

    .venv/bin/python benches/compare_speed.py [--runs 5] OLD_ACESIM NEW_ACESIM ...

Runs the binaries in turn, `--runs` times each, and prints the least user CPU time of each
on three runs: uniform-16x16-torus (half the saturation load, 0.18), the same at 0.3, and
BookSim2's 16x16 run. The least of several runs is the figure to compare on a busy or
noisy machine; docs/performance.md's step tables were measured this way.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suite import BOOKSIM_TORUS16, TORUS16_256B  # noqa: E402

CASES = [
    ("uniform 0.18", TORUS16_256B, ["--load", "0.18", "--packet", "256B", "--warmup", "20us", "--measure", "1389us"]),
    ("uniform 0.3", TORUS16_256B, ["--load", "0.3", "--packet", "256B", "--warmup", "20us", "--measure", "833us"]),
    ("booksim", BOOKSIM_TORUS16, ["--load", "0.2", "--packet", "16B", "--flit", "16B", "--warmup", "3us", "--measure", "3us"]),
]


def user_seconds(binary: str, machine: str, args: list[str]) -> float:
    """User CPU time of one `acesim traffic` run (children's rusage: the process alone)."""
    before = os.times()
    subprocess.run([binary, "traffic", "-m", machine, "--pattern", "uniform", *args, "--all-loads", "-q"],
                   check=True, stdout=subprocess.DEVNULL)
    after = os.times()
    return after.children_user - before.children_user


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("binaries", nargs="+")
    a = ap.parse_args()
    best = {(b, c[0]): float("inf") for b in a.binaries for c in CASES}
    with tempfile.TemporaryDirectory() as tmp:
        machines = {}
        for name, text, _ in CASES:
            path = os.path.join(tmp, name.replace(" ", "_") + ".toml")
            open(path, "w").write(text)
            machines[name] = path
        for _ in range(a.runs):
            for b in a.binaries:
                for name, _, args in CASES:
                    t = user_seconds(b, machines[name], args)
                    best[(b, name)] = min(best[(b, name)], t)
    width = max(len(b) for b in a.binaries)
    print(f"{'binary':{width}s}  " + "  ".join(f"{c[0]:>12s}" for c in CASES) + "   (least user s of %d runs)" % a.runs)
    for b in a.binaries:
        print(f"{b:{width}s}  " + "  ".join(f"{best[(b, c[0])]:12.2f}" for c in CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
