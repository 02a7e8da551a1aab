#!/usr/bin/env python3
"""The flow model against the packet model on bandwidth-bound workloads: predicted time, the
error of every operation's latency, and the CPU time of each run. docs/flow.md shows the
table this prints.

    .venv/bin/python examples/flow/fidelity.py [--quick]

--quick runs smaller cases (CI checks that the flow model stays within the bounds below).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benches"))
from suite import alltoall_schedule, ring_schedule  # noqa: E402

BIN = os.path.join(ROOT, "target", "release", "acesim")
CLUSTER256 = os.path.join(ROOT, "examples", "studies", "machines", "cluster256.toml")
TORUS16 = ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", "topology.dims=[16,16]"]


def run(sched: str, machine: list[str], model: str) -> tuple[dict, float]:
    """Runs acesim at one level: its JSON summary and the CPU seconds of the process."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([BIN, "run", sched, *machine, "--model", model, "--json", out, "-q"], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(out) as fh:
            return json.load(fh), (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    finally:
        os.unlink(out)


def latency_errors(packet: dict, flow: dict) -> list[float]:
    """Relative error of each user operation's latency (complete - issue) at flow level."""
    errs = []
    for a, b in zip(packet["operations"], flow["operations"]):
        if a.get("complete_ps") is None or b.get("complete_ps") is None:
            continue
        la, lb = a["complete_ps"] - a["issue_ps"], b["complete_ps"] - b["issue_ps"]
        if la > 0:
            errs.append(abs(lb - la) / la)
    return errs


def write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def cases(tmp: str, quick: bool) -> list[tuple[str, str, list[str], float | None]]:
    """(name, schedule, machine options, the largest difference CI accepts, or None where
    the packet model's routers limit and the difference is reported: docs/flow.md)."""
    out = []
    for k in [2, 4, 8] if quick else [2, 4, 8, 16]:
        s = os.path.join(tmp, f"incast{k}.sched")
        body = "".join(f"rank {r}\nput 0 64KiB tag=1\n" for r in range(1, k + 1))
        write(s, f"ranks {k + 1}\n{body}rank 0\n" + "poll 1\n" * k)
        out.append((f"incast {k} to 1, 64 KiB puts, crossbar", s, ["--machine", "table1"], 0.01))
    p = 32 if quick else 512
    s = os.path.join(tmp, "ring.sched")
    ring_schedule(s, p, "256KB" if quick else "2MB")
    out.append((f"random ring, {p} ranks, {'256 KB' if quick else '2 MB'} puts, leaf/spine", s, ["--machine", CLUSTER256], None))
    n, size = (64, "16KiB") if quick else (256, "64KiB")
    k = 8 if quick else 16
    torus = ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{k},{k}]"]
    for algo in ["simple_spread", "spread_2d", "pairwise"]:
        s = os.path.join(tmp, f"a2a-{algo}.sched")
        write(s, f"ranks {n}\n" + "".join(f"rank {r}\nalltoall {size} algo={algo}\n" for r in range(n)))
        out.append((f"alltoall {algo.replace('_', ' ')}, {n} ranks, {size}, {k}x{k} torus", s, torus, None))
    # Messages of one packet (moved as packets at flow level, first come, first served).
    for algo in ["simple_spread", "pairwise"]:
        s = os.path.join(tmp, f"a2a-1k-{algo}.sched")
        write(s, f"ranks {n}\n" + "".join(f"rank {r}\nalltoall 1KiB algo={algo}\n" for r in range(n)))
        out.append((f"alltoall {algo.replace('_', ' ')}, {n} ranks, 1 KiB (one packet), {k}x{k} torus", s, torus, None))
    fat = ["--machine", "table1", "--set", 'topology.kind="fat_tree"', "--set", "topology.k=4", "--set", f"topology.n={3 if quick else 4}"]
    n = 64 if quick else 256
    s = os.path.join(tmp, "a2a-ft.sched")
    alltoall_schedule(s, n, "64KiB")
    out.append((f"alltoall pairwise, {n} ranks, 64 KiB, fat tree", s, fat, 0.01))
    n = 16 if quick else 64
    s = os.path.join(tmp, "ring-allreduce.sched")
    write(s, f"ranks {n}\n" + "".join(f"rank {r}\nallreduce 4MiB algo=ring\n" for r in range(n)))
    k = 4 if quick else 8
    out.append((f"ring allreduce, {n} ranks, 4 MiB, {k}x{k} torus", s,
                ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{k},{k}]"], 0.01))
    return out


def main() -> int:
    quick = "--quick" in sys.argv
    if not os.path.exists(BIN):
        subprocess.run([os.path.join(ROOT, "scripts", "setup")], check=True)
    rows = [
        "| workload | packet | flow | difference | per-operation error, median / p95 | CPU s, packet / flow |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, sched, machine, bound in cases(tmp, quick):
            p, tp = run(sched, machine, "packet")
            f, tf = run(sched, machine, "flow")
            diff = (f["predicted_time_ps"] - p["predicted_time_ps"]) / p["predicted_time_ps"]
            errs = sorted(latency_errors(p, f))
            # A collective's steps are not operations: a program of collectives has none.
            ops = "—"
            if errs:
                p95 = errs[min(len(errs) - 1, int(0.95 * len(errs)))]
                ops = f"{100 * statistics.median(errs):.2f} % / {100 * p95:.2f} %"
            rows.append(f"| {name} | {p['predicted_time_ps'] / 1e6:.2f} µs | {f['predicted_time_ps'] / 1e6:.2f} µs | "
                        f"{100 * diff:+.2f} % | {ops} | {tp:.2f} / {tf:.2f} |")
            if bound is not None and abs(diff) > bound:
                failed.append(f"{name}: {100 * diff:+.2f} %, more than {100 * bound:.0f} %")
    print("\n".join(rows))
    for f in failed:
        print(f"FAIL {f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
