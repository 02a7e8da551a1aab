#!/usr/bin/env python3
"""acesim's benchmark suite (issue 7): whole runs, each timed with /usr/bin/time.

    .venv/bin/python benches/suite.py [--smoke] [--only NAME,...] [--out bench-results.json]

Prints, per case, wall time, peak memory, events, events/s, packet-hops/s (and packets/s
for synthetic traffic) and writes them as JSON. --smoke runs tiny versions (CI; not timed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "acesim")
STUDIES = os.path.join(ROOT, "examples", "studies")
CLUSTER256 = os.path.join(STUDIES, "machines", "cluster256.toml")

# BookSim2's router for the side-by-side (see examples/booksim/compare.py): cycle = 1 ns.
BOOKSIM_TORUS16 = """[topology]
kind = "torus"
dims = [16, 16]
[router]
routing_delay = "0 ns"
vc_allocation_delay = "1 ns"
switch_allocation_delay = "1 ns"
switch_latency = "1 ns"
switch_throughput = "16 GB/s"
vcs = 4
buffer_per_vc = "128 B"
[link]
bandwidth = "16 GB/s"
latency = "1 ns"
[nic]
mtu = "16 B"
header = "4 B"
control_packet = "4 B"
"""
TORUS16_256B = """[topology]
kind = "torus"
dims = [16, 16]
[router]
vcs = 4
buffer_per_vc = "2 KiB"
[nic]
mtu = "256 B"
header = "16 B"
control_packet = "16 B"
"""


def timed_full(args: list[str]) -> tuple[float, float, str, str]:
    """Runs a command; returns wall seconds, peak RSS in MiB, its stdout and its stderr."""
    with tempfile.NamedTemporaryFile(suffix=".time") as tf:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name, *args], capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed:\n{p.stderr}")
        peak_kib = int(open(tf.name).read().strip().splitlines()[-1])
    return wall, peak_kib / 1024, p.stdout, p.stderr


def timed(args: list[str]) -> tuple[float, float, str]:
    """Runs a command; returns wall seconds, peak RSS in MiB and its stdout."""
    wall, peak, out, _ = timed_full(args)
    return wall, peak, out


def phases_of(stderr: str) -> dict[str, float]:
    """The phases `acesim run --timings` printed on stderr: name -> wall seconds."""
    phases: dict[str, float] = {}
    table = stderr.split("timings (wall seconds):", 1)
    for line in (table[1].splitlines() if len(table) > 1 else []):
        m = re.match(r"  (\S.*?)\s+([0-9.]+)(\s+[0-9.]+ %)?$", line)
        if m:
            phases[m.group(1)] = float(m.group(2))
    return phases


RUN_ARGS: list[str] = []

# Two processes on this machine's cores; Open MPI refuses root (CI) unless told.
MPIRUN = ["mpirun", "--oversubscribe"]
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")


def summary_wall(out: str) -> float:
    """The simulation's own time from the printed summary (`... wall: 1.234 s`)."""
    m = re.search(r"wall: ([0-9.]+) s", out)
    return float(m.group(1)) if m else 0.0


def run_program(sched: str, machine: list[str]) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as js:
        wall, peak, out = timed([BIN, "run", sched, *machine, *RUN_ARGS, "--json", js.name])
        s = json.load(open(js.name))
    # What `acesim validate` estimates the run needs beyond the program, next to the peak.
    # (`validate` estimates the packet level: it takes no --model.)
    vm = [a for i, a in enumerate(machine) if a != "--model" and (i == 0 or machine[i - 1] != "--model")]
    v = subprocess.run([BIN, "validate", sched, *vm], capture_output=True, text=True)
    m = re.search(r"needs about ([0-9.]+) (B|KiB|MiB|GiB|TiB)", v.stdout)
    scale = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1, "GiB": 1024, "TiB": 2**20}
    estimate = float(m.group(1)) * scale[m.group(2)] if m else None
    return {"wall_seconds": wall, "sim_seconds": summary_wall(out), "peak_mib": peak, "estimate_mib": estimate, "events": s["events"],
            "packet_hops": s["packet_hops"], "predicted_time_ps": s["predicted_time_ps"]}


