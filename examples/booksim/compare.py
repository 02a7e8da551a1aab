#!/usr/bin/env python3
"""acesim next to BookSim2 on the same networks and uniform random traffic.

BookSim2's figures are its reference runs on this kind of machine (zero-load latency at
offered load 0.05, last stable load, accepted throughput at offered load 1.0, wall time of
that run); acesim runs the same configurations here. Units: BookSim counts in cycles of one
flit per link; acesim's machines use 16-byte flits on 16 GB/s links, so one cycle = 1 ns.

    examples/booksim/compare.py [--out docs/booksim.md]
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "target", "release", "acesim")

# BookSim2's router: routing 0, VC allocation 1, switch allocation 1, switch traversal 1
# cycle; 1-cycle channels; input-queued, separable allocators (round-robin); 4 VCs x 8 flits.
ROUTER = """[router]
routing_delay = "0 ns"
vc_allocation_delay = "1 ns"
switch_allocation_delay = "1 ns"
switch_latency = "1 ns"
switch_throughput = "16 GB/s"
vcs = {vcs}
buffer_per_vc = "{buffer}"
routing = "{routing}"
[link]
bandwidth = "16 GB/s"
latency = "1 ns"
[nic]
mtu = "{mtu} B"
header = "4 B"
control_packet = "4 B"
injection_queue = 4
"""

# (name, topology TOML, routing, vcs, buffer flits, packet flits, global-link TOML,
#  BookSim: zero-load latency, last stable load, accepted at 1.0, wall s at 1.0, packets at 1.0)
CONFIGS = [
    ("torus88_dor_ps1", 'kind = "torus"\ndims = [8, 8]', "auto", 4, 8, 1, "", 22.20, 0.66, 0.529, 2.95, 206756),
    ("torus88_dor_ps4", 'kind = "torus"\ndims = [8, 8]', "auto", 4, 8, 4, "", 25.58, 0.60, 0.526, 2.35, 51490),
    ("mesh88_dor_ps1", 'kind = "mesh"\ndims = [8, 8]', "auto", 4, 8, 1, "", 27.03, 0.44, 0.398, 2.97, 157150),
    ("mesh88_dor_ps4", 'kind = "mesh"\ndims = [8, 8]', "auto", 4, 8, 4, "", 30.34, 0.43, 0.405, 2.08, 39934),
    ("fattree_k4n3_ps1", 'kind = "fat_tree"\nk = 4\nn = 3', "auto", 4, 8, 1, "", 19.54, 0.76, 0.715, 5.21, 278382),
    ("dfly_k2_min_ps1", 'kind = "dragonfly"\np = 2\na = 4\nh = 2', "minimal", 3, 256, 1, GL := '[global_link]\nbandwidth = "16 GB/s"\nlatency = "100 ns"\n', 116.02, 0.48, 0.425, 4.94, 270715),
    ("dfly_k2_ugal_ps1", 'kind = "dragonfly"\np = 2\na = 4\nh = 2', "ugal", 3, 256, 1, GL, 116.66, 0.44, 0.401, 3.37, 263620),
    ("dfly_k2_valiant_ps1", 'kind = "dragonfly"\np = 2\na = 4\nh = 2', "valiant", 3, 256, 1, GL, 202.53, 0.38, 0.345, 4.12, 247279),
]
FLIT = 16


def traffic(machine: str, loads: str, all_loads: bool, packet: int) -> list[dict]:
    args = [BIN, "traffic", "-m", machine, "--load", loads, "--packet", f"{packet}B", "--flit", f"{FLIT}B",
            "--warmup", "3us", "--measure", "5us", "--drain", "50us", "--csv", "/dev/stdout", "-q"]
    if all_loads:
        args.append("--all-loads")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    if not os.path.exists(BIN):
        subprocess.run([os.path.join(ROOT, "scripts", "setup")], check=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, topo, routing, vcs, buf, pflits, extra, b_zero, b_stable, b_acc, b_wall, b_packets in CONFIGS:
            packet = pflits * FLIT
            machine = os.path.join(tmp, f"{name}.toml")
            with open(machine, "w") as f:
                f.write(f"[topology]\n{topo}\n" + ROUTER.format(vcs=vcs, buffer=f"{buf * FLIT} B", routing=routing, mtu=packet) + extra)
            zero = traffic(machine, "0.05", True, packet)[0]
            sweep = traffic(machine, "0.05:1.0:0.05", False, packet)
            stable = max((float(r["load"]) for r in sweep if r["saturated"] == "false"), default=0.0)
            t0 = time.time()
            full = traffic(machine, "1.0", True, packet)[0]
            wall = time.time() - t0
            pkts = int(full["packets_measured"])
            rows.append((name, b_zero, float(zero["latency_mean_ns"]), b_stable, stable, b_acc, float(full["accepted"]),
                         b_wall, wall, b_packets / b_wall, pkts / wall))
            print(f"{name}: done", file=sys.stderr)
    lines = [
        "| config | zero-load latency, cycles (BookSim2 / acesim) | last stable load | accepted at offered 1.0 | wall s of the 1.0 run | packets/s (BookSim2 / acesim, measured packets) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r[0]} | {r[1]:.1f} / {r[2]:.1f} | {r[3]:.2f} / {r[4]:.2f} | {r[5]:.3f} / {r[6]:.3f} | {r[7]:.2f} / {r[8]:.2f} | {r[9] / 1e3:.0f} k / {r[10] / 1e3:.0f} k |")
    table = "\n".join(lines) + "\n"
    print(table, end="")
    if args.out:
        with open(args.out) as f:
            doc = f.read()
        start, end = "<!-- booksim-table -->", "<!-- /booksim-table -->"
        i, j = doc.index(start) + len(start), doc.index(end)
        with open(args.out, "w") as f:
            f.write(doc[:i] + "\n" + table + doc[j:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
