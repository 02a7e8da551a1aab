"""Results of a simulation: the JSON summary as Python values and pandas DataFrames.

A :class:`Result` comes from :func:`acesim.simulate` (a *live* result, backed by the core's
result object: it can also write link CSVs and timelines) or from a saved JSON summary
(:meth:`Result.from_json`). The fields are those of ``acesim run --json`` (README, "Outputs").
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ._units import format_time
from .machine import Machine, atomic_write

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["Result"]

OPERATION_COLUMNS = [
    "kind",
    "rank",
    "src",
    "dst",
    "size",
    "tag",
    "issue_ps",
    "dma_start_ps",
    "landed_ps",
    "complete_ps",
    "latency_ps",
    "network_latency_ps",
    "bandwidth_bytes_per_s",
]
RECEIVE_COLUMNS = [
    "rank",
    "src",
    "tag",
    "size",
    "protocol",
    "posted_ps",
    "landed_ps",
    "complete_ps",
]
REGION_COLUMNS = ["name", "count", "min_ps", "max_ps", "mean_ps", "first_begin_ps", "last_end_ps"]
COLLECTIVE_COLUMNS = [
    "kind",
    "algorithm",
    "comm",
    "size",
    "root",
    "ranks",
    "start_ps",
    "end_ps",
    "duration_ps",
    "mean_rank_ps",
]
LINK_COLUMNS = [
    "link",
    "name",
    "class",
    "bandwidth_bytes_per_s",
    "bytes",
    "packets",
    "busy_ps",
    "utilization",
    "wait_ps",
    "stall_ps",
    "src_router",
    "dst_router",
]
TRACE_COLUMNS = ["rank", "kind", "name", "start_ps", "end_ps"]
_LINK_NAME = re.compile(r"^(?:r(\d+)\.p\d+|nic\d+)->(?:r(\d+)|nic\d+)$")


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    import pandas as pd

    df = pd.DataFrame.from_records(rows) if rows else pd.DataFrame(columns=columns)
    extra = [c for c in df.columns if c not in columns]
    return df[[c for c in columns if c in df.columns] + extra]


def _routers_from_name(name: str) -> tuple[int | None, int | None]:
    m = _LINK_NAME.match(name)
    if not m:
        return None, None
    a, b = m.groups()
    return (int(a) if a is not None else None, int(b) if b is not None else None)


def parse_topology(description: str) -> dict[str, Any]:
    """What the one-line ``topology`` description says, e.g. ``"torus 4x4: 16 routers, 16 nodes,
    1 NICs/node"`` -> ``{"kind": "torus", "dims": [4, 4], "routers": 16, "nodes": 16}``."""
    head, _, tail = description.partition(":")
    words = head.split()
    out: dict[str, Any] = {"kind": words[0] if words else "unknown"}
    for w in words[1:]:
        if re.fullmatch(r"\d+(x\d+)*", w):
            out["dims"] = [int(x) for x in w.split("x")]
    for number, what in re.findall(r"(\d+) (routers|nodes)", tail):
        out[what] = int(number)
    return out