def run_traffic(machine_text: str, tmp: str, args: list[str]) -> dict:
    m = os.path.join(tmp, "m.toml")
    open(m, "w").write(machine_text)
    js = os.path.join(tmp, "traffic.json")
    wall, peak, out = timed([BIN, "traffic", "-m", m, *args, "--all-loads", "--json", js])
    p = json.load(open(js))[0]
    # The table's second line is the one load: its "wall s" column is the simulation's time.
    sim = float(out.splitlines()[1].split()[8])
    return {"wall_seconds": wall, "sim_seconds": sim, "peak_mib": peak, "events": p["events"],
            "packet_hops": p["packet_hops"], "packets": p["packets_delivered"], "accepted": p["accepted"]}


SATURATION: dict[str, float] = {}


def saturation_case(tmp: str, smoke: bool) -> dict:
    """The uniform-16x16-torus machine's saturation: offered loads 0.05, 0.06, ... until two
    are saturated; the last stable one is the saturation load."""
    m = os.path.join(tmp, "m.toml")
    open(m, "w").write(TORUS16_256B)
    js = os.path.join(tmp, "saturation.json")
    window = ["--warmup", "2us", "--measure", "4us", "--load", "0.1:0.3:0.1"] if smoke else ["--warmup", "20us", "--measure", "200us", "--load", "0.05:1.0:0.01"]
    wall, peak, out = timed([BIN, "traffic", "-m", m, "--pattern", "uniform", "--packet", "256B", *window, "--json", js])
    points = json.load(open(js))
    stable = [p["load"] for p in points if not p["saturated"]]
    SATURATION["load"] = max(stable) if stable else 0.0
    return {"wall_seconds": wall, "sim_seconds": sum(float(line.split()[8]) for line in out.splitlines()[1:len(points) + 1]),
            "peak_mib": peak, "events": sum(p["events"] for p in points), "packet_hops": sum(p["packet_hops"] for p in points),
            "saturation_load": SATURATION["load"]}


def half_saturation(tmp: str) -> float:
    """Half the saturation load of the uniform-16x16-torus machine (measured once)."""
    if "load" not in SATURATION:
        saturation_case(tmp, False)
    return round(SATURATION["load"] / 2, 3)


def write_lines(path: str, lines) -> None:
    with open(path, "w") as f:
        for line in lines:
            f.write(line)


def ring_schedule(path: str, p: int, size: str) -> None:
    order = list(range(p))
    random.Random(2016).shuffle(order)
    pos = {r: i for i, r in enumerate(order)}

    def gen():
        yield f"ranks {p}\n"
        for r in range(p):
            i = pos[r]
            left, right = order[(i - 1) % p], order[(i + 1) % p]
            yield f"rank {r}\nput {left} {size} tag=1 handle=a\nput {right} {size} tag=1 handle=b\npoll 1\npoll 1\ncomplete a\ncomplete b\n"
    write_lines(path, gen())


def barrier_schedule(path: str, p: int, algo: str) -> None:
    write_lines(path, [f"ranks {p}\n"] + [f"rank {r}\nbarrier algo={algo} transport=rdma\n" for r in range(p)])


def alltoall_schedule(path: str, p: int, size: str) -> None:
    write_lines(path, [f"ranks {p}\n"] + [f"rank {r}\nalltoall {size} algo=pairwise\n" for r in range(p)])


def puts_schedule(path: str, p: int, k: int, size: str) -> None:
    """Each rank puts `size` to its k next ranks, then completes the puts."""
    def gen():
        yield f"ranks {p}\n"
        for r in range(p):
            yield f"rank {r}\n"
            yield "".join(f"put {(r + j) % p} {size} tag={j} handle=h{j}\n" for j in range(1, k + 1))
            yield "".join(f"complete h{j}\n" for j in range(1, k + 1))
    write_lines(path, gen())


