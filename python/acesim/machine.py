"""Machines: normalized TOML (docs/machine.md) plus a name used in error messages.

A :class:`Machine` is immutable: :meth:`Machine.set` and :meth:`Machine.with_` return new
machines, so one machine can be the base of many sweep points. Every machine is validated and
normalized (every default filled in) by the Rust core, whose errors name the file, line,
column and field (or the override that caused them).
"""

from __future__ import annotations

import errno
import math
import os
import secrets
import stat
from collections.abc import Mapping, Sequence
from typing import Any

from ._corelib import core

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["Machine", "toml_value"]

# Keyword shortcuts of the constructors -> dotted field.
_SHORTCUTS: dict[str, str] = {
    "link": "link.bandwidth",
    "latency": "link.latency",
    "dma": "nic.dma_rate",
    "overhead": "node.overhead",
    "ranks_per_node": "placement.ranks_per_node",
}


def toml_value(value: object, what: str = "value") -> str:
    """``value`` as a TOML literal: str -> string, numbers, booleans, lists -> arrays."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, what) for v in value) + "]"
    if hasattr(type(value), "__index__"):  # numpy integers
        return str(int(value))  # type: ignore[call-overload]
    raise TypeError(f"{what} must be a str, int, float, bool or list, not {type(value).__name__}")


def _field_name(field: object) -> str:
    if not isinstance(field, str):
        raise TypeError(f"field name must be a str, not {type(field).__name__}")
    if not field or "=" in field or any(c.isspace() for c in field):
        raise ValueError(f"{field!r} is not a field name like 'router.vcs'")
    return field


def _override(field: str, value: object) -> str:
    return f"{_field_name(field)}={toml_value(value, what=field)}"


def _int_list(value: object, arg: str) -> list[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{arg} must be a list of ints, not {type(value).__name__}")
    out = []
    for v in value:
        if isinstance(v, bool) or not hasattr(type(v), "__index__"):
            raise TypeError(f"{arg} must be a list of ints, found {type(v).__name__}")
        out.append(int(v))
    return out


def _int_arg(value: object, arg: str) -> int:
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{arg} must be an int, not {type(value).__name__}")
    return int(value)  # type: ignore[call-overload]


def _field_overrides(fields: Mapping[str, Any], extra: Mapping[str, Any] | None) -> list[str]:
    out = []
    for key, value in fields.items():
        dotted = _SHORTCUTS.get(key)
        if dotted is None:
            known = ", ".join(sorted(_SHORTCUTS)) + ", fields"
            raise TypeError(f"unexpected keyword argument {key!r} (known: {known})")
        out.append(_override(dotted, value))
    if extra is not None:
        if not isinstance(extra, Mapping):
            raise TypeError(f"fields must be a dict of dotted names, not {type(extra).__name__}")
        out.extend(_override(k, v) for k, v in extra.items())
    return out


class Machine:
    """A machine: normalized TOML text (every default filled in) and a name for messages."""

    __slots__ = ("_text", "_name", "_parsed")

    def __init__(self, text: str, name: str = "<string>", _normalized: bool = False) -> None:
        if not isinstance(text, str):
            raise TypeError(f"Machine(): text must be a str, not {type(text).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"Machine(): name must be a str, not {type(name).__name__}")
        self._text = text if _normalized else core().machine_normalize(text, name, [])
        self._name = name
        self._parsed: dict[str, Any] | None = None

    # -- constructors ----------------------------------------------------------------------------

    @classmethod
    def _make(cls, text: str, name: str, overrides: list[str]) -> Machine:
        return cls(core().machine_normalize(text, name, overrides), name, _normalized=True)

    @classmethod
    def from_toml(cls, text: str, name: str = "<string>") -> Machine:
        """A machine from TOML text (validated and normalized)."""
        return cls(text, name)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Machine:
        """A machine from a TOML file; errors name the file, line and field."""
        path = os.fspath(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return cls(text, path)

    @staticmethod
    def presets() -> list[str]:
        """Names of the built-in machines."""
        return list(core().presets())

    @classmethod
    def preset(cls, name: str = "table1", ranks: int | None = None) -> Machine:
        """A built-in machine (``table1``). ``ranks`` sizes a crossbar preset to that many nodes."""
        if not isinstance(name, str):
            raise TypeError(f"preset name must be a str, not {type(name).__name__}")
        m = cls._make(core().preset_text(name), name, [])
        if ranks is not None:
            ranks = _int_arg(ranks, "ranks")
            if m.get("topology.kind") == "crossbar" and m.get("topology.nodes", None) is None:
                m = m.set("topology.nodes", ranks)
        return m

    @classmethod
    def _topology(
        cls, kind: str, topo: dict[str, object], fields: Mapping[str, Any], extra: Any
    ) -> Machine:
        lines = ["[topology]", f'kind = "{kind}"']
        lines += [f"{k} = {toml_value(v, k)}" for k, v in topo.items() if v is not None]
        overrides = _field_overrides(fields, extra)
        return cls._make("\n".join(lines) + "\n", f"<{kind}>", overrides)

    @classmethod
    def torus(
        cls,
        dims: Sequence[int],
        *,
        wrap: bool | Sequence[bool] | None = None,
        nodes_per_router: int | None = None,
        fields: Mapping[str, Any] | None = None,
        **shortcuts: Any,
    ) -> Machine:
        """A torus (wrap-around in every dimension unless ``wrap`` says otherwise).

        ``link``, ``latency``, ``dma``, ``overhead``, ``ranks_per_node`` set link.bandwidth,
        link.latency, nic.dma_rate, node.overhead, placement.ranks_per_node; ``fields`` sets
        any dotted field, e.g. ``fields={"router.vcs": 4}``.
        """
        return cls._grid("torus", dims, wrap, nodes_per_router, shortcuts, fields)

    @classmethod
    def mesh(
        cls,
        dims: Sequence[int],
        *,
        wrap: bool | Sequence[bool] | None = None,
        nodes_per_router: int | None = None,
        fields: Mapping[str, Any] | None = None,
        **shortcuts: Any,
    ) -> Machine:
        """A mesh (no wrap-around unless ``wrap`` says otherwise); keywords as :meth:`torus`."""
        return cls._grid("mesh", dims, wrap, nodes_per_router, shortcuts, fields)

    @classmethod
    def _grid(
        cls,
        kind: str,
        dims: Sequence[int],
        wrap: bool | Sequence[bool] | None,
        nodes_per_router: int | None,
        shortcuts: Mapping[str, Any],
        fields: Mapping[str, Any] | None,
    ) -> Machine:
        d = _int_list(dims, "dims")
        w: list[bool] | None = None
        if isinstance(wrap, bool):
            w = [wrap] * len(d)
        elif wrap is not None:
            if isinstance(wrap, (str, bytes)) or not isinstance(wrap, Sequence):
                raise TypeError(
                    f"wrap must be a bool or a list of bools, not {type(wrap).__name__}"
                )
            if not all(isinstance(x, bool) for x in wrap):
                raise TypeError("wrap must be a bool or a list of bools")
            w = list(wrap)
        npr = None if nodes_per_router is None else _int_arg(nodes_per_router, "nodes_per_router")
        return cls._topology(
            kind, {"dims": d, "wrap": w, "nodes_per_router": npr}, shortcuts, fields
        )

    @classmethod
    def fat_tree(
        cls, k: int, n: int, *, fields: Mapping[str, Any] | None = None, **shortcuts: Any
    ) -> Machine:
        """A k-ary n-tree (``k^n`` nodes); keywords as :meth:`torus`."""
        topo: dict[str, object] = {"k": _int_arg(k, "k"), "n": _int_arg(n, "n")}
        return cls._topology("fat_tree", topo, shortcuts, fields)

    @classmethod
    def leaf_spine(
        cls,
        nodes_per_leaf: int,
        spines: int,
        leaves: int | None = None,
        links_per_spine: int | None = None,
        *,
        fields: Mapping[str, Any] | None = None,
        **shortcuts: Any,
    ) -> Machine:
        """A two-level leaf/spine tree; keywords as :meth:`torus`."""
        topo: dict[str, object] = {
            "nodes_per_leaf": _int_arg(nodes_per_leaf, "nodes_per_leaf"),
            "spines": _int_arg(spines, "spines"),
            "leaves": None if leaves is None else _int_arg(leaves, "leaves"),
            "links_per_spine": (
                None if links_per_spine is None else _int_arg(links_per_spine, "links_per_spine")
            ),
        }
        return cls._topology("leaf_spine", topo, shortcuts, fields)

    @classmethod
    def dragonfly(
        cls,
        p: int,
        a: int,
        h: int,
        g: int | None = None,
        *,
        routing: str | None = None,
        arrangement: str | None = None,
        global_population: float | None = None,
        global_choice: str | None = None,
        fields: Mapping[str, Any] | None = None,
        **shortcuts: Any,
    ) -> Machine:
        """A dragonfly: ``p`` nodes per router, ``a`` routers per group, ``h`` global links
        per router, ``g`` groups (at most and by default ``a*h + 1``); ``routing`` is
        ``minimal``, ``valiant`` or ``ugal``; ``arrangement`` ``consecutive`` or ``palmtree``;
        ``global_population`` the fraction of global links wired; ``global_choice`` ``hash``
        or ``load`` (docs/machine.md). Valiant and UGAL get 3 virtual channels unless
        ``fields`` sets ``router.vcs``. Other keywords as :meth:`torus`."""
        topo: dict[str, object] = {
            "p": _int_arg(p, "p"),
            "a": _int_arg(a, "a"),
            "h": _int_arg(h, "h"),
            "g": None if g is None else _int_arg(g, "g"),
            "arrangement": arrangement,
            "global_population": global_population,
            "global_choice": global_choice,
        }
        extra = dict(fields or {})
        if routing is not None:
            extra["router.routing"] = routing
            # Valiant and UGAL take up to two global hops: one VC class each, plus one.
            if routing in ("valiant", "ugal"):
                extra.setdefault("router.vcs", 3)
        return cls._topology("dragonfly", topo, shortcuts, extra)

    @classmethod
    def hyperx(
        cls,
        dims: Sequence[int],
        nodes_per_router: int | None = None,
        *,
        routing: str | None = None,
        fields: Mapping[str, Any] | None = None,
        **shortcuts: Any,
    ) -> Machine:
        """A HyperX (a flattened butterfly when the ``dims`` are equal): routers on a grid,
        each linked to every router that differs in one coordinate; ``routing`` is
        ``minimal`` (dimension order), ``adaptive``, which gets one virtual channel per
        dimension, or ``dal``, which gets one per hop it may take (two per dimension of 3 or
        more routers), unless ``fields`` sets ``router.vcs``. Other keywords as :meth:`torus`."""
        d = _int_list(dims, "dims")
        npr = None if nodes_per_router is None else _int_arg(nodes_per_router, "nodes_per_router")
        extra = dict(fields or {})
        if routing is not None:
            extra["router.routing"] = routing
            if routing == "adaptive":
                extra.setdefault("router.vcs", max(1, sum(1 for x in d if x > 1)))
            elif routing == "dal":
                extra.setdefault("router.vcs", max(1, sum((x > 1) + (x > 2) for x in d)))
        return cls._topology("hyperx", {"dims": d, "nodes_per_router": npr}, shortcuts, extra)

    @classmethod
    def slimfly(
        cls,
        q: int,
        nodes_per_router: int | None = None,
        *,
        routing: str | None = None,
        fields: Mapping[str, Any] | None = None,
        **shortcuts: Any,
    ) -> Machine:
        """A Slim Fly: the MMS graph of the prime power ``q`` (2q² routers, any two at most two hops
        apart); ``nodes_per_router`` defaults to half the network radix, rounded up;
        ``routing`` is ``minimal``, ``valiant`` or ``ugal`` (these two get 4 virtual
        channels unless ``fields`` sets ``router.vcs``). Other keywords as :meth:`torus`."""
        npr = None if nodes_per_router is None else _int_arg(nodes_per_router, "nodes_per_router")
        extra = dict(fields or {})
        if routing is not None:
            extra["router.routing"] = routing
            # Through an intermediate router: up to four hops, one VC class each.
            if routing in ("valiant", "ugal"):
                extra.setdefault("router.vcs", 4)
        return cls._topology("slimfly", {"q": _int_arg(q, "q"), "nodes_per_router": npr}, shortcuts, extra)

    @classmethod
    def graph(
        cls,
        file: str | os.PathLike[str],
        *,
        routes: str | None = None,
        root: int | None = None,
        fields: Mapping[str, Any] | None = None,
        **shortcuts: Any,
    ) -> Machine:
        """Any network, from a graph file (docs/graph-topologies.md): routers, their nodes
        and links with their own bandwidth and latency. ``routes`` is ``updown`` (the
        default without routing tables), ``layered`` (shortest paths, one VC class per hop:
        set ``router.vcs`` in ``fields``) or ``table`` (the file's ``route`` lines);
        ``root`` is the up*/down* root. The path is made absolute here, so the machine
        works from any folder. Other keywords as :meth:`torus`."""
        path = os.path.abspath(os.fspath(file))
        topo: dict[str, object] = {
            "file": path,
            "routes": routes,
            "root": None if root is None else _int_arg(root, "root"),
        }
        return cls._topology("graph", topo, shortcuts, fields)

    @classmethod
    def crossbar(
        cls, nodes: int | None = None, *, fields: Mapping[str, Any] | None = None, **shortcuts: Any
    ) -> Machine:
        """One router with a port per NIC (``nodes`` defaults to the number of ranks)."""
        topo: dict[str, object] = {"nodes": None if nodes is None else _int_arg(nodes, "nodes")}
        return cls._topology("crossbar", topo, shortcuts, fields)

    # -- derived machines ------------------------------------------------------------------------

    def set(self, field: str, value: object) -> Machine:
        """A new machine with ``field`` (dotted, e.g. ``"router.vcs"``) set to ``value``."""
        return self._make(self._text, self._name, [_override(field, value)])

    def with_(self, fields: Mapping[str, Any] | None = None, /, **kw: Any) -> Machine:
        """A new machine with several fields set: ``m.with_({"router.vcs": 4})`` or
        ``m.with_(**{"router.vcs": 4, "node.overhead": "0.6 us"})``."""
        items = dict(fields or {})
        items.update(kw)
        if not items:
            return self
        return self._make(self._text, self._name, [_override(k, v) for k, v in items.items()])

    # -- access ----------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    def as_dict(self) -> dict[str, Any]:
        """The normalized machine as nested dicts (a fresh copy)."""
        if self._parsed is None:
            self._parsed = tomllib.loads(self._text)
        return _deep_copy(self._parsed)

    _MISSING = object()

    def get(self, field: str, default: Any = _MISSING) -> Any:
        """The value of a dotted field in the normalized TOML (KeyError if absent, unless a
        ``default`` is given)."""
        if self._parsed is None:
            self._parsed = tomllib.loads(self._text)
        node: Any = self._parsed
        for part in _field_name(field).split("."):
            if not isinstance(node, dict) or part not in node:
                if default is not Machine._MISSING:
                    return default
                raise KeyError(f"{self._name}: no field {field!r}")
            node = node[part]
        return _deep_copy(node)

    @property
    def kind(self) -> str:
        """``topology.kind``."""
        return str(self.get("topology.kind"))

    def to_toml(self) -> str:
        """The normalized TOML text; the CLI reads it back to the same machine."""
        return self._text

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_toml` to ``path`` atomically (temporary file + rename)."""
        atomic_write(path, self._text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Machine) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)

    def __repr__(self) -> str:
        first = self._text.splitlines()[0] if self._text else ""
        desc = first[1:].strip() if first.startswith("#") else self.kind
        return f"<Machine {self._name}: {desc}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Machine, (self._text, self._name, True))


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


