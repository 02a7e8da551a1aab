"""simulate() and live results (need the compiled core)."""

from __future__ import annotations

import json
import os

import pytest

import acesim
from acesim import Machine, Schedule
from acesim.program import Context

HERE = "tests/python/test_simulate.py"


def fig1(ctx: Context) -> None:
    """examples/papers/fig1.c in Python."""
    t, dest, data_size, tag = 100000, 1, 4, 0
    if ctx.rank == 0:
        ctx.compute(t)
        handle = ctx.put(dest, data_size, tag)
        ctx.complete(handle)
    elif ctx.rank == 1:
        ctx.poll(tag)


def ring_put(ctx: Context) -> None:
    """examples/papers/ring_put.c in Python."""
    r = (ctx.rank + 1) % ctx.size
    handle = ctx.put(r, 4, 0)
    ctx.poll(0)
    ctx.complete(handle)


@pytest.mark.parametrize(
    "program, c_file, ranks, expected_ps",
    [
        (fig1, "examples/papers/fig1.c", 2, 100302258),
        (ring_put, "examples/papers/ring_put.c", 8, 302258),
    ],
)
def test_python_program_equals_c_program(
    core, in_root, program, c_file, ranks, expected_ps
) -> None:
    py = acesim.simulate("table1", program, ranks=ranks)
    c = acesim.simulate("table1", c_file, ranks=ranks)
    assert py.predicted_time_ps == c.predicted_time_ps == expected_ps
    # Byte-identical: the JSON carries no wall time.
    assert py.to_json() == c.to_json()
    assert "wall_seconds" not in json.loads(py.to_json())
    assert py.wall_seconds > 0
    assert py.predicted_time == pytest.approx(expected_ps / 1e12)


