"""Recording a Python program into acesim schedule text (docs/schedule-format.md).

A program is a function taking a :class:`Context`; :func:`record` calls it once per rank and
collects what it does as schedule statements, each ending with the ``@FILE:LINE`` of the call
that made it::

    def ring(ctx):
        h = ctx.put((ctx.rank + 1) % ctx.size, 4)
        ctx.poll(0)
        ctx.complete(h)

    text = acesim.program.record(ring, ranks=8)

The methods mirror mgen/mgen.h. Times are strings with a unit (``"1.5 us"``) or numbers of
nanoseconds (like ``MGEN_Comp``); sizes are ints (bytes) or strings with a unit (``"2 MiB"``).
Ranks, tags and sizes are written as given: out-of-range ranks are reported by the simulator's
loader with the ``@FILE:LINE`` of the call.
"""

from __future__ import annotations

import math
import operator
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ._corelib import InputError, ProgramError
from ._units import parse_size_bytes, parse_time_ps

__all__ = [
    "ANY",
    "UNDEFINED",
    "Comm",
    "Context",
    "Handle",
    "RecordTimeoutError",
    "RecordTooBigError",
    "Request",
    "Schedule",
    "record",
]

_getframe = sys._getframe
_THIS_FILE = __file__


class _Sentinel:
    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def __repr__(self) -> str:
        return f"acesim.{self._text.upper()}"

    def __str__(self) -> str:
        return self._text

    def __reduce__(self) -> str:
        return self._text.upper()


ANY = _Sentinel("any")
"""Wildcard source or tag of a receive (``MGEN_ANY_SOURCE`` / ``MGEN_ANY_TAG``)."""
UNDEFINED = _Sentinel("undefined")
"""``comm_split`` color that leaves the rank out (``MGEN_UNDEFINED``)."""


class Handle:
    """An RDMA put/get, named ``h1, h2, ...`` per rank; pass it to ``complete`` or ``wait``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"

    __str__ = lambda self: self.name  # noqa: E731


class Request(Handle):
    """A non-blocking message (``isend``/``irecv``), named ``r1, r2, ...`` per rank."""

    __slots__ = ()


class Comm:
    """A communicator: ``world`` or one made by ``comm_split``/``comm_dup`` (``c1, c2, ...``)."""

    __slots__ = ("name", "_opt")

    def __init__(self, name: str) -> None:
        self.name = name
        self._opt = "" if name == "world" else f" comm={name}"

    def __repr__(self) -> str:
        return f"Comm({self.name})"

    __str__ = lambda self: self.name  # noqa: E731


WORLD = Comm("world")


class Schedule:
    """Schedule text given directly to :func:`acesim.simulate` (``Schedule(text, name=...)``)."""

    __slots__ = ("text", "name")

    def __init__(self, text: str, name: str = "<schedule>") -> None:
        if not isinstance(text, str):
            raise TypeError(f"Schedule(): text must be a str, not {type(text).__name__}")
        self.text = text
        self.name = name

    def __repr__(self) -> str:
        return f"Schedule(<{len(self.text)} chars>, name={self.name!r})"


# ---- argument errors -------------------------------------------------------------------------


class _ArgError(Exception):
    """Marks errors in the arguments of a Context call (re-raised by record() with the rank)."""


class ArgumentTypeError(_ArgError, TypeError):
    pass


class ArgumentValueError(_ArgError, ValueError):
    pass


def _user_site() -> str:
    f = _getframe(1)
    while f is not None and f.f_code.co_filename == _THIS_FILE:
        f = f.f_back
    if f is None:
        return "?"
    return f"{_display_path(f.f_code.co_filename)}:{f.f_lineno}"


def _type_error(method: str, arg: str, want: str, value: object) -> ArgumentTypeError:
    return ArgumentTypeError(
        f"{_user_site()}: {method}(): {arg} must be {want}, not {type(value).__name__}"
    )


def _value_error(method: str, arg: str, msg: str) -> ArgumentValueError:
    return ArgumentValueError(f"{_user_site()}: {method}(): {arg} {msg}")


def _int(value: object, method: str, arg: str) -> int:
    """Cold path of integer arguments (the hot path checks ``type(v) is int`` inline)."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise _type_error(method, arg, "an int", value)
    return operator.index(value)  # type: ignore[arg-type]


def _int_or_any(value: object, method: str, arg: str) -> str:
    if value is ANY:
        return "any"
    if type(value) is int:
        return str(value)
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise _type_error(method, arg, "an int or acesim.ANY", value)
    return str(operator.index(value))  # type: ignore[arg-type]


_SIZE_CACHE: dict[str, int] = {}
_TIME_CACHE: dict[str, int] = {}


def _size(value: object, method: str, arg: str) -> int:
    if type(value) is int:
        if value < 0:
            raise _value_error(method, arg, f"must not be negative ({value})")
        return value
    if type(value) is str:
        got = _SIZE_CACHE.get(value)
        if got is None:
            try:
                got = parse_size_bytes(value)
            except ValueError as e:
                raise _value_error(method, arg, f"is not a size: {e}") from None
            _SIZE_CACHE[value] = got
        return got
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise _type_error(method, arg, "an int (bytes) or a str with a unit like '2 MiB'", value)
    return _size(operator.index(value), method, arg)  # type: ignore[arg-type]


