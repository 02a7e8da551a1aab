"""acesim: an interconnection-network simulator for RDMA and MPI programs on HPC machines.

    import acesim

    def ring(ctx):
        h = ctx.put((ctx.rank + 1) % ctx.size, 4)
        ctx.poll(0)
        ctx.complete(h)

    result = acesim.simulate("table1", ring, ranks=8)
    print(result.predicted_time)          # seconds
    result.links, result.ranks            # pandas DataFrames
    acesim.simulate("table1", ring, ranks=8, model="flow")   # the flow-level model
    print(acesim.compare_models("table1", ring, ranks=8))     # both levels, compared

The simulator itself is the compiled module ``acesim._core`` (Rust); this package records
Python programs, builds machines, runs sweeps and draws plots.
"""

from __future__ import annotations

from ._corelib import DeadlockError, InputError, InternalError, ProgramError, have_core
from .compare import ModelComparison, compare_models
from .machine import Machine, MachineWarning
from .program import ANY, UNDEFINED, Comm, Context, Handle, Request, Schedule, record
from .results import Result
from .simulation import simulate
from .sweep import sweep
from .traffic import traffic
from . import plots  # noqa: E402  (matplotlib is imported when a plot is drawn)

__all__ = [
    "ANY",
    "UNDEFINED",
    "Comm",
    "Context",
    "DeadlockError",
    "Handle",
    "InputError",
    "InternalError",
    "Machine",
    "MachineWarning",
    "ModelComparison",
    "ProgramError",
    "Request",
    "Result",
    "Schedule",
    "__version__",
    "compare_models",
    "plots",
    "record",
    "simulate",
    "sweep",
    "traffic",
    "version",
]


def version() -> str:
    """Version of the simulator core (that of this package when the core is not built)."""
    if have_core():
        from ._corelib import core

        return str(core().version())
    return __version__


def _package_version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version

        try:
            return dist_version("acesim")
        except PackageNotFoundError:
            pass
    except ImportError:  # pragma: no cover
        pass
    if have_core():
        from ._corelib import core

        return str(core().version())
    return "0.1.0"


__version__: str = _package_version()
