#!/usr/bin/env python3
"""Writes docs/errors.md: runs every example (input files, acesim command) and records what
acesim prints and its exit status, so that every example is a real run.

Usage: scripts/errors_doc.py [ACESIM]   (default: target/debug/acesim; build it first)

crates/acesim-cli/tests/errors_doc.rs runs the examples of docs/errors.md again and checks
them, so edit this script (not the Markdown) and rerun it when a message changes.
"""
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACESIM = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/debug/acesim"))
BIN = tempfile.mkdtemp(prefix="acesim-errors-doc-bin")
os.symlink(ACESIM, os.path.join(BIN, "acesim"))  # so that commands read `acesim ...`
W = os.path.join(tempfile.mkdtemp(prefix="acesim-errors-doc"), "w")


RING = "ranks 2\nrank 0\nput 1 4 tag=0\nrank 1\npoll 0\n"
XBAR = '[topology]\nkind = "crossbar"\n'

def run(files, cmd, env=None, show_files=True, show_stdout=False):
    shutil.rmtree(W, ignore_errors=True)
    os.makedirs(W)
    for n, t in files.items():
        p = os.path.join(W, n)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "wb" if isinstance(t, bytes) else "w").write(t)
    e = dict(os.environ)
    e["PATH"] = BIN + ":" + e["PATH"]
    e["PYTHONPATH"] = REPO + "/python"
    if env:
        e.update(env)
    o = subprocess.run(cmd, shell=True, cwd=W, env=e, capture_output=True, text=True)
    left = set(os.listdir(W)) - {n.split("/")[0] for n in files}
    if left:
        print(f"LEFT BEHIND by {cmd}: {left}", file=sys.stderr)
    out = []
    for n, t in files.items():
        if not show_files or n in ("r.sched",) and t == RING:
            continue
        out.append(f"$ cat {n}\n{t.rstrip()}")
    out.append(f"$ {cmd}")
    text = (o.stdout if show_stdout else "") + o.stderr
    out.append(text.rstrip())
    out.append(f"[exit {o.returncode}]")
    return "```text\n" + "\n".join(x for x in out if x) + "\n```\n"


P = []
def t(s): P.append(s.rstrip("\n") + "\n")
def ex(files, cmd, **kw): P.append(run(files, cmd, **kw))
def m(toml, extra=""):
    """A machine-file example with the two-rank ring schedule."""
    ex({"m.toml": toml, "r.sched": RING}, "acesim run r.sched -m m.toml" + extra)

