"""Limits of recording a Python program (README "Safety"): a rank that records nothing for
the record timeout is stopped and named; a schedule text past a quarter of the memory budget
is stopped, naming the rank and its operation count. In process (`record`, `simulate`) and
with the `acesim` entry point (`python -m acesim`), each in a real process where it must
end one."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

import acesim
from acesim.program import RecordTimeoutError, RecordTooBigError


def spin(ctx):
    ctx.compute(1)
    if ctx.rank == 1:
        x = 0
        while True:
            x += 1


SPIN_LINE = spin.__code__.co_firstlineno + 1  # the compute


def spin_catching_exceptions(ctx):
    ctx.compute(1)
    while True:
        try:
            while True:
                pass
        except Exception:  # the stop is not an Exception
            pass


def grow(ctx):
    if ctx.rank == 0:
        ctx.compute(1)
        return
    while True:
        ctx.compute(1)


GROW_LINE = grow.__code__.co_firstlineno + 5


def here(line: int) -> str:
    """The location of ``line`` of this file as recordings write it."""
    return f"{os.path.relpath(__file__)}:{line}"


def test_a_rank_that_records_nothing_is_stopped_and_named() -> None:
    start = time.monotonic()
    with pytest.raises(acesim.ProgramError) as info:
        acesim.record(spin, 3, record_timeout=1)
    assert time.monotonic() - start < 10
    assert isinstance(info.value, RecordTimeoutError)
    assert str(info.value) == (
        f"rank 1: no ctx call for 1 s after its last ctx call, ctx.compute at {here(SPIN_LINE)} "
        "(1 operations recorded); it may loop forever\n"
        "(set record_timeout= or ACESIM_RECORD_TIMEOUT to wait longer, 0 for ever)"
    )
    # Nothing is left to go off later in this thread.
    time.sleep(0.6)
    assert acesim.record(lambda ctx: ctx.compute(1), 2).count("compute") == 2


def test_a_program_catching_exception_is_stopped_too() -> None:
    with pytest.raises(RecordTimeoutError, match="rank 0: no ctx call for 1 s after its last"):
        acesim.record(spin_catching_exceptions, 1, record_timeout="1s")


def test_the_record_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACESIM_RECORD_TIMEOUT", "1s")
    start = time.monotonic()
    with pytest.raises(RecordTimeoutError, match="no ctx call for 1 s"):
        acesim.record(spin, 2)
    assert time.monotonic() - start < 10
    monkeypatch.setenv("ACESIM_RECORD_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="environment: field `ACESIM_RECORD_TIMEOUT`"):
        acesim.record(spin, 2)


def test_bad_record_timeouts_are_refused() -> None:
    with pytest.raises(TypeError, match="record_timeout must be a number of seconds"):
        acesim.record(spin, 2, record_timeout=True)
    with pytest.raises(ValueError, match="record_timeout must be a number of seconds >= 0"):
        acesim.record(spin, 2, record_timeout=-1)
    with pytest.raises(ValueError, match="'parsecs' is not a time unit"):
        acesim.record(spin, 2, record_timeout="2 parsecs")


def test_a_record_timeout_of_0_waits_for_ever(monkeypatch: pytest.MonkeyPatch) -> None:
    # As for C programs: `0` needs no unit.
    monkeypatch.setenv("ACESIM_RECORD_TIMEOUT", "0")
    assert "ranks 2" in acesim.record(lambda ctx: ctx.compute("1ns"), 2)
    assert "ranks 2" in acesim.record(lambda ctx: ctx.compute("1ns"), 2, record_timeout="0")


def test_a_program_that_ends_is_not_stopped() -> None:
    def slow(ctx):
        ctx.compute(1)
        time.sleep(0.5)  # less than the timeout
        ctx.compute(2)

    text = acesim.record(slow, 2, record_timeout=1)
    assert text.count("compute") == 4


def test_a_schedule_text_past_its_share_of_the_memory_budget_is_stopped(
    core, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACESIM_MEMORY_LIMIT", "4MB")
    # 1000000 bytes: the header and rank 0 take 4 lines, each compute line the rest.
    line = f"compute 1000ps @{here(GROW_LINE)}"
    before = len("# acesim schedule 1\nranks 2\nrank 0\n") + len(line) + 1 + len("rank 1\n")
    fit = (1_000_000 - before) // (len(line) + 1)
    messages = []
    for _ in range(2):
        with pytest.raises(MemoryError) as info:
            acesim.record(grow, 2)
        assert isinstance(info.value, RecordTooBigError)
        messages.append(str(info.value))
    assert messages[0] == messages[1]  # where it crossed, whenever it was noticed
    assert messages[0] == (
        f"rank 1: the recorded schedule grew past 1000000 bytes after {fit} operations of this "
        "rank\n(the schedule text may take 1/4 of the 3.8 MiB of memory available, as the "
        "program read from it and the run need the rest; record fewer ranks or operations, or "
        "pass ignore_memory_limit=True)"
    )


def test_ignore_memory_limit_records_past_it(core, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACESIM_MEMORY_LIMIT", "4MB")

    def big(ctx):
        for _ in range(50_000):
            ctx.compute(1)

    with pytest.raises(MemoryError, match="rank 0: the recorded schedule grew past 1000000"):
        acesim.record(big, 1)
    text = acesim.record(big, 1, ignore_memory_limit=True)
    assert len(text) > 1_000_000 and text.count("compute") == 50_000
    monkeypatch.setenv("ACESIM_MEMORY_LIMIT", "lots")
    with pytest.raises(ValueError, match="ACESIM_MEMORY_LIMIT"):
        acesim.record(big, 1)


def test_simulate_records_with_the_same_limits(core, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RecordTimeoutError, match="rank 1: no ctx call for 1 s"):
        acesim.simulate("table1", spin, ranks=2, record_timeout=1)
    with pytest.raises(ValueError, match="record_timeout= is for Python programs"):
        acesim.simulate("table1", "prog.c", ranks=2, record_timeout=1)
    monkeypatch.setenv("ACESIM_MEMORY_LIMIT", "4MB")
    with pytest.raises(MemoryError, match="rank 1: the recorded schedule grew past 1000000"):
        acesim.simulate("table1", grow, ranks=2)


# ---- the acesim entry point (python -m acesim), in processes of their own ------------------


def acesim_cli(tmp_path, files: dict[str, str], *args: str, **env: str):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "acesim", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env},
    )
    return proc, time.monotonic() - start


STALL = """import time