def _time_ps(value: object, method: str, arg: str) -> int:
    if type(value) is str:
        got = _TIME_CACHE.get(value)
        if got is None:
            try:
                got = parse_time_ps(value)
            except ValueError as e:
                raise _value_error(method, arg, f"is not a time: {e}") from None
            _TIME_CACHE[value] = got
        return got
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if hasattr(type(value), "__float__") and not isinstance(value, bool):
            return _time_ps(float(value), method, arg)  # type: ignore[arg-type]
        raise _type_error(method, arg, "a number of nanoseconds or a str like '1.5 us'", value)
    if isinstance(value, int):
        if value < 0:
            raise _value_error(method, arg, f"must not be negative ({value} ns)")
        return value * 1000
    if math.isnan(value):
        raise _value_error(method, arg, "is NaN")
    if value < 0:
        raise _value_error(method, arg, f"must not be negative ({value:g} ns)")
    ps = value * 1000.0
    if not ps < 9.2e18:
        raise _value_error(method, arg, f"is too large ({value:g} ns)")
    whole = int(ps)  # llround of MGEN_Comp: half away from zero
    return whole + 1 if ps - whole >= 0.5 else whole


def _word(value: object, method: str, arg: str) -> str:
    if not isinstance(value, str):
        raise _type_error(method, arg, "a str", value)
    if not value or any(c in value for c in ' \t"#\\\n\r='):
        raise _value_error(method, arg, f"is not a name: {value!r}")
    return value


def _comm_opt(comm: object, method: str) -> str:
    if comm is None:
        return ""
    if type(comm) is Comm:
        return comm._opt  # type: ignore[union-attr]
    raise _type_error(method, "comm", "an acesim Comm (from comm_split/comm_dup) or None", comm)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _display_path(filename: str) -> str:
    """A code object's file name as written in schedules: relative to the cwd when inside it."""
    if filename.startswith("<"):
        return filename
    try:
        path = os.path.abspath(filename)
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return filename
    return path if rel.startswith("..") else rel


def _location_parts(filename: str) -> tuple[str, str]:
    """(text before the line number, text after it) of a ``@FILE:LINE`` token."""
    shown = _display_path(filename)
    if any(c in shown for c in ' \t"\\') or any(ord(c) < 0x20 for c in shown):
        return ' "@' + shown.replace("\\", "\\\\").replace('"', '\\"') + ":", '"'
    return " @" + shown + ":", ""


# ---- the context -------------------------------------------------------------------------------


class _Region:
    __slots__ = ("_ctx", "_name")

    def __init__(self, ctx: Context, name: str) -> None:
        self._ctx = ctx
        self._name = name

    def __enter__(self) -> _Region:
        self._ctx._emit(f"region_begin {self._name}{self._ctx._at()}")
        return self

    def __exit__(self, *exc: object) -> None:
        self._ctx._emit(f"region_end {self._name}{self._ctx._at()}")


class _Repeat:
    __slots__ = ("_ctx", "_count")

    def __init__(self, ctx: Context, count: int) -> None:
        self._ctx = ctx
        self._count = count

    def __enter__(self) -> _Repeat:
        self._ctx._emit(f"repeat {self._count} {{{self._ctx._at()}")
        return self

    def __exit__(self, *exc: object) -> None:
        self._ctx._emit(f"}}{self._ctx._at()}")