t("""# Errors and exit codes

Every error acesim reports, what it means and an example. Each example is a real run of the
`acesim` binary (input files, command, standard error and the exit status as `[exit N]`);
`r.sched` in the machine examples is the two-rank ring
`ranks 2 / rank 0 / put 1 4 tag=0 / rank 1 / poll 0`. This page is written by
`scripts/errors_doc.py`, which runs the examples, and `crates/acesim-cli/tests/errors_doc.rs`
runs them again and checks the exit code and every line shown.

A message starts with `error[KIND]:` (`input`, `program`, `deadlock`, `io`, `memory`,
`internal`) and then **where**: `FILE:LINE:COLUMN` (or `FILE:LINE` when the column is not
known, or just `FILE`), then `` field `NAME` `` when one field is at fault, then what is
wrong and what was expected. A misspelt key or value gets the closest valid name (`did you
mean`). When the error points into a file, the offending line follows, with the part at
fault marked `^^^`. Values given on the command line are located at
`command line`. Errors about an operation recorded from a C or Python program point at the
program's source line and add the schedule line in parentheses.

When acesim exits with code 2, 3, 5 or 70, no output file is written (`--json`,
`--links-csv`, `--timeline`, `--schedule-out`, `traffic --csv/--json`, `record -o`):
outputs are written only after a successful run, each to a temporary file first and all
renamed into place only when every one is complete (an output that fails, such as on a full
disk, leaves the other files as they were), and every output path is checked before any
work starts. The exceptions are outputs written in place (devices, pipes, paths under
`/dev` and `/proc`, README "Outputs"): those written before the failing one keep what they
were sent.

## Exit codes

| code | meaning | section |
|---|---|---|
| 0 | the run finished (warnings, such as messages never received, do not change this) | [run time](#run-time) |
| 2 | bad input: machine file or preset, `--set`, placement file, schedule or GOAL text, a C program that does not compile or whose rank crashes, exits or stalls while being recorded, a Python program that fails or stalls, command-line values, unreadable input files, unwritable output paths; command-line usage errors | [machines](#machines), [program text](#program-text-schedules-and-goal-files), [C and Python](#c-and-python-programs), [command line](#command-line) |
| 3 | the program can never finish (deadlock): the report names every blocked rank, its operation and its source line (`compare-models`: and the level) | [run time](#run-time) |
| 4 | stopped by `--max-events` or `--max-sim-time`: partial results written, marked partial | [limits](#limits-exit-codes-4-5-and-130) |
| 5 | refused: the run's estimated memory, or a C or Python program's recorded schedule, exceeds what is available (`--ignore-memory-limit` runs anyway) | [limits](#limits-exit-codes-4-5-and-130) |
| 70 | internal error: a broken model invariant, a bug in acesim | [internal](#internal-errors) |
| 130 | interrupted with Ctrl-C (SIGINT): partial results written, marked partial, when the run had started; a recording's processes are stopped | [limits](#limits-exit-codes-4-5-and-130) |
| 143 | stopped by SIGTERM: as for 130 | [limits](#limits-exit-codes-4-5-and-130) |

## Machines

Exit code 2. Machine files are TOML ([docs/machine.md](machine.md)); the location is the file,
line and column of the offending value (the key, for an unknown key), and the field.

**TOML syntax.** The TOML parser's message.
""")
ex({"m.toml": '[topology\nkind = "crossbar"\n', "r.sched": RING}, "acesim run r.sched -m m.toml")
t("""**Unknown keys and tables.** Every table accepts only its documented fields; the message
lists them and, when one is close, names it first.""")
m(XBAR + "colour = 3\n")
m(XBAR + "[routr]\nvcs = 2\n")
m(XBAR + "[router]\nvc = 2\n")
t("""The same holds for values chosen from a list (topology kind, routing, placement, ...):""")
m('[topology]\nkind = "tourus"\ndims = [4, 4]\n')
t("""**Wrong types and bad quantities.** Counts are non-negative integers; times, sizes and
bandwidths are strings with units (docs/machine.md).""")
m(XBAR + '[router]\nvcs = "two"\n')
m(XBAR + "[nic]\ncount = -1\n")
m(XBAR + '[link]\nlatency = "10 parsecs"\n')
m(XBAR + '[link]\nlatency = "-1 ns"\n')
m(XBAR + '[link]\nbandwidth = "0 GB/s"\n')
m(XBAR + '[collectives]\nreduce_time_per_byte = "0.5 ps"\n')
t("""**Values out of range.** Checked after parsing, with the field named.""")
m(XBAR + "[router]\nvcs = 0\n")
m(XBAR + '[router]\nbuffer_per_vc = "1 KiB"\n')
m(XBAR + '[nic]\nmtu = "16 B"\n')
m('[topology]\nkind = "torus"\ndims = [4]\n[router]\nvcs = 1\n')
t("""When a check involves two fields and one has its default value, the one written in
the file is named.""")
m(XBAR + '[nic]\nmtu = "32 KiB"\n')
m('[topology]\nkind = "dragonfly"\np = 1\na = 2\nh = 1\n[router]\nrouting = "valiant"\n')
t("""**Topologies.** An unknown kind, a field of another kind, and each kind's own limits.""")
m('[topology]\nkind = "hypercube"\n')
m('[topology]\nkind = "torus"\ndims = [4]\nk = 4\n')
m('[topology]\nkind = "torus"\ndims = [2, 2, 2, 2, 2, 2, 2]\n')
m('[topology]\nkind = "torus"\ndims = [4, 4]\nwrap = [true]\n')
m('[topology]\nkind = "dragonfly"\np = 2\na = 2\nh = 1\ng = 9\n')
m('[topology]\nkind = "fat_tree"\nk = 0\nn = 2\n')
m('[topology]\nkind = "mesh"\n')
t("""**Routing and collective algorithms.** Names are checked when the machine is read, even
if the program makes no collective call. An algorithm that exists but does not fit a call
(here: recursive doubling needs a power-of-two rank count) is reported at the call.""")
m(XBAR + '[router]\nrouting = "zigzag"\n')
m('[topology]\nkind = "torus"\ndims = [4]\n[router]\nrouting = "valiant"\n')
m(XBAR + '[collectives]\nallreduce = "magic"\n')
ex({"x.sched": "ranks 3\nrank 0\nallgather 8\nrank 1\nallgather 8\nrank 2\nallgather 8\n"},
   "acesim run x.sched --set collectives.allgather=recursive_doubling")
