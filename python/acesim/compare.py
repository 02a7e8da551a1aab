"""`compare_models`: one program at both network levels, packet and flow, and how far apart
they are (``acesim compare-models``)."""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._corelib import core
from .machine import Machine, resolve_machine, warn_machine
from .results import Result
from .simulation import ProgramLike, _program_input, _replay

__all__ = ["ModelComparison", "compare_models"]


@dataclass(frozen=True)
class ModelComparison:
    """How far the flow level is from the packet level on one program and machine.

    The fields are those of ``acesim compare-models --json`` (errors are fractions, the
    packet level the reference: ``|flow - packet| / packet``):

    - ``topology``, ``ranks``;
    - ``packet``, ``flow``: each level's ``model``, ``predicted_time_ps``,
      ``predicted_time`` and ``events``;
    - ``time_difference``: ``(flow - packet) / packet`` of the predicted time (None when the
      packet level predicts 0 and the flow level does not);
    - ``operations``: the user's operations (``Result.operations`` rows) matched across the
      levels (``packet_rows``, ``flow_rows``, ``matched``, ``reordered``), and for
      ``latency`` (complete - issue) and ``landed`` (landed - issue) the distribution of the
      error: ``operations``, ``exact``, ``median_error``, ``p95_error``, ``max_error``
      (nearest rank) and ``worst``, the operation with the largest error (``index`` in the
      packet run's rows, ``kind``, ``rank``, ``src``, ``dst``, ``size``, ``tag``,
      ``packet_issue_ps``, ``flow_issue_ps``, ``packet_ps``, ``flow_ps``, ``error``), None
      when every operation is exact;
    - ``links``: ``links``, ``differing`` (links whose bytes differ: only with adaptive or
      random routing on a dragonfly), ``max_difference_bytes``, ``worst`` (``link``,
      ``name``, ``packet_bytes``, ``flow_bytes``) and the total ``packet_bytes`` and
      ``flow_bytes``.

    Beyond the JSON: the wall time of each run (``packet_wall_seconds``,
    ``flow_wall_seconds``), :attr:`speedup`, the two runs as :class:`~acesim.Result`
    (``packet_result``, ``flow_result``: their DataFrames, plots and JSON), :meth:`report`
    (the text ``acesim compare-models`` prints) and :meth:`to_json`.
    """

    topology: str
    ranks: int
    packet: dict[str, Any]
    flow: dict[str, Any]
    time_difference: float | None
    operations: dict[str, Any]
    links: dict[str, Any]
    packet_wall_seconds: float
    flow_wall_seconds: float
    packet_result: Result = field(repr=False, compare=False)
    flow_result: Result = field(repr=False, compare=False)
    _json: str = field(repr=False, compare=False)
    _report: str = field(repr=False, compare=False)

    @property
    def speedup(self) -> float | None:
        """How many times faster the flow level ran (packet wall time / flow wall time);
        None when the flow level took no measurable time."""
        if self.flow_wall_seconds <= 0:
            return None
        return self.packet_wall_seconds / self.flow_wall_seconds

    @property
    def data(self) -> dict[str, Any]:
        """The JSON as a dict (no wall times)."""
        return dict(json.loads(self._json))

    def to_json(self) -> str:
        """The text ``acesim compare-models --json`` writes (no wall times: the same
        inputs give the same text)."""
        return self._json + "\n"

    def report(self) -> str:
        """The report ``acesim compare-models`` prints, wall times included."""
        return self._report

    def __str__(self) -> str:
        return self._report.rstrip("\n")


def compare_models(
    machine: Machine | str | os.PathLike[str],
    program: ProgramLike,
    ranks: int | None = None,
    *,
    args: Sequence[str] = (),
    trace: bool = False,
    check: bool = False,
    record_timeout: float | str | None = None,
    format: str | None = None,
    flops: str | float | None = None,
    compute_scale: float | None = None,
    compute_threshold: str | None = None,
    ignore_calls: Sequence[str] = (),
    jobs: int | str | None = None,
    max_message: str | int | None = None,
    collectives: str = "run",
) -> ModelComparison:
    """Run ``program`` on ``machine`` at the packet level and at the flow level, and return
    how far apart they are (:class:`ModelComparison`): the predicted times and their
    relative difference, the per-operation latency error (median, p95, max, the worst
    operation), the per-link byte difference, and the wall time of each run.

    The program is loaded (recorded) once. The arguments are those of
    :func:`acesim.simulate` (trace and job-layout options included) but ``model`` (both run) and ``max_events``/``max_sim_time`` (a
    comparison needs complete runs). ``trace=True`` traces both runs
    (``packet_result.trace``, ``flow_result.trace``).

    Raises what :func:`acesim.simulate` raises; DeadlockError when a level can never finish,
    its message naming the level (``... at the packet level``) and what the other level does
    with the program.
    """
    if ranks is not None:
        if isinstance(ranks, bool) or not hasattr(type(ranks), "__index__"):
            raise TypeError(
                f"compare_models(): ranks must be an int, not {type(ranks).__name__}"
            )
        ranks = operator.index(ranks)
    if isinstance(args, str):
        raise TypeError("compare_models(): args must be a sequence of str, not a str")
    args = [str(a) for a in args]
    m = resolve_machine(machine)
    warn_machine(m)
    text, name, fmt = _program_input(program, ranks, args, record_timeout)
    fmt, replay = _replay(
        "compare_models", format, fmt, ignore_calls, compute_scale, compute_threshold, flops,
        jobs, max_message, collectives,
    )
    out = core().compare_models(
        m.to_toml(), m.name, text, name, fmt, ranks, args, bool(trace), bool(check), **replay
    )
    data_text, report, packet, flow, packet_wall, flow_wall = out
    d = json.loads(data_text)
    return ModelComparison(
        topology=str(d["topology"]),
        ranks=int(d["ranks"]),
        packet=dict(d["packet"]),
        flow=dict(d["flow"]),
        time_difference=d["time_difference"],
        operations=dict(d["operations"]),
        links=dict(d["links"]),
        packet_wall_seconds=float(packet_wall),
        flow_wall_seconds=float(flow_wall),
        packet_result=Result.from_core(packet, machine=m),
        flow_result=Result.from_core(flow, machine=m),
        _json=data_text,
        _report=report,
    )
