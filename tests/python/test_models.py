"""The two network levels from Python: simulate(model=), Result.model, sweep over model,
compare_models() (need the compiled core)."""

from __future__ import annotations

import json

import pytest

import acesim
from acesim import Schedule
from acesim.cli import _program_index, main
from acesim.program import Context

TORUS = "examples/machines/torus-4x4.toml"
UNKNOWN = "unknown network model 'x' (expected packet or flow)"


def ring_put(ctx: Context) -> None:
    """examples/papers/ring_put.c in Python."""
    h = ctx.put((ctx.rank + 1) % ctx.size, 4, 0)
    ctx.poll(0)
    ctx.complete(h)


def incast(ctx: Context) -> None:
    """Every other rank puts 64 KiB to rank 0 at once."""
    if ctx.rank == 0:
        for _ in range(ctx.size - 1):
            ctx.poll(0)
    else:
        ctx.complete(ctx.put(0, 64 * 1024, 0))


def test_simulate_at_flow_level(core, in_root) -> None:
    packet = acesim.simulate("table1", ring_put, ranks=8)
    flow = acesim.simulate("table1", ring_put, ranks=8, model="flow")
    assert (packet.model, flow.model) == ("packet", "flow")
    assert packet.data["model"] == "packet" and flow.data["model"] == "flow"
    # Uncontended: the flow level is exact.
    assert flow.predicted_time_ps == packet.predicted_time_ps == 302258
    assert flow.operations["latency_ps"].tolist() == packet.operations["latency_ps"].tolist()
    # Links: the same rows and bytes, no waits or stalls at flow level.
    assert "wait_ps" in packet.links.columns and "stall_ps" in packet.links.columns
    assert "wait_ps" not in flow.links.columns and "stall_ps" not in flow.links.columns
    assert flow.links["bytes"].tolist() == packet.links["bytes"].tolist()
    assert flow.links["name"].tolist() == packet.links["name"].tolist()
    # The CSV leaves the cells empty; a result loaded from the JSON knows its model too.
    assert flow.links_csv().splitlines()[1].endswith(",,")
    loaded = acesim.Result.from_json_text(flow.to_json())
    assert loaded.model == "flow"
    assert "wait_ps" not in loaded.links.columns
    assert loaded.links_csv() == flow.links_csv()
    # Summaries from before the choice existed ran the packet model.
    old = dict(packet.data)
    del old["model"]
    assert acesim.Result(old).model == "packet"


def test_flow_level_links_read_from_the_csv(core, in_root) -> None:
    """Above 100 000 links the JSON leaves them out and the DataFrame is read from the CSV:
    empty wait/stall cells make no column (as a flow-level JSON has no such fields)."""
    flow = acesim.simulate("table1", ring_put, ranks=4, model="flow")
    data = dict(flow.data)
    del data["links"]
    data["links_omitted"] = True
    csv_only = acesim.Result(data, core_result=flow._core)
    links = csv_only.links
    assert "wait_ps" not in links.columns
    assert links["busy_ps"].tolist() == flow.links["busy_ps"].tolist()
    packet = acesim.simulate("table1", ring_put, ranks=4)
    data = dict(packet.data)
    del data["links"]
    links = acesim.Result(data, core_result=packet._core).links
    assert links["wait_ps"].tolist() == packet.links["wait_ps"].tolist()


def test_plots_say_waits_are_packet_only(core, in_root) -> None:
    pytest.importorskip("matplotlib")
    flow = acesim.simulate("table1", ring_put, ranks=4, model="flow")
    with pytest.raises(ValueError, match="wait_ps is measured at the packet level only"):
        flow.plot_links(metric="wait_ps")
    flow.plot_links(metric="bytes")


def test_bad_model_names(core) -> None:
    with pytest.raises(acesim.InputError) as info:
        acesim.simulate("table1", ring_put, ranks=2, model="x")
    assert str(info.value) == UNKNOWN
    with pytest.raises(acesim.InputError, match="did you mean `flow`"):
        acesim.simulate("table1", ring_put, ranks=2, model="flwo")
    with pytest.raises(TypeError, match="model must be a str"):
        acesim.simulate("table1", ring_put, ranks=2, model=1)  # type: ignore[arg-type]
    with pytest.raises(acesim.InputError) as info:
        acesim.sweep("table1", ring_put, {"model": ["packet", "x"]}, ranks=2, progress=False)
    assert str(info.value) == UNKNOWN
    with pytest.raises(acesim.InputError) as info:
        acesim.sweep("table1", ring_put, {"ranks": [2]}, model="x", progress=False)
    assert str(info.value) == UNKNOWN


def test_sweep_over_model(core) -> None:
    params = {"model": ["packet", "flow"], "ranks": [3, 5]}
    df = acesim.sweep("table1", incast, params, processes=2, progress=False)
    assert list(df.columns) == [
        "model",
        "ranks",
        "predicted_time",
        "predicted_time_ps",
        "events",
        "wall_seconds",
    ]
    assert list(zip(df["model"], df["ranks"])) == [
        ("packet", 3),
        ("packet", 5),
        ("flow", 3),
        ("flow", 5),
    ]
    for row in df.itertuples(index=False):
        one = acesim.simulate("table1", incast, row.ranks, model=row.model)
        assert one.predicted_time_ps == row.predicted_time_ps
        assert one.events == row.events
    # A fixed model for every point.
    flow = acesim.sweep("table1", incast, {"ranks": [3, 5]}, model="flow", progress=False)
    assert flow["predicted_time_ps"].tolist() == df["predicted_time_ps"].tolist()[2:]
    # With machine fields too.
    both = acesim.sweep(
        "table1",
        incast,
        {"node.overhead": ["0.6 us", "1 us"], "model": ["packet", "flow"]},
        ranks=3,
        processes=0,
        progress=False,
    )
    assert both["model"].tolist() == ["packet", "flow", "packet", "flow"]


