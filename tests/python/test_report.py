"""write_report: PNGs and a self-contained HTML page (no simulator needed)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import sample_summary

from acesim.report import write_report

pytest.importorskip("matplotlib")


def test_report_files(tmp_path, summary_path: str) -> None:
    out = tmp_path / "report"
    path = write_report(summary_path, out)
    assert path == str(out / "report.html")
    names = sorted(p.name for p in out.iterdir())
    assert names == ["collectives.png", "links.png", "report.html", "timeline.png"]
    for png in ("links.png", "timeline.png", "collectives.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3
    assert not re.search(r"(src|href)=\"(https?:|//|[^d\"])", html)  # nothing external
    assert "Ranks" in html and "blocked_poll_ps" in html and "<td>step</td>" in html


def test_report_without_collectives(tmp_path) -> None:
    data = sample_summary(with_extras=False)
    data["collectives"] = []
    src = tmp_path / "r.json"
    src.write_text(json.dumps(data))
    write_report(src, tmp_path / "out")
    assert not (tmp_path / "out" / "collectives.png").exists()
    assert (tmp_path / "out" / "report.html").exists()