t("""**`--set FIELD=VALUE`.** Located at `command line` and the field; the value is read as
TOML when it parses as TOML, else as a string.""")
ex({"r.sched": RING}, "acesim run r.sched --set router.colour=3")
ex({"r.sched": RING}, "acesim run r.sched --set router.vcs=lots")
ex({"r.sched": RING}, "acesim run r.sched --set link.latency=5parsecs")
ex({"r.sched": RING}, "acesim run r.sched --set link.bandwidth=10")
ex({"r.sched": RING}, "acesim run r.sched --set router.vcs")
ex({"r.sched": RING}, "acesim run r.sched --set router.vcs.x=3")
ex({"r.sched": RING}, "acesim run r.sched --set router.vcs=0")
t("""**Machine files and presets that do not exist.**""")
ex({"r.sched": RING}, "acesim run r.sched -m table2")
ex({"r.sched": RING}, "acesim run r.sched -m machines/none.toml")
t("""**Machine too small for the run.**""")
ex({"m.toml": '[topology]\nkind = "mesh"\ndims = [2]\n', "x.sched": "ranks 3\n"}, "acesim run x.sched -m m.toml")
ex({"x.sched": "ranks 2\nrank 0\nget 1 4 nic=2\n"}, "acesim run x.sched")
t("""**Placement files** (`--placement FILE`: one node number per line, line i for rank i).""")
ex({"r.sched": "ranks 4\n"}, "acesim run r.sched --placement nodes.txt")
ex({"r.sched": "ranks 4\n", "p.txt": "0\n1\n2\n"}, "acesim run r.sched --placement p.txt")
ex({"r.sched": "ranks 4\n", "p.txt": "0\n0\n1\n1\n2\n"}, "acesim run r.sched --placement p.txt --ranks-per-node 2")
ex({"r.sched": "ranks 4\n", "p.txt": "0\n1\n-2\n3\n"}, "acesim run r.sched --placement p.txt")
ex({"r.sched": "ranks 4\n", "p.txt": "0\n0\n1\n1\n"}, "acesim run r.sched --placement p.txt")
ex({"r.sched": "ranks 4\n", "p.txt": "0\n1\n2\n99\n", "m.toml": '[topology]\nkind = "crossbar"\nnodes = 4\n'},
   "acesim run r.sched -m m.toml --placement p.txt")
ex({"r.sched": "ranks 4\n"}, "acesim run r.sched --set placement.policy=spiral")

def s(text, extra=""):
    ex({"x.sched": text}, "acesim run x.sched" + extra)
def g(text, extra=""):
    ex({"x.goal": text}, "acesim run x.goal" + extra)