class Context:
    """What a program sees of its rank: ``rank``, ``size``, ``args`` and the recording calls.

    Every call appends one schedule statement for this rank (see docs/schedule-format.md).
    """

    __slots__ = ("rank", "size", "args", "world", "_lines", "_emit", "_locs", "_nh", "_nr", "_nc")

    def __init__(
        self,
        rank: int,
        size: int,
        *,
        args: Sequence[str] = (),
        _lines: list[str] | None = None,
        _locs: dict[str, tuple[str, str]] | None = None,
    ) -> None:
        self.rank = rank
        self.size = size
        self.args: tuple[str, ...] = tuple(args)
        self.world = WORLD
        self._lines: list[str] = [] if _lines is None else _lines
        self._emit = self._lines.append
        self._locs: dict[str, tuple[str, str]] = {} if _locs is None else _locs
        self._nh = 0
        self._nr = 0
        self._nc = 0

    def __repr__(self) -> str:
        return f"Context(rank={self.rank}, size={self.size})"

    def _at(self, depth: int = 2) -> str:
        """`` @FILE:LINE`` of the user's call (``depth`` frames up: user -> method -> _at)."""
        f = _getframe(depth)
        name = f.f_code.co_filename
        parts = self._locs.get(name)
        if parts is None:
            parts = self._locs[name] = _location_parts(name)
        return f"{parts[0]}{f.f_lineno}{parts[1]}"

    # -- computation ---------------------------------------------------------------------------

    def compute(self, t: str | int | float) -> None:
        """Compute for ``t``: a str with a unit (``"1.5 us"``) or a number of nanoseconds."""
        if type(t) is str:
            ps = _TIME_CACHE.get(t)
            if ps is None:
                ps = _time_ps(t, "compute", "t")
        else:
            ps = _time_ps(t, "compute", "t")
        self._emit(f"compute {ps}ps{self._at()}")

    # -- RDMA ------------------------------------------------------------------------------------

    def put(self, dst: int, size: int | str, tag: int = 0, nic: int | None = None) -> Handle:
        """RDMA put of ``size`` bytes to rank ``dst``; returns its handle (non-blocking)."""
        if type(dst) is not int:
            dst = _int(dst, "put", "dst")
        if type(size) is not int or size < 0:
            size = _size(size, "put", "size")
        if type(tag) is not int:
            tag = _int(tag, "put", "tag")
        self._nh += 1
        h = Handle(f"h{self._nh}")
        if nic is None:
            self._emit(f"put {dst} {size} tag={tag} handle={h.name}{self._at()}")
        else:
            if type(nic) is not int:
                nic = _int(nic, "put", "nic")
            self._emit(f"put {dst} {size} tag={tag} handle={h.name} nic={nic}{self._at()}")
        return h

    def get(self, src: int, size: int | str, nic: int | None = None) -> Handle:
        """RDMA get of ``size`` bytes from rank ``src`` into this rank (non-blocking)."""
        if type(src) is not int:
            src = _int(src, "get", "src")
        if type(size) is not int or size < 0:
            size = _size(size, "get", "size")
        self._nh += 1
        h = Handle(f"h{self._nh}")
        nic_opt = ""
        if nic is not None:
            nic_opt = f" nic={nic if type(nic) is int else _int(nic, 'get', 'nic')}"
        self._emit(f"get {src} {size} handle={h.name}{nic_opt}{self._at()}")
        return h

    def poll(self, tag: int = 0) -> None:
        """Block until one put with ``tag`` has landed in this rank's memory."""
        if type(tag) is not int:
            tag = _int(tag, "poll", "tag")
        self._emit(f"poll {tag}{self._at()}")

    def complete(self, handle: Handle) -> None:
        """Block until the put/get ``handle`` has completed."""
        if type(handle) is not Handle:
            raise _type_error("complete", "handle", "a Handle returned by put() or get()", handle)
        self._emit(f"complete {handle.name}{self._at()}")

    # -- messages ----------------------------------------------------------------------------------

    def send(self, dst: int, size: int | str, tag: int = 0, comm: Comm | None = None) -> None:
        """Blocking send to rank ``dst`` of ``comm`` (default world)."""
        if type(dst) is not int:
            dst = _int(dst, "send", "dst")
        if type(size) is not int or size < 0:
            size = _size(size, "send", "size")
        if type(tag) is not int:
            tag = _int(tag, "send", "tag")
        c = "" if comm is None else _comm_opt(comm, "send")
        self._emit(f"send {dst} {size} tag={tag}{c}{self._at()}")

    def recv(
        self,
        src: int | _Sentinel,
        size: int | str,
        tag: int | _Sentinel = 0,
        comm: Comm | None = None,
    ) -> None:
        """Blocking receive from ``src`` (or ``ANY``) with ``tag`` (or ``ANY``)."""
        s = src if type(src) is int else _int_or_any(src, "recv", "src")
        if type(size) is not int or size < 0:
            size = _size(size, "recv", "size")
        t = tag if type(tag) is int else _int_or_any(tag, "recv", "tag")
        c = "" if comm is None else _comm_opt(comm, "recv")
        self._emit(f"recv {s} {size} tag={t}{c}{self._at()}")

    def isend(self, dst: int, size: int | str, tag: int = 0, comm: Comm | None = None) -> Request:
        """Non-blocking send; returns the request to ``wait`` for."""
        if type(dst) is not int:
            dst = _int(dst, "isend", "dst")
        if type(size) is not int or size < 0:
            size = _size(size, "isend", "size")
        if type(tag) is not int:
            tag = _int(tag, "isend", "tag")
        c = "" if comm is None else _comm_opt(comm, "isend")
        self._nr += 1
        r = Request(f"r{self._nr}")
        self._emit(f"isend {dst} {size} req={r.name} tag={tag}{c}{self._at()}")
        return r

    def irecv(
        self,
        src: int | _Sentinel,
        size: int | str,
        tag: int | _Sentinel = 0,
        comm: Comm | None = None,
    ) -> Request:
        """Non-blocking receive; returns the request to ``wait`` for."""
        s = src if type(src) is int else _int_or_any(src, "irecv", "src")
        if type(size) is not int or size < 0:
            size = _size(size, "irecv", "size")
        t = tag if type(tag) is int else _int_or_any(tag, "irecv", "tag")
        c = "" if comm is None else _comm_opt(comm, "irecv")
        self._nr += 1
        r = Request(f"r{self._nr}")
        self._emit(f"irecv {s} {size} req={r.name} tag={t}{c}{self._at()}")
        return r

    def sendrecv(
        self,
        dst: int,
        ssize: int | str,
        src: int | _Sentinel,
        rsize: int | str,
        sendtag: int = 0,
        recvtag: int | _Sentinel = 0,
        comm: Comm | None = None,
    ) -> None:
        """Send to ``dst`` and receive from ``src`` at once; returns when both are done."""
        if type(dst) is not int:
            dst = _int(dst, "sendrecv", "dst")
        ssize = _size(ssize, "sendrecv", "ssize")
        s = _int_or_any(src, "sendrecv", "src")
        rsize = _size(rsize, "sendrecv", "rsize")
        if type(sendtag) is not int:
            sendtag = _int(sendtag, "sendrecv", "sendtag")
        rt = _int_or_any(recvtag, "sendrecv", "recvtag")
        c = _comm_opt(comm, "sendrecv")
        self._emit(
            f"sendrecv {dst} {ssize} {s} {rsize} sendtag={sendtag} recvtag={rt}{c}{self._at()}"
        )

    def _req(self, req: object, method: str, arg: str = "req") -> str:
        if type(req) is Request or type(req) is Handle:
            return req.name  # type: ignore[union-attr]
        raise _type_error(method, arg, "a Request (isend/irecv) or a Handle (put/get)", req)

    def wait(self, req: Request | Handle) -> None:
        """Block until the request (or put/get handle) has completed."""
        name = req.name if type(req) is Request else self._req(req, "wait")
        self._emit(f"wait {name}{self._at()}")

    def _reqs(self, reqs: Iterable[Request | Handle], method: str) -> str:
        if isinstance(reqs, (Request, Handle)) or not isinstance(reqs, Iterable):
            raise _type_error(method, "reqs", "a list of Requests", reqs)
        return " ".join([self._req(r, method, "reqs[]") for r in reqs])

    def waitall(self, reqs: Iterable[Request | Handle]) -> None:
        """Block until every request has completed (an empty list records nothing)."""
        names = self._reqs(reqs, "waitall")
        if names:
            self._emit(f"waitall {names}{self._at()}")

    def waitany(self, reqs: Iterable[Request | Handle]) -> None:
        """Block until one of the requests has completed (an empty list records nothing)."""
        names = self._reqs(reqs, "waitany")
        if names:
            self._emit(f"waitany {names}{self._at()}")

    def test(self, req: Request | Handle) -> None:
        """Non-blocking check of a request (a probe: it never blocks)."""
        self._emit(f"test {self._req(req, 'test')}{self._at()}")

    # -- communicators ---------------------------------------------------------------------------

    def comm_split(self, color: int | _Sentinel, key: int, comm: Comm | None = None) -> Comm:
        """Collective over ``comm``: ranks with the same ``color`` form a new communicator."""
        if color is UNDEFINED:
            col = "undefined"
        elif type(color) is int:
            col = str(color)
        else:
            col = str(_int(color, "comm_split", "color"))
        if type(key) is not int:
            key = _int(key, "comm_split", "key")
        c = _comm_opt(comm, "comm_split")
        self._nc += 1
        new = Comm(f"c{self._nc}")
        self._emit(f"comm_split {col} {key} as={new.name}{c}{self._at()}")
        return new

    def comm_dup(self, comm: Comm | None = None) -> Comm:
        """Collective: a new communicator with the same ranks as ``comm``."""
        c = _comm_opt(comm, "comm_dup")
        self._nc += 1
        new = Comm(f"c{self._nc}")
        self._emit(f"comm_dup as={new.name}{c}{self._at()}")
        return new

    # -- collectives -----------------------------------------------------------------------------

    def _coll_opts(
        self,
        method: str,
        comm: Comm | None,
        algo: str | None,
        segment: int | str | None,
        transport: str | None = None,
    ) -> str:
        opts = _comm_opt(comm, method)
        if algo is not None:
            opts += f" algo={_word(algo, method, 'algo')}"
        if transport is not None:
            opts += f" transport={_word(transport, method, 'transport')}"
        if segment is not None:
            opts += f" segment={_size(segment, method, 'segment')}"
        return opts

    def _root(self, root: int, method: str) -> int:
        return root if type(root) is int else _int(root, method, "root")

    def barrier(
        self, comm: Comm | None = None, algo: str | None = None, transport: str | None = None
    ) -> None:
        """Barrier; ``transport`` is ``"msg"`` or ``"rdma"`` (puts and polls, as in NSIM-ACE)."""
        opts = self._coll_opts("barrier", comm, algo, None, transport)
        self._emit(f"barrier{opts}{self._at()}")

    def _sized_collective(
        self,
        kind: str,
        size: int | str,
        comm: Comm | None,
        algo: str | None,
        segment: int | str | None,
        root: int | None = None,
    ) -> None:
        """Records a collective with a size (and a root for the rooted ones)."""
        size = _size(size, kind, "size")
        opts = self._coll_opts(kind, comm, algo, segment)
        rooted = "" if root is None else f" root={self._root(root, kind)}"
        # user -> public method -> this helper -> _at
        self._emit(f"{kind} {size}{rooted}{opts}{self._at(3)}")

    def bcast(
        self,
        size: int | str,
        root: int = 0,
        comm: Comm | None = None,
        algo: str | None = None,
        segment: int | str | None = None,
    ) -> None:
        """Broadcast ``size`` bytes from ``root``."""
        self._sized_collective("bcast", size, comm, algo, segment, root)

    def reduce(
        self,
        size: int | str,
        root: int = 0,
        comm: Comm | None = None,
        algo: str | None = None,
        segment: int | str | None = None,
    ) -> None:
        """Reduce ``size`` bytes to ``root``."""
        self._sized_collective("reduce", size, comm, algo, segment, root)

    def allreduce(
        self,
        size: int | str,
        comm: Comm | None = None,
        algo: str | None = None,
        segment: int | str | None = None,
    ) -> None:
        """Allreduce of a ``size``-byte buffer."""
        self._sized_collective("allreduce", size, comm, algo, segment)

    def alltoall(
        self,
        size: int | str,
        comm: Comm | None = None,
        algo: str | None = None,
        segment: int | str | None = None,
    ) -> None:
        """All-to-all; ``size`` is what each rank sends to each other rank."""
        self._sized_collective("alltoall", size, comm, algo, segment)

    def allgather(
        self,
        size: int | str,
        comm: Comm | None = None,
        algo: str | None = None,
        segment: int | str | None = None,
    ) -> None:
        """Allgather; ``size`` is what each rank contributes."""
        self._sized_collective("allgather", size, comm, algo, segment)

    def gather(
        self,
        size: int | str,
        root: int = 0,
        comm: Comm | None = None,
        algo: str | None = None,
        segment: int | str | None = None,
    ) -> None:
        """Gather ``size`` bytes per rank to ``root``."""
        self._sized_collective("gather", size, comm, algo, segment, root)

    def scatter(
        self,
        size: int | str,
        root: int = 0,
        comm: Comm | None = None,
        algo: str | None = None,
        segment: int | str | None = None,
    ) -> None:
        """Scatter ``size`` bytes per rank from ``root``."""
        self._sized_collective("scatter", size, comm, algo, segment, root)

    # -- regions ---------------------------------------------------------------------------------

    def _region_name(self, name: object, method: str) -> str:
        if not isinstance(name, str):
            raise _type_error(method, "name", "a str", name)
        if "\n" in name or "\r" in name:
            raise _value_error(method, "name", "contains a newline")
        return _quote(name)

    def region(self, name: str) -> _Region:
        """``with ctx.region("solve"): ...`` marks a named phase (begin at entry, end at exit)."""
        return _Region(self, self._region_name(name, "region"))

    # -- loops ---------------------------------------------------------------------------------

    def repeat(self, count: int) -> _Repeat:
        """``with ctx.repeat(20000): ...`` records the block once as the body of a loop that
        acesim runs ``count`` times (docs/schedule-format.md#loops), so that a long
        time-stepping program stays small. Python runs the block once: do not loop around
        it yourself. The block must wait for the requests it makes, close the regions it
        opens and create no communicator."""
        n = _int(count, "repeat", "count")
        if n < 0:
            raise _value_error("repeat", "count", f"{n} is negative")
        return _Repeat(self, n)

    def region_begin(self, name: str) -> None:
        """Open region ``name`` (regions nest and must be closed in order)."""
        self._emit(f"region_begin {self._region_name(name, 'region_begin')}{self._at()}")

    def region_end(self, name: str) -> None:
        """Close region ``name``."""
        self._emit(f"region_end {self._region_name(name, 'region_end')}{self._at()}")