class Result:
    """The outcome of one simulation.

    Scalars: :attr:`predicted_time` (seconds), :attr:`predicted_time_ps`, :attr:`num_ranks`,
    :attr:`events`, :attr:`packet_hops`, :attr:`wall_seconds`, :attr:`model`; the raw summary
    is :attr:`data`.
    Tables (pandas DataFrames, one property each): :attr:`ranks`, :attr:`links`,
    :attr:`operations`, :attr:`receives`, :attr:`regions`, :attr:`collectives`, :attr:`trace`.
    """

    def __init__(
        self,
        data: dict[str, Any] | None = None,
        *,
        core_result: Any = None,
        machine: Machine | None = None,
    ) -> None:
        if data is None and core_result is None:
            raise TypeError("Result needs the summary data or a core result")
        self._data = data
        self._core = core_result
        self.machine = machine
        """The machine it ran on (live results only)."""

    @classmethod
    def from_core(cls, core_result: Any, machine: Machine | None = None) -> Result:
        return cls(core_result=core_result, machine=machine)

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> Result:
        """A result from a saved JSON summary (``acesim run --json`` or :meth:`save_json`)."""
        with open(os.fspath(path), encoding="utf-8") as f:
            return cls(json.load(f))

    @classmethod
    def from_json_text(cls, text: str) -> Result:
        return cls(json.loads(text))

    @property
    def live(self) -> bool:
        """True for results of :func:`acesim.simulate` (not loaded from JSON)."""
        return self._core is not None

    @property
    def data(self) -> dict[str, Any]:
        """The JSON summary as a dict."""
        if self._data is None:
            self._data = json.loads(self._core.json())
        return self._data

    # -- scalars ---------------------------------------------------------------------------------

    @property
    def predicted_time_ps(self) -> int:
        """The predicted execution time in picoseconds."""
        if self._core is not None:
            return int(self._core.predicted_time_ps)
        return int(self.data["predicted_time_ps"])

    @property
    def predicted_time(self) -> float:
        """The predicted execution time in seconds."""
        return self.predicted_time_ps / 1e12

    @property
    def partial(self) -> dict[str, Any] | None:
        """Why and where the run was stopped early (``reason``, ``stopped_at_ps``,
        ``ranks_finished``), or None for a complete run."""
        p = self.data.get("partial")
        return dict(p) if p else None

    @property
    def partitions(self) -> dict[str, Any] | None:
        """How the run would split among partitions, when measured
        (``simulate(..., partitions=N)``): ``lookahead_ps``, ``windows``, ``events`` per
        partition, ``cross_events``, ``critical_events``, ``speedup_bound``; else None."""
        p = self.data.get("partitions")
        return dict(p) if p else None

    @property
    def coupling(self) -> dict[str, Any] | None:
        """At flow level, when partitions are measured (``simulate(..., model="flow",
        partitions=N)``): how many rate solves would tie partitions together (``solves``,
        ``coupled_solves``, ``rate_changes``, ``rate_changes_across``, ``windows``,
        ``coupled_windows``, ``lookahead_ps``); else None."""
        c = self.data.get("coupling")
        return dict(c) if c else None

    @property
    def model(self) -> str:
        """The network model of the run: ``"packet"`` or ``"flow"`` (summaries written
        before there was a choice are ``"packet"``)."""
        if self._core is not None:
            return str(self._core.model)
        return str(self.data.get("model", "packet"))

    @property
    def machine_id(self) -> dict[str, Any]:
        """What the run's machine was, as the summary records it (also in saved JSON;
        :attr:`machine` is the live :class:`Machine`): ``name`` (a file, a preset), ``hash`` (16 hex digits
        of the SHA-256 of the machine with its defaults filled in: equal hashes, equal
        machines), ``topology``, ``routing``, ``max_packet_bytes``, ``routing_seed``,
        ``placement_seed``; empty for summaries written before acesim recorded it."""
        return dict(self.data.get("machine") or {})

    @property
    def num_ranks(self) -> int:
        return int(self.data["ranks"])

    @property
    def events(self) -> int:
        return int(self.data.get("events", 0))

    @property
    def packet_hops(self) -> int:
        return int(self.data.get("packet_hops", 0))

    @property
    def wall_seconds(self) -> float:
        """Seconds the simulation took (live results; saved JSON has no wall time, so
        that the same inputs give byte-identical files)."""
        if self._core is not None:
            return float(self._core.wall_seconds)
        return float(self.data.get("wall_seconds", 0.0))

    @property
    def topology(self) -> dict[str, Any]:
        """The topology: ``topology_detail`` of the summary (kind, routers, dims, wrap,
        nodes_per_router, k, n, leaves, spines) or, for summaries without it, what the
        one-line description gives (kind, dims, routers, nodes)."""
        detail = self.data.get("topology_detail")
        if detail:
            return dict(detail)
        out = parse_topology(str(self.data.get("topology", "")))
        if "dims" in out and "wrap" not in out:
            out["wrap"] = [out["kind"] == "torus"] * len(out["dims"])
        return out

    # -- tables ----------------------------------------------------------------------------------

    @cached_property
    def ranks(self) -> pd.DataFrame:
        """One row per rank: ``rank, node, finish_ps, compute_ps, overhead_ps``, then
        ``blocked_<kind>_ps`` for every kind of blocking call seen in the run (0 where a rank
        never blocked in it), e.g. ``blocked_poll_ps``, ``blocked_barrier_ps``; for a replayed
        MPI trace also ``traced_ps``, the rank's MPI region in the trace."""
        import pandas as pd

        rows = self.data.get("per_rank", [])
        kinds = sorted({k for r in rows for k in (r.get("blocked_ps") or {})})
        flat = []
        for r in rows:
            row = {k: v for k, v in r.items() if k != "blocked_ps"}
            blocked = r.get("blocked_ps") or {}
            for k in kinds:
                row[f"blocked_{k}_ps"] = int(blocked.get(k, 0))
            flat.append(row)
        base = ["rank", "node", "finish_ps", "compute_ps", "overhead_ps"]
        if not flat:
            return pd.DataFrame(columns=base)
        return _frame(flat, base + [f"blocked_{k}_ps" for k in kinds])

    @cached_property
    def links(self) -> pd.DataFrame:
        """One row per directed link: ``link`` (index), ``name`` (``r0.p1->r3``,
        ``r0.p4->nic0``, ``nic0->r0``), ``class`` (network, injection, ejection),
        ``bandwidth_bytes_per_s``, ``bytes``, ``packets``, ``busy_ps``, ``utilization``
        (busy / predicted time), ``wait_ps``, ``stall_ps`` (packet level only: a flow-level
        run has no such columns), ``src_router`` and ``dst_router`` (missing at a NIC end).
        Empty when the summary omitted them (``links_omitted``) and no live result can list
        them."""
        import pandas as pd

        rows = self.data.get("links")
        if rows is None and self._core is not None:
            text = self._core.links_csv()
            rows = []
            for rec in csv.DictReader(io.StringIO(text)):
                row: dict[str, Any] = dict(rec)
                for k in ("link", "bandwidth_bytes_per_s", "bytes", "packets"):
                    row[k] = int(row[k])
                row["busy_ps"] = int(row["busy_ps"])
                for k in ("wait_ps", "stall_ps"):
                    # Empty where the model does not measure them (flow): no column.
                    if row.get(k):
                        row[k] = int(row[k])
                    else:
                        row.pop(k, None)
                row["utilization"] = float(row["utilization"])
                rows.append(row)
        rows = [dict(r) for r in rows or []]
        for r in rows:
            if "src_router" not in r or "dst_router" not in r:
                r["src_router"], r["dst_router"] = _routers_from_name(str(r.get("name", "")))
        df = _frame(rows, LINK_COLUMNS)
        for c in ("src_router", "dst_router"):
            if c in df.columns:
                df[c] = pd.array(df[c].tolist(), dtype="Int64")
        return df

    @cached_property
    def operations(self) -> pd.DataFrame:
        """One row per put/get/message: ``kind, rank, src, dst, size, tag, issue_ps,
        dma_start_ps, landed_ps`` (last byte in remote memory), ``complete_ps, latency_ps``
        (complete - issue), ``network_latency_ps`` (complete - dma_start: without the issue
        overhead and the wait for a busy DMA engine), ``bandwidth_bytes_per_s`` (size /
        latency)."""
        return _frame(self.data.get("operations", []), OPERATION_COLUMNS)

    @cached_property
    def receives(self) -> pd.DataFrame:
        """One row per user receive: ``rank, src, tag, size, protocol`` (eager/rendezvous),
        ``posted_ps, landed_ps, complete_ps``."""
        return _frame(self.data.get("receives", []), RECEIVE_COLUMNS)

    @cached_property
    def regions(self) -> pd.DataFrame:
        """One row per region name: ``name, count, min_ps, max_ps, mean_ps, first_begin_ps,
        last_end_ps``."""
        return _frame(self.data.get("regions", []), REGION_COLUMNS)

    @cached_property
    def collectives(self) -> pd.DataFrame:
        """One row per collective call: ``kind, algorithm, comm, size, root, ranks, start_ps``
        (first rank in), ``end_ps`` (last rank out), ``duration_ps, mean_rank_ps``."""
        return _frame(self.data.get("collectives", []), COLLECTIVE_COLUMNS)

    @cached_property
    def trace(self) -> pd.DataFrame:
        """Per-rank intervals of a run with ``trace=True``: ``rank, kind`` (compute, overhead,
        blocked, region, collective), ``name, start_ps, end_ps``; empty otherwise."""
        return _frame(self.data.get("trace") or [], TRACE_COLUMNS)

    # -- output ----------------------------------------------------------------------------------

    def to_json(self) -> str:
        """The JSON summary text (the core's own text for live results)."""
        if self._core is not None:
            return str(self._core.json())
        return json.dumps(self.data, indent=2) + "\n"

    def save_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_json` to ``path`` atomically."""
        atomic_write(path, self.to_json())

    def to_parquet(self, folder: str | os.PathLike[str]) -> list[str]:
        """Write the tables (ranks, operations, receives, links, regions, collectives, and
        trace when the run has one) as Parquet files into ``folder``, each with what the run
        was in its schema's metadata (:func:`acesim.parquet.read_metadata`); returns their
        paths. Needs pyarrow."""
        from .parquet import write_parquet

        return write_parquet(self, folder)

    def links_csv(self) -> str:
        """The per-link CSV of ``acesim run --links-csv``."""
        if self._core is not None:
            return str(self._core.links_csv())
        if self.data.get("links") is None:
            raise ValueError("this summary has no per-link data")
        out = io.StringIO()
        cols = LINK_COLUMNS[:10]
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(cols)
        for r in self.data["links"]:
            row = [r.get(c, "") for c in cols]
            row[7] = f"{float(r.get('utilization', 0.0)):.6f}"
            writer.writerow(row)
        return out.getvalue()

    def timeline(self, path: str | os.PathLike[str], links: list[str] | None = None) -> None:
        """Write the timeline (Chrome trace JSON: per-rank activity, every operation as a
        slice, and utilization counters of ``links``: link names or ``"busiest:N"``) to
        ``path`` atomically. Only for live results of a run with ``trace=True``; open it in
        chrome://tracing or https://ui.perfetto.dev."""
        if self._core is None:
            raise ValueError("timeline() needs a result of acesim.simulate(), not a loaded summary")
        names = [] if links is None else [str(x) for x in links]
        atomic_write(path, self._core.timeline_json(names))

    def summary(self) -> str:
        """A few lines of text: predicted time, run size, regions, collectives, busiest links."""
        d = self.data
        lines = [
            f"predicted execution time: {format_time(self.predicted_time_ps)} "
            f"({self.predicted_time_ps} ps)",
        ]
        if d.get("topology"):
            lines.append(f"machine: {d['topology']}")
        # A saved summary has no wall time (files are byte-identical): none is shown.
        wall = f"   wall: {self.wall_seconds:.3f} s" if self.live or "wall_seconds" in d else ""
        lines.append(
            f"ranks: {d.get('ranks')}   operations: {len(d.get('operations', []))}   "
            f"events: {d.get('events')}   packet-hops: {d.get('packet_hops')}{wall}"
        )
        for r in d.get("regions", []):
            lines.append(
                f"region {r['name']}: {r['count']} entries, min {format_time(r['min_ps'])}, "
                f"mean {format_time(r['mean_ps'])}, max {format_time(r['max_ps'])}"
            )
        colls: dict[tuple[str, str], list[int]] = {}
        for c in d.get("collectives", []):
            colls.setdefault((c["kind"], c["algorithm"]), []).append(int(c["duration_ps"]))
        for (kind, algo), durs in colls.items():
            lines.append(
                f"{kind} ({algo}): {len(durs)} calls, total {format_time(sum(durs))}, "
                f"max {format_time(max(durs))}"
            )
        try:
            links = self.links
        except Exception:  # pragma: no cover - links are a convenience here
            links = None
        if links is not None and len(links) and "utilization" in links.columns:
            top = links.sort_values("utilization", ascending=False).head(3)
            busiest = ", ".join(
                f"{r.name} {r.utilization:.1%}" for r in top.itertuples(index=False)
            )
            lines.append(f"busiest links: {busiest}")
        warn = []
        if d.get("unpolled_puts"):
            warn.append(f"{len(d['unpolled_puts'])} unpolled puts")
        if d.get("unmatched_messages"):
            warn.append(f"{len(d['unmatched_messages'])} unmatched messages")
        if d.get("unfinished_requests"):
            n = sum(u["count"] for u in d["unfinished_requests"])
            warn.append(f"{n} requests pending at the end of their rank")
        if d.get("unmatched_receives"):
            warn.append(f"{d['unmatched_receives']} unmatched receives")
        if warn:
            lines.append("warning: " + ", ".join(warn))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"<Result {format_time(self.predicted_time_ps)} on {self.data.get('ranks')} ranks"
            f"{'' if self.live else ' (loaded)'}>"
        )

    # -- plots -----------------------------------------------------------------------------------

    def plot_links(self, ax: Any = None, metric: str = "utilization") -> Figure:
        """Link load drawn on the topology (see :func:`acesim.plots.plot_links`)."""
        from .plots import plot_links

        return plot_links(self, ax=ax, metric=metric)

    def plot_timeline(self, ax: Any = None) -> Figure:
        """Per-rank activity bars (see :func:`acesim.plots.plot_timeline`)."""
        from .plots import plot_timeline

        return plot_timeline(self, ax=ax)