t("""## Program text: schedules and GOAL files

Exit code 2. The location is the file, line and column of the token at fault, and the
field (`dst`, `size`, `tag`, ...). Everything is checked before the run starts, including
that every rank makes the same collective calls.

### Schedules

The format is in [docs/schedule-format.md](schedule-format.md).

**Structure.**""")
s("compute 1ns\nranks 2\n")
s("# nothing here\n")
s("ranks 0\n")
s("ranks 2\nranks 3\n")
s("ranks 2\ncompute 1ns\n")
s("ranks 2\nrank 2\n")
s("ranks 2\nrank 0\ncompute 1ns\nrank 1\nrank 0\n")
t("""**Operations and their arguments.**""")
s("ranks 2\nrank 0\njump 1\n")
s("ranks 2\nrank 0\nsned 1 8\n")
s("ranks 2\nrank 0\nput 1\n")
s("ranks 2\nrank 0\nput 1 4 colour=red\n")
s("ranks 2\nrank 0\nisend 1 4\n")
s("ranks 2\nrank 0\nisend 1 4 req=a\nisend 1 4 req=a\nwait a\n")
s("ranks 2\nrank 0\nput 1 4 handle=h\nput 1 4 handle=h\ncomplete h\n")
s('ranks 2\nrank 0\nregion_begin "pack phase\n')
s("ranks 2\nrank 0\nput 1 4 @prog.c\n")
s("ranks 2\nrank 0\n@prog.c:3\n")
t("""**Values.** Ranks are `0 <= R < N`; sizes are bytes with an optional unit; times need a
unit; tags are 0 to 2^63−1 (`any` on receives).""")
s("ranks 2\nrank 1\nrecv 5 8\n")
s("ranks 2\nrank 0\nput 1 four\n")
s("ranks 2\nrank 0\nsend 1 -8\n")
s("ranks 2\nrank 0\nput 1 4parsecs\n")
s("ranks 2\nrank 0\nput 1 1.5B\n")
s("ranks 2\nrank 0\nput 1 2TiB\n")
s("ranks 2\nrank 0\ncompute 10\n")
s("ranks 2\nrank 0\ncompute 2000000s\n")
s("ranks 2\nrank 0\nsend 1 4 tag=-5\n")
s("ranks 2\nrank 0\nput 1 4 tag=x\n")
s("ranks 2\nrank 0\nput 1 4 nic=x\n")
s("ranks 2\nrank 0\ncomm_split red 0 as=c\n")
s("ranks 2\nrank 0\nbarrier transport=pigeon\n")
s("ranks 2\nrank 0\nbcast 8 segment=0\n")
t("""**References.** Requests, handles and communicators must be created earlier in the same
rank block; regions close in order within the block.""")
s("ranks 2\nrank 0\nwait r9\n")
s("ranks 2\nrank 0\nsend 1 4 comm=rows\n")
s("ranks 2\nrank 0\nregion_begin setup\ncompute 1ns\n")
s("ranks 2\nrank 0\nregion_begin a\nregion_begin b\nregion_end a\n")
t("""**Collectives** are matched across ranks before the run; a mismatch names both places.""")
s("ranks 2\nrank 0\nallreduce 8\nrank 1\nbcast 8\n")
s("ranks 2\nrank 0\nallreduce 8\n")
s("ranks 2\nrank 0\nbcast 8 root=5\nrank 1\nbcast 8 root=5\n")
s("ranks 2\nrank 0\nallreduce 8 algo=magic\nrank 1\nallreduce 8 algo=magic\n")
t("""### GOAL files

The LogGOPSim/Schedgen format (`num_ranks`, `rank R { ... }`, `LABEL: calc|send|recv`,
`LABEL requires|irequires LABEL`).""")
g("rank 0 {\n}\n")
g("num_ranks 0\n")
g("num_ranks 2\nrank 0\n")
g("num_ranks 2\nrank 3 {\n}\n")
g("num_ranks 2\nrank 0 {\n}\nrank 0 {\n}\n")
g("num_ranks 2\nrank 0 {\nl1: calc 1\n")
g("num_ranks 2\n}\n")
g("num_ranks 2\nrank 0 {\ncalc 1\n}\n")
g("num_ranks 2\nrank 0 {\nl1: jump 1\n}\n")
g("num_ranks 2\nrank 0 {\nl1: send 8b 1 tag 0\n}\n")
g("num_ranks 2\nrank 0 {\nl1: calc 1 gpu 2\n}\n")
g("num_ranks 2\nrank 0 {\nl1: calc 1 cpu 64\n}\n")
g("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0 nic 3\n}\n")
g("num_ranks 2\nrank 0 {\n/* Iallreduce begin\nl1: calc 1\n}\n")
g("num_ranks 2\nrank 0 {\nl1: calc 1.5\n}\n")
g("num_ranks 2\nrank 0 {\nl1: send 8kb to 1 tag 0\n}\n")
g("num_ranks 2\nrank 0 {\nl1: send -8b to 1 tag 0\n}\n")
g("num_ranks 2\nrank 0 {\nl1: recv 8b from 7 tag 0\n}\n")
g("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag -3\n}\n")
g("num_ranks 2\nrank 0 {\nl1: calc 1\nl1: calc 2\n}\n")
g("num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires l9\n}\n")
g("num_ranks 2\nrank 0 {\nl9 requires l1\nl1: calc 1\n}\n")
g("num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires l1\n}\n")
g("num_ranks 2\nrank 0 {\nl1: calc 1\nl2: calc 1\nl1 requires l2\nl2 irequires l1\n}\n")