# ---- recording ----------------------------------------------------------------------------


#: Most ranks a program is recorded for (as the C recorder's ``MGEN_MAX_RANKS``).
MAX_RANKS = 1 << 24
#: Seconds a rank may record no operation before it is stopped, unless ``record_timeout``,
#: ``--record-timeout`` or ``$ACESIM_RECORD_TIMEOUT`` says otherwise (as the C recorder).
DEFAULT_RECORD_TIMEOUT_S = 60


def _exit_code(e: SystemExit) -> int:
    """The exit code ``sys.exit(arg)`` asks for (``None`` is 0, a message is 1)."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    return 1


def _program_name(program: Callable[..., Any]) -> str:
    return getattr(program, "__qualname__", None) or getattr(program, "__name__", None) or "program"


def record(
    program: Callable[[Context], Any],
    ranks: int,
    *,
    name: str | None = None,
    args: Sequence[str] = (),
    record_timeout: float | str | None = None,
    ignore_memory_limit: bool = False,
) -> str:
    """Run ``program(ctx)`` for every rank and return the schedule text.

    ``name`` (optional) is written as a comment after the version line; ``args`` are visible
    to the program as ``ctx.args``. An exception in the program is re-raised as
    :class:`acesim.ProgramError` ("rank R: ExcType: message" plus the Python traceback);
    wrong argument types of the recording calls raise TypeError (ValueError for bad values)
    naming the rank, the call site and the argument. ``sys.exit(0)`` (or ``sys.exit()``) in
    the program ends that rank's program normally: what it recorded so far counts;
    ``sys.exit(N)`` with N not 0 is a ProgramError ("rank R: the program exited with code N
    before finishing"). At most :data:`MAX_RANKS` ranks.

    Limits, as for C programs (README "Safety"): a rank that records no operation for
    ``record_timeout`` (seconds, or a str such as ``"90s"``; default
    ``$ACESIM_RECORD_TIMEOUT``, else :data:`DEFAULT_RECORD_TIMEOUT_S`; 0 waits for ever) is
    stopped with a :class:`RecordTimeoutError` (a ProgramError) naming it, its operation
    count and its last call; a schedule text larger than a quarter of the memory budget
    (``$ACESIM_MEMORY_LIMIT``, else the memory available) is stopped with a
    :class:`RecordTooBigError` (a MemoryError) naming the rank and its operation count,
    unless ``ignore_memory_limit=True``. The stop reaches a rank running Python code, even
    one that catches ``Exception``; a rank blocked in a call that does not return to Python
    (a long ``time.sleep``, a C extension holding the interpreter lock) or that catches
    every ``BaseException`` and goes on is stopped only when it next records an operation.
    The ``acesim`` command stops any rank (README "Safety").
    """
    ranks, args = _record_args(program, ranks, args)
    watch = _Watch.for_api(record_timeout, ignore_memory_limit)
    return watch.guard(lambda: _record_text(program, ranks, name, args, watch))


def _record_args(
    program: Callable[..., Any], ranks: object, args: Sequence[str]
) -> tuple[int, tuple[str, ...]]:
    """``ranks`` and ``args`` of :func:`record`, checked."""
    if not callable(program):
        raise TypeError(f"record(): program must be callable, not {type(program).__name__}")
    if type(ranks) is not int:
        if isinstance(ranks, bool) or not hasattr(type(ranks), "__index__"):
            raise TypeError(f"record(): ranks must be an int, not {type(ranks).__name__}")
        ranks = operator.index(ranks)  # type: ignore[call-overload]
    assert isinstance(ranks, int)
    if ranks <= 0:
        raise ValueError(f"record(): ranks must be positive, not {ranks}")
    if ranks > MAX_RANKS:
        raise ValueError(f"record(): ranks must be at most {MAX_RANKS}, not {ranks}")
    if isinstance(args, str):
        raise TypeError("record(): args must be a sequence of str, not a str")
    return ranks, tuple(str(a) for a in args)


def _record_text(
    program: Callable[[Context], Any],
    ranks: int,
    name: str | None,
    args: tuple[str, ...],
    watch: _Watch,
) -> str:
    """The schedule text of ``program`` (arguments checked), each rank watched by ``watch``."""
    out = ["# acesim schedule 1"]
    if name is not None:
        out.append(f"# program: {name}")
    out.append(f"ranks {ranks}")
    text_bytes = sum(len(line) + 1 for line in out)
    locs: dict[str, tuple[str, str]] = {}
    for r in range(ranks):
        head = f"rank {r}"
        out.append(head)
        text_bytes += len(head) + 1
        ctx = Context(r, ranks, args=args, _locs=locs)
        watch.start_rank(r, ctx, text_bytes)
        _record_rank(program, ctx)
        text_bytes = watch.end_rank()
        out.extend(ctx._lines)
    out.append("")
    return "\n".join(out)


def _record_rank(program: Callable[[Context], Any], ctx: Context) -> None:
    """Runs one rank's program; what it records goes to ``ctx._lines``."""
    r = ctx.rank
    try:
        program(ctx)
    except SystemExit as e:
        code = _exit_code(e)
        if code != 0:
            why = f" ({e.code})" if isinstance(e.code, str) else ""
            raise ProgramError(
                f"rank {r}: the program exited with code {code}{why} before finishing "
                f"(sys.exit in {_program_name(program)}, recording the program)"
            ) from None
    except _ArgError as e:
        raise type(e)(f"rank {r}: {e}") from None
    except Exception as e:
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next))
        raise ProgramError(
            f"rank {r}: {type(e).__name__}: {e}\n"
            f"(in {_program_name(program)}, recording the program)\n{tb.rstrip()}"
        ) from e


