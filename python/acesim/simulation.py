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
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return text, path, "goal" if path.endswith(".goal") else "schedule"
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
    if max_events is not None:
        max_events = operator.index(max_events)
        if max_events < 0:
            raise ValueError("simulate(): max_events must be >= 0")
    try:
        r = core().simulate(
            m.to_toml(), m.name, text, name, fmt, ranks, args, bool(trace), bool(check),
            max_events, None if max_sim_time is None else str(max_sim_time), model,
        )
    except KeyboardInterrupt as e:
        # Ctrl-C stops the run soon; what it has comes with the exception, marked partial.
        partial = getattr(e, "partial_result", None)
        if partial is not None:
            e.partial_result = Result.from_core(partial, machine=m)  # type: ignore[attr-defined]
        raise
    return Result.from_core(r, machine=m)