def program(ctx):
    ctx.compute(1)
    if ctx.rank == 1:
        while ctx.args[0] == "spin":
            pass
        time.sleep(600)
"""


@pytest.mark.parametrize("how", ["spin", "sleep"])
def test_the_command_stops_a_stalled_rank(core, tmp_path, how: str) -> None:
    # A rank in a sleep never returns to Python: the command reports it and ends anyway.
    proc, took = acesim_cli(
        tmp_path, {"p.py": STALL}, "run", "p.py", "--ranks", "2", "--record-timeout", "1s",
        "--json", "p.json", "--", how,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        "error: rank 1: no ctx call for 1 s after its last ctx call, ctx.compute at p.py:4 "
        "(1 operations recorded); it may loop forever\n"
        "(set --record-timeout or ACESIM_RECORD_TIMEOUT to wait longer, 0 for ever)\n"
    )
    assert took < 30
    assert not (tmp_path / "p.json").exists()


def test_the_command_names_a_file_that_never_loads(tmp_path) -> None:
    proc, _ = acesim_cli(
        tmp_path, {"p.py": "while True:\n    pass\n"}, "record", "p.py", "--ranks", "2",
        ACESIM_RECORD_TIMEOUT="1s",
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(
        "error: p.py did not finish loading in 1 s (before rank 0 started); it may loop forever\n"
    )


def test_the_command_stops_a_recording_too_big_with_exit_5(core, tmp_path) -> None:
    prog = "def program(ctx):\n    for _ in range(50000):\n        ctx.compute(1)\n"
    proc, _ = acesim_cli(
        tmp_path, {"p.py": prog}, "record", "p.py", "--ranks", "1", "-o", "s.sched",
        ACESIM_MEMORY_LIMIT="4MB",
    )
    # 35 bytes of header, then 23 per `compute 1000ps @p.py:3`: 43476 fit.
    assert proc.returncode == 5, proc.stderr
    assert proc.stderr == (
        "error: p.py: recording stopped: rank 0: the recorded schedule grew past 1000000 bytes "
        "after 43476 operations of this rank\n(the schedule text may take 1/4 of the 3.8 MiB of "
        "memory available, as the program read from it and the run need the rest; record fewer "
        "ranks or operations, or use --ignore-memory-limit)\n"
    )
    assert not (tmp_path / "s.sched").exists()
    proc, _ = acesim_cli(
        tmp_path, {}, "record", "p.py", "--ranks", "1", "-o", "s.sched", "--ignore-memory-limit",
        ACESIM_MEMORY_LIMIT="4MB",
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "s.sched").read_text().count("compute") == 50_000


def test_the_record_timeout_option_takes_a_value() -> None:
    from acesim.cli import _program_index

    assert _program_index(["--record-timeout", "1s", "p.py", "--ranks", "2"]) == 2
    assert _program_index(["--ignore-memory-limit", "p.py"]) == 1