# ---- limits of a recording: a stall timeout and a size limit ---------------------------------

#: How often the watch of a recording looks at it (seconds).
_TICK_S = 0.25
#: How long a CLI recording waits for a stopped rank to stop before ending the process.
_STUCK_S = 2.0


class _Stop(BaseException):
    """Raised in the recording thread when its watch stops it (a stall, the size limit): a
    BaseException, so that a program's ``except Exception`` lets it through."""


class RecordTimeoutError(ProgramError):  # type: ignore[misc, valid-type]
    """A rank recorded no operation for the record timeout: a :class:`acesim.ProgramError`.
    ``detail`` is the message without the hint that follows it."""

    detail = ""


class RecordTooBigError(MemoryError):
    """The schedule text outgrew its share of the memory budget: a MemoryError. ``detail``
    is the message without the hint that follows it."""

    detail = ""
    hint = ""


def _stop_recording(*_: object) -> None:
    """A stopped rank's recording calls (its ``_emit``): they raise at once."""
    raise _Stop()


def _last_call(line: str) -> str:
    """``ctx.compute at p.py:4`` for the schedule line ``compute 1000ps @p.py:4``."""
    op = line.split(" ", 1)[0]
    if line.endswith('"'):
        i = line.rfind(' "@')
        loc = line[i + 3 : -1].replace('\\"', '"').replace("\\\\", "\\") if i >= 0 else "?"
    else:
        i = line.rfind(" @")
        loc = line[i + 2 :] if i >= 0 else "?"
    return f"ctx.{op} at {loc}"


