"""`simulate`: one program on one machine."""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Sequence
from typing import Any, Union

from ._corelib import core
from .machine import Machine, resolve_machine, warn_machine
from .program import Schedule, _program_name, record
from .results import Result

__all__ = ["simulate", "ProgramLike", "MODELS"]

ProgramLike = Union[Callable[..., Any], Schedule, str, "os.PathLike[str]"]

MODELS = ("packet", "flow")
"""The network models: ``"packet"`` (packets through routers, flit-level accurate; the
default) and ``"flow"`` (messages as max-min fair flows: much faster, exact when
uncontended; docs/flow.md)."""


def _model_name(model: object, caller: str) -> str:
    """``model`` checked by the core: InputError with the message of ``acesim run --model``
    (``unknown network model 'x' (expected packet or flow)``) for an unknown name."""
    if not isinstance(model, str):
        raise TypeError(
            f"{caller}(): model must be a str ('packet' or 'flow'), not {type(model).__name__}"
        )
    if model in MODELS:
        return model
    return str(core().parse_model(model))  # raises InputError naming the models


def _program_input(
    program: ProgramLike,
    ranks: int | None,
    args: Sequence[str],
    record_timeout: float | str | None = None,
) -> tuple[str, str, str]:
    """(text, name, format) for `_core.simulate`."""
    if isinstance(program, Schedule):
        return program.text, program.name, "schedule"
    if isinstance(program, (str, os.PathLike)):
        path = os.fspath(program)
        if "\n" in path:
            raise ValueError(
                "program is a path; wrap schedule text in acesim.Schedule(text) to run it"
            )
        if path.endswith(".c"):
            if ranks is None:
                raise TypeError("simulate(): a C program needs ranks=")
            if record_timeout is not None:
                raise ValueError(
                    "simulate(): record_timeout= is for Python programs; a C program is "
                    "recorded with $ACESIM_RECORD_TIMEOUT (default 60s)"
                )
            return path, path, "c"
        # Read by the core, which recognises the format by name and content as `acesim run`
        # does: schedules, GOAL, DUMPI (.meta), OTF2 (.otf2), SimGrid traces.
        return path, path, "auto"
    if callable(program):
        if ranks is None:
            raise TypeError("simulate(): a Python program needs ranks=")
        name = f"<recorded {_program_name(program)}>"
        text = record(program, ranks, args=args, record_timeout=record_timeout)
        return text, name, "schedule"
    raise TypeError(
        "program must be a callable taking a Context, acesim.Schedule(text) or the path of a "
        f".c, .goal or schedule file, not {type(program).__name__}"
    )


def _replay(
    caller: str,
    format: str | None,
    fmt: str,
    ignore_calls: Sequence[str],
    compute_scale: float | None,
    compute_threshold: str | None,
    flops: str | float | None,
    jobs: int | str | None,
    max_message: str | int | None,
    collectives: str,
) -> tuple[str, dict[str, object]]:
    """The program format and the trace and job-layout keyword arguments of the core."""
    if format is not None:
        if fmt != "auto":
            raise ValueError(f"{caller}(): format= is for a program given by its path")
        fmt = str(format)
    if isinstance(ignore_calls, str):
        raise TypeError(f"{caller}(): ignore_calls must be a sequence of str, not a str")
    return fmt, {
        "ignore_calls": [str(c) for c in ignore_calls],
        "compute_scale": None if compute_scale is None else float(compute_scale),
        "compute_threshold": None if compute_threshold is None else str(compute_threshold),
        "flops": None if flops is None else str(flops),
        "jobs": None if jobs is None else str(jobs),
        "max_message": None if max_message is None else str(max_message),
        "collectives": str(collectives),
    }