def nn_schedule(path: str, dims: tuple[int, int, int], size: str) -> None:
    nx, ny, nz = dims

    def gen():
        yield f"ranks {nx * ny * nz}\n"
        for r in range(nx * ny * nz):
            x, y, z = r % nx, (r // nx) % ny, r // (nx * ny)
            peers = [((x + 1) % nx) + nx * (y + ny * z), ((x - 1) % nx) + nx * (y + ny * z),
                     x + nx * (((y + 1) % ny) + ny * z), x + nx * (((y - 1) % ny) + ny * z),
                     x + nx * (y + ny * ((z + 1) % nz)), x + nx * (y + ny * ((z - 1) % nz))]
            yield (f"rank {r}\n" + "".join(f"put {q} {size} tag=1 handle=h{i}\n" for i, q in enumerate(peers))
                   + "poll 1\n" * 6 + "".join(f"complete h{i}\n" for i in range(6)))
    write_lines(path, gen())


def goal_exchange(path: str, p: int, size: int) -> None:
    """LogGOPSim's case as GOAL (../shared/peers/others.md): for s = 1..p-1 each rank sends
    `size` bytes to and receives them from rank XOR s (tag s), and both operations of step
    s+1 require both of step s. `p` is a power of two."""
    def gen():
        yield f"num_ranks {p}\n"
        for r in range(p):
            lines = [f"rank {r} {{\n"]
            for s in range(1, p):
                lines.append(f"s{s}: send {size}b to {r ^ s} tag {s}\nr{s}: recv {size}b from {r ^ s} tag {s}\n")
                if s > 1:
                    lines.append(f"s{s} requires s{s - 1}\ns{s} requires r{s - 1}\nr{s} requires s{s - 1}\nr{s} requires r{s - 1}\n")
            lines.append("}\n")
            yield "".join(lines)
    write_lines(path, gen())


def particle_schedules(tmp: str, p: int, smoke: bool) -> dict[str, str]:
    """The particle study's matrix and C program, recorded once per barrier point."""
    sys.path.insert(0, os.path.join(STUDIES, "particle_exchange"))
    from gen_matrix import exchange_matrix, write_matrix  # noqa: E402

    n = 32 if smoke else 128
    matrix = os.path.join(tmp, "matrix.txt")
    write_matrix(exchange_matrix(n ** 3, p, "morton", 0.1, 1), matrix)
    out = {}
    for mode in ("before", "after"):
        sched = os.path.join(tmp, f"particle-{mode}.sched")
        subprocess.run([BIN, "record", os.path.join(STUDIES, "particle_exchange", "exchange.c"), "--ranks", str(p), "-o", sched,
                        "--", matrix, mode, "40", "all"], check=True, capture_output=True)
        out[mode] = sched
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="bench-results.json")
    ap.add_argument("--run-args", default="", help="extra arguments for every `acesim run`, e.g. --check")
    a = ap.parse_args()
    RUN_ARGS.extend(a.run_args.split())
    only = set(filter(None, a.only.split(",")))
    want = lambda name: not only or name in only  # noqa: E731
    smoke = a.smoke
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        # 16x16 torus, uniform random, 256 B packets, half the saturation load (measured by
        # the `saturation-16x16-torus` case), 1e6 packets (256 nodes x load x window / 64 ns).
        def uniform(load: float | None = None, injection: str = "bernoulli"):
            load = load if load is not None else (0.18 if smoke else half_saturation(tmp))
            window = 8 if smoke else round(1e6 * 64e-3 / (256 * load))
            r = run_traffic(TORUS16_256B, tmp, ["--pattern", "uniform", "--load", f"{load:g}", "--packet", "256B",
                            "--warmup", "20us", "--measure", f"{window}us", "--injection", injection])
            r["load"] = load
            return r
        # Issue 20: uniform traffic on a 64x64 torus on 2 threads against 1, timed in turn
        # (1, 2, 1, 2, 1, 2) in this run; the least of each counts. The same bytes either way.
        def threads_case():
            dims = "[8, 8]" if smoke else "[64, 64]"
            m = os.path.join(tmp, "t64.toml")
            open(m, "w").write(TORUS16_256B.replace("[16, 16]", dims))
            args = ["traffic", "-m", m, "--pattern", "uniform", "--load", "0.1", "--packet", "256B",
                    "--warmup", "2us" if smoke else "10us", "--measure", "2us" if smoke else "20us", "-q"]
            walls: dict[int, list[float]] = {1: [], 2: []}
            outputs: dict[int, str] = {}
            peaks: dict[int, float] = {}
            for _ in range(1 if smoke else 3):
                for n in (1, 2):
                    js = os.path.join(tmp, f"threads{n}.json")
                    wall, peak, _ = timed([BIN, *args, "--threads", str(n), "--json", js])
                    walls[n].append(wall)
                    peaks[n] = peak
                    outputs[n] = open(js).read()
            if outputs[1] != outputs[2]:
                raise RuntimeError("2 threads gave other results than 1")
            p = json.loads(outputs[1])[0]
            one, two = min(walls[1]), min(walls[2])
            return {"wall_seconds": two, "sim_seconds": two, "wall_seconds_1_thread": one, "speedup_2_threads": one / two,
                    "peak_mib": peaks[2], "peak_mib_1_thread": peaks[1], "events": p["events"],
                    "packet_hops": p["packet_hops"], "packets": p["packets_delivered"]}
        cases.append(("uniform-64x64-torus-threads", threads_case))
        cases.append(("saturation-16x16-torus", lambda: saturation_case(tmp, smoke)))
        cases.append(("uniform-16x16-torus", uniform))
        # The same at 0.3 (83 % of saturation): the load earlier rounds measured.
        cases.append(("uniform-16x16-torus-0.3", lambda: uniform(0.3)))
        # The uniform case with periodic injection (issue 15: it ran 1.5x slower per event).
        cases.append(("uniform-16x16-torus-periodic", lambda: uniform(injection="periodic")))
        # BookSim2's 16x16 run at load 0.2 with 1-flit packets (310,839 packets in 8.1 s).
        cases.append(("booksim-16x16-torus-r0.2", lambda: run_traffic(BOOKSIM_TORUS16, tmp, ["--pattern", "uniform", "--load", "0.2", "--packet", "16B",
                      "--flit", "16B", "--warmup", "3us", "--measure", "1us" if smoke else "3us"])))
        p512 = 16 if smoke else 512
        m256 = ["--machine", CLUSTER256]
        def ring():
            s = os.path.join(tmp, "ring.sched"); ring_schedule(s, p512, "2MB"); return run_program(s, m256)
        cases.append(("random-ring-512", ring))
        for algo, name in (("ring", "ring-barrier-512"), ("recursive_doubling", "rd-barrier-512")):
            def bar(algo=algo):
                s = os.path.join(tmp, f"{algo}.sched"); barrier_schedule(s, p512, algo); return run_program(s, m256 + ["--set", "node.overhead=0.6us"])
            cases.append((name, bar))
        def particle():
            scheds = particle_schedules(tmp, 16 if smoke else 128, smoke)
            machine = ["--machine", os.path.join(STUDIES, "machines", "cluster16.toml"), "--set", f"topology.leaves={2 if smoke else 16}"]
            runs = [run_program(s, machine) for s in scheds.values()]
            return {k: (sum(r[k] for r in runs) if k != "peak_mib" else max(r[k] for r in runs)) for k in runs[0] if k != "predicted_time_ps"}
        cases.append(("particle-128", particle))
        def a2a():
            p = 16 if smoke else 256
            s = os.path.join(tmp, "a2a.sched"); alltoall_schedule(s, p, "4KiB" if smoke else "64KiB")
            k = 4 if smoke else 16
            return run_program(s, ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{k},{k}]"])
        cases.append(("alltoall-256-torus", a2a))
        # The same programs at flow level (docs/flow.md), next to their packet-level cases.
        def a2a_flow():
            p = 16 if smoke else 256
            s = os.path.join(tmp, "a2a.sched"); alltoall_schedule(s, p, "4KiB" if smoke else "64KiB")
            k = 4 if smoke else 16
            return run_program(s, ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{k},{k}]", "--model", "flow"])
        cases.append(("alltoall-256-torus-flow", a2a_flow))
        def ring_flow():
            s = os.path.join(tmp, "ring.sched"); ring_schedule(s, p512, "2MB"); return run_program(s, m256 + ["--model", "flow"])
        cases.append(("random-ring-512-flow", ring_flow))
        def nn():
            dims = (8, 8, 4) if smoke else (128, 128, 64)
            s = os.path.join(tmp, "nn.sched")
            t0 = time.perf_counter(); nn_schedule(s, dims, "4KB"); gen = time.perf_counter() - t0
            r = run_program(s, ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{dims[0]},{dims[1]},{dims[2]}]"])
            r["generate_seconds"] = gen
            return r
        cases.append(("nn-1m", nn))
        # Issue 20: the same program on 2 threads (or 2 MPI processes of one thread each)
        # against `--threads 1`, timed in turn (1, 2, 1, 2, 1, 2) in this run; the least of
        # each counts, for the whole process and for the simulation (the summary's wall:
        # after the schedule is read). Beside it, the median of each turn's own ratio: a
        # slow stretch of this machine's hour that falls on one run of a pair moves the
        # ratio of the least times, where the two runs of a turn share most of it. Each turn times the run twice: as the summary alone (the
        # speed-up the case reports) and with its 2.5 GB `--json` written into a new file
        # (each run's file is removed first: replacing a file makes ext4 write the old one
        # out first, docs/performance.md), whose bytes must be the same for 1 and 2. Each
        # run starts once the system has written out what the runs before it wrote.
        def nn_split(by: str) -> dict:
            dims = (8, 8, 4) if smoke else (128, 128, 64)
            s = os.path.join(tmp, "nn.sched")
            if not os.path.exists(s):
                nn_schedule(s, dims, "4KB")
            machine = ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{dims[0]},{dims[1]},{dims[2]}]"]
            # By count, then by whether the JSON is written.
            walls: dict[tuple[int, bool], list[float]] = {}
            sims: dict[tuple[int, bool], list[float]] = {}
            outputs: dict[int, str] = {}
            peaks: dict[tuple[int, bool], float] = {}
            # The phases of each count's fastest run (`--timings`).
            phases: dict[tuple[int, bool], dict[str, float]] = {}
            for _ in range(1 if smoke else 3):
                for n in (1, 2):
                    for with_json in (False, True):
                        js = os.path.join(tmp, f"nn-{by}{n}.json")
                        if os.path.exists(js):
                            os.remove(js)
                        # The last run's gigabytes written out first: the system slows a
                        # writer while much is still to write (dirty pages), which would
                        # charge one run for another's output.
                        os.sync()
                        command = [BIN, "run", s, *machine, *RUN_ARGS, "--timings"]
                        if with_json:
                            command += ["--json", js]
                        if by == "threads":
                            command += ["--threads", str(n)]
                        else:
                            # As the issue measures it: one thread in each process, the one
                            # process included (without --threads a lone process would read
                            # and format on every core and map pages ahead on the other).
                            command += ["--threads", "1"]
                            if n > 1:
                                command = [*MPIRUN, "-np", str(n), *command]
                        wall, peak, out, err = timed_full(command)
                        key = (n, with_json)
                        if wall <= min(walls.get(key, []), default=wall):
                            phases[key] = phases_of(err)
                        walls.setdefault(key, []).append(wall)
                        sims.setdefault(key, []).append(summary_wall(out))
                        peaks[key] = peak
                        if with_json:
                            outputs[n] = hashlib.sha256(open(js, "rb").read()).hexdigest()
            if outputs[1] != outputs[2]:
                raise RuntimeError(f"2 {by} gave other results than 1")
            r = json.load(open(os.path.join(tmp, f"nn-{by}1.json")))
            best = {k: min(v) for k, v in walls.items()}
            sim = {k: min(v) for k, v in sims.items()}
            turns = {j: [a / b for a, b in zip(walls[(1, j)], walls[(2, j)])] for j in (False, True)}
            return {"wall_seconds": best[(2, False)], "sim_seconds": sim[(2, False)], "wall_seconds_1": best[(1, False)], "split_by": by,
                    "speedup_2": best[(1, False)] / best[(2, False)], "sim_speedup_2": sim[(1, False)] / sim[(2, False)],
                    "wall_seconds_json": best[(2, True)], "wall_seconds_1_json": best[(1, True)],
                    "speedup_2_json": best[(1, True)] / best[(2, True)],
                    "speedup_2_turns": turns[False], "speedup_2_turns_median": statistics.median(turns[False]),
                    "speedup_2_json_turns": turns[True], "walls": {f"{n}{' json' if j else ''}": w for (n, j), w in walls.items()},
                    "peak_mib": peaks[(2, True)], "peak_mib_1": peaks[(1, True)],
                    "phases_1": phases[(1, False)], "phases_2": phases[(2, False)],
                    "phases_1_json": phases[(1, True)], "phases_2_json": phases[(2, True)], "events": r["events"],
                    "packet_hops": r["packet_hops"], "predicted_time_ps": r["predicted_time_ps"]}
        def nn_threads() -> dict:
            return nn_split("threads")
        def nn_processes() -> dict:
            return nn_split("processes")
        cases.append(("nn-1m-threads", nn_threads))
        if shutil.which("mpirun") is not None:
            cases.append(("nn-1m-processes", nn_processes))
        def nn_flow():
            dims = (8, 8, 4) if smoke else (128, 128, 64)
            s = os.path.join(tmp, "nn.sched")
            # The packet case's file when it ran (the same text), else written now; either
            # way on disk before the clock starts, so the run does not share the machine
            # with the system writing out 326 MB.
            if not os.path.exists(s):
                nn_schedule(s, dims, "4KB")
            os.sync()
            return run_program(s, ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{dims[0]},{dims[1]},{dims[2]}]", "--model", "flow"])
        cases.append(("nn-1m-flow", nn_flow))
        # Issue 18's other speed cases at both levels: the MFS headline fat tree (2,704
        # ranks, 14-ary 3-tree, simple spread of 1 KiB; docs/flow.md) and LogGOPSim's GOAL
        # exchange (1,024 ranks on a 32x32 torus, 1 KiB; ../shared/peers/others.md).
        def fat_tree(model: str) -> dict:
            k, n, p = (4, 3, 64) if smoke else (14, 3, 2704)
            s = os.path.join(tmp, f"ft{p}.sched")
            if not os.path.exists(s):
                write_lines(s, [f"ranks {p}\n"] + [f"rank {r}\nalltoall 1KiB algo=simple_spread\n" for r in range(p)])
            return run_program(s, ["--machine", "table1", "--set", 'topology.kind="fat_tree"', "--set", f"topology.k={k}",
                                   "--set", f"topology.n={n}", "--model", model])
        cases.append(("fattree-2704-alltoall", lambda: fat_tree("packet")))
        cases.append(("fattree-2704-alltoall-flow", lambda: fat_tree("flow")))
        def goal(model: str) -> dict:
            p, k = (16, 4) if smoke else (1024, 32)
            g = os.path.join(tmp, f"x{p}.goal")
            if not os.path.exists(g):
                goal_exchange(g, p, 1024)
            return run_program(g, ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{k},{k}]",
                                   "--model", model])
        cases.append(("goal-exchange-1024", lambda: goal("packet")))
        cases.append(("goal-exchange-1024-flow", lambda: goal("flow")))
        def startup():
            # Parse the machine and build a million-node torus (topology and network), run a
            # one-put program on it and write its results: the fixed cost of a machine that size.
            dims = (8, 8, 4) if smoke else (128, 128, 64)
            s = os.path.join(tmp, "two.sched")
            open(s, "w").write("ranks 2\nrank 0\nput 1 4 tag=1\nrank 1\npoll 1\n")
            return run_program(s, ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{dims[0]},{dims[1]},{dims[2]}]"])
        cases.append(("startup-1m", startup))
        def report():
            # `acesim report` on the JSON of 8,192 puts on a 16x16 torus (3.9 MB): the time is
            # the report's, not the run's.
            p, k, dims = (16, 4, 4) if smoke else (256, 32, 16)
            sched, js = os.path.join(tmp, "puts.sched"), os.path.join(tmp, "puts.json")
            puts_schedule(sched, p, k, "4KB")
            torus = ["--machine", "table1", "--set", 'topology.kind="torus"', "--set", f"topology.dims=[{dims},{dims}]"]
            subprocess.run([BIN, "run", sched, *torus, "--json", js, "-q"], check=True)
            wall, peak, _ = timed([BIN, "report", js, "-o", os.path.join(tmp, "puts-report")])
            d = json.load(open(js))
            return {"wall_seconds": wall, "sim_seconds": wall, "peak_mib": peak, "events": d["events"],
                    "packet_hops": d["packet_hops"], "predicted_time_ps": d["predicted_time_ps"], "json_bytes": os.path.getsize(js)}
        cases.append(("report-3mb", report))
        for name, fn in cases:
            if not want(name):
                continue
            r = fn()
            r["case"] = name
            sim = max(r["sim_seconds"], 1e-3)  # the summary prints milliseconds
            r["events_per_second"] = r["events"] / sim
            r["packet_hops_per_second"] = r["packet_hops"] / sim
            if "packets" in r:
                r["packets_per_second"] = r["packets"] / sim
            results.append(r)
            extra = f"  packets/s {r['packets_per_second'] / 1e3:8.0f} k" if "packets" in r else ""
            if "load" in r:
                extra += f"  load {r['load']:g}"
            if "saturation_load" in r:
                extra += f"  saturation load {r['saturation_load']:g}"
            if "speedup_2_threads" in r:
                extra += f"  1 thread {r['wall_seconds_1_thread']:.2f} s: 2 threads {r['speedup_2_threads']:.2f}x"
            if "speedup_2" in r:
                by = r["split_by"]
                one = {"threads": "thread", "processes": "process"}[by]
                extra += f"  1 {one} {r['wall_seconds_1']:.2f} s: 2 {by} {r['speedup_2']:.2f}x (simulation {r['sim_speedup_2']:.2f}x)"
                extra += f"; with --json 1 {one} {r['wall_seconds_1_json']:.2f} s, 2 {by} {r['wall_seconds_json']:.2f} s: {r['speedup_2_json']:.2f}x"
                turns = ", ".join(f"{t:.2f}x" for t in r["speedup_2_turns"])
                extra += f"\n    each turn's own ratio: {turns} (median {r['speedup_2_turns_median']:.2f}x)"
                for suffix, what in (("", ""), ("_json", " with --json")):
                    for n in (1, 2):
                        laps = ", ".join(f"{k} {v:.2f}" for k, v in r[f"phases_{n}{suffix}"].items() if k != "total")
                        extra += f"\n    {n} {one if n == 1 else by}{what}, seconds: {laps}"
            if r.get("estimate_mib") is not None:
                extra += f"  estimate {r['estimate_mib']:8.1f} MiB"
            print(f"{name:26s} wall {r['wall_seconds']:7.2f} s (simulation {r['sim_seconds']:6.2f} s)  peak {r['peak_mib']:8.1f} MiB  "
                  f"events/s {r['events_per_second'] / 1e6:6.2f} M  packet-hops/s {r['packet_hops_per_second'] / 1e6:6.2f} M{extra}", flush=True)
    if not smoke:
        with open(a.out, "w") as f:
            json.dump({"cpus": os.cpu_count(), "cases": results}, f, indent=2)
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