def stall_detail(name: str, rank: int, seconds: int, ops: int, last: str) -> str:
    """How a rank that records nothing for ``seconds`` is named (rank -1: the file was still
    loading), as ``acesim run`` says it of C and Python ranks."""
    if rank < 0:
        return (
            f"{name} did not finish loading in {seconds} s (before rank 0 started); "
            "it may loop forever"
        )
    where = f" after its last ctx call, {last}" if last else " before its first ctx call"
    return (
        f"rank {rank}: no ctx call for {seconds} s{where} ({ops} operations recorded); "
        "it may loop forever"
    )


def _set_async_exc(tid: int, exc: type[BaseException] | None) -> None:
    """Raises ``exc`` in thread ``tid`` at its next Python instruction (None: takes back one
    not raised yet). Needs CPython's C API (ctypes); elsewhere only the recording calls of a
    stopped rank raise."""
    try:
        import ctypes

        set_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except (ImportError, AttributeError):  # pragma: no cover - not CPython
        return
    set_exc(ctypes.c_ulong(tid), None if exc is None else ctypes.py_object(exc))


def _text_limit() -> tuple[int, int, str] | None:
    """(most bytes of schedule text, the share of the memory budget it is, the budget in
    words), from the simulator core, as ``acesim run`` bounds a recording; None without a
    budget (or without the compiled core)."""
    from ._corelib import core, have_core

    limit = getattr(core(), "record_text_limit", None) if have_core() else None
    if limit is None:
        return None
    got = limit()
    return None if got is None else (int(got[0]), int(got[1]), str(got[2]))


