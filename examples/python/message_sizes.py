#!/usr/bin/env python3
"""A neighbour exchange swept over message sizes, rank counts and two machines, resumable.

Each rank puts ``size`` bytes to the rank ``hops`` ahead and waits for its own (a Python
program with keyword arguments, swept as ``program.size`` and ``program.hops``), on the
``hdr-fat-tree`` and ``slingshot`` presets scaled down. Finished points are kept in
``--cache`` (run it twice: the second run reads them all and simulates nothing); with
``--dask`` the points run on a local dask.distributed cluster instead of a process pool.
Prints the effective bandwidth per point.

    python examples/python/message_sizes.py [--cache DIR] [--dask]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import acesim


def exchange(ctx: acesim.Context, size: int = 1024, hops: int = 1) -> None:
    h = ctx.put((ctx.rank + hops) % ctx.size, size, tag=1)
    ctx.poll(1)
    ctx.complete(h)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "acesim-message-sizes"))
    ap.add_argument("--dask", action="store_true", help="run the points on a local dask cluster")
    opts = ap.parse_args()

    params = {
        "machine": ["hdr-fat-tree", "slingshot"],
        "program.size": [1024, 65536, 4 << 20],
        "program.hops": [1, 7],
    }
    frames = []
    client = None
    if opts.dask:
        from dask.distributed import Client

        client = Client(n_workers=2, threads_per_worker=1, dashboard_address=None)
    try:
        for name in params["machine"]:
            # Scaled down to 64 nodes: a fat tree of k = 8, a dragonfly of 4 groups of 4.
            small = {"hdr-fat-tree": {"topology.k": 8}, "slingshot": {"topology.p": 4, "topology.a": 4, "topology.h": 2, "topology.g": 4}}
            m = acesim.Machine.preset(name).with_(small[name])
            df = acesim.sweep(
                m, exchange, {k: v for k, v in params.items() if k != "machine"},
                ranks=64, cache=opts.cache, client=client, progress=False,
            )
            df.insert(0, "machine", name)
            frames.append(df)
    finally:
        if client is not None:
            client.close()
    import pandas as pd

    df = pd.concat(frames, ignore_index=True)
    df["GB/s"] = df["program.size"] / df["predicted_time"] / 1e9
    print(df[["machine", "program.size", "program.hops", "predicted_time", "GB/s", "wall_seconds"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