def test_machine_forms_and_program_forms(core, in_root, tmp_path) -> None:
    sched = acesim.record(ring_put, 4)
    path = tmp_path / "ring.sched"
    path.write_text(sched)
    machine_path = tmp_path / "m.toml"
    Machine.preset("table1").save(machine_path)
    times = {
        acesim.simulate("table1", Schedule(sched)).predicted_time_ps,
        acesim.simulate(Machine.preset("table1", ranks=4), str(path)).predicted_time_ps,
        acesim.simulate(str(machine_path), path).predicted_time_ps,
        acesim.simulate(machine_path, ring_put, 4).predicted_time_ps,
    }
    assert times == {302258}
    with pytest.raises(TypeError, match="ranks"):
        acesim.simulate("table1", ring_put)
    with pytest.raises(TypeError, match="Schedule"):
        acesim.simulate("table1", 42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Schedule"):
        acesim.simulate("table1", sched)


def test_program_args_reach_the_context(core) -> None:
    def prog(ctx: Context) -> None:
        ctx.compute(f"{ctx.args[0]} us")

    assert acesim.simulate("table1", prog, 2, args=["7"]).predicted_time_ps == 7_000_000


def test_errors(core, in_root) -> None:
    def bad_rank(ctx: Context) -> None:
        ctx.put(ctx.size + 5, 4)

    with pytest.raises(acesim.InputError) as info:
        acesim.simulate("table1", bad_rank, 2)
    assert HERE in str(info.value)  # the loader points at the Python call

    def deadlock(ctx: Context) -> None:
        ctx.poll(9)

    with pytest.raises(acesim.DeadlockError):
        acesim.simulate("table1", deadlock, 2)

    def crash(ctx: Context) -> None:
        raise KeyError("x")

    with pytest.raises(acesim.ProgramError, match="rank 0: KeyError"):
        acesim.simulate("table1", crash, 2)
    assert acesim.ProgramError is core.ProgramError
    assert acesim.InputError is core.InputError


def test_result_tables(core, in_root) -> None:
    r = acesim.simulate("examples/machines/torus-4x4.toml", "examples/schedules/hotspot.sched")
    assert r.live and r.num_ranks == 16 and r.events > 0
    ranks = r.ranks
    assert list(ranks["rank"]) == list(range(16))
    assert {"finish_ps", "compute_ps", "overhead_ps", "blocked_complete_ps"} <= set(ranks.columns)
    assert (ranks.filter(like="blocked_").fillna(0) >= 0).all().all()
    links = r.links
    assert len(links) == 96 and {"utilization", "src_router", "dst_router"} <= set(links.columns)
    assert links["bytes"].sum() > 0
    assert len(r.operations) == 15 and set(r.operations["kind"]) == {"put"}
    assert list(r.regions["name"]) == ["exchange"]
    assert len(r.collectives) == 0 and len(r.receives) == 0
    assert r.topology["kind"] == "torus" and r.topology["dims"] == [4, 4]
    assert "1.009 ms" in r.summary()
    assert r.links_csv().startswith("link,name,class,")


def test_save_json_and_reload(core, in_root, tmp_path) -> None:
    r = acesim.simulate("table1", fig1, 2)
    path = tmp_path / "out.json"
    r.save_json(path)
    assert os.listdir(tmp_path) == ["out.json"]
    back = acesim.Result.from_json(path)
    assert not back.live and back.predicted_time_ps == r.predicted_time_ps
    assert back.data == r.data
    assert back.operations.equals(r.operations)
    with pytest.raises(ValueError, match="simulate"):
        back.timeline(tmp_path / "t.json")


def _slices(events: list[dict]) -> set[tuple[int, int]]:
    """(start_ps, end_ps) of every slice of a Chrome trace: complete events (X) and async
    begin/end pairs (b/e), times in microseconds rounded to picoseconds."""
    out = set()
    begins: dict[tuple, float] = {}
    for e in events:
        ph = e.get("ph")
        if ph == "X":
            out.add((round(e["ts"] * 1e6), round((e["ts"] + e["dur"]) * 1e6)))
        elif ph == "b":
            begins[(e.get("cat"), e.get("id"), e.get("pid"))] = e["ts"]
        elif ph == "e":
            start = begins.pop((e.get("cat"), e.get("id"), e.get("pid")))
            out.add((round(start * 1e6), round(e["ts"] * 1e6)))
    return out


def test_timeline_contains_every_operation(core, in_root, tmp_path) -> None:
    r = acesim.simulate(
        "examples/machines/torus-4x4.toml", "examples/schedules/hotspot.sched", trace=True
    )
    path = tmp_path / "timeline.json"
    r.timeline(path, links=["r0.p0->r1"])
    data = json.loads(path.read_text())
    events = data["traceEvents"] if isinstance(data, dict) else data
    slices = _slices(events)
    for op in r.operations.itertuples():
        assert (op.issue_ps, op.complete_ps) in slices, op


def test_trace(core) -> None:
    def prog(ctx: Context) -> None:
        with ctx.region("work"):
            ctx.compute("1 us")
        ctx.barrier(algo="ring", transport="rdma")

    r = acesim.simulate(
        Machine.preset("table1").set("node.overhead", "0.6 us"), prog, 4, trace=True
    )
    tr = r.trace
    assert {"compute", "region", "collective"} <= set(tr["kind"])
    assert (tr["end_ps"] >= tr["start_ps"]).all()
    assert r.collectives.iloc[0]["algorithm"].startswith("ring")
    assert acesim.simulate("table1", prog, 4).trace.empty


def test_version(core) -> None:
    assert acesim.version() == core.version()
    assert isinstance(acesim.__version__, str)


def test_limits_give_partial_results_and_check_runs_clean(core) -> None:
    def many(ctx: Context) -> None:
        if ctx.rank == 0:
            for _ in range(50):
                ctx.put(1, "4KB", 1)
        else:
            for _ in range(50):
                ctx.poll(1)

    full = acesim.simulate("table1", many, 2, check=True)
    assert full.partial is None
    part = acesim.simulate("table1", many, 2, max_events=40)
    assert part.partial is not None and part.partial["reason"] == "max-events"
    assert part.events == 40
    assert part.predicted_time_ps < full.predicted_time_ps
    timed = acesim.simulate("table1", many, 2, max_sim_time="1us")
    assert timed.partial["reason"] == "max-sim-time"
    assert timed.predicted_time_ps == 1_000_000
    with pytest.raises(acesim.InputError, match="max_sim_time"):
        acesim.simulate("table1", many, 2, max_sim_time="soon")


def test_partitions_measure_how_a_run_would_split(core) -> None:
    torus = Machine.preset("table1").with_({"topology.kind": "torus", "topology.dims": [4, 2]})
    r = acesim.simulate(torus, ring_put, 8, partitions=2)
    p = r.partitions
    assert p is not None and p["partitions"] == 2
    assert sum(p["events"]) == r.events
    assert 1.0 <= p["speedup_bound"] <= 2.0
    assert p["cross_events_within_lookahead"] == 0
    assert acesim.simulate(torus, ring_put, 8).partitions is None
    with pytest.raises(ValueError, match="partitions must be >= 1"):
        acesim.simulate(torus, ring_put, 8, partitions=0)
    with pytest.raises(acesim.InputError, match="9 partitions for a torus of 8 router"):
        acesim.simulate(torus, ring_put, 8, partitions=9)
    # At flow level the solves are measured, not the events.
    f = acesim.simulate(torus, ring_put, 8, partitions=2, model="flow")
    assert f.partitions is None and r.coupling is None
    c = f.coupling
    assert c is not None and c["partitions"] == 2
    assert 0 <= c["coupled_solves"] <= c["solves"]
    assert c["rate_changes_across"] <= c["rate_changes"]


def test_ctrl_c_stops_simulate_promptly_with_the_partial_result(core) -> None:
    import os
    import signal
    import threading
    import time

    # Small to read, long to run: 3,000 allreduces on 64 ranks (about 3 s in release, ten
    # times the 0.3 s before the interrupt; 400 of them once took that long, no longer).
    ranks = 64
    text = f"ranks {ranks}\n" + "".join(
        f"rank {r}\n" + "allreduce 64KB\n" * 3000 for r in range(ranks)
    )
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            acesim.simulate("table1", acesim.Schedule(text))
    finally:
        timer.cancel()
    assert time.monotonic() - start < 8
    partial = info.value.partial_result
    assert isinstance(partial, acesim.Result)
    assert partial.partial is not None and partial.partial["reason"] == "interrupted"


def test_a_result_says_which_machine_it_ran_on(core) -> None:
    m = acesim.Machine.torus([4, 4])
    prog = acesim.Schedule("ranks 2\nrank 0\nput 1 8 tag=1\nrank 1\npoll 1\n")
    r = acesim.simulate(m, prog)
    assert r.machine_id["name"] == "<torus>" and r.machine_id["topology"] == "torus"
    assert r.machine_id["routing"] == "auto" and r.machine_id["max_packet_bytes"] == 2048
    # The same machine written another way has the same hash; another machine, another.
    same = acesim.simulate(acesim.Machine.from_toml(m.to_toml(), "copy.toml"), prog)
    assert same.machine_id["hash"] == r.machine_id["hash"] and same.machine_id["name"] == "copy.toml"
    assert acesim.simulate(m.set("router.vcs", 4), prog).machine_id["hash"] != r.machine_id["hash"]


def test_a_program_on_threads_gives_the_same_result(core) -> None:
    m = Machine.torus([4, 4])
    one = acesim.simulate(m, ring_put, ranks=16, trace=True)
    two = acesim.simulate(m, ring_put, ranks=16, trace=True, threads=2)
    assert one.to_json() == two.to_json()
    assert acesim.simulate(m, ring_put, ranks=16, threads=0).to_json() == acesim.simulate(m, ring_put, ranks=16).to_json()
    with pytest.raises(ValueError, match="threads"):
        acesim.simulate(m, ring_put, ranks=16, threads=-1)
    with pytest.raises(acesim.InputError, match="17 partitions"):
        acesim.simulate(m, ring_put, ranks=16, threads=17)
