#!/usr/bin/env python3
"""acesim next to BookSim2 on BookSim2's own networks: fidelity and speed.

    examples/booksim/compare.py [--booksim PATH] [--reps N] [--only PARTS] [--out docs/traffic.md]

Fidelity: acesim runs BookSim2's reference configurations (../shared/peers/booksim2.md:
input-queued routers, 0/1/1/1-cycle routing, VC allocation, switch allocation and
traversal, 1-cycle channels, 4 VCs of 8 flits; dragonflies 3 VCs of 256 flits with 10-cycle
local and 100-cycle global links). acesim's machines use 16-byte flits on 16 GB/s links, so
one BookSim cycle is 1 ns. Tori use `router.dateline = "route"` and the fat tree
`router.routing = "random"`, BookSim2's choices; past saturation both datelines are shown.
BookSim2's zero-load latency, last stable load and accepted throughput at offered load 1.0
are the reference figures of booksim2.md (this script does not sweep BookSim2). Its
past-saturation points are run here with the BookSim2 binary when one is given (`sim_type =
throughput`, as the reference's offered-1.0 runs), else taken from the reference figures
below (measured the same way on the same kind of machine, 2026-11-26).

Speed: with a BookSim2 binary built outside this repository (`--booksim PATH` or
$BOOKSIM), both simulators run the same cases here, interleaved (BookSim2, acesim,
BookSim2, acesim, ...), N times each; the least CPU time (user + system of the child
process) of each counts. Packets per CPU second: acesim's packets delivered over its whole
run; BookSim2's injected packet rate times nodes times the cycles it ran. Without a binary
the speed columns are left out (they need one: a ratio of times taken on different
occasions means little).

`--only speed` (or `fidelity`, `saturation`, comma-separated) runs those parts alone and,
with `--out`, replaces only their tables: the speed part takes a few minutes, the whole
script about ten.
"""
import argparse
import csv
import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "target", "release", "acesim")
FLIT = 16

# BookSim2's router: routing 0, VC allocation 1, switch allocation 1, switch traversal 1
# cycle; 1-cycle channels; input-queued, separable allocators (round-robin).
ROUTER = """[router]
routing_delay = "0 ns"
vc_allocation_delay = "1 ns"
switch_allocation_delay = "1 ns"
switch_latency = "1 ns"
switch_throughput = "16 GB/s"
vcs = {vcs}
buffer_per_vc = "{buffer}"
routing = "{routing}"
{extra_router}
[link]
bandwidth = "16 GB/s"
latency = "{local} ns"
[nic_link]
bandwidth = "16 GB/s"
latency = "1 ns"
[nic]
mtu = "{mtu} B"
header = "4 B"
control_packet = "4 B"
injection_queue = 4
"""
GLOBAL = '[global_link]\nbandwidth = "16 GB/s"\nlatency = "100 ns"\n'

# BookSim2's common settings (booksim2.md).
BOOKSIM_COMMON = """router = iq; vc_allocator = separable_input_first; sw_allocator = separable_input_first;
alloc_iters = 1; routing_delay = 0; vc_alloc_delay = 1; sw_alloc_delay = 1; st_final_delay = 1;
credit_delay = 2; input_speedup = 1; output_speedup = 1; internal_speedup = 1.0;
use_noc_latency = 0; priority = none; injection_process = bernoulli; warmup_periods = 3;
sample_period = 1000; max_samples = 10; seed = 0;
"""

# Networks: acesim topology TOML, routing, extra [router] lines, VCs, buffer flits, local
# link latency (cycles), global-link TOML, nodes, BookSim2 topology settings.
NETS = {
    "torus88": ('kind = "torus"\ndims = [8, 8]', "auto", 'dateline = "route"', 4, 8, 1, "", 64,
                "topology = torus; k = 8; n = 2; routing_function = dim_order; num_vcs = 4; vc_buf_size = 8;"),
    "mesh88": ('kind = "mesh"\ndims = [8, 8]', "auto", "", 4, 8, 1, "", 64,
               "topology = mesh; k = 8; n = 2; routing_function = dim_order; num_vcs = 4; vc_buf_size = 8;"),
    "torus1616": ('kind = "torus"\ndims = [16, 16]', "auto", 'dateline = "route"', 4, 8, 1, "", 256,
                  "topology = torus; k = 16; n = 2; routing_function = dim_order; num_vcs = 4; vc_buf_size = 8;"),
    # BookSim2's fattree k=4, n=3 is acesim's k=4, n=3: 3 levels of 16 4x4 switches, 64 nodes.
    "fattree_k4n3": ('kind = "fat_tree"\nk = 4\nn = 3', "random", "", 4, 8, 1, "", 64,
                     "topology = fattree; k = 4; n = 3; routing_function = nca; num_vcs = 4; vc_buf_size = 8;"),
    # dragonflynew: DRAGON_LATENCY makes local links 10 cycles and global links 100.
    "dfly_k2": ('kind = "dragonfly"\np = 2\na = 4\nh = 2', "minimal", "", 3, 256, 10, GLOBAL, 72,
                "topology = dragonflynew; k = 2; n = 1; routing_function = min; num_vcs = 3; vc_buf_size = 256;"),
    "dfly_k4": ('kind = "dragonfly"\np = 4\na = 8\nh = 4', "minimal", "", 3, 256, 10, GLOBAL, 1056,
                "topology = dragonflynew; k = 4; n = 1; routing_function = min; num_vcs = 3; vc_buf_size = 256;"),
}

