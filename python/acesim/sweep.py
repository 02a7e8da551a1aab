"""`sweep`: one simulation per point of a parameter grid, in parallel processes."""

from __future__ import annotations

import functools
import hashlib
import inspect
import itertools
import json
import marshal
import multiprocessing
import os
import pickle
import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any

from ._corelib import DeadlockError, InputError, InternalError, ProgramError
from .machine import Machine, atomic_write, resolve_machine
from .program import Schedule
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
# Sweep keys with this prefix are keyword arguments of a Python program: program(ctx, n=...).
PROGRAM_PREFIX = "program."

# The sweep being run, inherited by forked workers (program callables may be closures, which
# cannot be pickled): workers receive only the index of their point.
_JOBS: dict[int, tuple[Any, ...]] = {}
# The trace and job-layout keywords of `simulate` (docs/traces.md), sweepable too.
REPLAY_KEYS = (
    "format", "flops", "compute_scale", "compute_threshold", "ignore_calls", "jobs",
    "max_message", "collectives",
)
# Sweep keys that are arguments of `simulate`, not machine fields.
_RUN_KEYS = ("ranks", "model", "args") + REPLAY_KEYS


def _machine_fields(point: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in point.items() if k not in _RUN_KEYS and not k.startswith(PROGRAM_PREFIX)}


def _program_kwargs(point: Mapping[str, Any]) -> dict[str, Any]:
    return {k[len(PROGRAM_PREFIX) :]: v for k, v in point.items() if k.startswith(PROGRAM_PREFIX)}


