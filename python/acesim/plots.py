"""Plots of results and sweeps (matplotlib, imported only when a plot is drawn).

Every function draws on ``ax`` when given, else on a new figure, and returns the figure. New
figures are plain ``matplotlib.figure.Figure`` objects (no pyplot state): save them with
``fig.savefig(...)``; notebooks display them when they are the cell's value.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict, deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "plot_links",
    "plot_timeline",
    "plot_sweep",
    "plot_latency_throughput",
    "plot_latency_histograms",
    "plot_collectives",
]

TIMELINE_COLORS = {
    "compute": "#4C72B0",
    "overhead": "#DD8452",
    "blocked": "#C44E52",
    "region": "#55A868",
    "collective": "#8172B3",
}
OPERATION_COLORS = {"put": "#4C72B0", "get": "#55A868", "send": "#DD8452"}
_OFFSET = 0.09  # perpendicular shift separating the two directions of a link
_STUB = 0.32  # length of wrap-around and out-of-plane link stubs
_NAME = re.compile(r"^(?:r(\d+)\.p\d+|nic(\d+))->(?:r(\d+)|nic(\d+))$")


class ResultLike(Protocol):
    """What the plots read of a run: an :class:`acesim.Result` (this module does not import
    ``acesim.results``, which imports it for ``Result.plot_links`` and ``plot_timeline``)."""

    @property
    def data(self) -> dict[str, Any]: ...

    @property
    def predicted_time_ps(self) -> int: ...

    @property
    def topology(self) -> dict[str, Any]: ...

    @property
    def links(self) -> pd.DataFrame: ...

    @property
    def operations(self) -> pd.DataFrame: ...

    @property
    def collectives(self) -> pd.DataFrame: ...

    @property
    def trace(self) -> pd.DataFrame: ...


def _mpl() -> Any:
    try:
        import matplotlib
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise ImportError(
            "acesim plots need matplotlib: pip install acesim[plot] (or pip install matplotlib)"
        ) from None
    return matplotlib


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    mpl = _mpl()
    if ax is not None:
        return ax.figure, ax
    fig = mpl.figure.Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def time_scale(max_ps: float) -> tuple[float, str]:
    """(divisor, unit) to show picosecond values up to ``max_ps`` in readable units."""
    for div, unit in ((1e12, "s"), (1e9, "ms"), (1e6, "µs"), (1e3, "ns")):
        if max_ps >= div:
            return div, unit
    return 1.0, "ps"


# ---- links on the topology ---------------------------------------------------------------------


def _endpoints(name: str) -> tuple[tuple[str, int], tuple[str, int]] | None:
    m = _NAME.match(name)
    if not m:
        return None
    ra, na, rb, nb = m.groups()
    a = ("r", int(ra)) if ra is not None else ("n", int(na))
    b = ("r", int(rb)) if rb is not None else ("n", int(nb))
    return a, b


def _shifted(
    p: tuple[float, float], q: tuple[float, float], offset: float
) -> tuple[tuple[float, float], tuple[float, float]]:
    dx, dy = q[0] - p[0], q[1] - p[1]
    length = math.hypot(dx, dy) or 1.0
    nx, ny = dy / length * offset, -dx / length * offset  # to the right of the direction
    return (p[0] + nx, p[1] + ny), (q[0] + nx, q[1] + ny)


def _grid_coords(index: int, dims: Sequence[int]) -> list[int]:
    out = []
    for d in dims:
        out.append(index % d)
        index //= d
    return out


def _grid_layout(
    links: list[tuple[tuple[str, int], tuple[str, int], float]], topo: dict[str, Any], routers: int
) -> tuple[dict[int, tuple[float, float]], list[Any], list[float], dict[int, float]]:
    dims = [int(d) for d in topo.get("dims") or [routers]]
    nd = len(dims)
    width = dims[0] + (0.8 if nd > 2 else 0)

    def pos(r: int) -> tuple[float, float]:
        c = _grid_coords(r, dims)
        plane = 0
        mult = 1
        for k in range(2, nd):
            plane += c[k] * mult
            mult *= dims[k]
        return (c[0] + plane * width, float(c[1]) if nd > 1 else 0.0)

    positions = {r: pos(r) for r in range(routers)}
    segs, vals = [], []
    nic_load: dict[int, float] = defaultdict(float)
    for a, b, v in links:
        if a[0] == "n" or b[0] == "n":  # NIC links: shown as the router's color
            r = b[1] if a[0] == "n" else a[1]
            nic_load[r] = max(nic_load[r], v)
            continue
        ca, cb = _grid_coords(a[1], dims), _grid_coords(b[1], dims)
        diff = [k for k in range(nd) if ca[k] != cb[k]]
        if not diff:
            continue
        k = diff[0]
        step = cb[k] - ca[k]
        pa, pb = positions[a[1]], positions[b[1]]
        if k < 2 and abs(step) == 1:
            segs.append(_shifted(pa, pb, _OFFSET))
        else:
            # A wrap-around link (or one to another plane): a short stub leaving the router.
            forward = (step == 1) or (step < -1)  # + direction, or the wrap from the top end
            sign = 1.0 if forward else -1.0
            if k == 0:
                direction = (sign, 0.0)
            elif k == 1:
                direction = (0.0, sign)
            else:
                direction = (sign * 0.7, sign * 0.7)
            tip = (pa[0] + direction[0] * _STUB, pa[1] + direction[1] * _STUB)
            segs.append(_shifted(pa, tip, _OFFSET))
        vals.append(v)
    return positions, segs, vals, dict(nic_load)


def _tree_layout(
    links: list[tuple[tuple[str, int], tuple[str, int], float]], routers: int
) -> tuple[dict[Any, tuple[float, float]], list[Any], list[float]]:
    # Level of a router: hops from the routers that have NICs (leaves / edge switches).
    adj: dict[int, set[int]] = defaultdict(set)
    leaves: set[int] = set()
    nics: set[int] = set()
    for a, b, _ in links:
        if a[0] == "r" and b[0] == "r":
            adj[a[1]].add(b[1])
            adj[b[1]].add(a[1])
        elif a[0] == "n":
            leaves.add(b[1])
            nics.add(a[1])
        else:
            leaves.add(a[1])
            nics.add(b[1])
    level = {r: 0 for r in leaves}
    queue = deque(sorted(leaves))
    while queue:
        r = queue.popleft()
        for s in sorted(adj[r]):
            if s not in level:
                level[s] = level[r] + 1
                queue.append(s)
    for r in range(routers):
        level.setdefault(r, 0)
    by_level: dict[int, list[int]] = defaultdict(list)
    for r, lv in level.items():
        by_level[lv].append(r)
    show_nics = 0 < len(nics) <= 512
    width = max([len(v) for v in by_level.values()] + [len(nics) if show_nics else 0, 1])
    positions: dict[Any, tuple[float, float]] = {}
    for lv, rs in by_level.items():
        rs.sort()
        gap = width / len(rs)
        for i, r in enumerate(rs):
            positions[("r", r)] = ((i + 0.5) * gap, float(lv + 1))
    if show_nics:
        gap = width / len(nics)
        for i, n in enumerate(sorted(nics)):
            positions[("n", n)] = ((i + 0.5) * gap, 0.0)
    segs, vals = [], []
    for a, b, v in links:
        if a in positions and b in positions:
            segs.append(_shifted(positions[a], positions[b], _OFFSET * 0.6))
            vals.append(v)
    return positions, segs, vals


def _dragonfly_layout(
    links: list[tuple[tuple[str, int], tuple[str, int], float]], classes: list[str], routers: int
) -> tuple[dict[int, tuple[float, float]], list[Any], list[float], list[float], dict[int, float]]:
    """Groups (the routers joined by local links) on a circle, each group's routers on a
    small circle of their own; local links inside a group thin, global links between groups
    as thicker chords; a router colored by its busiest NIC link."""
    parent = list(range(routers))

    def find(r: int) -> int:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for (a, b, _), cls in zip(links, classes):
        if cls == "local" and a[0] == "r" and b[0] == "r":
            parent[find(a[1])] = find(b[1])
    groups: dict[int, list[int]] = defaultdict(list)
    for r in range(routers):
        groups[find(r)].append(r)
    ordered = sorted(groups.values(), key=min)
    count = len(ordered)
    # A group's circle a third of the distance between neighbouring groups' centres wide.
    inner = min(0.3, 0.33 * math.sin(math.pi / max(count, 2)))
    positions: dict[int, tuple[float, float]] = {}
    for g, members in enumerate(ordered):
        angle = 2 * math.pi * g / count + math.pi / 2
        cx, cy = math.cos(angle), math.sin(angle)
        for i, r in enumerate(sorted(members)):
            t = 2 * math.pi * i / len(members) + angle
            positions[r] = (cx + inner * math.cos(t), cy + inner * math.sin(t))
    segs, vals, widths = [], [], []
    nic_load: dict[int, float] = defaultdict(float)
    for (a, b, v), cls in zip(links, classes):
        if a[0] == "n" or b[0] == "n":
            r = b[1] if a[0] == "n" else a[1]
            nic_load[r] = max(nic_load[r], v)
            continue
        if a[1] not in positions or b[1] not in positions:
            continue
        glob = cls == "global"
        segs.append(_shifted(positions[a[1]], positions[b[1]], 0.006 if glob else 0.004))
        vals.append(v)
        widths.append(1.6 if glob else 0.7)
    return positions, segs, vals, widths, dict(nic_load)


def _crossbar_layout(
    links: list[tuple[tuple[str, int], tuple[str, int], float]],
) -> tuple[dict[Any, tuple[float, float]], list[Any], list[float]]:
    nics = sorted({e[1] for a, b, _ in links for e in (a, b) if e[0] == "n"})
    positions: dict[Any, tuple[float, float]] = {("r", 0): (0.0, 0.0)}
    for i, n in enumerate(nics):
        angle = 2 * math.pi * i / max(len(nics), 1)
        positions[("n", n)] = (math.cos(angle), math.sin(angle))
    segs, vals = [], []
    for a, b, v in links:
        if a in positions and b in positions:
            segs.append(_shifted(positions[a], positions[b], 0.025))
            vals.append(v)
    return positions, segs, vals


def _busiest_names(df: pd.DataFrame, metric: str, n: int = 5) -> list[str]:
    """The ``n`` fabric links (NIC links aside) highest in ``metric``, named with their value."""
    if "class" in df.columns:
        df = df[~df["class"].isin(["injection", "ejection"])]
    df = df[df[metric] > 0]
    if not len(df):
        return []
    top = df.sort_values([metric, "name"], ascending=[False, True], kind="stable").head(n)
    if metric == "utilization":
        return [f"{name} {v:.0%}" for name, v in zip(top["name"], top[metric])]
    return [f"{name} {v:g}" for name, v in zip(top["name"], top[metric])]


def plot_links(result: ResultLike, ax: Axes | None = None, metric: str = "utilization") -> Figure:
    """The load of every directed link drawn on the topology, colored by ``metric`` (any
    numeric column of ``result.links``: utilization, bytes, packets, busy_ps, and at the
    packet level wait_ps, stall_ps).

    2D torus/mesh: routers on a grid, each direction of a link a slightly offset line,
    wrap-around links as short stubs at the edges, routers colored by their busiest NIC link;
    3D and more: the z-planes side by side, links between planes as diagonal stubs. Fat tree
    and leaf/spine: switch levels (NICs below) stretched over the figure's height, with lines
    between levels. Dragonfly: groups on a circle, each group's routers on a small circle,
    global links as thick chords between groups and local links thin inside them. Crossbar:
    a star. The five busiest fabric links are named under the drawing.
    """
    mpl = _mpl()
    from matplotlib.collections import LineCollection

    df = result.links
    fig, ax = _axes(ax, (8, 6))
    ax.set_axis_off()
    if df is None or len(df) == 0:
        ax.text(0.5, 0.5, "no per-link data", ha="center", va="center", transform=ax.transAxes)
        return fig
    if metric not in df.columns:
        if metric in ("wait_ps", "stall_ps") and result.data.get("model") == "flow":
            raise ValueError(
                f"{metric} is measured at the packet level only: this run used the flow model, "
                "where no packet waits and no buffer fills"
            )
        raise ValueError(f"unknown metric {metric!r}: one of {', '.join(map(str, df.columns))}")
    links = []
    for name, value in zip(df["name"].astype(str), df[metric].astype(float)):
        ends = _endpoints(name)
        if ends is not None:
            links.append((ends[0], ends[1], float(value)))
    topo = result.topology
    kind = str(topo.get("kind", "unknown"))
    routers = int(
        topo.get("routers")
        or 1 + max([e[1] for a, b, _ in links for e in (a, b) if e[0] == "r"] or [0])
    )
    vmax = max([v for *_, v in links] + [0.0])
    if metric == "utilization":
        vmax = max(vmax, 1e-9)
    norm = mpl.colors.Normalize(vmin=0.0, vmax=vmax or 1.0)
    cmap = mpl.colormaps["viridis"]

    router_xy: dict[int, tuple[float, float]] = {}
    router_val: dict[int, float] = {}
    nic_xy: dict[int, tuple[float, float]] = {}
    widths: list[float] | float = 2.2
    aspect = "equal"
    if kind in ("torus", "mesh"):
        router_xy, segs, vals, router_val = _grid_layout(links, topo, routers)
        dims = topo.get("dims") or [routers]
        title = f"{kind} {'x'.join(map(str, dims))}: {metric} (routers: busiest NIC link)"
    elif kind == "dragonfly" and "class" in df.columns:
        classes = [str(c) for n, c in zip(df["name"].astype(str), df["class"].astype(str)) if _endpoints(n) is not None]
        router_xy, segs, vals, widths, router_val = _dragonfly_layout(links, classes, routers)
        title = f"dragonfly, {len(set(router_xy))} routers: {metric} (global links thick)"
    else:
        if kind == "crossbar":
            pos, segs, vals = _crossbar_layout(links)
        else:
            pos, segs, vals = _tree_layout(links, routers)
        router_xy = {k[1]: v for k, v in pos.items() if k[0] == "r"}
        nic_xy = {k[1]: v for k, v in pos.items() if k[0] == "n"}
        title = f"{kind}: {metric}"
        if kind != "crossbar":
            # Levels are few and wide: stretch them over the figure's height.
            aspect = "auto"
            title = f"{kind}: {metric} (switch levels, nodes below)"

    lc = LineCollection(segs, cmap=cmap, norm=norm, linewidths=widths, capstyle="round")
    lc.set_array(vals)
    ax.add_collection(lc)
    if router_xy:
        rs = sorted(router_xy)
        xs = [router_xy[r][0] for r in rs]
        ys = [router_xy[r][1] for r in rs]
        faces = [cmap(norm(router_val[r])) if r in router_val else "white" for r in rs]
        size = 140 if len(rs) <= 64 else max(10, 4000 / len(rs))
        ax.scatter(xs, ys, s=size, marker="s", c=faces, edgecolors="black", zorder=3)
        if len(rs) <= 64:
            for r, x, y in zip(rs, xs, ys):
                ax.text(x, y, str(r), ha="center", va="center", fontsize=6, zorder=4)
    if nic_xy:
        ax.scatter(
            [p[0] for p in nic_xy.values()],
            [p[1] for p in nic_xy.values()],
            s=18,
            marker="o",
            c="lightgray",
            edgecolors="black",
            zorder=3,
        )
    ax.autoscale_view()
    ax.set_aspect(aspect, adjustable="datalim")
    ax.margins(0.08)
    named = _busiest_names(df, metric)
    if named:
        ax.text(0.0, -0.02, "busiest: " + ", ".join(named), transform=ax.transAxes, fontsize=7, va="top")
    fig.colorbar(mpl.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label=metric, shrink=0.8)
    ax.set_title(title)
    return fig


# ---- timeline ------------------------------------------------------------------------------------


def _bars(ax: Axes, y: Any, left: Any, width: Any, height: float, color: str, alpha: float = 1.0) -> None:
    """Horizontal bars centred on ``y`` as one collection: a timeline has one bar per
    operation, and ``barh`` (a patch each) takes seconds for ten thousand of them."""
    import numpy as np
    from matplotlib.collections import PolyCollection

    y = np.asarray(y, dtype=float)
    x0 = np.asarray(left, dtype=float)
    x1 = x0 + np.asarray(width, dtype=float)
    lo, hi = y - height / 2, y + height / 2
    corners = [np.column_stack(c) for c in ((x0, lo), (x1, lo), (x1, hi), (x0, hi))]
    ax.add_collection(
        PolyCollection(np.stack(corners, axis=1), facecolors=color, edgecolors="none", linewidths=0, alpha=alpha)
    )


def plot_timeline(result: ResultLike, ax: Axes | None = None) -> Figure:
    """Per-rank horizontal bars over time.

    With a trace (``simulate(..., trace=True)``): compute, overhead and blocked time as full
    bars, regions and collectives as thin bars above them, each kind in its own color.
    Without one: every operation (put/get/send) from issue to completion.
    """
    _mpl()
    from matplotlib.patches import Patch

    tr = result.trace
    n = max(int(result.data.get("ranks", 1)), 1)
    fig, ax = _axes(ax, (10, min(2 + 0.25 * n, 14)))
    div, unit = time_scale(max(result.predicted_time_ps, 1))
    handles = []
    if len(tr):
        for kind, color in TIMELINE_COLORS.items():
            rows = tr[tr["kind"] == kind]
            if not len(rows):
                continue
            thin = kind in ("region", "collective")
            offset = -0.42 if kind == "region" else -0.28
            y = rows["rank"].astype(float) + (offset if thin else 0.0)
            _bars(
                ax,
                y,
                rows["start_ps"] / div,
                (rows["end_ps"] - rows["start_ps"]) / div,
                height=0.14 if thin else 0.6,
                color=color,
            )
            handles.append(Patch(color=color, label=kind))
        ax.set_title("timeline")
    else:
        ops = result.operations
        for kind, rows in ops.groupby("kind") if len(ops) else []:
            color = OPERATION_COLORS.get(str(kind), "#937860")
            _bars(
                ax,
                rows["rank"].astype(float),
                rows["issue_ps"] / div,
                (rows["complete_ps"] - rows["issue_ps"]).clip(lower=0) / div,
                height=0.6,
                color=color,
                alpha=0.6,
            )
            handles.append(Patch(color=color, alpha=0.6, label=f"{kind} (issue → complete)"))
        ax.set_title("operations (run with trace=True for the full timeline)")
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("rank")
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0, max(result.predicted_time_ps, 1) / div)
    if n <= 40:
        ax.set_yticks(range(n))
    if handles:
        ax.legend(handles=handles, loc="upper right", fontsize="small")
    return fig


# ---- sweeps ---------------------------------------------------------------------------------


def _groups(df: pd.DataFrame, hue: str | Sequence[str] | None) -> list[tuple[str, pd.DataFrame]]:
    if hue is None:
        return [("", df)]
    cols = [hue] if isinstance(hue, str) else list(hue)
    out = []
    for key, group in df.groupby(cols, sort=False):
        keys = key if isinstance(key, tuple) else (key,)
        out.append((", ".join(f"{c}={k}" for c, k in zip(cols, keys)), group))
    return out


def _y_scale(df: pd.DataFrame, y: str) -> tuple[float, str]:
    if y == "predicted_time" or y.endswith("_seconds"):
        div, unit = time_scale(float(df[y].max()) * 1e12 if len(df) else 1.0)
        return div / 1e12, f"{y.replace('_', ' ')} ({unit})"
    if y.endswith("_ps"):
        div, unit = time_scale(float(df[y].max()) if len(df) else 1.0)
        return div, f"{y[:-3].replace('_', ' ')} ({unit})"
    return 1.0, y


def plot_sweep(
    df: pd.DataFrame,
    x: str,
    y: str = "predicted_time",
    hue: str | Sequence[str] | None = None,
    ax: Axes | None = None,
    *,
    logx: bool = False,
    logy: bool = False,
) -> Figure:
    """``y`` against ``x`` from a :func:`acesim.sweep` table, one line per value of ``hue``
    (a column or a list of columns). Times are shown in readable units."""
    fig, ax = _axes(ax, (7, 4.5))
    div, ylabel = _y_scale(df, y)
    for label, group in _groups(df, hue):
        g = group.sort_values(x)
        ax.plot(g[x], g[y] / div, marker="o", markersize=3, label=label or None)
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if hue is not None:
        ax.legend(fontsize="small")
    return fig


def plot_latency_throughput(
    df: pd.DataFrame,
    load: str = "load",
    latency: str = "latency_mean_ns",
    hue: str | Sequence[str] | None = None,
    ax: Axes | None = None,
    *,
    logy: bool = False,
) -> Figure:
    """Latency against offered load (one line per value of ``hue``): the classic network
    saturation curve. Any two numeric columns work; ``*_ps`` latencies are shown in units."""
    fig, ax = _axes(ax, (7, 4.5))
    if latency not in df.columns and "latency" in df.columns:
        latency = "latency"
    div, ylabel = _y_scale(df, latency)
    for label, group in _groups(df, hue):
        g = group.sort_values(load)
        ax.plot(g[load], g[latency] / div, marker="o", markersize=3, label=label or None)
    ax.set_xlabel(f"offered load ({load})" if load != "load" else "offered load")
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if hue is not None:
        ax.legend(fontsize="small")
    return fig


def plot_latency_histograms(points: pd.DataFrame) -> Figure:
    """The distribution of packet latency at each offered load, one panel per pattern: the
    ``latency_histogram`` of the points of ``acesim.traffic()`` or ``acesim traffic --json``
    (bins four to an octave), as the share of the measured packets per bin, on a log
    latency axis. Past saturation the mass moves right by orders of magnitude."""
    mpl = _mpl()
    import matplotlib.pyplot as plt

    if "latency_histogram" not in points.columns:
        raise ValueError("plot_latency_histograms(): the points have no latency_histogram column (acesim traffic --json of acesim 0.1 or later)")
    patterns = sorted(points["pattern"].unique())
    fig, axes = plt.subplots(len(patterns), 1, figsize=(7, 2.6 * len(patterns) + 0.6), squeeze=False, layout="constrained")
    cmap = mpl.colormaps["viridis"]
    for ax, pattern in zip(axes[:, 0], patterns):
        rows = points[points["pattern"] == pattern].sort_values("load")
        n = max(len(rows) - 1, 1)
        for i, row in enumerate(rows.itertuples(index=False)):
            h = row.latency_histogram if isinstance(row.latency_histogram, dict) else {}
            counts, edges = h.get("counts") or [], h.get("edges_ns") or []
            total = sum(counts)
            if not total or len(edges) != len(counts) + 1:
                continue
            share = [c / total for c in counts]
            ax.stairs(share, edges, color=cmap(i / n), label=f"load {row.load:g}" + (" (saturated)" if row.saturated else ""))
        ax.set_xscale("log")
        plain = mpl.ticker.FuncFormatter(lambda x, _: f"{x:g}")
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(plain)
        ax.set_title(str(pattern), fontsize="medium")
        ax.set_ylabel("share of packets")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small", ncol=2)
    axes[-1, 0].set_xlabel("packet latency (ns)")
    return fig


def plot_collectives(result: ResultLike, ax: Axes | None = None) -> Figure:
    """One horizontal bar per collective call (first rank in to last rank out)."""
    df = result.collectives
    fig, ax = _axes(ax, (8, min(1.5 + 0.3 * max(len(df), 1), 14)))
    if not len(df):
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no collectives", ha="center", va="center", transform=ax.transAxes)
        return fig
    div, unit = time_scale(float(df["end_ps"].max()) or 1.0)
    labels = [f"{r.kind} ({r.algorithm}, {r.comm}, {r.size} B)" for r in df.itertuples()]
    ax.barh(
        range(len(df)),
        (df["end_ps"] - df["start_ps"]) / div,
        left=df["start_ps"] / div,
        color=TIMELINE_COLORS["collective"],
    )
    ax.set_yticks(range(len(df)), labels, fontsize="small")
    ax.set_ylim(len(df) - 0.5, -0.5)
    ax.set_xlabel(f"time ({unit})")
    ax.set_title("collectives")
    return fig