# Fidelity rows: (name, network, acesim routing override, packet flits, BookSim2's zero-load
# latency, last stable load and accepted at offered 1.0 from booksim2.md).
FIDELITY = [
    ("torus88_dor_ps1", "torus88", None, 1, 22.20, 0.66, 0.529),
    ("torus88_dor_ps4", "torus88", None, 4, 25.58, 0.60, 0.526),
    ("mesh88_dor_ps1", "mesh88", None, 1, 27.03, 0.44, 0.398),
    ("mesh88_dor_ps4", "mesh88", None, 4, 30.34, 0.43, 0.405),
    ("fattree_k4n3_ps1", "fattree_k4n3", None, 1, 19.54, 0.76, 0.715),
    ("dfly_k2_min_ps1", "dfly_k2", None, 1, 116.02, 0.48, 0.425),
    ("dfly_k2_ugal_ps1", "dfly_k2", "ugal", 1, 116.66, 0.44, 0.401),
    ("dfly_k2_valiant_ps1", "dfly_k2", "valiant", 1, 202.53, 0.38, 0.345),
]

# Past saturation, 1-flit packets: (case, network, pattern, offered load or None for the best
# accepted of loads LOADS_BEST, BookSim2's accepted throughput measured with sim_type =
# throughput on this machine's kind).
LOADS_BEST = [0.55, 0.6, 0.62, 0.64, 0.66, 0.7]
PAST = [
    ("8x8 torus, uniform, best accepted", "torus88", "uniform", None, 0.630),
    ("16x16 torus, uniform, 0.4", "torus1616", "uniform", 0.4, 0.214),
    ("16x16 torus, uniform, 0.6", "torus1616", "uniform", 0.6, 0.174),
    ("8x8 torus, tornado, 0.25", "torus88", "tornado", 0.25, 0.193),
    ("8x8 torus, tornado, 0.35", "torus88", "tornado", 0.35, 0.100),
    ("8x8 torus, tornado, 0.6", "torus88", "tornado", 0.6, 0.084),
    ("4-ary 3-tree, uniform, 0.7", "fattree_k4n3", "uniform", 0.7, 0.700),
    ("4-ary 3-tree, uniform, 0.9", "fattree_k4n3", "uniform", 0.9, 0.708),
]

# Speed cases: (case, network, load), 1-flit packets, uniform random traffic.
SPEED = [
    ("16x16 torus, load 0.2", "torus1616", 0.2),
    ("16x16 torus, load 0.3", "torus1616", 0.3),
    ("4-ary 3-tree, load 0.5", "fattree_k4n3", 0.5),
    ("1,056-node dragonfly, minimal, load 0.3", "dfly_k4", 0.3),
]


def machine_file(tmp: str, net: str, packet_flits: int, routing: str | None = None, router_extra: str | None = None) -> str:
    topo, r, extra, vcs, buf, local, glob, _, _ = NETS[net]
    text = f"[topology]\n{topo}\n" + ROUTER.format(
        vcs=vcs, buffer=f"{buf * FLIT} B", routing=routing or r,
        extra_router=extra if router_extra is None else router_extra,
        local=local, mtu=packet_flits * FLIT) + glob
    path = os.path.join(tmp, f"{net}_{packet_flits}_{routing}_{router_extra}.toml".replace(" ", "").replace('"', ""))
    with open(path, "w") as f:
        f.write(text)
    return path