def _simulate_point(
    machine: Machine,
    program: ProgramLike,
    point: Mapping[str, Any],
    ranks: int | None,
    args: Sequence[str],
    model: str,
    replay: Mapping[str, Any],
) -> tuple[bool, Any]:
    """One point's (predicted_time_ps, events, wall_seconds), or its error as plain data
    (run in a forked worker, a dask worker or here)."""
    try:
        fields = _machine_fields(point)
        m = machine.with_(fields) if fields else machine
        kw = {**replay, **{k: v for k, v in point.items() if k in REPLAY_KEYS}}
        kwargs = _program_kwargs(point)
        prog = functools.partial(program, **kwargs) if kwargs else program
        r = simulate(
            m, prog, point.get("ranks", ranks), args=point.get("args", args),
            model=point.get("model", model), **kw,
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


def _run_point(job: int, index: int) -> tuple[bool, Any]:
    machine, program, points, ranks, args, model, replay = _JOBS[job]
    return _simulate_point(machine, program, points[index], ranks, args, model, replay)


def _program_identity(program: ProgramLike) -> str:
    """What identifies a program's behaviour for the cache: a file's path and content, a
    schedule's text, a function's module, name and source (a partial's function and
    arguments)."""
    if isinstance(program, functools.partial):
        bound = sorted((k, repr(v)) for k, v in program.keywords.items())
        return f"partial({_program_identity(program.func)}, {program.args!r}, {bound})"
    if isinstance(program, Schedule):
        return "schedule:" + hashlib.sha256(program.text.encode()).hexdigest()
    if isinstance(program, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(program))
        try:
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            digest = "unreadable"
        return f"file:{path}:{digest}"
    name = f"{getattr(program, '__module__', '?')}.{getattr(program, '__qualname__', repr(program))}"
    try:
        body = inspect.getsource(program).encode()
    except (OSError, TypeError):
        code = getattr(program, "__code__", None)
        body = marshal.dumps(code) if code is not None else repr(program).encode()
    return f"python:{name}:{hashlib.sha256(body).hexdigest()}"


def _point_key(
    machine: Machine,
    program_id: str,
    point: Mapping[str, Any],
    ranks: int | None,
    args: Sequence[str],
    model: str,
    replay: Mapping[str, Any],
) -> str:
    """The cache key of a point: a hash of everything its run depends on (the machine in
    force, the program, its arguments, the model and replay options, acesim's version)."""
    from . import __version__

    fields = _machine_fields(point)
    m = machine.with_(fields) if fields else machine
    kw = {**replay, **{k: v for k, v in point.items() if k in REPLAY_KEYS}}
    inputs = {
        "acesim": __version__,
        "machine": m.to_toml(),
        "program": program_id,
        "program_kwargs": sorted((k, repr(v)) for k, v in _program_kwargs(point).items()),
        "ranks": point.get("ranks", ranks),
        "args": list(point.get("args", args)),
        "model": point.get("model", model),
        "replay": sorted((k, repr(v)) for k, v in kw.items()),
    }
    text = json.dumps(inputs, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _cached(path: str) -> tuple[int, int, float] | None:
    """A finished point's outcome from the cache, or None (missing or unreadable: run again)."""
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        return int(d["predicted_time_ps"]), int(d["events"]), float(d["wall_seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


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


def _check_params(params: Mapping[str, Sequence[Any]], program: ProgramLike) -> tuple[list[str], list[list[Any]]]:
    """The keys and value lists of ``params``, checked (TypeError naming the key)."""
    if not isinstance(params, Mapping):
        raise TypeError(f"sweep(): params must be a dict of lists, not {type(params).__name__}")
    keys = list(params)
    values = []
    for k in keys:
        v = params[k]
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence):
            raise TypeError(f"sweep(): params[{k!r}] must be a list, not {type(v).__name__}")
        values.append(list(v))
        if k == "args":
            for a in v:
                if isinstance(a, (str, bytes)) or not isinstance(a, Sequence) or not all(isinstance(x, str) for x in a):
                    raise TypeError(f"sweep(): params['args'] must be a list of argument lists (lists of str), not one holding {a!r}")
        if k.startswith(PROGRAM_PREFIX):
            if not k[len(PROGRAM_PREFIX) :].isidentifier():
                raise TypeError(f"sweep(): params[{k!r}]: '{k[len(PROGRAM_PREFIX):]}' is not a keyword argument name")
            if not callable(program):
                raise TypeError(
                    f"sweep(): params[{k!r}] is a keyword argument of a Python program function, "
                    "but the program is a file or a schedule: sweep its 'args' instead"
                )
    return keys, values


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
    client: Any = None,
    cache: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Simulate ``program`` at every point of the product of ``params``; one row per point.

    ``params`` maps names to lists of values: ``"ranks"`` sets the number of ranks,
    ``"model"`` the network model (``["packet", "flow"]``: both levels side by side),
    ``"args"`` the program's arguments (a list of argument lists: ``[["64"], ["128"]]``, for
    C and Python programs alike), ``"program.NAME"`` a keyword argument of a Python program
    function (``def program(ctx, size=1024)`` swept with ``{"program.size": [1024, 4096]}``),
    any other key a dotted machine field (``"node.overhead"``, ``"router.vcs"``,
    ``"collectives.barrier"``). Without a ``"ranks"`` key, ``ranks`` gives the rank count;
    without ``"args"``, ``args``; without a ``"model"`` key, ``model`` gives the model
    (default ``"packet"``). A model name is checked before any point runs (InputError, as
    :func:`acesim.simulate`). The trace and job-layout keywords of :func:`acesim.simulate`
    (``jobs``, ``max_message``, ``collectives``, ``flops``, ``compute_scale``, ...) are sweep
    keys too, and ``replay`` gives them fixed values for every point
    (``replay={"jobs": "fill"}``).

    Rows come in the product order (the last key varies fastest); the columns are the params
    then ``predicted_time`` (s), ``predicted_time_ps``, ``events``, ``wall_seconds``.

    Where the points run: by default each in its own process (a ``fork`` pool of
    ``processes`` workers, default the CPU count); ``processes=0`` runs them here, one after
    the other; ``client``, a ``dask.distributed.Client``, sends them to its workers (a local
    cluster, or Slurm or Kubernetes through dask-jobqueue or dask-kubernetes: the program is
    sent with cloudpickle, so a closure works too). A failing point raises its error type
    with the point's parameters in the message.

    ``cache``, a folder (made if missing), keeps each finished point in a file named by a
    hash of everything its run depends on (the machine in force, the program file's content
    or the function's source, its arguments, the model, acesim's version): a sweep that
    stopped half-way (pre-empted, interrupted, one point failed) runs again only the points
    it had not finished. A program function is known by its module, name and source: one
    that reads state the source does not show (a global changed between sweeps) needs a
    new cache folder.
    """
    import pandas as pd

    keys, values = _check_params(params, program)
    # Unknown models are refused before anything runs, with simulate()'s message.
    model = _model_name(model, "sweep")
    if "model" in params:
        values[keys.index("model")] = [_model_name(v, "sweep") for v in values[keys.index("model")]]
    points = [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    base = resolve_machine(machine)
    if isinstance(args, str):
        raise TypeError("sweep(): args must be a sequence of str, not a str")
    args = tuple(args)
    fixed = dict(replay or {})
    unknown = sorted(set(fixed) - set(REPLAY_KEYS))
    if unknown:
        raise TypeError(f"sweep(): replay keys must be among {', '.join(REPLAY_KEYS)}, not {unknown}")

    outcomes: list[Any] = [None] * len(points)
    files: list[str | None] = [None] * len(points)
    if cache is not None:
        folder = os.fspath(cache)
        os.makedirs(folder, exist_ok=True)
        program_id = _program_identity(program)
        for i, p in enumerate(points):
            key = _point_key(base, program_id, p, ranks, args, model, fixed)
            files[i] = os.path.join(folder, f"{key}.json")
            outcomes[i] = _cached(files[i])  # type: ignore[arg-type]
    todo = [i for i in range(len(points)) if outcomes[i] is None]
    bar = _progress(len(points), progress)
    if bar is not None and len(todo) < len(points):
        bar.update(len(points) - len(todo))

    def done(i: int, ok: bool, out: Any) -> None:
        if not ok:
            _raise_point_error(points[i], out)
        outcomes[i] = out
        path = files[i]
        if path is not None:
            ps, events, wall = out
            record = {"point": {k: repr(v) for k, v in points[i].items()}, "predicted_time_ps": ps, "events": events, "wall_seconds": wall}
            atomic_write(path, json.dumps(record, indent=1) + "\n")
        if bar is not None:
            bar.update(1)

    try:
        if client is not None:
            _run_on_dask(client, base, program, points, todo, ranks, args, model, fixed, done)
        elif processes == 0 or not todo:
            for i in todo:
                done(i, *_simulate_point(base, program, points[i], ranks, args, model, fixed))
        else:
            _run_forked(processes, base, program, points, todo, ranks, args, model, fixed, done)
    finally:
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


def _run_forked(
    processes: int | None,
    base: Machine,
    program: ProgramLike,
    points: list[dict[str, Any]],
    todo: list[int],
    ranks: int | None,
    args: Sequence[str],
    model: str,
    fixed: Mapping[str, Any],
    done: Any,
) -> None:
    """The points ``todo`` in a ``fork`` pool, handed to ``done`` as they finish."""
    job = id(points)
    _JOBS[job] = (base, program, points, ranks, args, model, fixed)
    try:
        workers = min(processes or os.cpu_count() or 1, len(todo))
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            futures: dict[Future[tuple[bool, Any]], int] = {pool.submit(_run_point, job, i): i for i in todo}
            try:
                for fut in as_completed(futures):
                    done(futures[fut], *fut.result())
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    finally:
        _JOBS.pop(job, None)


def _run_on_dask(
    client: Any,
    base: Machine,
    program: ProgramLike,
    points: list[dict[str, Any]],
    todo: list[int],
    ranks: int | None,
    args: Sequence[str],
    model: str,
    fixed: Mapping[str, Any],
    done: Any,
) -> None:
    """The points ``todo`` on a dask.distributed ``client``'s workers, handed to ``done`` as
    they finish; the others are cancelled when one fails."""
    try:
        from distributed import as_completed as dask_completed
    except ImportError as e:  # pragma: no cover - client given without distributed installed
        raise TypeError("sweep(): client= needs dask.distributed (pip install distributed)") from e
    if not hasattr(client, "submit"):
        raise TypeError(f"sweep(): client must be a dask.distributed Client, not {type(client).__name__}")
    futures = {
        client.submit(_simulate_point, base, program, points[i], ranks, args, model, fixed, pure=False): i
        for i in todo
    }
    try:
        for fut in dask_completed(list(futures)):
            done(futures[fut], *fut.result())
    except BaseException:
        client.cancel(list(futures))
        raise
