"""Shared helpers of the study scripts: run acesim, record wall time and peak memory, check
findings, write results. Every study script runs with the project venv's Python:

    .venv/bin/python examples/studies/<study>/run.py [--quick]
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, "target", "release", "acesim")
MACHINES = os.path.join(ROOT, "examples", "studies", "machines")


def ensure_built() -> None:
    if not os.path.exists(BIN):
        subprocess.run([os.path.join(ROOT, "scripts", "setup")], check=True)


class Run:
    """One acesim run: its JSON summary, wall seconds and peak memory (MiB) of the process."""

    def __init__(self, summary: dict[str, Any], wall: float, peak_mib: float) -> None:
        self.summary = summary
        self.wall = wall
        self.peak_mib = peak_mib

    @property
    def time_ps(self) -> int:
        return int(self.summary["predicted_time_ps"])


def acesim(args: list[str], cwd: str | None = None, partial: bool = False) -> Run:
    """Runs `acesim run ARGS --json`; wall time and peak RSS are measured around it. With
    `partial`, a run stopped by `--max-sim-time` (exit code 4) is a result too."""
    ensure_built()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.perf_counter()
        p = subprocess.run([BIN, "run", *args, "--json", out, "-q"], cwd=cwd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if p.returncode != 0 and not (partial and p.returncode == 4):
            raise RuntimeError(f"acesim run {' '.join(args)} failed:\n{p.stderr}")
        with open(out) as fh:
            summary = json.load(fh)
    finally:
        os.unlink(out)
    # ru_maxrss of children is the largest child so far (KiB on Linux): exact for the first
    # and for any run larger than the ones before it, an upper bound otherwise.
    return Run(summary, wall, max(peak, before) / 1024)


class Findings:
    """Collects the paper's findings as checks; `exit_code()` is non-zero if any failed."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.passed: list[str] = []

    def check(self, ok: bool, text: str) -> None:
        (self.passed if ok else self.failed).append(text)
        print(("ok    " if ok else "FAIL  ") + text)

    def exit_code(self) -> int:
        return 1 if self.failed else 0


def write(path: str, text: str) -> None:
    """Writes atomically (temp file + rename)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def us(ps: float) -> str:
    return f"{ps / 1e6:.2f}"


def argv_quick() -> bool:
    return "--quick" in sys.argv[1:]


def save_figure(fig: Any, path: str, dpi: int = 120) -> None:
    """Saves a matplotlib figure atomically and closes it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path + ".tmp.png", dpi=dpi)
    plt.close(fig)
    os.replace(path + ".tmp.png", path)
