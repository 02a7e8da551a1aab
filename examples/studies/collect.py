#!/usr/bin/env python3
"""Writes docs/studies.md from the studies' READMEs and full-run results (scripts/studies
runs it after the full runs)."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import ROOT, write  # noqa: E402

STUDIES = [
    ("random_ring", "Random ring bandwidth (NSIM-ACE §4.1)"),
    ("barriers", "Barriers: ring vs recursive doubling (NSIM-ACE §4.2)"),
    ("particle_exchange", "Particle exchange after domain decomposition (NSIM-ACE §4.3, the 2015 RDMA-pattern paper)"),
    ("alltoall", "All-to-all algorithms (MFS)"),
    ("dragonfly_halo", "Dragonfly routing for a CTH-like halo (ACES)"),
    ("aces_traces", "Real MPI traces filling a dragonfly (ACES)"),
    ("topologies", "HyperX, dragonfly and fat tree for the CTH-like pattern and uniform traffic"),
    ("torus_routing", "Adaptive versus deterministic routing on a torus under tornado"),
]


def main() -> int:
    out = [
        "# The published studies, rerun\n",
        "Each study is a folder under `examples/studies/` with its machine(s), program(s), one",
        "command (`run.py`), a README stating the paper's finding and acesim's side by side, and",
        "its full-run results (tables with acesim's wall time and peak memory) and figure.",
        "`make studies` (`scripts/studies`) reruns all of them and regenerates this page;",
        "`scripts/studies --quick` runs reduced versions and checks the findings, as CI does.\n",
    ]
    for name, title in STUDIES:
        folder = os.path.join(HERE, name)
        out.append(f"## {title}\n")
        out.append(f"Folder [examples/studies/{name}](../examples/studies/{name}); run "
                   f"`.venv/bin/python examples/studies/{name}/run.py`. Paper vs acesim: "
                   f"[README](../examples/studies/{name}/README.md).\n")
        results = os.path.join(folder, "results.md")
        if os.path.exists(results):
            text = open(results).read().strip()
            # Demote the results file's own headings under this section.
            text = "\n".join(("###" + line.lstrip("#")) if line.startswith("#") else line for line in text.splitlines())
            out.append(text + "\n")
        if os.path.exists(os.path.join(folder, "figure.png")):
            out.append(f"![{title}](../examples/studies/{name}/figure.png)\n")
    write(os.path.join(ROOT, "docs", "studies.md"), "\n".join(out))
    print("wrote docs/studies.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
