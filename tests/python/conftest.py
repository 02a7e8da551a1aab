"""Test setup: find the package, provide fixtures.

Tests that need the compiled simulator take the ``core`` fixture. It skips them when
`acesim._core` is not built (a pure-Python checkout), but fails them under CI=true, where
scripts/setup always builds it: a missing core must never pass as skipped tests.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))

if importlib.util.find_spec("acesim") is None:
    sys.path.insert(0, os.path.join(ROOT, "python"))

import acesim  # noqa: E402,F401

try:  # a headless backend for the plot tests
    import matplotlib

    matplotlib.use("Agg")
except ImportError:
    pass


@pytest.fixture
def core():
    """The compiled core; skips the test when it is not built."""
    try:
        from acesim import _core
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("acesim._core is not built: scripts/setup must build it")
        pytest.skip("acesim._core is not built (scripts/setup)")
    return _core


@pytest.fixture
def root() -> str:
    return ROOT


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test from the repository root (schedule locations are cwd-relative)."""
    monkeypatch.chdir(ROOT)
    return ROOT


def torus_links(dims: tuple[int, int]) -> list[dict]:
    """Per-link records of a 2D torus, named as the simulator names them."""
    nx, ny = dims
    links = []

    def add(name: str, cls: str, src, dst, util: float) -> None:
        i = len(links)
        links.append(
            {
                "link": i,
                "name": name,
                "class": cls,
                "bandwidth_bytes_per_s": 4_000_000_000,
                "bytes": int(util * 1e6),
                "packets": int(util * 500),
                "busy_ps": int(util * 1e8),
                "utilization": util,
                "wait_ps": 0,
                "stall_ps": 0,
                "src_router": src,
                "dst_router": dst,
            }
        )

    for r in range(nx * ny):
        x, y = r % nx, r // nx
        nbrs = [
            ((x + 1) % nx) + y * nx,
            ((x - 1) % nx) + y * nx,
            x + ((y + 1) % ny) * nx,
            x + ((y - 1) % ny) * nx,
        ]
        for p, n in enumerate(nbrs):
            add(f"r{r}.p{p}->r{n}", "network", r, n, ((r * 7 + p * 3) % 10) / 10)
        add(f"r{r}.p4->nic{r}", "ejection", r, None, 0.05 * (r % 4))
    for r in range(nx * ny):
        add(f"nic{r}->r{r}", "injection", None, r, 0.02 * (r % 3))
    return links


def sample_summary(ranks: int = 4, with_extras: bool = True) -> dict:
    """A JSON summary in the documented format (a run on a 3x3 torus), for tests that do not
    need the simulator. ``with_extras=False`` leaves out links/topology_detail/trace."""
    per_rank = []
    ops = []
    trace = []
    for r in range(ranks):
        per_rank.append(
            {
                "rank": r,
                "node": r,
                "finish_ps": 5_000_000 + r * 1000,
                "compute_ps": 1_000_000,
                "overhead_ps": 600_000,
                "blocked_ps": {"poll": 2_000_000} if r % 2 else {"complete": 1_500_000},
            }
        )
        ops.append(
            {
                "kind": "put",
                "rank": r,
                "src": r,
                "dst": (r + 1) % ranks,
                "size": 4096,
                "tag": 0,
                "issue_ps": 1_000_000,
                "dma_start_ps": 1_000_000,
                "landed_ps": 3_000_000,
                "complete_ps": 3_500_000 + r,
                "latency_ps": 2_500_000 + r,
                "bandwidth_bytes_per_s": 1.6e9,
            }
        )
        trace += [
            {"rank": r, "kind": "compute", "name": "", "start_ps": 0, "end_ps": 1_000_000},
            {
                "rank": r,
                "kind": "overhead",
                "name": "put",
                "start_ps": 1_000_000,
                "end_ps": 1_600_000,
            },
            {
                "rank": r,
                "kind": "blocked",
                "name": "poll",
                "start_ps": 1_600_000,
                "end_ps": 3_600_000,
            },
            {"rank": r, "kind": "region", "name": "step", "start_ps": 0, "end_ps": 4_000_000},
            {
                "rank": r,
                "kind": "collective",
                "name": "barrier",
                "start_ps": 4_000_000,
                "end_ps": 5_000_000,
            },
        ]
    data = {
        "acesim_version": "0.1.0",
        "topology": "torus 3x3: 9 routers, 9 nodes, 1 NICs/node",
        "predicted_time_ps": 5_003_000,
        "predicted_time": "5.003 us",
        "ranks": ranks,
        "events": 1234,
        "packet_hops": 99,
        "wall_seconds": 0.01,
        "per_rank": per_rank,
        "operations": ops,
        "receives": [],
        "regions": [
            {
                "name": "step",
                "count": ranks,
                "min_ps": 4_000_000,
                "max_ps": 4_000_000,
                "mean_ps": 4_000_000.0,
                "first_begin_ps": 0,
                "last_end_ps": 4_000_000,
            }
        ],
        "collectives": [
            {
                "kind": "barrier",
                "algorithm": "ring",
                "comm": "world",
                "size": 0,
                "root": 0,
                "ranks": ranks,
                "start_ps": 4_000_000,
                "end_ps": 5_000_000,
                "duration_ps": 1_000_000,
                "mean_rank_ps": 900_000.0,
            }
        ],
        "unpolled_puts": [],
        "unmatched_messages": [],
        "unmatched_receives": 0,
    }
    if with_extras:
        data["links"] = torus_links((3, 3))
        data["topology_detail"] = {
            "kind": "torus",
            "routers": 9,
            "dims": [3, 3],
            "wrap": [True, True],
            "nodes_per_router": 1,
        }
        data["trace"] = trace
    return data


@pytest.fixture
def summary_path(tmp_path) -> str:
    import json

    path = tmp_path / "result.json"
    path.write_text(json.dumps(sample_summary()))
    return str(path)
