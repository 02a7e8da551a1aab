"""The `acesim` console entry point (acesim.cli.main) and `python -m acesim`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from acesim.cli import _program_index, main

PROGRAM = """\
def program(ctx):
    h = ctx.put((ctx.rank + 1) % ctx.size, 4)
    ctx.poll(0)
    ctx.complete(h)


def other(ctx):
    ctx.compute(int(ctx.args[0]))
"""


@pytest.fixture
def prog(tmp_path, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ring.py").write_text(PROGRAM)
    return "ring.py"


def test_program_index() -> None:
    assert _program_index(["--ranks", "4", "-m", "table1", "p.py", "--json", "x"]) == 4
    assert _program_index(["--set=router.vcs=4", "p.py"]) == 1
    assert _program_index(["--ranks", "4", "--", "p.py"]) is None


def test_record_python(prog: str, capsys) -> None:
    assert main(["record", prog, "--ranks", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:4] == [
        "# acesim schedule 1",
        "ranks 2",
        "rank 0",
        "put 1 4 tag=0 handle=h1 @ring.py:2",
    ]
    assert (
        main(
            ["record", prog, "--ranks", "3", "-o", "ring.sched", "--function", "other", "--", "50"]
        )
        == 0
    )
    assert open("ring.sched").read().count("compute 50000ps @ring.py:8") == 3


def test_record_errors(prog: str, capsys) -> None:
    assert main(["record", prog]) == 2
    assert "--ranks" in capsys.readouterr().err
    assert main(["record", prog, "--ranks", "2", "--function", "nope"]) == 2
    assert "no function named 'nope'" in capsys.readouterr().err
    with open("crash.py", "w") as f:
        f.write("def main(ctx):\n    ctx.put('x', 4)\n")
    assert main(["record", "crash.py", "--ranks", "1"]) == 2
    err = capsys.readouterr().err
    assert "rank 0" in err and "crash.py:2" in err and "dst must be an int" in err


def test_run_python(core, prog: str) -> None:
    code = main(["run", prog, "--ranks", "8", "--machine", "table1", "--json", "out.json", "-q"])
    assert code == 0
    assert json.load(open("out.json"))["predicted_time_ps"] == 302258
    argv = ["run", "--function", "other", prog, "--ranks", "2", "--json", "o.json", "-q", "--", "9"]
    assert main(argv) == 0
    assert json.load(open("o.json"))["predicted_time_ps"] == 9000


def test_run_python_reports_locations(core, prog: str) -> None:
    with open("bad.py", "w") as f:
        f.write("def program(ctx):\n    ctx.put(99, 4)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "acesim", "run", "bad.py", "--ranks", "2", "-q"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == 2
    assert "bad.py:2" in proc.stderr


def test_passthrough(core, capsys) -> None:
    assert main(["machine", "--machine", "table1"]) == 0


def test_report_command(summary_path: str, tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    assert main(["report", summary_path, "-o", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "report.html").exists()
    assert capsys.readouterr().out.strip() == str(tmp_path / "rep" / "report.html")


def test_python_dash_m_record(prog: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "acesim", "record", prog, "--ranks", "2"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# acesim schedule 1\nranks 2\n")


@pytest.mark.parametrize(
    "args",
    [
        ["run", "PROG", "--ranks", "2", "--json", "PROG"],
        ["run", "PROG", "--ranks", "2", "--timeline=./PROG"],
        ["record", "PROG", "--ranks", "2", "-o", "PROG"],
    ],
)
def test_outputs_never_overwrite_the_python_program(prog: str, args, capsys) -> None:
    before = open(prog).read()
    assert main([prog if a == "PROG" else a.replace("PROG", os.path.basename(prog)) for a in args]) == 2
    assert "writing it would overwrite an input" in capsys.readouterr().err
    assert open(prog).read() == before
