#!/usr/bin/env python3
"""acesim next to LogGOPSim on LogGOPSim's own input: a GOAL file, timed side by side.

    examples/loggopsim/compare.py --loggopsim DIR [--ranks 1024] [--size 1024] [--reps 5] [--crossbar]

The case is the pairwise exchange of ../shared/peers/others.md (`benches/suite.py`,
`goal_exchange`): for s = 1..p-1 every rank sends `size` bytes to rank XOR s and receives
as many from it, both operations of step s+1 requiring both of step s (1,024 ranks: a
million messages, 148 MB of text). acesim reads the text and simulates it at flow and
packet level on the table1 machine as a 32x32 torus (`scripts/bench`'s `goal-exchange-1024`)
or, with `--crossbar`, on table1's own crossbar (one hop a message, the closest acesim
machine to LogGP's network-less model). LogGOPSim (built outside this repository,
README.md here) first converts the text to its binary schedule with its `txt2bin`, then
simulates the binary with the LogGP model, which has no network and so no congestion.

The commands run interleaved (each in turn, `--reps` times) and the least wall and CPU
time (user + system of the child) of each counts. Two LogGOPSim figures are given: the
simulation of a binary converted beforehand, and the whole way from the same text
(`txt2bin`, then the simulation), which is what acesim's figures include.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "target", "release", "acesim")
sys.path.insert(0, os.path.join(ROOT, "benches"))
from suite import goal_exchange  # noqa: E402


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child) of one run of `cmd`."""
    before, start = os.times(), time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall, after = time.perf_counter() - start, os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loggopsim", required=True, help="directory holding LogGOPSim and txt2bin")
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--size", type=int, default=1024, help="bytes a message")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-packet", action="store_true", help="leave out acesim's packet level")
    ap.add_argument("--crossbar", action="store_true", help="table1's crossbar instead of a torus")
    a = ap.parse_args()
    lgs, txt2bin = (os.path.join(a.loggopsim, n) for n in ("LogGOPSim", "txt2bin"))
    for path in (BIN, lgs, txt2bin):
        if not os.access(path, os.X_OK):
            sys.exit(f"compare.py: {path} is not an executable (build acesim with scripts/setup, LogGOPSim as README.md says)")
    if a.ranks < 2 or a.ranks & (a.ranks - 1):
        sys.exit(f"compare.py: --ranks {a.ranks}: the exchange needs a power of two, at least 2")
    side = int(round(a.ranks ** 0.5))
    dims = f"[{side},{a.ranks // side}]"
    with tempfile.TemporaryDirectory() as tmp:
        goal, binary, binary2 = (os.path.join(tmp, n) for n in ("x.goal", "x.bin", "y.bin"))
        goal_exchange(goal, a.ranks, a.size)
        subprocess.run([txt2bin, "-i", goal, "-o", binary], check=True, stdout=subprocess.DEVNULL)
        topology = [] if a.crossbar else ["--set", 'topology.kind="torus"', "--set", f"topology.dims={dims}"]
        acesim = [BIN, "run", goal, "--machine", "table1", *topology, "-q"]
        loggp = ["-L", "2000", "-o", "1000", "-g", "0", "-G", "0", "-b"]
        cases = [
            ("acesim, flow level (from the text)", acesim + ["--model", "flow"]),
            ("LogGOPSim, simulation of the binary", [lgs, "-f", binary, *loggp]),
            ("LogGOPSim, txt2bin + simulation (from the text)",
             ["bash", "-c", f'"$0" -i "$1" -o "$2" >/dev/null && "$3" -f "$2" {" ".join(loggp)}', txt2bin, goal, binary2, lgs]),
        ]
        if not a.no_packet:
            cases.insert(1, ("acesim, packet level (from the text)", acesim))
        best = {name: (float("inf"), float("inf")) for name, _ in cases}
        for _ in range(a.reps):
            for name, cmd in cases:
                wall, cpu = timed(cmd)
                best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    machine = "table1's crossbar" if a.crossbar else f"table1 as a {dims} torus"
    print(f"GOAL pairwise exchange, {a.ranks} ranks, {a.size} B a message, acesim on {machine}; least of {a.reps} interleaved runs\n")
    print("| command | wall s | CPU s |\n|---|---:|---:|")
    for name, _ in cases:
        print(f"| {name} | {best[name][0]:.2f} | {best[name][1]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
