"""examples/booksim/compare.py's speed part, against a stand-in for BookSim2.

The stand-in prints what BookSim2 prints at the end of a run (its "Overall Traffic
Statistics" and "Time taken"), so the script's parsing, its packets-per-second arithmetic
and its table replacement are exercised without a BookSim2 build; the acesim side runs the
real simulator.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "examples", "booksim", "compare.py")
BIN = os.path.join(ROOT, "target", "release", "acesim")

# The stand-in logs each configuration it is given, then prints `body`.
FAKE = """#!{python}
import sys
cfg = open(sys.argv[1]).read()
with open({log!r}, "a") as log:
    log.write(cfg.replace("\\n", " ") + "\\n")
{body}
"""
STATS = """print("Time taken is 20000 cycles")
print("====== Overall Traffic Statistics ======")
print("Packet latency average = 40.5 (1 samples)")
print("Accepted flit rate average = 0.199 (1 samples)")
print("Injected packet rate average = 0.0001 (1 samples)")
"""


def fake_booksim(tmp_path, body: str = STATS) -> tuple[str, str]:
    path, log = tmp_path / "booksim", tmp_path / "configs.log"
    path.write_text(FAKE.format(python=sys.executable, log=str(log), body=body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path), str(log)


@pytest.fixture
def simulator():
    if not os.path.exists(BIN):
        if os.environ.get("CI"):
            pytest.fail("target/release/acesim is not built: scripts/setup must build it")
        pytest.skip("target/release/acesim is not built (scripts/setup)")


def compare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def test_the_speed_part_alone_times_both_and_replaces_only_its_table(simulator, tmp_path):
    booksim, log = fake_booksim(tmp_path)
    doc = tmp_path / "traffic.md"
    shutil.copy(os.path.join(ROOT, "docs", "traffic.md"), doc)
    before = doc.read_text()
    r = compare("--booksim", booksim, "--only", "speed", "--reps", "1", "--out", str(doc))
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| ") and not line.startswith("| case")]
    cases = [row.split("|")[1].strip() for row in rows]
    assert cases == ["16x16 torus, load 0.2", "16x16 torus, load 0.3", "4-ary 3-tree, load 0.5",
                     "1,056-node dragonfly, minimal, load 0.3"]
    for row in rows:
        _, _, cpu_b, rate_b, cpu_a, rate_a, ratio, _ = (c.strip() for c in row.split("|"))
        assert float(cpu_b) >= 0 and float(cpu_a) > 0
        assert rate_b.endswith(" k") and rate_a.endswith(" k") and ratio.endswith("x")
        assert float(ratio[:-1]) > 0
    # One BookSim2 run a case, at the case's load, in its latency mode.
    configs = open(log).read().splitlines()
    assert len(configs) == 4
    assert "injection_rate = 0.2;" in configs[0] and "sim_type = latency;" in configs[0]
    assert "injection_rate = 0.5;" in configs[2]
    # Only the speed block changed, and it holds the printed table.
    after = doc.read_text()
    speed = re.compile(r"<!-- booksim-speed -->.*?<!-- /booksim-speed -->", re.S)
    assert speed.sub("", after) == speed.sub("", before)
    assert "1,056-node dragonfly, minimal, load 0.3" in speed.search(after).group(0)
    assert speed.search(after).group(0) != speed.search(before).group(0)


def test_a_booksim_that_prints_no_statistics_is_named(simulator, tmp_path):
    booksim, _ = fake_booksim(tmp_path, body='print("Error: unknown option")')
    r = compare("--booksim", booksim, "--only", "speed", "--reps", "1")
    assert r.returncode != 0
    assert "BookSim2 gave no statistics for torus1616" in r.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--only", "speed,bogus"], "unknown part 'bogus': choose from fidelity, saturation, speed"),
        (["--only", "speed"], "--only speed: the speed part needs a BookSim2 binary"),
        (["--reps", "0"], "'0' is not a whole number of at least 1"),
        (["--booksim", "/nonexistent/booksim"], "--booksim /nonexistent/booksim: not an executable file"),
    ],
)
def test_bad_options_are_refused_before_any_run(simulator, args, message):
    r = compare(*args)
    assert r.returncode == 2
    assert message in r.stderr


def test_an_out_file_without_the_tables_block_is_refused_before_any_run(simulator, tmp_path):
    booksim, log = fake_booksim(tmp_path)
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n")
    r = compare("--booksim", booksim, "--only", "speed", "--out", str(doc))
    assert r.returncode == 2
    assert "no '<!-- booksim-speed -->' ... '<!-- /booksim-speed -->' block to replace" in r.stderr
    assert not os.path.exists(log), "BookSim2 ran before the file was checked"
    assert doc.read_text() == "# Notes\n"
