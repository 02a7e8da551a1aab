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
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ._corelib import ProgramError
from ._units import parse_size_bytes, parse_time_ps

__all__ = [
    "ANY",
    "UNDEFINED",
    "Comm",
    "Context",
    "Handle",
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

    def region_begin(self, name: str) -> None:
        """Open region ``name`` (regions nest and must be closed in order)."""
        self._emit(f"region_begin {self._region_name(name, 'region_begin')}{self._at()}")

    def region_end(self, name: str) -> None:
        """Close region ``name``."""
        self._emit(f"region_end {self._region_name(name, 'region_end')}{self._at()}")


# ---- recording -------------------------------------------------------------------------------


#: Most ranks a program is recorded for (as the C recorder's ``MGEN_MAX_RANKS``).
MAX_RANKS = 1 << 24


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
    """
    if not callable(program):
        raise TypeError(f"record(): program must be callable, not {type(program).__name__}")
    if type(ranks) is not int:
        if isinstance(ranks, bool) or not hasattr(type(ranks), "__index__"):
            raise TypeError(f"record(): ranks must be an int, not {type(ranks).__name__}")
        ranks = operator.index(ranks)
    if ranks <= 0:
        raise ValueError(f"record(): ranks must be positive, not {ranks}")
    if ranks > MAX_RANKS:
        raise ValueError(f"record(): ranks must be at most {MAX_RANKS}, not {ranks}")
    if isinstance(args, str):
        raise TypeError("record(): args must be a sequence of str, not a str")
    args = tuple(str(a) for a in args)
    out = ["# acesim schedule 1"]
    if name is not None:
        out.append(f"# program: {name}")
    out.append(f"ranks {ranks}")
    locs: dict[str, tuple[str, str]] = {}
    # `acesim run prog.py` asks for the rank being recorded in this file, to name it if the
    # process ends without a word (os._exit).
    status_path = os.environ.get("ACESIM_RECORD_STATUS")
    status = os.open(status_path, os.O_WRONLY) if status_path else None
    try:
        for r in range(ranks):
            if status is not None:
                os.pwrite(status, f"{r:<12}".encode(), 0)
            out.append(f"rank {r}")
            out.extend(_record_rank(program, r, ranks, args, locs))
    finally:
        if status is not None:
            os.close(status)
    out.append("")
    return "\n".join(out)


def _record_rank(
    program: Callable[[Context], Any],
    r: int,
    ranks: int,
    args: tuple[str, ...],
    locs: dict[str, tuple[str, str]],
) -> list[str]:
    lines: list[str] = []
    ctx = Context(r, ranks, args=args, _lines=lines, _locs=locs)
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
    return lines
