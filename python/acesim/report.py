"""A self-contained HTML report of one run (``acesim report RESULT.json``)."""

from __future__ import annotations

import base64
import html
import io
import os
from typing import TYPE_CHECKING, Any

from .machine import atomic_write
from .results import Result

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["write_report"]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
pre { background: #f6f6f6; padding: 0.8em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; }
th { background: #eee; }
img { max-width: 100%; }
"""
_MAX_ROWS = 200


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


def _table(df: pd.DataFrame) -> str:
    if not len(df):
        return "<p>none</p>"
    note = ""
    if len(df) > _MAX_ROWS:
        note = f"<p>first {_MAX_ROWS} of {len(df)} rows</p>"
        df = df.head(_MAX_ROWS)
    return df.to_html(index=False, border=0, na_rep="") + note


def write_report(result_json_path: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> str:
    """Write ``links.png``, ``timeline.png``, ``collectives.png`` (when the run had
    collectives) and ``report.html`` (the images embedded, the summary and the rank,
    collective and region tables; no external resources) into ``out_dir``.
    Returns the path of report.html."""
    from .plots import plot_collectives, plot_links, plot_timeline

    result = Result.from_json(result_json_path)
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    images: list[tuple[str, str, bytes]] = [
        ("links.png", "Link load", _png(plot_links(result))),
        ("timeline.png", "Timeline", _png(plot_timeline(result))),
    ]
    if len(result.collectives):
        images.append(("collectives.png", "Collectives", _png(plot_collectives(result))))
    for name, _, data in images:
        atomic_write(os.path.join(out_dir, name), data)

    title = f"acesim report: {os.path.basename(os.fspath(result_json_path))}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<pre>{html.escape(result.summary())}</pre>",
    ]
    for _, caption, data in images:
        b64 = base64.b64encode(data).decode("ascii")
        parts.append(f"<h2>{caption}</h2>")
        parts.append(f'<img alt="{caption}" src="data:image/png;base64,{b64}">')
    parts.append("<h2>Ranks</h2>" + _table(result.ranks))
    parts.append("<h2>Collectives</h2>" + _table(result.collectives))
    parts.append("<h2>Regions</h2>" + _table(result.regions))
    parts.append("</body></html>\n")
    path = os.path.join(out_dir, "report.html")
    atomic_write(path, "\n".join(parts))
    return path
