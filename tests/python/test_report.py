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
    assert "Ranks" in html and "blocked_poll (µs)" in html and "<td>step</td>" in html


def _rows(html: str, caption: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the table under heading ``caption``."""
    import html as h

    table = html.split(f"<h2>{caption}", 1)[1].split("</table>", 1)[0]
    head = [h.unescape(x) for x in re.findall(r"<th[^>]*>(.*?)</th>", table)]
    body = table.split("<tbody>", 1)[1]
    rows = [[h.unescape(x) for x in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in body.split("</tr>")[:-1]]
    return head, rows


def test_report_tables_are_in_human_units_with_the_busiest_links_first(tmp_path) -> None:
    data = sample_summary()
    for i, link in enumerate(data["links"]):
        link.update(bytes=0, packets=0, busy_ps=0, utilization=0.0, wait_ps=0, stall_ps=0)
    # Two links carried bytes: the busier one comes first.
    data["links"][5].update(bytes=2048, packets=2, busy_ps=1_250_000, utilization=0.25, wait_ps=500_000)
    data["links"][2].update(bytes=1_500_000, packets=750, busy_ps=2_500_000, utilization=0.5)
    src = tmp_path / "r.json"
    src.write_text(json.dumps(data))
    html = (tmp_path / "out" / "report.html")
    write_report(src, tmp_path / "out")
    text = html.read_text()
    head, rows = _rows(text, "Busiest links")
    assert head == ["name", "class", "bandwidth (GB/s)", "bytes (MB)", "packets", "busy (µs)", "utilization (%)", "wait (µs)", "stall (µs)"]
    assert [r[0] for r in rows] == [data["links"][2]["name"], data["links"][5]["name"]]
    assert rows[0][3:7] == ["1.500", "750", "2.50", "50.0"]
    assert rows[1][3:8] == ["0.002", "2", "1.25", "25.0", "0.5"]
    # One time unit for the whole table, so that its columns compare: µs for 5 ms at most.
    head, rows = _rows(text, "Ranks")
    assert head[:5] == ["rank", "node", "finish (µs)", "compute (µs)", "overhead (µs)"]
    assert rows[1][2:5] == ["5.001", "1.0", "0.6"]
    head, rows = _rows(text, "Regions")
    assert "mean (µs)" in head and rows[0][head.index("mean (µs)")] == "4.0"


def test_report_without_collectives(tmp_path) -> None:
    data = sample_summary(with_extras=False)
    data["collectives"] = []
    data.pop("wall_seconds", None)  # as acesim run --json writes it
    src = tmp_path / "r.json"
    src.write_text(json.dumps(data))
    write_report(src, tmp_path / "out")
    assert not (tmp_path / "out" / "collectives.png").exists()
    html = (tmp_path / "out" / "report.html").read_text()
    # A saved summary has no wall time: the report does not show `wall: 0.000 s`.
    assert "packet-hops:" in html and "wall:" not in html


def test_report_on_malformed_json_is_located_and_leaves_nothing(tmp_path) -> None:
    from acesim.report import ReportError

    src = tmp_path / "r.json"
    src.write_text('{"predicted_time_ps": 5,\n "ranks": [}\n')
    with pytest.raises(ReportError, match=r"r\.json:2:12: not valid JSON: Expecting value"):
        write_report(src, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_report_on_json_that_is_not_a_result_names_the_missing_field(tmp_path) -> None:
    from acesim.report import ReportError

    src = tmp_path / "r.json"
    src.write_text('{"ranks": 2}')
    with pytest.raises(ReportError, match=r"not an acesim result: it has no predicted_time_ps, per_rank \(it has ranks\); expected"):
        write_report(src, tmp_path / "out")
    src.write_text('[{"load": 0.1}]')
    with pytest.raises(ReportError, match="not an acesim traffic result: point 0 has no pattern, accepted"):
        write_report(src, tmp_path / "out")
    data = sample_summary(with_extras=False)
    data["per_rank"] = "nonsense"
    src.write_text(json.dumps(data))
    with pytest.raises(ReportError, match="not a readable acesim result"):
        write_report(src, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_report_into_an_existing_folder_replaces_its_files(tmp_path, summary_path: str) -> None:
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.html").write_text("old")
    (out / "notes.txt").write_text("mine")
    write_report(summary_path, out)
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert (out / "notes.txt").read_text() == "mine"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_report_on_a_traffic_sweep(tmp_path) -> None:
    # Two patterns' load points, as `acesim traffic --json` writes them.
    points = [
        {"pattern": p, "load": load, "offered": load, "accepted": min(load, cap),
         "latency_mean_ns": 400 + 5000 * max(0.0, load - cap), "latency_p50_ns": 380.0,
         "latency_p99_ns": 900.0, "saturated": load > cap,
         "latency_histogram": {"edges_ns": [256.0, 320.0, 384.0], "counts": [int(100 * load), 3]}}
        for p, cap in (("uniform", 0.6), ("tornado", 0.3)) for load in (0.1, 0.3, 0.5, 0.7)
    ]
    src = tmp_path / "t.json"
    src.write_text(json.dumps(points))
    out = tmp_path / "rep"
    write_report(src, out)
    assert sorted(p.name for p in out.iterdir()) == ["histograms.png", "latency.png", "report.html", "throughput.png"]
    html = (out / "report.html").read_text()
    assert "tornado: 4 loads, saturated from load 0.5; best accepted throughput 0.3000" in html
    assert "uniform: 4 loads, saturated from load 0.7; best accepted throughput 0.6000" in html
    assert html.count("data:image/png;base64,") == 3
    assert "latency_histogram" not in html  # drawn, not dumped in the table
