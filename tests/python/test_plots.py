"""Plots return figures (Agg backend; no simulator needed)."""

from __future__ import annotations

import sys

import pandas as pd
import pytest
from conftest import sample_summary

import acesim
from acesim import plots

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.figure import Figure  # noqa: E402


def _links(names: list[str]) -> list[dict]:
    return [
        {"link": i, "name": n, "class": "network", "utilization": (i % 5) / 5, "bytes": i}
        for i, n in enumerate(names)
    ]


def test_plot_links_torus_2d(tmp_path) -> None:
    r = acesim.Result(sample_summary())
    fig = plots.plot_links(r)
    assert isinstance(fig, Figure)
    fig.savefig(tmp_path / "links.png")
    assert (tmp_path / "links.png").stat().st_size > 1000
    assert isinstance(r.plot_links(metric="bytes"), Figure)
    with pytest.raises(ValueError, match="metric"):
        plots.plot_links(r, metric="nope")


def test_plot_links_other_topologies() -> None:
    # 3D torus 2x2x3, fat tree k=2 n=2, leaf/spine, crossbar: names as the simulator writes.
    data = sample_summary(with_extras=False)
    dims = [2, 2, 3]
    names = []
    for r in range(12):
        x, y, z = r % 2, (r // 2) % 2, r // 4
        names += [f"r{r}.p0->r{(1 - x) + 2 * y + 4 * z}", f"r{r}.p1->r{x + 2 * (1 - y) + 4 * z}"]
        names += [
            f"r{r}.p2->r{x + 2 * y + 4 * ((z + 1) % 3)}",
            f"r{r}.p3->r{x + 2 * y + 4 * ((z - 1) % 3)}",
        ]
        names += [f"r{r}.p4->nic{r}", f"nic{r}->r{r}"]
    data["links"] = _links(names)
    data["topology_detail"] = {"kind": "torus", "routers": 12, "dims": dims, "wrap": [True] * 3}
    assert isinstance(plots.plot_links(acesim.Result(data)), Figure)

    tree = [
        "r0.p0->nic0",
        "r0.p1->nic1",
        "r0.p2->r2",
        "r0.p3->r3",
        "r1.p0->nic2",
        "r1.p1->nic3",
        "r1.p2->r2",
        "r1.p3->r3",
        "r2.p0->r0",
        "r2.p1->r1",
        "r3.p0->r0",
        "r3.p1->r1",
        "nic0->r0",
        "nic1->r0",
        "nic2->r1",
        "nic3->r1",
    ]
    for kind in ("fat_tree", "leaf_spine"):
        data["links"] = _links(tree)
        data["topology_detail"] = {"kind": kind, "routers": 4}
        assert isinstance(plots.plot_links(acesim.Result(data)), Figure)

    data["links"] = _links(["r0.p0->nic0", "r0.p1->nic1", "nic0->r0", "nic1->r0"])
    data["topology_detail"] = {"kind": "crossbar", "routers": 1}
    assert isinstance(plots.plot_links(acesim.Result(data)), Figure)

    data.pop("links")
    assert isinstance(plots.plot_links(acesim.Result(data)), Figure)  # "no per-link data"


def test_plot_links_draws_dragonfly_groups_apart_and_names_the_busiest_links() -> None:
    # 3 groups of 2 routers (r0-r1, r2-r3, r4-r5), each router one global link.
    local = [("r0.p0->r1", 0.1), ("r1.p0->r0", 0.1), ("r2.p0->r3", 0.2), ("r3.p0->r2", 0.2), ("r4.p0->r5", 0.0), ("r5.p0->r4", 0.0)]
    glob = [("r0.p1->r2", 0.9), ("r2.p1->r0", 0.3), ("r1.p1->r4", 0.5), ("r4.p1->r1", 0.05), ("r3.p1->r5", 0.7), ("r5.p1->r3", 0.0)]
    nics = [(f"r{r}.p2->nic{r}", 0.95) for r in range(6)]
    rows = [(n, u, "local") for n, u in local] + [(n, u, "global") for n, u in glob] + [(n, u, "ejection") for n, u in nics]
    data = sample_summary(with_extras=False)
    data["links"] = [{"link": i, "name": n, "class": c, "utilization": u, "bytes": 1} for i, (n, u, c) in enumerate(rows)]
    data["topology_detail"] = {"kind": "dragonfly", "routers": 6}
    positions, segs, _, widths, nic_load = plots._dragonfly_layout(
        [(*plots._endpoints(n), u) for n, u, _ in rows], [c for *_, c in rows], 6  # type: ignore[misc]
    )
    centre = {g: ((positions[2 * g][0] + positions[2 * g + 1][0]) / 2, (positions[2 * g][1] + positions[2 * g + 1][1]) / 2) for g in range(3)}
    # A group's routers sit closer to each other than to any other group's.
    import math

    inside = max(math.dist(positions[2 * g], positions[2 * g + 1]) for g in range(3))
    apart = min(math.dist(centre[a], centre[b]) for a in range(3) for b in range(a + 1, 3))
    assert inside < apart / 2
    assert sorted(widths) == [0.7] * 6 + [1.6] * 6 and nic_load == {r: 0.95 for r in range(6)}
    fig = plots.plot_links(acesim.Result(data))
    texts = [t.get_text() for t in fig.axes[0].texts]
    # NIC links aside: the five busiest fabric links, busiest first.
    assert "busiest: r0.p1->r2 90%, r3.p1->r5 70%, r1.p1->r4 50%, r2.p1->r0 30%, r2.p0->r3 20%" in texts


def test_plot_timeline_with_and_without_trace() -> None:
    assert isinstance(plots.plot_timeline(acesim.Result(sample_summary())), Figure)
    fig = acesim.Result(sample_summary(with_extras=False)).plot_timeline()
    assert isinstance(fig, Figure) and "operations" in fig.axes[0].get_title()


def test_plot_sweep_and_latency_throughput() -> None:
    df = pd.DataFrame(
        {
            "ranks": [2, 4, 8] * 2,
            "algo": ["ring"] * 3 + ["rd"] * 3,
            "predicted_time": [1e-6, 2e-6, 4e-6, 1e-6, 1.5e-6, 2e-6],
        }
    )
    fig = plots.plot_sweep(df, "ranks", hue="algo")
    assert isinstance(fig, Figure) and len(fig.axes[0].lines) == 2
    assert "µs" in fig.axes[0].get_ylabel()
    fig = plots.plot_sweep(df, "ranks", hue=["algo"], logx=True)
    assert len(fig.axes[0].get_legend().get_texts()) == 2
    lt = pd.DataFrame({"load": [0.1, 0.5, 0.9], "latency": [1.0, 2.0, 9.0]})
    fig = plots.plot_latency_throughput(lt)
    assert isinstance(fig, Figure) and len(fig.axes[0].lines) == 1


def test_plot_collectives_and_existing_axes() -> None:
    r = acesim.Result(sample_summary())
    fig = Figure()
    ax = fig.add_subplot()
    assert plots.plot_collectives(r, ax=ax) is fig


def test_missing_matplotlib_hint(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install acesim\[plot\]"):
        plots.plot_timeline(acesim.Result(sample_summary()))