_SPECIAL = ("/dev/", "/proc/", "/sys/")


def _own_stream(path: str) -> Any:
    """``sys.stdout`` or ``sys.stderr`` when ``path`` names this process's descriptor 1 or 2."""
    import sys

    for fd, name, stream in ((1, "stdout", sys.stdout), (2, "stderr", sys.stderr)):
        aliases = {f"/dev/{name}", f"/dev/fd/{fd}", f"/proc/self/fd/{fd}", f"/proc/thread-self/fd/{fd}", f"/proc/{os.getpid()}/fd/{fd}"}
        if path in aliases and hasattr(stream, "buffer"):
            return stream
    return None


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` as the ``acesim`` command writes its outputs (README
    "Outputs"): a symbolic link is followed to its final target, which is replaced through a
    temporary file in its folder and a rename (new files 0666 less the umask, an existing
    file keeps its mode); devices, pipes and paths under /dev, /proc or /sys are written in
    place, opened for appending and never created or renamed over."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    path = os.fspath(path)
    given = os.path.abspath(path)
    target = os.path.realpath(path)  # the end of a symlink chain, even a dangling one
    if given.startswith(_SPECIAL) or target.startswith(_SPECIAL):
        special = True
    else:
        try:
            special = not stat.S_ISREG(os.stat(target).st_mode)
        except FileNotFoundError:
            special = False
    if special:
        stream = _own_stream(given)
        if stream is not None:  # /dev/stdout, /proc/self/fd/1, ...: after what was printed
            stream.flush()
            stream.buffer.write(raw)
            stream.flush()
            return
        if os.path.isdir(target):
            raise IsADirectoryError(errno.EISDIR, "is a folder", path)
        # No O_CREAT, no truncation: /dev/stdout and the like keep what was written before.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        return
    directory, base = os.path.split(target)
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    while True:
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o666 minus the umask, as a plain open() would create it.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            if mode is not None:
                os.fchmod(f.fileno(), mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class MachineWarning(UserWarning):
    """A machine setting that is valid but probably not what was meant (for instance a
    switch throughput below the link bandwidth, which caps every router output)."""


def warn_machine(machine: Machine) -> None:
    """Issues a :class:`MachineWarning` for each such setting of ``machine``."""
    import warnings

    for text in core().machine_warnings(machine.to_toml(), machine.name):
        warnings.warn(text, MachineWarning, stacklevel=3)


def resolve_machine(machine: Machine | str | os.PathLike[str]) -> Machine:
    """A Machine from a Machine, a preset name or a TOML path."""
    if isinstance(machine, Machine):
        return machine
    if isinstance(machine, os.PathLike):
        return Machine.load(machine)
    if isinstance(machine, str):
        if machine in core().presets() and not os.path.exists(machine):
            return Machine.preset(machine)
        return Machine.load(machine)
    raise TypeError(
        f"machine must be a Machine, a preset name or a path, not {type(machine).__name__}"
    )
