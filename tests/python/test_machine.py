"""Machines: constructors, immutability, overrides, TOML round trip."""

from __future__ import annotations

import json
import os
import tomllib

import pytest

import acesim
from acesim import Machine
from acesim.machine import toml_value


def test_toml_values() -> None:
    assert toml_value("100 ns") == '"100 ns"'
    assert toml_value('a"b') == '"a\\"b"'
    assert toml_value(4) == "4"
    assert toml_value(True) == "true"
    assert toml_value(0.5) == "0.5"
    assert toml_value([4, 4]) == "[4, 4]"
    assert toml_value([True, False]) == "[true, false]"
    with pytest.raises(TypeError, match="router.vcs must be"):
        toml_value({"a": 1}, what="router.vcs")
    for v in ("x y", 3, 2.5, [1, 2], [True]):
        assert tomllib.loads(f"v = {toml_value(v)}")["v"] == (list(v) if isinstance(v, list) else v)


def test_preset_and_get(core) -> None:
    m = Machine.preset("table1")
    assert m.kind == "crossbar"
    assert m.get("router.vcs") == 2
    assert m.get("link.bandwidth") == "4 GB/s"
    assert m.get("topology.nodes", None) is None
    with pytest.raises(KeyError):
        m.get("router.nope")
    assert "table1" in Machine.presets()
    assert Machine.preset("table1", ranks=16).get("topology.nodes") == 16


def test_set_returns_new_machine(core) -> None:
    m = Machine.preset("table1")
    text = m.to_toml()
    m2 = m.set("router.switch_latency", "100 ns")
    m3 = m2.with_(**{"router.vcs": 4, "node.overhead": "0.6 us"})
    m4 = m.with_({"router.vcs": 4})
    assert m.to_toml() == text and m.get("router.vcs") == 2  # unchanged
    assert m2.get("router.switch_latency") == "100 ns"
    assert m3.get("router.vcs") == 4 and m3.get("router.switch_latency") == "100 ns"
    assert m4.get("router.vcs") == 4 and m4 != m and m4 == m.set("router.vcs", 4)
    assert m.with_() is m


def test_constructors(core) -> None:
    t = Machine.torus([4, 4], link="8 GB/s", latency="1 ns", fields={"router.vcs": 4})
    assert t.kind == "torus" and t.get("topology.dims") == [4, 4]
    assert t.get("link.bandwidth") == "8 GB/s" and t.get("router.vcs") == 4
    assert t.get("link.latency") == "1 ns"
    m = Machine.mesh([2, 3, 2], wrap=[False, True, False], nodes_per_router=2, overhead="0.6 us")
    assert m.get("topology.wrap") == [False, True, False]
    assert m.get("topology.nodes_per_router") == 2
    assert m.get("node.overhead") in ("0.6 us", "600 ns", "600000 ps")
    f = Machine.fat_tree(2, 3, dma="2 GB/s", ranks_per_node=2)
    assert (f.get("topology.k"), f.get("topology.n")) == (2, 3)
    assert f.get("placement.ranks_per_node") == 2
    ls = Machine.leaf_spine(4, 2, leaves=3, links_per_spine=2)
    assert ls.get("topology.spines") == 2 and ls.get("topology.leaves") == 3
    assert Machine.crossbar(8).get("topology.nodes") == 8
    d = Machine.dragonfly(2, 4, 2, routing="ugal", link="200 Gb/s", global_choice="load")
    assert d.kind == "dragonfly" and (d.get("topology.p"), d.get("topology.a"), d.get("topology.h")) == (2, 4, 2)
    # UGAL takes two global hops at most: three VC classes, unless the caller says.
    assert d.get("router.routing") == "ugal" and d.get("router.vcs") == 3
    assert d.get("topology.global_choice") == "load" and d.get("link.bandwidth") == "25 GB/s"  # 200 Gb/s, in bytes
    assert Machine.dragonfly(2, 4, 2, routing="valiant", fields={"router.vcs": 4}).get("router.vcs") == 4
    assert Machine.dragonfly(1, 2, 1, g=3).get("topology.g") == 3
    h = Machine.hyperx([4, 4, 1], nodes_per_router=2, routing="adaptive")
    assert h.kind == "hyperx" and h.get("topology.dims") == [4, 4, 1]
    # Adaptive takes VC class = hops taken: one class per dimension of size > 1.
    assert h.get("router.routing") == "adaptive" and h.get("router.vcs") == 2

    def ring(ctx: acesim.Context) -> None:
        q = ctx.isend((ctx.rank + 1) % ctx.size, 64)
        ctx.recv((ctx.rank - 1) % ctx.size, 64)
        ctx.wait(q)

    assert acesim.simulate(h, ring, ranks=32).predicted_time_ps > 0
    dal = Machine.hyperx([4, 4], 2, routing="dal")
    assert dal.get("router.vcs") == 4 and acesim.simulate(dal, ring, ranks=32).predicted_time_ps > 0
    s = Machine.slimfly(5)
    assert s.kind == "slimfly" and s.get("topology.q") == 5
    assert acesim.simulate(s, ring, ranks=200).predicted_time_ps > 0
    u = Machine.slimfly(5, routing="ugal")
    assert u.get("router.vcs") == 4 and acesim.simulate(u, ring, ranks=200).predicted_time_ps > 0