def cpu_of(args: list[str], **kw) -> tuple[float, str]:
    """Runs a child; returns its CPU seconds (user + system) and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # BookSim2 exits with status 255 after a finished run too: the caller checks the output.
    out = subprocess.run(args, check=kw.pop("check", True), capture_output=True, text=True, **kw).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def traffic_args(machine: str, loads: str, packet_flits: int, pattern: str = "uniform", all_loads: bool = True) -> list[str]:
    """acesim's command for BookSim2's measurement: 3 µs warm-up, 5 µs window, drain; JSON on stdout."""
    args = [BIN, "traffic", "-m", machine, "--pattern", pattern, "--load", loads, "--packet", f"{packet_flits * FLIT}B",
            "--flit", f"{FLIT}B", "--warmup", "3us", "--measure", "5us", "--drain", "50us", "--json", "/dev/stdout", "-q"]
    if all_loads:
        args.append("--all-loads")
    return args


def traffic(machine: str, loads: str, packet_flits: int, pattern: str = "uniform", all_loads: bool = True) -> list[dict]:
    args = traffic_args(machine, loads, packet_flits, pattern, all_loads)
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def booksim_run(booksim: str, tmp: str, net: str, settings: str) -> tuple[float, dict]:
    cfg = os.path.join(tmp, "booksim.cfg")
    with open(cfg, "w") as f:
        f.write(BOOKSIM_COMMON + NETS[net][8] + "\npacket_size = 1;\n" + settings + "\n")
    cpu, out = cpu_of([booksim, cfg], cwd=tmp, check=False)
    if "Overall Traffic Statistics" not in out:
        raise SystemExit(f"BookSim2 gave no statistics for {net} ({settings}):\n{out[-2000:]}")
    overall = out[out.find("Overall Traffic Statistics"):]
    num = lambda key: float(re.search(re.escape(key) + r"\s*=\s*([0-9.eE+-]+)", overall).group(1))
    cycles = int(re.search(r"Time taken is (\d+) cycles", out).group(1))
    return cpu, {"accepted": num("Accepted flit rate average"), "latency": num("Packet latency average"),
                 "packet_rate": num("Injected packet rate average"), "cycles": cycles}


def missing_markers(path: str, markers: list[str]) -> str | None:
    """Why `path` cannot take the tables of `markers`, or None if it can."""
    try:
        with open(path) as f:
            doc = f.read()
    except OSError as e:
        return f"--out {path}: {e.strerror}"
    for marker in markers:
        start, end = f"<!-- {marker} -->", f"<!-- /{marker} -->"
        if start not in doc or end not in doc or doc.index(start) > doc.index(end):
            return f"--out {path}: no '{start}' ... '{end}' block to replace"
    return None


def replace_block(path: str, marker: str, table: str) -> None:
    with open(path) as f:
        doc = f.read()
    start, end = f"<!-- {marker} -->", f"<!-- /{marker} -->"
    i, j = doc.index(start) + len(start), doc.index(end)
    with open(path, "w") as f:
        f.write(doc[:i] + "\n" + table + doc[j:])


PARTS = ("fidelity", "saturation", "speed")
# Each part's table in docs/traffic.md, between `<!-- name -->` and `<!-- /name -->`.
MARKERS = {"fidelity": "booksim-table", "saturation": "booksim-past-saturation", "speed": "booksim-speed"}


def parts(text: str) -> tuple[str, ...]:
    """The parts named in `--only` (comma-separated), checked."""
    named = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in named if p not in PARTS]
    if unknown or not named:
        raise argparse.ArgumentTypeError(f"unknown part {', '.join(map(repr, unknown)) or repr(text)}: choose from {', '.join(PARTS)}")
    return named


def positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--booksim", default=os.environ.get("BOOKSIM"), help="BookSim2 binary built outside the repository")
    ap.add_argument("--reps", type=positive, default=3, help="timed repetitions of each speed case (least CPU counts)")
    ap.add_argument("--only", type=parts, help=f"run only these parts, comma-separated: {', '.join(PARTS)} (default: all)")
    ap.add_argument("--out", help="replace the tables of this Markdown file (docs/traffic.md)")
    args = ap.parse_args()
    run = set(args.only or PARTS)
    if not os.path.exists(BIN):
        subprocess.run([os.path.join(ROOT, "scripts", "setup")], check=True)
    booksim = args.booksim
    if booksim and not (os.path.isfile(booksim) and os.access(booksim, os.X_OK)):
        print(f"--booksim {booksim}: not an executable file", file=sys.stderr)
        return 2
    if not booksim and args.only and "speed" in run:
        print("--only speed: the speed part needs a BookSim2 binary (--booksim PATH or $BOOKSIM)", file=sys.stderr)
        return 2
    if args.out:
        # Checked before minutes of runs, not after.
        wanted = [MARKERS[p] for p in PARTS if p in run and (p != "speed" or booksim)]
        problem = missing_markers(args.out, wanted)
        if problem:
            print(problem, file=sys.stderr)
            return 2
    if not booksim:
        print("no BookSim2 binary (--booksim PATH or $BOOKSIM): the speed columns need one; BookSim2's "
              "past-saturation figures are its reference ones", file=sys.stderr)
    tables = {}
    with tempfile.TemporaryDirectory() as tmp:
        # Fidelity.
        if "fidelity" in run:
            lines = ["| config | zero-load latency, cycles (BookSim2 / acesim) | last stable load | accepted at offered 1.0 |",
                     "|---|---|---|---|"]
            for name, net, routing, pflits, b_zero, b_stable, b_acc in FIDELITY:
                m = machine_file(tmp, net, pflits, routing)
                zero = traffic(m, "0.05", pflits)[0]
                sweep = traffic(m, "0.05:1.0:0.05", pflits, all_loads=False)
                stable = max((p["load"] for p in sweep if not p["saturated"]), default=0.0)
                full = traffic(m, "1.0", pflits)[0]
                lines.append(f"| {name} | {b_zero:.1f} / {zero['latency_mean_ns']:.1f} | {b_stable:.2f} / {stable:.2f} | "
                             f"{b_acc:.3f} / {full['accepted']:.3f} |")
                print(f"{name}: done", file=sys.stderr)
            tables[MARKERS["fidelity"]] = "\n".join(lines) + "\n"

        # Past saturation.
        if "saturation" in run:
            src = "run here" if booksim else "reference"
            lines = [f"| case, offered load | BookSim2 ({src}) | acesim, dateline `route` | acesim, dateline `crossing` (default) |",
                     "|---|---:|---:|---:|"]
            for case, net, pattern, load, b_ref in PAST:
                loads = LOADS_BEST if load is None else [load]
                if booksim:
                    b = max(booksim_run(booksim, tmp, net, f"traffic = {pattern}; injection_rate = {x}; sim_type = throughput;")[1]["accepted"]
                            for x in loads)
                else:
                    b = b_ref
                cells = []
                variants = [None, 'dateline = "crossing"'] if net.startswith("torus") else [None]
                for extra in variants:
                    m = machine_file(tmp, net, 1, router_extra=extra)
                    pts = traffic(m, ",".join(str(x) for x in loads), 1, pattern)
                    best = max(pts, key=lambda p: p["accepted"])
                    state = "saturated" if best["saturated"] else "stable"
                    cells.append(f"{best['accepted']:.3f} ({best['accepted'] / b:.2f}x, {state})")
                if len(cells) == 1:
                    cells.append("—")
                lines.append(f"| {case} | {b:.3f} | {cells[0]} | {cells[1]} |")
                print(f"{case}: done", file=sys.stderr)
            tables[MARKERS["saturation"]] = "\n".join(lines) + "\n"

        # Speed, interleaved, least CPU of N.
        if booksim and "speed" in run:
            lines = ["| case | BookSim2 CPU s | BookSim2 packets/s | acesim CPU s | acesim packets/s | ratio |",
                     "|---|---:|---:|---:|---:|---:|"]
            for case, net, load in SPEED:
                m = machine_file(tmp, net, 1)
                best_b = best_a = None
                for _ in range(args.reps):
                    cpu_b, b = booksim_run(booksim, tmp, net, f"traffic = uniform; injection_rate = {load}; sim_type = latency;")
                    packets_b = b["packet_rate"] * NETS[net][7] * b["cycles"]
                    best_b = min(best_b or (cpu_b, packets_b), (cpu_b, packets_b))
                    cpu_a, out = cpu_of(traffic_args(m, str(load), 1))
                    packets_a = json.loads(out)[0]["packets_delivered"]
                    best_a = min(best_a or (cpu_a, packets_a), (cpu_a, packets_a))
                # A CPU time below the clock's tick reads 0: counted as one tick.
                rate_b, rate_a = best_b[1] / max(best_b[0], 1e-3), best_a[1] / max(best_a[0], 1e-3)
                lines.append(f"| {case} | {best_b[0]:.2f} | {rate_b / 1e3:.0f} k | {best_a[0]:.2f} | {rate_a / 1e3:.0f} k | "
                             f"{rate_a / rate_b:.1f}x |")
                print(f"{case}: timed", file=sys.stderr)
            tables[MARKERS["speed"]] = "\n".join(lines) + "\n"
    for marker, table in tables.items():
        print(table)
        if args.out:
            replace_block(args.out, marker, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
