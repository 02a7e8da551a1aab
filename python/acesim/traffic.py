"""Synthetic traffic: latency and accepted throughput against offered load (docs/traffic.md)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ._corelib import core
from ._units import parse_size_bytes, parse_time_ps
from .machine import Machine, resolve_machine, warn_machine


def _size(value: int | str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{name} must be bytes (int) or a size with a unit, not {type(value).__name__}")
    return value if isinstance(value, int) else parse_size_bytes(value)


def _time(value: int | str | None, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"{name} must be picoseconds (int) or a time with a unit, not {type(value).__name__}")
    return value if isinstance(value, int) else parse_time_ps(value)


def _threads(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"threads must be a whole number of threads, 0 for every core, not {value!r}")
    return value


def traffic(
    machine: Machine | str | os.PathLike[str],
    pattern: str = "uniform",
    loads: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    *,
    packet: int | str = "64 B",
    flit: int | str | None = None,
    injection: str = "bernoulli",
    warmup: int | str | None = None,
    measure: int | str | None = None,
    drain: int | str | None = None,
    seed: int = 1,
    all_loads: bool = False,
    check: bool = False,
    threads: int = 1,
) -> Any:
    """Runs synthetic traffic at each offered load and returns a pandas DataFrame, one row
    per load: pattern, load, offered, accepted, latency_mean_ns, latency_p50_ns,
    latency_p99_ns, latency_histogram (``{"edges_ns": [...], "counts": [...]}``, bins four
    to an octave: docs/traffic.md), hops_mean, minimal_fraction, packets_measured, packets_lost,
    latency_growth, saturated, max_link_utilization, events, packet_hops,
    packets_delivered, and where it came from: packet_bytes, seed, model, acesim_version,
    routing, machine (its name) and machine_hash. Unless ``all_loads``, the sweep stops after two saturated loads.
    Times are picoseconds (int) or strings with units. ``check`` checks the model's
    invariants as each load runs (as ``acesim traffic --check``); a broken one raises
    ``acesim.InternalError``. ``threads=N`` runs each load on N threads, the machine split
    into N blocks of routers (0: every core, with at least 1,024 routers a thread), with the
    same results as one thread."""
    import pandas as pd

    m = resolve_machine(machine)
    warn_machine(m)
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in loads):
        raise TypeError("loads must be numbers in (0, 1]")
    text = core().traffic(
        m.to_toml(),
        m.name,
        pattern,
        [float(x) for x in loads],
        _size(packet, "packet"),
        None if flit is None else _size(flit, "flit"),
        injection,
        _time(warmup, "warmup"),
        _time(measure, "measure"),
        _time(drain, "drain"),
        seed,
        all_loads,
        bool(check),
        _threads(threads),
    )
    points = json.loads(text)
    # The machine as flat columns (as in `acesim traffic --csv`), so that the frames of many
    # sweeps concatenate.
    for p in points:
        m = p.pop("machine", None) or {}
        p["routing"] = m.get("routing")
        p["machine"] = m.get("name")
        p["machine_hash"] = m.get("hash")
    return pd.DataFrame(points)
