#!/usr/bin/env python3
"""Ring vs recursive-doubling barriers built on RDMA puts (NSIM-ACE section 4.2), in Python.

One barrier (``transport="rdma"``: puts and polls, every put completed before it returns) per
configuration on the ``table1`` machine, with node latency (library overhead T_pp) 0.6 us and
0.8 us, for p = 2..64, run with ``acesim.sweep``. Prints the table and writes
``barrier_figure.png`` (barrier time against p, four lines) next to this script.

    python examples/python/barrier_figure.py [--max-ranks 64] [--processes N]
"""

from __future__ import annotations

import argparse
import os
import sys

import acesim
from acesim.plots import plot_sweep


def barrier(ctx: acesim.Context) -> None:
    ctx.barrier(transport="rdma")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-ranks", type=int, default=64)
    ap.add_argument("--processes", type=int, default=None)
    ap.add_argument(
        "--out",
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "barrier_figure.png"),
    )
    opts = ap.parse_args()

    df = acesim.sweep(
        acesim.Machine.preset("table1"),
        barrier,
        {
            "collectives.barrier": ["ring", "recursive_doubling"],
            "node.overhead": ["0.6 us", "0.8 us"],
            "ranks": list(range(2, opts.max_ranks + 1)),
        },
        processes=opts.processes,
    )
    df["algorithm"] = df["collectives.barrier"].str.replace("_", " ")
    df["T_pp"] = df["node.overhead"]

    table = df.pivot_table(
        index="ranks", columns=["algorithm", "T_pp"], values="predicted_time_ps", sort=False
    )
    print((table / 1e6).round(2).to_string(float_format=lambda v: f"{v:.2f}"))
    print("(barrier time in us)")

    fig = plot_sweep(df, "ranks", hue=["algorithm", "T_pp"])
    ax = fig.axes[0]
    ax.set_xlabel("p (ranks)")
    ax.set_ylabel(ax.get_ylabel().replace("predicted time", "barrier time"))
    ax.set_title("Put-based barriers on table1 (NSIM-ACE §4.2)")
    fig.savefig(opts.out, dpi=120)
    print(f"wrote {opts.out}")

    # The paper's findings: recursive doubling wins from p = 4 on, and is faster at 2^n
    # than at 2^n +- 1 (where it needs two extra steps).
    t = {
        (int(p), algo, o): ps
        for p, algo, o, ps in zip(
            df["ranks"], df["collectives.barrier"], df["T_pp"], df["predicted_time_ps"]
        )
    }
    ps = sorted(int(p) for p in df["ranks"].unique())
    bad = [
        p
        for p in ps
        for o in ("0.6 us", "0.8 us")
        if p >= 4 and not t[(p, "recursive_doubling", o)] < t[(p, "ring", o)]
    ]
    for k in range(2, 7):
        p = 2**k
        for q in (p - 1, p + 1):
            if q in ps and p in ps and q > 2:
                for o in ("0.6 us", "0.8 us"):
                    if not t[(p, "recursive_doubling", o)] < t[(q, "recursive_doubling", o)]:
                        bad.append(q)
    if bad:
        print(f"finding not reproduced at p = {sorted(set(bad))}", file=sys.stderr)
        return 1
    print("recursive doubling beats the ring for p >= 4 and is faster at 2^n than at 2^n +- 1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