def test_graph_machines_read_their_file_from_any_folder(tmp_path, monkeypatch) -> None:
    ring = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "graphs", "ring8.graph")
    g = Machine.graph(ring, routes="layered", fields={"router.vcs": 4})
    assert g.kind == "graph" and os.path.isabs(g.get("topology.file"))
    monkeypatch.chdir(tmp_path)

    def ring_put(ctx: acesim.Context) -> None:
        ctx.put((ctx.rank + 1) % ctx.size, 4096)

    r = acesim.simulate(g, ring_put, ranks=16)
    assert r.predicted_time_ps > 0
    # up*/down* from router 0 takes detours a shortest path does not: never faster.
    u = acesim.simulate(Machine.graph(ring), ring_put, ranks=16)
    assert u.predicted_time_ps >= r.predicted_time_ps
    with pytest.raises(acesim.InputError, match="no such file"):
        Machine.graph("missing.graph")


def test_import_gives_plots_and_the_package_is_typed() -> None:
    import importlib.resources

    import acesim

    assert callable(acesim.plots.plot_links) and "plots" in acesim.__all__
    assert importlib.resources.files("acesim").joinpath("py.typed").is_file()


def test_type_errors_name_the_argument() -> None:
    # Checked before the core is needed.
    with pytest.raises(TypeError, match="dims"):
        Machine.torus("8x8")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dims"):
        Machine.torus([8, "8"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="wrap"):
        Machine.mesh([4], wrap="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'bandwidth'"):
        Machine.torus([4], bandwidth="4 GB/s")
    with pytest.raises(TypeError, match="k must be an int"):
        Machine.fat_tree("2", 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="nodes_per_router"):
        Machine.torus([4], nodes_per_router=1.5)  # type: ignore[arg-type]


def test_core_errors_name_the_field(core, tmp_path) -> None:
    m = Machine.preset("table1")
    with pytest.raises(acesim.InputError, match="router.vcs"):
        m.set("router.vcs", "many")
    with pytest.raises(TypeError, match="router.vcs"):
        m.set("router.vcs", object())
    bad = tmp_path / "bad.toml"
    bad.write_text('[topology]\nkind = "torus"\ndims = [4, 4]\n\n[router]\nvcs = "x"\n')
    with pytest.raises(acesim.InputError) as info:
        Machine.load(bad)
    assert "bad.toml:6" in str(info.value)  # file and line of the bad value
    with pytest.raises(ValueError):  # InputError is a ValueError
        Machine.from_toml("[topology]\nkind = 'hypercube'\n")


def test_save_is_atomic_and_round_trips(core, tmp_path) -> None:
    m = Machine.torus([4, 4], fields={"router.vcs": 4, "router.buffer_per_vc": "8 KiB"})
    path = tmp_path / "m.toml"
    m.save(path)
    assert os.listdir(tmp_path) == ["m.toml"]  # no temporary left behind
    assert oct(os.stat(path).st_mode & 0o777) != oct(0o600)  # like a plain open()
    back = Machine.load(path)
    assert back == m and back.to_toml() == m.to_toml()


def test_saved_machine_gives_identical_results_in_the_cli(core, tmp_path, in_root) -> None:
    m = Machine.torus([4, 4], overhead="0.6 us", fields={"router.buffer_per_vc": "8 KiB"})
    path = tmp_path / "m.toml"
    m.save(path)
    sched = "examples/schedules/hotspot.sched"
    live = acesim.simulate(m, sched)
    out = tmp_path / "cli.json"
    code = core.cli(["run", sched, "--machine", str(path), "--json", str(out), "-q"])
    assert code == 0
    a, b = json.loads(live.to_json()), json.loads(out.read_text())
    # The same machine by its hash; its name is how each was given.
    assert (a["machine"].pop("name"), b["machine"].pop("name")) == ("<torus>", str(path))
    assert a == b
    assert a["predicted_time_ps"] == 1008999092  # examples/machines/torus-4x4.toml


def test_pickle(core) -> None:
    import pickle

    m = Machine.preset("table1").set("router.vcs", 3)
    assert pickle.loads(pickle.dumps(m)) == m
