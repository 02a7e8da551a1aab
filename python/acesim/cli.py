"""The ``acesim`` command: the Rust CLI plus Python programs and reports.

    acesim run PROG.py --ranks N [--machine M] [--function NAME] [run options] [-- ARGS]
    acesim compare-models PROG.py --ranks N [--function NAME] [options] [-- ARGS]
    acesim record PROG.py --ranks N [-o OUT] [--function NAME] [-- ARGS]
    acesim report RESULT.json [-o DIR]
    acesim parquet RESULT.json [-o DIR]

A Python program file defines a function ``program`` (or ``main``, or the one named by
``--function``) taking a context; it is recorded into a schedule whose ``@FILE:LINE``
annotations point at the .py file, then run by the simulator with the user's other flags.
Every other command line goes to the Rust ``acesim`` unchanged.
"""

from __future__ import annotations

import argparse
import os
import runpy
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from ._corelib import InputError, ProgramError, core
from .program import (
    RecordTooBigError,
    _record_args,
    _record_text,
    _text_limit,
    _Watch,
    record_timeout_in_force,
)

__all__ = ["main"]

# Options of `acesim run` that take a value (so their value is not the program).
_VALUE_OPTIONS = {
    "-m",
    "--machine",
    "--set",
    "--ranks",
    "--ranks-per-node",
    "--placement",
    "--model",
    "--json",
    "--links-csv",
    "--parquet",
    "--param",
    "--schedule-out",
    "--timeline",
    "--timeline-links",
    "--max-events",
    "--max-sim-time",
    "--record-timeout",
    "--function",
    "-o",
    "--output",
}
EXIT_INPUT = 2
EXIT_TOO_BIG = 5

_EXTRA_HELP = """
Python additions:
  run PROG.py --ranks N [--function NAME] ...   record a Python program, then run it
  compare-models PROG.py --ranks N [--function NAME] ...   the same at both network levels
  record PROG.py --ranks N [-o OUT]             print a Python program as schedule text
  report RESULT.json [-o DIR]                   HTML report (links, timeline, tables)
"""


