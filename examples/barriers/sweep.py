#!/usr/bin/env python3
"""Ring vs recursive-doubling barriers built on RDMA puts (NSIM-ACE section 4.2).

Runs one barrier per configuration on the `table1` machine (a crossbar sized to the ranks,
one rank per node) with node latency (library overhead T_pp) 0.6 us and 0.8 us, and prints a
Markdown table of the barrier times. Usage:

    examples/barriers/sweep.py [--quick] [--out FILE]

--quick runs p = 2..17 and the ranks around 32, 64 and 128 (seconds); the default runs
p = 2..64 and the ranks around every power of two up to 512.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "target", "release", "acesim")


def ranks(quick: bool) -> list[int]:
    top = 17 if quick else 64
    ps = set(range(2, top + 1))
    for k in range(5, 8 if quick else 10):
        ps |= {2**k - 1, 2**k, 2**k + 1}
    if not quick:
        ps |= {96, 192, 384, 500}
    return sorted(p for p in ps if p <= 512)


def barrier_time(p: int, algo: str, latency: str, tmp: str) -> int:
    sched = os.path.join(tmp, f"b{p}.sched")
    with open(sched, "w") as f:
        f.write(f"ranks {p}\n")
        for r in range(p):
            f.write(f"rank {r}\nbarrier algo={algo} transport=rdma\n")
    out = subprocess.run(
        [BIN, "run", sched, "--machine", "table1", "--set", f"node.overhead={latency}", "--json", "-", "-q"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)["collectives"][0]["duration_ps"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    if not os.path.exists(BIN):
        subprocess.run([os.path.join(ROOT, "scripts", "setup")], check=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in ranks(args.quick):
            row = [p]
            for latency in ("0.6us", "0.8us"):
                for algo in ("ring", "recursive_doubling"):
                    row.append(barrier_time(p, algo, latency, tmp))
            rows.append(row)
    lines = [
        "| p | ring, 0.6 us | recursive doubling, 0.6 us | ring, 0.8 us | recursive doubling, 0.8 us |",
        "|---:|---:|---:|---:|---:|",
    ]
    for p, r6, d6, r8, d8 in rows:
        lines.append(f"| {p} | {r6 / 1e6:.2f} us | {d6 / 1e6:.2f} us | {r8 / 1e6:.2f} us | {d8 / 1e6:.2f} us |")
    table = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(table)
    print(table, end="")
    # The paper's findings, checked on every row.
    bad = [p for p, r6, d6, r8, d8 in rows if p > 3 and not (d6 < r6 and d8 < r8)]
    by_p = {p: (d6, d8) for p, _, d6, _, d8 in rows}
    for k in range(2, 10):
        p = 2**k
        for q in (p - 1, p + 1):
            if p in by_p and q in by_p and q > 2 and not (by_p[p][0] < by_p[q][0] and by_p[p][1] < by_p[q][1]):
                bad.append(q)
    if bad:
        print(f"finding not reproduced at p = {sorted(set(bad))}", file=sys.stderr)
        return 1
    print("recursive doubling beats ring for every p > 3 (at p = 3 the ring needs 2 steps, recursive doubling 1 + 2 extra), and is faster at 2^n than at 2^n +- 1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