def record_timeout_s(value: object, where: str) -> int:
    """Whole seconds (rounded up) of a record timeout: a number of seconds or a str with a
    unit (``"60s"``, ``"500ms"``); 0 waits for ever. ``where`` prefixes an error."""
    if isinstance(value, str):
        if value.strip() == "0":
            return 0
        try:
            ps = parse_time_ps(value)
        except ValueError as e:
            raise InputError(f"{where}: {e} (a time such as 60s; 0 waits forever)") from None
        return -(-ps // 1_000_000_000_000)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"{where} must be a number of seconds or a str like '60s', not {type(value).__name__}"
        )
    if math.isnan(value) or value < 0 or math.isinf(value):
        raise InputError(f"{where} must be a number of seconds >= 0 (0 waits forever), not {value}")
    return math.ceil(value)


def record_timeout_in_force(given: object, where: str) -> int:
    """The record timeout in force: ``given`` (not None), else ``$ACESIM_RECORD_TIMEOUT``,
    else :data:`DEFAULT_RECORD_TIMEOUT_S`."""
    if given is not None:
        return record_timeout_s(given, where)
    env = os.environ.get("ACESIM_RECORD_TIMEOUT")
    if env is not None:
        return record_timeout_s(env, "environment: field `ACESIM_RECORD_TIMEOUT`")
    return DEFAULT_RECORD_TIMEOUT_S