C_HEAD = '#include "mgen.h"\n'
t("""## C and Python programs

Exit code 2. A C program is compiled with the shipped `mgen.h` and recorder runtime (`$CC`,
default `cc`), then run once per rank, each rank in a fresh process; a Python program is
recorded by the `acesim` Python package (`$ACESIM_PYTHON`; else the project's
`.venv/bin/python3` beside the binary's build, which `scripts/setup` makes; else `python3`).

**The C compiler fails.** Its messages follow, with file:line:column.""")
ex({"p.c": C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  MGEN_Comp(10)\n  return 0;\n}\n"}, "acesim run p.c --ranks 2")
t("""**A rank crashes or exits while being recorded.** The rank, the signal or exit code, and
the last MGEN call it made (the crash itself is after that call). A program that calls
`exit(0)` early is not an error: what it recorded before counts. `MGEN_Main` returning a
value other than 0 is an error like `exit()` with that code (falling off the end of
`MGEN_Main`, as the papers' examples do, returns 0).""")
ex({"p.c": C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 1) { volatile int *p = 0; *p = 3; }\n  return 0;\n}\n"}, "acesim run p.c --ranks 2")
ex({"p.c": C_HEAD + "#include <stdlib.h>\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  MGEN_Comp(10);\n  if (me == 1) abort();\n  return 0;\n}\n"}, "acesim run p.c --ranks 2")
ex({"p.c": C_HEAD + "#include <stdlib.h>\nint MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 0) exit(3);\n  return 0;\n}\n"}, "acesim run p.c --ranks 2")
ex({"p.c": C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  return me == 1 ? 3 : 0;\n}\n"}, "acesim run p.c --ranks 2")
t("""**A rank makes no MGEN call for too long** (60 s by default; `--record-timeout TIME` or
`$ACESIM_RECORD_TIMEOUT`, 0 waits for ever): most likely an endless loop. The rank is
stopped and named, with its last call and how many operations it recorded.""")
ex({"p.c": C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  MGEN_Comp(1);\n  for (volatile int i = 0; ; i++) ;\n}\n"}, "acesim run p.c --ranks 2 --record-timeout 1s")
t("""A rank that forks a background process does not hold acesim up: acesim waits for the
recorder and its ranks, then ends whatever they left running.""")
t("""**The recorder rejects a call** (invalid communicator, NULL pointers, NaN times, ...): the
call site and the function.""")
ex({"p.c": C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  int n;\n  MGEN_Comm_size(MGEN_COMM_WORLD + 7, &n);\n  return 0;\n}\n"}, "acesim run p.c --ranks 2")
t("""**Recorded values that are out of range** are recorded as given and reported by the
schedule reader at the program's line (the recorded schedule's line in parentheses).""")
ex({"p.c": C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 0) MGEN_rdma_put(5, 4, 0);\n  return 0;\n}\n"}, "acesim run p.c --ranks 2")
ex({"p.c": C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  if (me == 0) MGEN_rdma_put(1, 4, -2);\n  return 0;\n}\n"}, "acesim run p.c --ranks 2")
t("""**Python programs**: errors while loading the file or running `program(ctx)` show the
Python traceback; bad values show the rank and the program's line.""")
ex({"p.py": "def program(ctx)\n    pass\n"}, "acesim run p.py --ranks 2")
ex({"p.py": "def program(ctx):\n    raise ValueError(\"boom\")\n"}, "acesim run p.py --ranks 2")
ex({"p.py": "def program(ctx):\n    ctx.put(1, \"4 parsecs\")\n"}, "acesim run p.py --ranks 2")
ex({"p.py": "def program(ctx):\n    ctx.put(ctx.rank + 5, 4)\n"}, "acesim run p.py --ranks 2")
ex({"p.py": "x = 1\n"}, "acesim run p.py --ranks 2")
t("""`sys.exit(0)` in `program(ctx)` ends that rank's program normally (what it recorded
counts); another code is an error naming the rank. A rank that ends the process at once
(`os._exit`) is named with its code:""")
ex({"p.py": "import sys\ndef program(ctx):\n    if ctx.rank == 1:\n        sys.exit(4)\n"}, "acesim run p.py --ranks 2")
ex({"p.py": "import os\ndef program(ctx):\n    if ctx.rank == 1:\n        os._exit(7)\n"}, "acesim run p.py --ranks 2")
t("""A Python rank that records no operation for the record timeout (as for C: 60 s by
default, `--record-timeout`, `$ACESIM_RECORD_TIMEOUT`) is stopped and named with its last
call and how many operations it recorded; the Python process is stopped whatever the rank
is doing. A program file that does not finish loading in that time is named as such.""")
ex({"p.py": "def program(ctx):\n    ctx.compute(1)\n    while True:\n        pass\n"}, "acesim run p.py --ranks 2 --record-timeout 1s")
t("""With a Python that does not have the package (here `ACESIM_PYTHON=python3`, the system's):""")
ex({"p.py": "def program(ctx):\n    pass\n"}, "acesim run p.py --ranks 2", env={"PYTHONPATH": "", "ACESIM_PYTHON": "python3"})

t("""## Command line

Exit code 2. Values are located at `command line` and the option; files that cannot be
read or written are named by their path.""")
C_OK = C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  MGEN_Comp(1);\n  return 0;\n}\n"
ex({"p.c": C_OK}, "acesim run p.c --ranks 0")
ex({"p.c": C_OK}, "acesim run p.c")
ex({"p.c": C_OK}, "acesim run p.c --ranks 20000000")
ex({"t.goal": "num_ranks 2\n"}, "acesim run t.goal --ranks 3")
ex({}, "acesim run missing.sched")
ex({}, "acesim run missing.c --ranks 2")
t("""A program file that is not UTF-8 text (here `bin.sched` is `ranks 2`, then `rank ` and
the bytes FF FE):""")
ex({"bin.sched": b"ranks 2\nrank \xff\xfe\n"}, "acesim run bin.sched", show_files=False)
ex({"r.sched": RING}, "acesim run r.sched --json out.json --links-csv results/links.csv")
ex({"r.sched": RING}, "acesim run r.sched --json r.sched/out.json")
ex({"r.sched": RING}, "acesim run r.sched --timeline t.json --timeline-links busiest:x")
ex({"r.sched": RING}, "acesim run r.sched --timeline t.json --timeline-links 'r9->r10'")
ex({"r.sched": RING}, "acesim run r.sched --model flwo")
t("""`--partitions N` needs a router per partition, and the packet level (the flow level solves
its rates over the whole network at once):""")
ex({"r.sched": RING}, "acesim run r.sched --partitions 3")
ex({"r.sched": RING}, "acesim run r.sched --partitions 2 --model flow")
ex({}, "acesim traffic --load 2.0")
ex({}, "acesim traffic --load 0.1:abc:0.1")
ex({}, "acesim traffic --load 0.5:0.1:0.1")
ex({}, "acesim traffic --pattern spiral")
ex({}, "acesim traffic --pattern hotspot:x:0.5")
ex({}, "acesim traffic --packet 0B")
ex({}, "acesim traffic --packet 10parsecs")
ex({}, "acesim traffic --injection poisson")
ex({}, "acesim traffic --warmup 10")
t("""Two outputs that name the same file, or an output that names an input (the program,
the machine file or the placement file), are refused before the run: one would overwrite
the other. Paths are compared after following symbolic links, so `x`, `./x` and a link to
`x` are the same file.""")
ex({"r.sched": RING}, "acesim run r.sched --json out.json --timeline ./out.json")
ex({"r.sched": RING}, "acesim run r.sched --json r.sched")
ex({}, "acesim traffic --csv t.out --json t.out")
t("""Nothing is created under `/dev`, `/proc` or `/sys`; existing files there are written in
place, and a write that fails names the file (`error[io]: cannot write /proc/version:
Input/output error`).""")
ex({"r.sched": RING}, "acesim run r.sched --json /dev/acesim.json")
t("""`acesim report` names where a result file is not an acesim JSON summary (file, line and
column, or the missing field) and writes no report folder.""")
ex({"bad.json": '{"predicted_time_ps": 5,\n "ranks": [}\n'}, "acesim report bad.json")
ex({"other.json": '{"ranks": 2}\n'}, "acesim report other.json")
t("""A permission problem reads `cannot write this output file: cannot create a file in
'DIR': permission denied`. Command-line usage errors (unknown options, missing values) come
from the argument parser, with a usage line:""")
ex({"r.sched": RING}, "acesim run r.sched --jsn x.json")

t("""## Run time

**Deadlock: exit code 3.** The program can never finish: some ranks wait for something that
will never happen. The report gives the simulated time at which the last event happened and,
for every blocked rank, its operation, the source line, and what it waits for, and the
circle of ranks that wait for each other (`cycle: ...`) when there is one. It is found
after the simulation, so no output is written.""")
s("ranks 2\nrank 0\ncompute 1us\nrank 1\nrecv 0 8 tag=3\n")
s("ranks 3\nrank 0\nirecv 1 8 req=a\nirecv 2 8 req=b tag=4\nwaitall a b\nrank 1\nsend 0 8\n")
s("ranks 2\nrank 0\nsend 1 1MiB\nrecv 1 1MiB\nrank 1\nsend 0 1MiB\nrecv 0 1MiB\n")
s("ranks 2\nrank 1\npoll 5\n")
s("ranks 2\nrank 0\nrecv 1 8\nbarrier\nrank 1\nbarrier\nsend 0 8\n")
ex({"p.c": C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  int me; MGEN_Comm_rank(MGEN_COMM_WORLD, &me);\n  char b[8];\n  MGEN_Recv(b, 8, MGEN_BYTE, 1 - me, 0, MGEN_COMM_WORLD, MGEN_STATUS_IGNORE);\n  return 0;\n}\n"}, "acesim run p.c --ranks 2")
t("""`acesim compare-models` runs the program at the packet level, then at the flow level. A
program that cannot finish at one of them is reported as above, with the level named, and a
last line saying what the other level does with it: `the flow level cannot finish it either`
(a program that waits for what it never does), or `the flow level finishes this program in
T`, when the outcome depends on timing (wildcard receives that take whichever message comes
first) or on the network.""")
ex({"x.sched": "ranks 2\nrank 0\ncompute 1us\nrank 1\nrecv 0 8 tag=3\n"}, "acesim compare-models x.sched")
t("""**Messages never received and puts never polled: exit code 0.** A message no receive
matched (or a put no poll consumed) does not stop the run; the summary ends with a warning
(or a note) and `--json` lists them (`unmatched_messages`, `unpolled_puts`).""")
ex({"x.sched": "ranks 2\nrank 0\nsend 1 8 tag=1\nsend 1 8 tag=1\nput 1 4 tag=7\n"}, "acesim run x.sched", show_stdout=True)

t("""**Requests still pending when a rank ends: exit code 0.** A rank that reaches the end of
its program with isend/irecv (or put/get) requests not complete is reported with a warning
and listed in `--json` (`unfinished_requests`).""")
ex({"x.sched": "ranks 2\nrank 0\nirecv 1 8 tag=1 req=a\nrank 1\ncompute 1us\n"}, "acesim run x.sched", show_stdout=True)

t("""## Limits: exit codes 4, 5 and 130

**Stopped by a limit: exit code 4.** `--max-events N` and `--max-sim-time TIME` stop the run
there; the summary says PARTIAL, and every output file is written with
`"partial": {"reason", "stopped_at_ps", "ranks_finished"}`. The time shown is where the run
stopped: a lower bound of the full run's.""")
LONG = "ranks 2\nrank 0\ncompute 1ms\nput 1 4KB tag=1\nrank 1\npoll 1\n"
ex({"long.sched": LONG}, "acesim run long.sched --max-sim-time 1us", show_stdout=True)
ex({"long.sched": LONG}, "acesim run long.sched --max-events 3 -q")
t("""**Interrupted: exit code 130 (Ctrl-C) or 143 (SIGTERM).** Either signal, whether sent to
acesim alone or, as a terminal does, to its whole process group, stops the run the same way
(`"reason": "interrupted"`, outputs written). While a C or Python program is being
recorded, it stops the recorder and every rank process (they run in a process group of
their own), removes the temporary folder and exits with `error[interrupted]: Ctrl-C
(SIGINT): interrupted while recording p.c; its processes were stopped`. A second signal
ends the process at once (rank processes included).

**Too big for the memory: exit code 5.** Before the run starts acesim estimates the memory
it will need (network state, per-transfer records, results; `acesim validate` prints the
estimate) and refuses when it exceeds the available memory: Linux's `MemAvailable`, or
`$ACESIM_MEMORY_LIMIT` when set (for shared machines and batch jobs). `--ignore-memory-limit`
runs anyway.""")
ex({"r.sched": RING}, "ACESIM_MEMORY_LIMIT=1KiB acesim run r.sched")
ex({"r.sched": RING}, "ACESIM_MEMORY_LIMIT=lots acesim run r.sched")
t("""Recording a C or Python program is bounded by the same budget: the schedule text may take
a quarter of it (the program read from it and the run need the rest). A rank that records
past that is stopped, named, with its operation count:""")
ex({"p.c": C_HEAD + "int MGEN_Main(int argc, char **argv) {\n  for (;;) MGEN_Comp(1);\n}\n"}, "ACESIM_MEMORY_LIMIT=4MB acesim run p.c --ranks 2")
ex({"p.py": "def program(ctx):\n    while True:\n        ctx.compute(1)\n"}, "ACESIM_MEMORY_LIMIT=4MB acesim run p.py --ranks 2")

t("""## Internal errors

**Exit code 70.** A model invariant did not hold: a bug in acesim, not in the input. The
message is `error[internal]: internal error (please report): ` followed by what broke. The
end-of-run checks (every byte injected into the network was delivered, nothing left in
flight) always run; `--check` (and every debug build) also checks, as the run goes, that
no link sends two packets at once, credits stay between 0 and the buffer size, every packet
is consumed exactly once, no route is longer than the topology allows and event times never
go back, for example `model invariant broken: link r0.p1->r1 starts a packet at 1200 ps
while busy until 1300 ps`. No input is known to cause one, so there is no example to show;
please report one with the command, machine and program. A panic (a `thread 'main'
panicked` message, exit code 101) is a bug of the same kind; the tests in
`crates/acesim-cli/tests/bad_inputs.rs` check that no bad input causes one.
""")

with open(os.path.join(REPO, "docs/errors.md"), "w") as f:
    f.write("\n".join(P))
shutil.rmtree(BIN)
shutil.rmtree(os.path.dirname(W))
print(f"docs/errors.md: {sum(p.startswith('```') for p in P)} examples")
