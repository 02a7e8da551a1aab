#!/usr/bin/env python3
"""The MFS paper's all-to-all algorithms (and Bruck) on a 16x16 torus: one alltoall call
per algorithm and message size; prints a Markdown table of the times.

    examples/alltoall/compare.py [--out FILE] [SIZE ...]     (sizes per pair, default 256B 1KiB 8KiB)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(ROOT, "target", "release", "acesim")
ALGOS = ["simple_spread", "spread_2d", "pairwise", "bruck"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("sizes", nargs="*", default=["256B", "1KiB", "8KiB"])
    args = ap.parse_args()
    if not os.path.exists(BIN):
        subprocess.run([os.path.join(ROOT, "scripts", "setup")], check=True)
    p = 256
    lines = ["| size per pair | " + " | ".join(ALGOS) + " |", "|---:|" + "---:|" * len(ALGOS)]
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            cells = []
            for algo in ALGOS:
                sched = os.path.join(tmp, "a.sched")
                with open(sched, "w") as f:
                    f.write(f"ranks {p}\n")
                    for r in range(p):
                        f.write(f"rank {r}\nalltoall {size} algo={algo}\n")
                out = subprocess.run(
                    [BIN, "run", sched, "--machine", os.path.join(HERE, "torus-16x16.toml"), "--json", "-", "-q"],
                    check=True, capture_output=True, text=True,
                ).stdout
                r = json.loads(out)
                cells.append(f"{r['collectives'][0]['duration_ps'] / 1e6:.1f} us")
            lines.append(f"| {size} | " + " | ".join(cells) + " |")
    table = "\n".join(lines) + "\n"
    if args.out:
        open(args.out, "w").write(table)
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
