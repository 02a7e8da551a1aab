#!/usr/bin/env python3
"""Ring vs recursive-doubling barriers built on RDMA puts and polls (NSIM-ACE 2016 paper,
section 4.2) on the papers' 16-node InfiniBand cluster (2 ranks per node) and the 256-node
prediction, with node latency (library overhead T_pp) 0.6 us and 0.8 us.

Each program runs 5 barriers in a row (`barrier algo=ring|recursive_doubling transport=rdma`);
the barrier time is the minimum of the 5 per-call durations in the JSON `collectives` list,
as the paper took the minimum over 100 barriers. p <= 32 runs on cluster16.toml, p > 32 on
cluster256.toml. Usage:

    .venv/bin/python examples/studies/barriers/run.py [--quick]

--quick runs p = 2..17, 31, 32, 33, 64. Prints the table; the full run writes results.md and figure.png next
to this script, exits 1 if a finding fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from common import MACHINES, Findings, Run, acesim, argv_quick, write, save_figure  # noqa: E402

REPS = 5
LATENCIES = ("0.6us", "0.8us")
ALGOS = ("ring", "recursive_doubling")
NSIM_ACE_512_S = {"ring": 148.0, "recursive_doubling": 0.33}


def ranks(quick: bool) -> list[int]:
    if quick:
        return list(range(2, 18)) + [31, 32, 33, 64]
    ps = set(range(2, 33))
    for k in range(6, 10):
        ps |= {2**k - 1, 2**k, 2**k + 1}
    ps |= {33, 48, 96, 192, 384}
    return sorted(p for p in ps if p <= 512)


def machine(p: int) -> str:
    return "cluster16" if p <= 32 else "cluster256"


def schedule(p: int, algo: str) -> str:
    body = "".join(f"barrier algo={algo} transport=rdma\n" for _ in range(REPS))
    return f"ranks {p}\n" + "".join(f"rank {r}\n{body}" for r in range(p))


def barrier_min(run: Run) -> int:
    calls = run.summary["collectives"]
    assert len(calls) == REPS and all(c["kind"] == "barrier" for c in calls), calls
    return min(int(c["duration_ps"]) for c in calls)


def one(args: list[str]) -> None:
    """`run.py --one ACESIM-ARGS...`: one run in this fresh process; prints [min ps, wall s, peak MiB]."""
    run = acesim(args)
    print(json.dumps([barrier_min(run), run.wall, run.peak_mib]))


def main() -> int:
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2:])
        return 0
    quick = argv_quick()
    ps = ranks(quick)
    t = {}  # (p, algo, latency) -> min duration ps
    cost = {}  # (p, algo, latency) -> (wall s, peak MiB)
    top = max(ps)
    with tempfile.TemporaryDirectory() as tmp:
        for algo in ALGOS:
            for p in ps:
                path = os.path.join(tmp, f"b_{algo}_{p}.sched")
                write(path, schedule(p, algo))
                for lat in LATENCIES:
                    args = [path, "--machine", os.path.join(MACHINES, f"{machine(p)}.toml"), "--set", f"node.overhead={lat}"]
                    if p == top:
                        # Measured in a fresh Python process: common.py's peak is the largest child
                        # so far, and a child forked from this process after it has parsed the
                        # ring's large runs would report this
                        # process's memory, not acesim's.
                        out = subprocess.run([sys.executable, __file__, "--one", *args], check=True, capture_output=True, text=True)
                        m, wall, peak = json.loads(out.stdout)
                    else:
                        run = acesim(args)
                        m, wall, peak = barrier_min(run), run.wall, run.peak_mib
                        del run
                    t[p, algo, lat] = m
                    cost[p, algo, lat] = (wall, peak)

    cols = [(a, l) for l in LATENCIES for a in ALGOS]
    name = {"ring": "ring", "recursive_doubling": "recursive doubling"}
    table = (
        "| p | machine | " + " | ".join(f"{name[a]}, {l[:-2]} us" for a, l in cols) + " |\n"
        "|---:|---|" + "---:|" * len(cols) + "\n"
        + "".join(
            f"| {p} | {machine(p)} | " + " | ".join(f"{t[p, a, l] / 1e6:.2f} us" for a, l in cols) + " |\n" for p in ps
        )
    )
    print(table)

    speed = (
        f"| {top}-rank run ({REPS} barriers) | wall, 0.6 us | wall, 0.8 us | peak memory | NSIM-ACE |\n|---|---:|---:|---:|---:|\n"
        + "".join(
            f"| {name[a]} | {cost[top, a, '0.6us'][0]:.2f} s | {cost[top, a, '0.8us'][0]:.2f} s | "
            f"{max(cost[top, a, l][1] for l in LATENCIES):.0f} MiB | "
            + (f"{NSIM_ACE_512_S[a]} s |\n" if top == 512 else "— (512 ranks) |\n")
            for a in ALGOS
        )
    )
    print(speed)

    f = Findings()
    for lat in LATENCIES:
        bad = [p for p in ps if p >= 4 and not t[p, "recursive_doubling", lat] < t[p, "ring", lat]]
        f.check(not bad, f"{lat[:-2]} us: recursive doubling is faster than ring at every p >= 4" + (f" (not at p = {bad})" if bad else ""))
        pairs = []
        for k in range(1, 10):
            p = 2**k
            if p not in ps:
                continue
            for q in (p + 1, p - 1):
                if q in ps and (q == p + 1 or q >= 3):
                    pairs.append((p, q))
        bad = [(p, q) for p, q in pairs if not t[p, "recursive_doubling", lat] < t[q, "recursive_doubling", lat]]
        f.check(
            not bad,
            f"{lat[:-2]} us: recursive doubling is faster at p = 2^n than at 2^n + 1 and 2^n - 1 "
            f"({len(pairs)} pairs: {', '.join(f'{p}<{q}' for p, q in pairs)})" + (f"; not for {bad}" if bad else ""),
        )
    ring_06 = t[32, "ring", "0.6us"] / t[32, "recursive_doubling", "0.6us"] if 32 in ps else None

    md = [
        "# Ring vs recursive-doubling barriers on puts (NSIM-ACE section 4.2)\n",
        f"Generated by `run.py{' --quick' if quick else ''}`. {REPS} barriers in a row per program, minimum of the "
        "per-call durations (first rank in to last rank out) from the JSON `collectives` list. 2 ranks per node, "
        "block placement; p <= 32 on cluster16.toml, p > 32 on cluster256.toml. Node latency = `node.overhead`.\n",
        table,
        "## Simulation speed\n",
        speed,
        f"Each {top}-rank run was measured by common.py in a fresh Python process, so its peak memory is that "
        "acesim process's own (plus ~13 MiB of the forked Python). The ring makes 5 x 511 x 512 = 1.3 million puts "
        "at 512 ranks; the simulator keeps a record of each (the JSON summary counts them per collective call).\n",
        "## Findings\n",
        "".join([f"- ok: {x}\n" for x in f.passed] + [f"- FAILED: {x}\n" for x in f.failed]),
    ]
    if ring_06:
        md.append(f"At p = 32 and 0.6 us the ring barrier takes {ring_06:.1f}x as long as recursive doubling.\n")
    # Quick runs (CI) check the findings but keep the full run's files.
    if not quick:
        write(os.path.join(HERE, "results.md"), "\n".join(md))
        plot(ps, t, os.path.join(HERE, "figure.png"))
    return f.exit_code()


def plot(ps: list[int], t: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    style = {"ring": ("o", "-"), "recursive_doubling": ("s", "-")}
    for algo, label in (("ring", "ring"), ("recursive_doubling", "recursive doubling")):
        for lat, ls in (("0.6us", "-"), ("0.8us", "--")):
            ax.plot(ps, [t[p, algo, lat] / 1e6 for p in ps], marker=style[algo][0], ms=3, ls=ls, label=f"{label}, node latency {lat[:-2]} µs")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = [p for p in (2, 4, 8, 16, 32, 64, 128, 256, 512) if p <= max(ps)]
    ax.set_xticks(ticks, [str(p) for p in ticks])
    if max(ps) > 32:
        ax.axvline(32.5, color="grey", ls=":", lw=0.8)
        ax.text(34, ax.get_ylim()[0] * 1.15, "cluster256 →", fontsize=8, color="grey")
    ax.set_xlabel("processes p (2 per node)")
    ax.set_ylabel("barrier time (µs), min of 5")
    ax.set_title("Put-based barriers, acesim")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
