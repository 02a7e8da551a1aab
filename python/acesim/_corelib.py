"""Access to the compiled core `acesim._core` and its exception classes.

The pure-Python layer imports without the core (recording programs works without it); every
call that simulates or validates goes through :func:`core`, which explains how to build it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

try:
    from . import _core as _core_module
except ImportError:  # not built yet
    _core_module = None

__all__ = [
    "core",
    "have_core",
    "InputError",
    "ProgramError",
    "DeadlockError",
    "InternalError",
]


def have_core() -> bool:
    return _core_module is not None


def core() -> ModuleType:
    """The compiled module; ImportError with the way to build it when it is missing."""
    if _core_module is None:
        raise ImportError(
            "acesim._core (the compiled simulator) is not available: build it with "
            "`scripts/setup` (or `pip install -e .` in a virtualenv)"
        )
    return _core_module


def _exc(name: str, base: type[BaseException]) -> Any:
    if _core_module is not None and hasattr(_core_module, name):
        return getattr(_core_module, name)
    return type(name, (base,), {"__module__": "acesim"})


InputError: type[ValueError] = _exc("InputError", ValueError)
ProgramError: type[RuntimeError] = _exc("ProgramError", RuntimeError)
DeadlockError: type[RuntimeError] = _exc("DeadlockError", RuntimeError)
InternalError: type[Exception] = _exc("InternalError", Exception)
