"""sweep(): product order, columns, processes, errors (needs the compiled core)."""

from __future__ import annotations

import pytest

import acesim
from acesim.program import Context


def test_rows_in_product_order(core) -> None:
    size = 64  # a closure: needs the fork context

    def ring(ctx: Context) -> None:
        h = ctx.put((ctx.rank + 1) % ctx.size, size)
        ctx.poll(0)
        ctx.complete(h)

    params = {"node.overhead": ["0.6 us", "0.8 us"], "ranks": [2, 3, 5]}
    df = acesim.sweep("table1", ring, params, processes=2, progress=False)
    assert list(df.columns) == [
        "node.overhead",
        "ranks",
        "predicted_time",
        "predicted_time_ps",
        "events",
        "wall_seconds",
    ]
    assert list(zip(df["node.overhead"], df["ranks"])) == [
        (o, r) for o in params["node.overhead"] for r in params["ranks"]
    ]
    for row in df.itertuples(index=False):
        one = acesim.simulate(
            acesim.Machine.preset("table1").set("node.overhead", row[0]), ring, row[1]
        )
        assert one.predicted_time_ps == row.predicted_time_ps
    assert (df["predicted_time"] == df["predicted_time_ps"] / 1e12).all()
    slow = df[df["node.overhead"] == "0.8 us"]["predicted_time_ps"].to_numpy()
    fast = df[df["node.overhead"] == "0.6 us"]["predicted_time_ps"].to_numpy()
    assert (slow > fast).all()
    inline = acesim.sweep("table1", ring, params, processes=0, progress=True)
    assert inline["predicted_time_ps"].tolist() == df["predicted_time_ps"].tolist()


def test_fixed_ranks_and_machine_fields(core) -> None:
    def barrier(ctx: Context) -> None:
        ctx.barrier(transport="rdma")

    df = acesim.sweep(
        acesim.Machine.preset("table1"),
        barrier,
        {"collectives.barrier": ["ring", "recursive_doubling"]},
        ranks=8,
        progress=False,
    )
    ring, rd = df["predicted_time_ps"]
    assert rd < ring


def test_error_names_the_point(core) -> None:
    def prog(ctx: Context) -> None:
        ctx.barrier()

    with pytest.raises(acesim.InputError) as info:
        acesim.sweep("table1", prog, {"ranks": [2], "router.vcs": [2, "lots"]}, progress=False)
    assert "ranks=2, router.vcs='lots'" in str(info.value)

    def crash(ctx: Context) -> None:
        if ctx.size == 3:
            raise RuntimeError("boom")

    with pytest.raises(acesim.ProgramError, match="ranks=3.*boom"):
        acesim.sweep("table1", crash, {"ranks": [2, 3]}, processes=2, progress=False)


def test_bad_params() -> None:
    with pytest.raises(TypeError, match="params"):
        acesim.sweep("table1", print, {"ranks": 4}, progress=False)  # type: ignore[dict-item]


def test_barrier_figure_example(core, root, tmp_path) -> None:
    import os
    import subprocess
    import sys

    out = tmp_path / "fig.png"
    script = os.path.join(root, "examples", "python", "barrier_figure.py")
    proc = subprocess.run(
        [sys.executable, script, "--max-ranks", "9", "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "recursive doubling beats the ring" in proc.stdout
    assert out.stat().st_size > 1000