def test_compare_models_exact_on_the_papers_ring(core, in_root) -> None:
    c = acesim.compare_models("table1", "examples/papers/ring_put.c", ranks=8)
    assert isinstance(c, acesim.ModelComparison)
    assert c.packet["predicted_time_ps"] == c.flow["predicted_time_ps"] == 302258
    assert c.time_difference == 0.0
    assert c.ranks == 8 and c.topology.startswith("crossbar")
    for interval in ("latency", "landed"):
        d = c.operations[interval]
        assert d["operations"] == d["exact"] == 8
        assert d["max_error"] == 0.0 and d["worst"] is None
    assert c.links["differing"] == 0
    assert c.packet_wall_seconds > 0 and c.flow_wall_seconds > 0
    assert c.speedup == pytest.approx(c.packet_wall_seconds / c.flow_wall_seconds)
    assert (c.packet_result.model, c.flow_result.model) == ("packet", "flow")
    assert "total time: flow - packet = 0 ps (0.000 %)" in c.report()
    assert str(c) == c.report().rstrip("\n")
    # The Python program gives the same comparison as the C one.
    py = acesim.compare_models("table1", ring_put, ranks=8)
    assert py.data == c.data


def test_compare_models_on_a_contended_incast(core, in_root, tmp_path) -> None:
    c = acesim.compare_models(TORUS, incast, ranks=9, trace=True)
    packet = acesim.simulate(TORUS, incast, ranks=9)
    flow = acesim.simulate(TORUS, incast, ranks=9, model="flow")
    assert c.packet["predicted_time_ps"] == packet.predicted_time_ps
    assert c.flow["predicted_time_ps"] == flow.predicted_time_ps
    p, f = packet.predicted_time_ps, flow.predicted_time_ps
    assert p != f
    assert c.time_difference == pytest.approx((f - p) / p, rel=1e-12)
    assert abs(c.time_difference) < 0.05
    errors = sorted(
        abs(b - a) / a
        for a, b in zip(packet.operations["latency_ps"], flow.operations["latency_ps"])
    )
    d = c.operations["latency"]
    assert d["operations"] == 8
    assert d["median_error"] == pytest.approx(errors[3], rel=1e-12)
    assert d["max_error"] == pytest.approx(errors[-1], rel=1e-12)
    w = d["worst"]
    assert (w["kind"], w["dst"], w["size"]) == ("put", 0, 65536)
    assert w["packet_ps"] == packet.operations["latency_ps"][w["index"]]
    assert "worst: operation" in c.report()
    assert len(c.packet_result.trace) and len(c.flow_result.trace)
    # The JSON is the command's: same inputs, same text, no wall time.
    assert "wall" not in c.to_json()
    schedule = tmp_path / "incast.sched"
    schedule.write_text(acesim.record(incast, 9))
    out = tmp_path / "c.json"
    code = main(["compare-models", str(schedule), "-m", TORUS, "-q", "--json", str(out)])
    assert code == 0
    assert json.loads(out.read_text()) == c.data


def test_compare_models_errors(core, in_root) -> None:
    def deadlock(ctx: Context) -> None:
        if ctx.rank == 0:
            ctx.poll(0)

    with pytest.raises(acesim.DeadlockError) as info:
        acesim.compare_models("table1", deadlock, ranks=2)
    message = str(info.value)
    assert message.startswith("the program can never finish at the packet level (1 rank")
    assert "the flow level cannot finish it either" in message
    with pytest.raises(acesim.InputError, match="router.vcs"):
        acesim.compare_models(acesim.Machine.preset("table1").set("router.vcs", 0), ring_put, 2)
    with pytest.raises(acesim.InputError, match="rank 3 is out of range"):
        acesim.compare_models("table1", Schedule("ranks 2\nrank 3\n"))
    with pytest.raises(TypeError, match="ranks must be an int"):
        acesim.compare_models("table1", ring_put, ranks="8")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'model'"):
        acesim.compare_models("table1", ring_put, ranks=2, model="flow")  # type: ignore[call-arg]


def test_compare_models_command_with_a_python_program(core, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ring.py").write_text(
        "def other(ctx):\n"
        "    h = ctx.put((ctx.rank + 1) % ctx.size, 4, 0)\n"
        "    ctx.poll(0)\n"
        "    ctx.complete(h)\n"
    )
    assert _program_index(["--model", "flow", "ring.py"]) == 2
    argv = ["compare-models", "ring.py", "--function", "other", "--ranks", "8", "--json", "c.json"]
    assert main(argv) == 0
    assert json.load(open("c.json"))["flow"]["predicted_time_ps"] == 302258
    assert main(["run", "--model", "flow", "ring.py", "--function", "other", "--ranks", "8",
                 "-q", "--json", "r.json"]) == 0
    assert json.load(open("r.json"))["model"] == "flow"