class _StatusFile:
    """ACESIM_RECORD_STATUS: where the ``acesim`` command, which runs this recorder as a
    process of its own, reads how the recording goes: ``RANK OPS`` (RANK ``-`` while the
    file loads), the last call on the next line, then ``too big`` when the size limit stopped
    it. Rewritten in place, padded so that it never shrinks."""

    def __init__(self, path: str) -> None:
        self._fd: int | None = os.open(path, os.O_WRONLY)
        self._size = 0

    def write(self, text: str) -> None:
        if self._fd is None:
            return
        data = text.encode()
        if len(data) < self._size:
            data += b" " * (self._size - len(data))
        try:
            os.pwrite(self._fd, data, 0)
        except OSError:  # the command is gone or its disk is full: nothing to tell
            return
        self._size = len(data)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class _Watch:
    """Watches a recording from a thread of its own, every :data:`_TICK_S`: counts the bytes
    of schedule text against ``max_bytes`` (0: no limit), stops a rank that records nothing
    for ``timeout_s`` (0: never) and notes progress in a status file. A stopped rank gets
    :class:`_Stop` raised in the recording thread, and its next recording call raises it too;
    :meth:`guard` turns that into the error naming the rank. ``on_stuck`` (the command line)
    is called with the error when the rank has not stopped :data:`_STUCK_S` later.

    The text is counted in characters (bytes for ASCII, all of a schedule but file and region
    names), as the main thread goes and when each rank ends, so the operation count in the
    message is where the text crossed the limit, whenever the watch noticed it."""

    def __init__(
        self,
        *,
        name: str = "the program",
        timeout_s: int = 0,
        limit: tuple[int, int, str] | None = None,
        status_path: str | None = None,
        cli: bool = False,
        on_stuck: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._name = name
        self._timeout_s = timeout_s
        self._max_bytes, self._share, self._have = limit or (0, 0, "")
        self._cli = cli
        self._on_stuck = on_stuck
        self._status = _StatusFile(status_path) if status_path else None
        self._lock = threading.Lock()
        self._tid = threading.get_ident()
        self._rank = -1  # -1: loading the program file
        self._ctx: Context | None = None
        self._lines: list[str] = []
        self._before = 0  # bytes of text before the current rank's operations
        self._counted = 0  # operations of the current rank counted
        self._counted_bytes = 0  # and their bytes
        self._seen = (-1, 0)
        self._since = time.monotonic()
        self._stopped_at = 0.0
        self._active = True
        self._raised = False
        self.error: BaseException | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        if self._status is not None:
            self._status.write("- 0\n\n")
        if timeout_s or self._max_bytes or self._status is not None:
            self._thread = threading.Thread(target=self._run, name="acesim-record-watch", daemon=True)
            self._thread.start()

    @classmethod
    def for_api(cls, record_timeout: object, ignore_memory_limit: bool) -> _Watch:
        timeout = record_timeout_in_force(record_timeout, "record(): record_timeout")
        limit = None if ignore_memory_limit else _text_limit()
        return cls(timeout_s=timeout, limit=limit)

    # -- the recording thread --------------------------------------------------------------------

    def start_rank(self, rank: int, ctx: Context, text_bytes: int) -> None:
        """Rank ``rank`` starts, with ``text_bytes`` of text before its operations."""
        with self._lock:
            self._rank, self._ctx, self._lines = rank, ctx, ctx._lines
            self._before, self._counted, self._counted_bytes = text_bytes, 0, 0
            self._seen, self._since = (rank, 0), time.monotonic()
            if self._status is not None:
                self._status.write(f"{rank} 0\n\n")
            if self._max_bytes and text_bytes > self._max_bytes:
                self._fail(self._too_big(0))
            if self.error is not None:
                raise _Stop()

    def end_rank(self) -> int:
        """The rank ended: counts the rest of its text; returns the bytes of text so far."""
        with self._lock:
            self._count(len(self._lines))
            if self.error is not None:
                raise _Stop()
            self._ctx = None
            return self._before + self._counted_bytes

    def guard(self, work: Callable[[], str]) -> str:
        """``work()``, or the error that stopped it; then the watch ends."""
        try:
            return work()
        except _Stop:
            pass  # self.error says why
        finally:
            # The watch raises _Stop again on every tick until it ends. Once _active is False
            # it raises no more, and one already on its way is delivered at a call, so inside
            # the loop (an attribute store is not a point where Python delivers it).
            self._active = False
            while True:
                try:
                    error = self.close()
                    break
                except _Stop:
                    continue
            if error is not None:
                raise error from None
        raise ProgramError("the recording was stopped")  # not reached: _Stop comes with an error

    def close(self) -> BaseException | None:
        """Ends the watch (no _Stop is raised afterwards); returns the error that stopped the
        recording, if one did."""
        self._done.set()
        with self._lock:
            self._active = False
            if self._raised:
                self._raised = False
                _set_async_exc(self._tid, None)
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._status is not None:
            self._status.close()
        return self.error

    # -- the watch thread --------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._done.wait(_TICK_S):
            stuck = self._tick()
            if stuck is not None and self._on_stuck is not None:
                self._on_stuck(stuck)
                return

    def _tick(self) -> BaseException | None:
        """One look; returns the error when a stopped rank is stuck past _STUCK_S."""
        with self._lock:
            if not self._active:
                return None
            n = len(self._lines)
            self._count(n)
            now = time.monotonic()
            if self.error is None:
                if (self._rank, n) != self._seen:
                    self._seen, self._since = (self._rank, n), now
                    if self._status is not None:
                        self._status.write(self._state(n))
                elif self._timeout_s and now - self._since >= self._timeout_s:
                    last = _last_call(self._lines[n - 1]) if n else ""
                    self._fail(self._stalled(n, last))
            if self.error is None:
                return None
            if self._ctx is not None:
                self._ctx._emit = _stop_recording  # type: ignore[method-assign]
            _set_async_exc(self._tid, _Stop)
            self._raised = True
            return self.error if now - self._stopped_at >= _STUCK_S else None

    # -- shared, under the lock --------------------------------------------------------------------

    def _state(self, n: int, extra: str = "") -> str:
        last = _last_call(self._lines[n - 1]) if n else ""
        rank = "-" if self._rank < 0 else str(self._rank)
        return f"{rank} {n}\n{last}\n{extra}"

    def _count(self, n: int) -> None:
        """Counts the bytes of the current rank's operations up to ``n``."""
        if not self._max_bytes or n <= self._counted or self.error is not None:
            return
        new = self._lines[self._counted : n]
        got = sum(map(len, new)) + len(new)
        if self._before + self._counted_bytes + got > self._max_bytes:
            room = self._max_bytes - self._before - self._counted_bytes
            fit = 0
            for line in new:
                room -= len(line) + 1
                if room < 0:
                    break
                fit += 1
            self._fail(self._too_big(self._counted + fit))
            if self._status is not None:
                self._status.write(self._state(self._counted + fit, "too big\n"))
        self._counted, self._counted_bytes = n, self._counted_bytes + got

    def _fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
            self._stopped_at = time.monotonic()

    def _stalled(self, n: int, last: str) -> RecordTimeoutError:
        detail = stall_detail(self._name, self._rank, self._timeout_s, n, last)
        option = "--record-timeout" if self._cli else "record_timeout="
        e = RecordTimeoutError(
            f"{detail}\n(set {option} or ACESIM_RECORD_TIMEOUT to wait longer, 0 for ever)"
        )
        e.detail = detail
        return e

    def _too_big(self, ops: int) -> RecordTooBigError:
        detail = (
            f"rank {self._rank}: the recorded schedule grew past {self._max_bytes} bytes after "
            f"{ops} operations of this rank"
        )
        instead = "use --ignore-memory-limit" if self._cli else "pass ignore_memory_limit=True"
        hint = (
            f"(the schedule text may take 1/{self._share} of the {self._have} of memory "
            "available, as the program read from it and the run need the rest; record fewer "
            f"ranks or operations, or {instead})"
        )
        e = RecordTooBigError(f"{detail}\n{hint}")
        e.detail, e.hint = detail, hint
        return e
