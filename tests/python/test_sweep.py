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


def _sized_ring(ctx: Context, size: int = 64, hops: int = 1) -> None:
    """A ring of puts of ``size`` bytes to the rank ``hops`` ahead."""
    h = ctx.put((ctx.rank + hops) % ctx.size, size)
    ctx.poll(0)
    ctx.complete(h)


def test_program_keyword_arguments_and_args_are_swept(core) -> None:
    import functools

    df = acesim.sweep(
        "table1", _sized_ring, {"program.size": [64, 65536], "program.hops": [1, 2]}, ranks=4, processes=0, progress=False
    )
    assert list(df.columns[:2]) == ["program.size", "program.hops"]
    for row in df.itertuples(index=False):
        one = acesim.simulate("table1", functools.partial(_sized_ring, size=row[0], hops=row[1]), 4)
        assert one.predicted_time_ps == row.predicted_time_ps
    small, big = df[df["program.hops"] == 1]["predicted_time_ps"]
    assert big > small

    def by_args(ctx: Context) -> None:
        _sized_ring(ctx, int(ctx.args[0]))

    df = acesim.sweep("table1", by_args, {"args": [["64"], ["65536"]]}, ranks=4, progress=False)
    assert df["args"].tolist() == [["64"], ["65536"]]
    assert df["predicted_time_ps"].tolist() == [
        acesim.simulate("table1", _sized_ring, 4).predicted_time_ps,
        acesim.simulate("table1", functools.partial(_sized_ring, size=65536), 4).predicted_time_ps,
    ]


def test_program_parameters_that_cannot_apply_are_refused(tmp_path) -> None:
    sched = tmp_path / "p.sched"
    sched.write_text("ranks 1\nrank 0\ncompute 1ns\n")
    with pytest.raises(TypeError, match="program.size.*file or a schedule.*'args'"):
        acesim.sweep("table1", str(sched), {"program.size": [1, 2]}, progress=False)
    with pytest.raises(TypeError, match="argument lists"):
        acesim.sweep("table1", _sized_ring, {"args": ["64", "128"]}, progress=False)
    with pytest.raises(TypeError, match="not a keyword argument name"):
        acesim.sweep("table1", _sized_ring, {"program.2x": [1]}, progress=False)


CALLS: list[int] = []


def _counted(ctx: Context, size: int = 64) -> None:
    if ctx.rank == 0:
        CALLS.append(size)
    _sized_ring(ctx, size)


def test_a_cached_sweep_runs_only_the_points_it_has_not_finished(core, tmp_path) -> None:
    cache = tmp_path / "cache"
    CALLS.clear()
    first = acesim.sweep("table1", _counted, {"program.size": [64, 128]}, ranks=2, processes=0, progress=False, cache=cache)
    assert sorted(CALLS) == [64, 128] and len(list(cache.iterdir())) == 2
    CALLS.clear()
    # Resumed with one more point: only that one runs; the others come from the cache.
    more = acesim.sweep("table1", _counted, {"program.size": [64, 128, 256]}, ranks=2, processes=0, progress=False, cache=cache)
    assert CALLS == [256]
    assert more["predicted_time_ps"].tolist()[:2] == first["predicted_time_ps"].tolist()
    assert more["predicted_time_ps"].tolist()[2] == acesim.simulate("table1", lambda c: _sized_ring(c, 256), 2).predicted_time_ps
    # Another machine, model or rank count is another point; a damaged file runs again.
    CALLS.clear()
    acesim.sweep("table1", _counted, {"program.size": [64]}, ranks=3, processes=0, progress=False, cache=cache)
    assert CALLS == [64]
    for f in cache.iterdir():
        f.write_text("{ not json")
    CALLS.clear()
    again = acesim.sweep("table1", _counted, {"program.size": [64, 128]}, ranks=2, processes=2, progress=False, cache=cache)
    assert again["predicted_time_ps"].tolist() == first["predicted_time_ps"].tolist()
    assert len(CALLS) == 0  # they ran in forked workers, whose calls this process does not see
    CALLS.clear()
    acesim.sweep("table1", _counted, {"program.size": [64, 128]}, ranks=2, processes=0, progress=False, cache=cache)
    assert CALLS == []  # the forked run wrote them back


def test_a_sweep_on_a_dask_client_gives_the_same_rows(core) -> None:
    distributed = pytest.importorskip("distributed")
    params = {"program.size": [64, 4096], "node.overhead": ["0 ns", "0.6 us"]}
    here = acesim.sweep("table1", _sized_ring, params, ranks=3, processes=0, progress=False)
    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        there = acesim.sweep("table1", _sized_ring, params, ranks=3, client=client, progress=False)
        assert there.drop(columns="wall_seconds").equals(here.drop(columns="wall_seconds"))

        def crash(ctx: Context, size: int = 0) -> None:
            if size == 2:
                raise RuntimeError("boom")

        with pytest.raises(acesim.ProgramError, match="program.size=2.*boom"):
            acesim.sweep("table1", crash, {"program.size": [1, 2]}, ranks=2, client=client, progress=False)


def test_message_sizes_example_resumes_from_its_cache(core, root, tmp_path) -> None:
    import os
    import subprocess
    import sys

    script = os.path.join(root, "examples", "python", "message_sizes.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = [
        subprocess.run([sys.executable, script, "--cache", str(tmp_path / "c")], capture_output=True, text=True, env=env)
        for _ in range(2)
    ]
    for proc in runs:
        assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "c").iterdir())) == 12
    assert runs[0].stdout == runs[1].stdout  # the same rows, the second time from the cache
    assert "slingshot" in runs[0].stdout and "hdr-fat-tree" in runs[0].stdout


def test_motifs_run_and_sweep_by_their_arguments(core) -> None:
    m = acesim.Machine.torus([4, 4])
    r = acesim.simulate(m, "motif:halo2d", 16, args=["iterations=5", "size=8KiB"])
    # 4x4 grid without wrap-around: 48 messages an iteration.
    assert len(r.operations) == 5 * 48 and set(r.operations["size"]) == {8192}
    df = acesim.sweep(m, "motif:ring", {"args": [["size=1KiB"], ["size=64KiB"]]}, ranks=16, progress=False)
    small, big = df["predicted_time_ps"]
    assert big > small
    with pytest.raises(acesim.InputError, match="dims 3x3 hold 9 ranks, not the 16"):
        acesim.simulate(m, "motif:halo2d", 16, args=["dims=3x3"])