def _program_index(args: Sequence[str]) -> int | None:
    """Index of the positional program argument among a subcommand's arguments."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return None
        if a.startswith("-") and a != "-":
            if a in _VALUE_OPTIONS:
                i += 1
            i += 1
            continue
        return i
    return None


def _pop_option(args: list[str], name: str) -> str | None:
    """Remove ``name VALUE`` / ``name=VALUE`` (before ``--``) from args; return VALUE."""
    for i, a in enumerate(args):
        if a == "--":
            break
        if a == name and i + 1 < len(args):
            value = args[i + 1]
            del args[i : i + 2]
            return value
        if a.startswith(name + "="):
            del args[i]
            return a[len(name) + 1 :]
    return None


def _option(args: Sequence[str], *names: str) -> str | None:
    for i, a in enumerate(args):
        if a == "--":
            break
        for name in names:
            if a == name and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(name + "=") and name.startswith("--"):
                return a[len(name) + 1 :]
    return None


def _after_dashes(args: Sequence[str]) -> list[str]:
    return list(args[args.index("--") + 1 :]) if "--" in args else []


def _before_dashes(args: Sequence[str]) -> list[str]:
    return list(args[: args.index("--")]) if "--" in args else list(args)


def load_program(path: str, function: str | None = None) -> Callable[..., Any]:
    """The program function of a Python file: ``function``, else ``program``, else ``main``."""
    namespace = runpy.run_path(path, run_name="__acesim_program__")
    names = [function] if function else ["program", "main"]
    for name in names:
        fn = namespace.get(name)
        if callable(fn):
            return fn  # type: ignore[no-any-return]
    if function:
        raise InputError(f"{path}: no function named {function!r}")
    raise InputError(
        f"{path}: define a function `program(ctx)` (or `main(ctx)`, or pick one with --function)"
    )


def _record_file(path: str, args: list[str]) -> str:
    function = _pop_option(args, "--function")
    ranks_text = _option(args, "--ranks")
    if ranks_text is None:
        raise InputError(f"{path}: a Python program needs --ranks N")
    try:
        ranks = int(ranks_text)
    except ValueError:
        raise InputError(f"--ranks {ranks_text}: not a number") from None
    watch = _watch(path, args)

    def work() -> str:
        program = load_program(path, function)
        checked, argv = _record_args(program, ranks, _after_dashes(args))
        return _record_text(program, checked, None, argv, watch)

    return watch.guard(work)


def _supervised() -> bool:
    """Whether the ``acesim`` command runs this recorder as a process of its own (it gives a
    status file, watches for stalls itself and reports a recording too big)."""
    return bool(os.environ.get("ACESIM_RECORD_STATUS"))


def _watch(path: str, args: list[str]) -> _Watch:
    """The watch of recording ``path``, loading included: the stall timeout
    (``--record-timeout``, ``$ACESIM_RECORD_TIMEOUT``) and the size limit (a quarter of the
    memory budget, unless ``--ignore-memory-limit``); under the ``acesim`` command, the size
    limit it gives and a status file, as it watches for stalls itself."""
    status = os.environ.get("ACESIM_RECORD_STATUS")
    if status:
        try:
            max_bytes = int(os.environ.get("ACESIM_RECORD_MAX_BYTES", "0"))
        except ValueError:
            max_bytes = 0
        limit = (max_bytes, 0, "") if max_bytes > 0 else None
        return _Watch(
            name=path, limit=limit, status_path=status, cli=True, on_stuck=_stuck(path)
        )
    timeout = record_timeout_in_force(
        _option(args, "--record-timeout"), "command line: field `record-timeout`"
    )
    limit = None if "--ignore-memory-limit" in _before_dashes(args) else _text_limit()
    return _Watch(name=path, timeout_s=timeout, limit=limit, cli=True, on_stuck=_stuck(path))


def _too_big(path: str, e: RecordTooBigError) -> int:
    """Reports a recording stopped by the size limit (exit code 5, as for C programs)."""
    if _supervised():  # the acesim command says the rest
        print(e.detail, file=sys.stderr)
    else:
        print(f"error: {path}: recording stopped: {e.detail}\n{e.hint}", file=sys.stderr)
    return EXIT_TOO_BIG


def _stuck(path: str) -> Callable[[BaseException], None]:
    """What to do with a rank stopped by its watch that does not stop (blocked outside
    Python code): report the error as it would be, and end the process."""

    def stuck(e: BaseException) -> None:
        code = _too_big(path, e) if isinstance(e, RecordTooBigError) else _error(str(e))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    return stuck


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_INPUT


def _overwrites_program(path: str, args: Sequence[str], options: Sequence[str]) -> str | None:
    """The message for an output option that names the program file itself, if one does
    (the command compares the recorded schedule's temporary file, not the .py)."""
    for opt in options:
        out = _option(args, opt)
        if out is None or out == "-":
            continue
        try:
            same = os.path.samefile(out, path)
        except OSError:
            continue
        if same:
            return f"command line: field `{opt.lstrip('-')}`: {opt} '{out}' is the program '{path}': writing it would overwrite an input; give another file"
    return None


def _run_py(args: list[str], index: int, command: str = "run") -> int:
    path = args[index]
    clash = _overwrites_program(path, args, ("--json", "--links-csv", "--timeline", "--schedule-out"))
    if clash:
        return _error(clash)
    try:
        text = _record_file(path, args)
    except RecordTooBigError as e:
        return _too_big(path, e)
    except (InputError, ProgramError, TypeError, ValueError) as e:
        return _error(str(e))
    except Exception:  # the program file itself failed to load
        return _error(f"{path}: loading the program failed\n{traceback.format_exc()}")
    index = _program_index(args)  # --function was removed from args
    assert index is not None and args[index] == path
    with tempfile.TemporaryDirectory(prefix="acesim-") as tmp:
        sched = os.path.join(tmp, os.path.basename(path) + ".sched")
        with open(sched, "w", encoding="utf-8") as f:
            f.write(text)
        args = list(args)
        args[index] = sched
        args = [a for a in args[: args.index("--")]] if "--" in args else args
        sys.stdout.flush()
        sys.stderr.flush()
        return int(core().cli([command, *args]))


def _compare_py(args: list[str], index: int) -> int:
    return _run_py(args, index, "compare-models")


def _record_py(args: list[str], index: int) -> int:
    path = args[index]
    out = _pop_option(args, "-o") or _pop_option(args, "--output")
    clash = _overwrites_program(path, ["-o", out] if out else [], ("-o",))
    if clash:
        return _error(clash)
    try:
        text = _record_file(path, args)
    except RecordTooBigError as e:
        return _too_big(path, e)
    except (InputError, ProgramError, TypeError, ValueError) as e:
        return _error(str(e))
    except Exception:
        return _error(f"{path}: loading the program failed\n{traceback.format_exc()}")
    if out is None or out == "-":
        sys.stdout.write(text)
    else:
        from .machine import atomic_write

        atomic_write(out, text)
    return 0


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated()


def _interruptible(handler: Callable[[list[str], int], int], args: list[str], index: int) -> int:
    """Runs ``handler``; Ctrl-C or SIGTERM while recording gives a message and exit code 130
    or 143, as the command itself does, instead of a traceback."""
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        previous = None
    try:
        return handler(args, index)
    except KeyboardInterrupt as e:
        term = isinstance(e, _Terminated)
        name = "SIGTERM" if term else "Ctrl-C (SIGINT)"
        print(f"error[interrupted]: {name}: interrupted while recording {args[index]}",
              file=sys.stderr)
        return 143 if term else 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _report(args: list[str]) -> int:
    from .report import ReportError, write_report

    ap = argparse.ArgumentParser(prog="acesim report", description="HTML report of a run")
    ap.add_argument("result", help="JSON summary (acesim run --json FILE)")
    ap.add_argument("-o", "--output", help="output directory (default: RESULT-report)")
    ns = ap.parse_args(args)
    out = ns.output or os.path.splitext(ns.result)[0] + "-report"
    try:
        path = write_report(ns.result, out)
    except ReportError as e:
        return _error(str(e))
    except OSError as e:
        return _error(f"{e.filename or ns.result}: {e.strerror or e}")
    print(path)
    return 0


def _parquet(args: list[str]) -> int:
    from .results import Result

    ap = argparse.ArgumentParser(prog="acesim parquet", description="a run's tables as Parquet files")
    ap.add_argument("result", help="JSON summary (acesim run --json FILE)")
    ap.add_argument("-o", "--output", help="output directory (default: RESULT-tables)")
    ns = ap.parse_args(args)
    out = ns.output or os.path.splitext(ns.result)[0] + "-tables"
    try:
        result = Result.from_json(ns.result)
        if not isinstance(result.data, dict):
            kind = type(result.data).__name__
            return _error(f"{ns.result}: not an acesim run summary (acesim run --json): the JSON is a {kind} (a traffic sweep's points are one table: pandas.read_json(...).to_parquet(...))")
        result.predicted_time_ps  # a JSON that is not a run's summary fails here, named
        paths = result.to_parquet(out)
    except (ValueError, KeyError, TypeError) as e:
        what = f"missing field `{e.args[0]}`" if isinstance(e, KeyError) and e.args else str(e)
        return _error(f"{ns.result}: not an acesim run summary (acesim run --json): {what}")
    except ImportError as e:
        return _error(str(e))
    except OSError as e:
        return _error(f"{e.filename or ns.result}: {e.strerror or e}")
    for p in paths:
        print(p)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``acesim`` command; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    # The core, run in this process, starts Python for what Python writes (`run --parquet`):
    # this interpreter, which has this package.
    os.environ.setdefault("ACESIM_PYTHON", sys.executable)
    if args and args[0] in ("run", "record", "compare-models"):
        i = _program_index(args[1:])
        if i is not None and args[1 + i].endswith(".py"):
            handler = {"run": _run_py, "record": _record_py, "compare-models": _compare_py}[
                args[0]
            ]
            return _interruptible(handler, args[1:], i)
    if args and args[0] == "report":
        return _report(args[1:])
    if args and args[0] == "parquet":
        return _parquet(args[1:])
    sys.stdout.flush()
    code = int(core().cli(args))
    if not args or args[0] in ("-h", "--help", "help") and len(args) == 1:
        print(_EXTRA_HELP, end="")
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
