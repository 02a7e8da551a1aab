"""`sweep`: one simulation per point of a parameter grid, in parallel processes."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any

from ._corelib import DeadlockError, InputError, InternalError, ProgramError
from .machine import Machine, resolve_machine
from .simulation import ProgramLike, _model_name, simulate

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["sweep"]

_KNOWN_ERRORS: dict[str, type[BaseException]] = {
    "InputError": InputError,
    "ProgramError": ProgramError,
    "DeadlockError": DeadlockError,
    "InternalError": InternalError,
    "ArgumentTypeError": TypeError,
    "ArgumentValueError": ValueError,
}
RESULT_COLUMNS = ["predicted_time", "predicted_time_ps", "events", "wall_seconds"]

# The sweep being run, inherited by forked workers (program callables may be closures, which
# cannot be pickled): workers receive only the index of their point.
_JOBS: dict[
    int,
    tuple[
        Machine, ProgramLike, list[dict[str, Any]], int | None, Sequence[str], str,
        dict[str, Any],
    ],
] = {}
# The trace and job-layout keywords of `simulate` (docs/traces.md), sweepable too.
REPLAY_KEYS = (
    "format", "flops", "compute_scale", "compute_threshold", "ignore_calls", "jobs",
    "max_message", "collectives",
)
# Sweep keys that are arguments of `simulate`, not machine fields.
_RUN_KEYS = ("ranks", "model") + REPLAY_KEYS


def _run_point(job: int, index: int) -> tuple[bool, Any]:
    machine, program, points, ranks, args, model, replay = _JOBS[job]
    point = points[index]
    try:
        fields = {k: v for k, v in point.items() if k not in _RUN_KEYS}
        m = machine.with_(fields) if fields else machine
        kw = {**replay, **{k: v for k, v in point.items() if k in REPLAY_KEYS}}
        r = simulate(
            m, program, point.get("ranks", ranks), args=args, model=point.get("model", model),
            **kw,
        )
        return True, (r.predicted_time_ps, r.events, r.wall_seconds)
    except Exception as e:  # sent back to the parent, which names the point
        exc_type: Any = type(e)
        if exc_type.__name__ in _KNOWN_ERRORS:
            exc_type = exc_type.__name__  # the core's classes do not pickle by reference
        else:
            try:
                pickle.loads(pickle.dumps(exc_type))
            except Exception:
                exc_type = "RuntimeError"
        return False, (exc_type, f"{type(e).__name__}: {e}", traceback.format_exc())


def _describe(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in point.items())


def _raise_point_error(point: Mapping[str, Any], info: tuple[Any, str, str]) -> None:
    exc_type, message, tb = info
    if isinstance(exc_type, str):
        exc_type = _KNOWN_ERRORS.get(exc_type, RuntimeError)
    text = f"sweep point {_describe(point)}: {message}"
    try:
        err = exc_type(text)
    except Exception:
        err = RuntimeError(text)
    if tb and hasattr(err, "add_note"):  # Python >= 3.11
        err.add_note(tb.rstrip())
    raise err


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _PlainProgress(total)
    return tqdm(total=total, desc="acesim sweep", unit="run")


class _PlainProgress:
    """Progress without tqdm: a line at every tenth of the points."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.n = 0
        self._step = max(1, total // 10)

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.n % self._step == 0 or self.n == self.total:
            print(f"acesim sweep: {self.n}/{self.total}", flush=True)

    def close(self) -> None:
        pass


def sweep(
    machine: Machine | str | os.PathLike[str],
    program: ProgramLike,
    params: Mapping[str, Sequence[Any]],
    *,
    processes: int | None = None,
    progress: bool = True,
    ranks: int | None = None,
    args: Sequence[str] = (),
    model: str = "packet",
    replay: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Simulate ``program`` at every point of the product of ``params``; one row per point.

    ``params`` maps names to lists of values: ``"ranks"`` sets the number of ranks,
    ``"model"`` the network model (``["packet", "flow"]``: both levels side by side), any
    other key is a dotted machine field (``"node.overhead"``, ``"router.vcs"``,
    ``"collectives.barrier"``). Without a ``"ranks"`` key, ``ranks`` gives the rank count;
    without a ``"model"`` key, ``model`` gives the model (default ``"packet"``). A model
    name is checked before any point runs (InputError, as :func:`acesim.simulate`). The
    trace and job-layout keywords of :func:`acesim.simulate` (``jobs``, ``max_message``,
    ``collectives``, ``flops``, ``compute_scale``, ...) are sweep keys too, and ``replay``
    gives them fixed values for every point (``replay={"jobs": "fill"}``).

    Rows come in the product order (the last key varies fastest); the columns are the params
    then ``predicted_time`` (s), ``predicted_time_ps``, ``events``, ``wall_seconds``.

    Each point runs in its own process (a ``fork`` pool of ``processes`` workers, default the
    CPU count); ``processes=0`` runs them here, one after the other. A failing point raises
    its error type with the point's parameters in the message.
    """
    import pandas as pd

    if not isinstance(params, Mapping):
        raise TypeError(f"sweep(): params must be a dict of lists, not {type(params).__name__}")
    keys = list(params)
    values = []
    for k in keys:
        v = params[k]
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence):
            raise TypeError(f"sweep(): params[{k!r}] must be a list, not {type(v).__name__}")
        values.append(list(v))
    # Unknown models are refused before anything runs, with simulate()'s message.
    model = _model_name(model, "sweep")
    if "model" in params:
        values[keys.index("model")] = [_model_name(v, "sweep") for v in values[keys.index("model")]]
    points = [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    work = points
    base = resolve_machine(machine)
    if isinstance(args, str):
        raise TypeError("sweep(): args must be a sequence of str, not a str")

    fixed = dict(replay or {})
    unknown = sorted(set(fixed) - set(REPLAY_KEYS))
    if unknown:
        raise TypeError(f"sweep(): replay keys must be among {', '.join(REPLAY_KEYS)}, not {unknown}")
    job = id(work)
    _JOBS[job] = (base, program, work, ranks, tuple(args), model, fixed)
    outcomes: list[Any] = [None] * len(points)
    bar = _progress(len(points), progress)
    try:
        if processes == 0 or not points:
            for i in range(len(points)):
                ok, out = _run_point(job, i)
                if not ok:
                    _raise_point_error(points[i], out)
                outcomes[i] = out
                if bar is not None:
                    bar.update(1)
        else:
            workers = min(processes or os.cpu_count() or 1, len(points))
            ctx = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                futures: dict[Future[tuple[bool, Any]], int] = {
                    pool.submit(_run_point, job, i): i for i in range(len(points))
                }
                try:
                    for fut in as_completed(futures):
                        i = futures[fut]
                        ok, out = fut.result()
                        if not ok:
                            _raise_point_error(points[i], out)
                        outcomes[i] = out
                        if bar is not None:
                            bar.update(1)
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
    finally:
        _JOBS.pop(job, None)
        if bar is not None:
            bar.close()

    rows = []
    for p, (ps, events, wall) in zip(points, outcomes):
        rows.append(
            {
                **p,
                "predicted_time": ps / 1e12,
                "predicted_time_ps": ps,
                "events": events,
                "wall_seconds": wall,
            }
        )
    return pd.DataFrame(rows, columns=keys + RESULT_COLUMNS)