def simulate(
    machine: Machine | str | os.PathLike[str],
    program: ProgramLike,
    ranks: int | None = None,
    *,
    args: Sequence[str] = (),
    trace: bool = False,
    check: bool = False,
    max_events: int | None = None,
    max_sim_time: str | None = None,
    record_timeout: float | str | None = None,
    model: str = "packet",
    format: str | None = None,
    flops: str | float | None = None,
    compute_scale: float | None = None,
    compute_threshold: str | None = None,
    ignore_calls: Sequence[str] = (),
    jobs: int | str | None = None,
    max_message: str | int | None = None,
    collectives: str = "run",
    partitions: int | None = None,
    threads: int = 1,
) -> Result:
    """Simulate ``program`` on ``machine`` and return the :class:`~acesim.Result`.

    ``machine``: a :class:`Machine`, a preset name (``"table1"``) or a TOML path.
    ``program``: a Python function taking a :class:`~acesim.program.Context` (recorded with
    ``ranks`` ranks), ``acesim.Schedule(text)``, or the path of an MGEN C program (``.c``,
    needs ``ranks``), a GOAL file (``.goal``) or a schedule file (any other extension).
    ``args`` go to ``MGEN_Main`` (C) or ``ctx.args`` (Python). ``trace=True`` adds the per-rank
    activity intervals (``Result.trace``) used by :func:`acesim.plots.plot_timeline`.
    ``check=True`` checks the model's invariants as the run goes (InternalError if one
    breaks). ``max_events`` and ``max_sim_time`` (``"10ms"``) stop the run early: the result
    is then partial (:attr:`Result.partial` says why and where). A Python program is
    recorded with the limits of :func:`acesim.record`: ``record_timeout`` (seconds or
    ``"90s"``; default ``$ACESIM_RECORD_TIMEOUT``, else 60 s; 0 waits for ever) stops a rank
    that records nothing for that long, and a schedule text past a quarter of the memory
    budget is stopped; a C program is recorded with ``$ACESIM_RECORD_TIMEOUT``.
    ``model`` is the network model, ``"packet"`` (the default) or ``"flow"`` (as ``acesim run
    --model``; :attr:`Result.model` says which ran): at flow level the links have no
    ``wait_ps`` and ``stall_ps``. :func:`acesim.compare_models` runs both.

    MPI traces are programs too: a DUMPI trace's ``.meta`` file, an OTF2 ``.otf2`` anchor or a
    SimGrid time-independent trace (``format="ti"`` for a list of trace files), replayed as
    ``acesim run`` does (docs/traces.md): ``flops`` (``"1Gf"``) turns a SimGrid trace's flops
    into time, ``compute_scale`` and ``compute_threshold`` (``"1us"``) shape the compute
    between calls, ``ignore_calls`` skips MPI calls. For any program, ``jobs`` (a number or
    ``"fill"``) runs it side by side to fill the machine, each job with its own world
    communicator, ``max_message`` (``"64KiB"``) caps messages, ``collectives="skip"`` makes
    collectives take no time.

    ``partitions=N`` measures how the run would split into N partitions of a parallel run
    (as ``acesim run --partitions``): :attr:`Result.partitions` holds the lookahead, windows,
    events crossing partitions and the speed-up they allow (docs/performance.md).
    ``threads=N`` runs it on N threads (as ``acesim run --threads``; packet model), the
    machine split into N blocks of routers, each with the ranks on its nodes; ``0`` means
    every core, with at least 1,024 routers a thread. The result is the same on any number
    of threads.

    Raises InputError (bad machine, program or model), ProgramError (the program failed or a rank
    recorded nothing for ``record_timeout``), DeadlockError (the program can never finish),
    MemoryError (the recorded program or the run does not fit in memory).
    """
    if ranks is not None:
        if isinstance(ranks, bool) or not hasattr(type(ranks), "__index__"):
            raise TypeError(f"simulate(): ranks must be an int, not {type(ranks).__name__}")
        ranks = operator.index(ranks)
    if isinstance(args, str):
        raise TypeError("simulate(): args must be a sequence of str, not a str")
    args = [str(a) for a in args]
    model = _model_name(model, "simulate")
    m = resolve_machine(machine)
    warn_machine(m)
    text, name, fmt = _program_input(program, ranks, args, record_timeout)
    fmt, replay = _replay(
        "simulate", format, fmt, ignore_calls, compute_scale, compute_threshold, flops, jobs,
        max_message, collectives,
    )
    if max_events is not None:
        max_events = operator.index(max_events)
        if max_events < 0:
            raise ValueError("simulate(): max_events must be >= 0")
    if partitions is not None:
        partitions = operator.index(partitions)
        if partitions < 1:
            raise ValueError("simulate(): partitions must be >= 1")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError(f"simulate(): threads must be a whole number of threads, 0 for every core, not {threads!r}")
    try:
        r = core().simulate(
            m.to_toml(), m.name, text, name, fmt, ranks, args, bool(trace), bool(check),
            max_events, None if max_sim_time is None else str(max_sim_time), model, **replay,
            partitions=partitions, threads=threads,
        )
    except KeyboardInterrupt as e:
        # Ctrl-C stops the run soon; what it has comes with the exception, marked partial.
        partial = getattr(e, "partial_result", None)
        if partial is not None:
            e.partial_result = Result.from_core(partial, machine=m)  # type: ignore[attr-defined]
        raise
    return Result.from_core(r, machine=m)
