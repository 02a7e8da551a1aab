"""A self-contained HTML report of one run or of a traffic sweep (``acesim report
RESULT.json``)."""

from __future__ import annotations

import base64
import html
import io
import json
import os
import secrets
import shutil
from typing import TYPE_CHECKING, Any

from .results import Result

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["ReportError", "write_report"]

# Fields every ``acesim run --json`` summary has; a JSON file without them is something else.
_REQUIRED = ("predicted_time_ps", "ranks", "per_rank")
# ... and every load point of ``acesim traffic --json``.
_TRAFFIC_REQUIRED = ("pattern", "load", "accepted", "latency_mean_ns", "latency_p99_ns", "saturated")
_WHAT = (
    "expected the JSON of `acesim run --json` (an object with predicted_time_ps, ranks and "
    "per_rank) or of `acesim traffic --json` (a list of load points)"
)


class ReportError(ValueError):
    """The result file cannot be read as an acesim JSON summary (the message says where)."""

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


_SIZES = ((1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "B"))
_BUSIEST_LINKS = 20


def _human(df: pd.DataFrame) -> pd.DataFrame:
    """The table in units a reader takes in at a glance: its times in one unit (ns, µs, ms,
    s, named in each header, so that columns compare), byte counts in B to GB, rates in GB/s
    and utilizations in %."""
    from .plots import time_scale

    out = df.copy()
    names = {}
    numeric = [c for c in df.columns if str(df[c].dtype).startswith(("int", "float"))]
    times = [c for c in numeric if c.endswith("_ps")]
    longest = max((float(df[c].abs().max()) for c in times if len(df)), default=0.0)
    div, unit = time_scale(max(longest, 1.0))
    for c in numeric:
        col = df[c]
        top = float(col.abs().max()) if len(col) else 0.0
        if c.endswith("_ps"):
            out[c] = (col / div).round(3)
            names[c] = f"{c[:-3]} ({unit})"
        elif c.endswith("bytes_per_s"):
            out[c] = (col / 1e9).round(3)
            names[c] = f"{c[: -len('bytes_per_s')].rstrip('_') or 'bandwidth'} (GB/s)"
        elif c == "bytes" or c.endswith("_bytes"):
            size_div, size_unit = next((d, u) for d, u in _SIZES if top >= d or d == 1.0)
            out[c] = (col / size_div).round(3)
            names[c] = f"{c} ({size_unit})"
        elif c.endswith(("utilization", "minimal_fraction")):
            out[c] = (col * 100).round(2)
            names[c] = f"{c} (%)"
        elif c.endswith("_ns"):
            out[c] = col.round(1)
            names[c] = f"{c[:-3]} (ns)"
        elif str(col.dtype).startswith("float"):
            out[c] = col.round(4)
    for c in df.columns:
        # A machine's description (traffic points carry it) by its name.
        if c == "machine":
            out[c] = df[c].map(lambda m: m.get("name", m) if isinstance(m, dict) else m)
    return out.rename(columns=names)


def _busiest_links(result: Result) -> pd.DataFrame:
    """The links that carried the most, busiest first (ties by link number)."""
    links = result.links
    if not len(links):
        return links
    cols = [c for c in ("name", "class", "bandwidth_bytes_per_s", "bytes", "packets", "busy_ps", "utilization", "wait_ps", "stall_ps") if c in links]
    busiest = links.sort_values(["utilization", "link"], ascending=[False, True], kind="stable")
    return busiest[busiest["bytes"] > 0].head(_BUSIEST_LINKS)[cols]


def _load(path: str) -> Result | pd.DataFrame:
    """The summary in ``path`` (a run's, or a traffic sweep's points as a DataFrame), or a
    :class:`ReportError` that says where it went wrong."""
    import pandas as pd

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise ReportError(f"{path}: not UTF-8 text (byte {e.start}); {_WHAT}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    if isinstance(data, list):
        for i, point in enumerate(data):
            missing = [f for f in _TRAFFIC_REQUIRED if not isinstance(point, dict) or f not in point]
            if missing:
                raise ReportError(
                    f"{path}: not an acesim traffic result: point {i} has no {', '.join(missing)}; {_WHAT}"
                )
        if not data:
            raise ReportError(f"{path}: an empty list: no load point to report; {_WHAT}")
        return pd.DataFrame(data)
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not an acesim result: the JSON is a {type(data).__name__}; {_WHAT}")
    missing = [f for f in _REQUIRED if f not in data]
    if missing:
        has = ", ".join(list(data)[:5]) or "nothing"
        raise ReportError(
            f"{path}: not an acesim result: it has no {', '.join(missing)} (it has {has}); {_WHAT}"
        )
    return Result(data)


def _traffic_images(points: pd.DataFrame) -> list[tuple[str, str, bytes]]:
    """Latency (mean, p50, p99) against offered load, and mean latency against accepted
    throughput, one line per pattern."""
    from .plots import _axes, plot_latency_throughput

    stats = [c for c in ("latency_mean_ns", "latency_p50_ns", "latency_p99_ns") if c in points]
    long = points.melt(id_vars=["pattern", "load"], value_vars=stats, var_name="latency", value_name="ns")
    long["latency"] = long["latency"].str[len("latency_") : -len("_ns")]
    fig = plot_latency_throughput(long, latency="ns", hue=["pattern", "latency"])
    fig.axes[0].set_ylabel("packet latency (ns)")
    out = [("latency.png", "Latency against offered load", _png(fig))]
    # Drawn here rather than by plot_latency_throughput, which orders points by their x:
    # past saturation the accepted throughput falls as the load grows, and the curve must
    # follow the load.
    fig, ax = _axes(None, (7, 4.5))
    for pattern, g in points.groupby("pattern", sort=True):
        g = g.sort_values("load")
        ax.plot(g["accepted"], g["latency_mean_ns"], marker="o", markersize=3, label=str(pattern))
    ax.set_xlabel("accepted throughput (fraction of the injection bandwidth)")
    ax.set_ylabel("mean packet latency (ns)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    out.append(("throughput.png", "Latency against accepted throughput", _png(fig)))
    if "latency_histogram" in points.columns:
        from .plots import plot_latency_histograms

        fig = plot_latency_histograms(points)
        out.append(("histograms.png", "Latency distribution at each load", _png(fig)))
    return out


def _traffic_summary(points: pd.DataFrame) -> str:
    """What the sweep says, a line per pattern: loads run, saturation, best throughput."""
    lines = []
    for pattern, g in points.groupby("pattern", sort=True):
        g = g.sort_values("load")
        sat = g[g["saturated"]]
        where = f"saturated from load {sat['load'].iloc[0]:g}" if len(sat) else f"no saturation up to load {g['load'].max():g}"
        lines.append(
            f"{pattern}: {len(g)} loads, {where}; best accepted throughput {g['accepted'].max():.4f}; "
            f"lowest mean latency {g['latency_mean_ns'].min():.1f} ns"
        )
    return "\n".join(lines)


def _new_folder(parent: str, base: str) -> str:
    """A fresh hidden folder in ``parent``, created 0777 less the umask as mkdir would."""
    while True:
        path = os.path.join(parent, f".{base}.{secrets.token_hex(4)}.tmp")
        try:
            os.mkdir(path, 0o777)
            return path
        except FileExistsError:
            continue


def write_report(result_json_path: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> str:
    """Write ``links.png``, ``timeline.png``, ``collectives.png`` (when the run had
    collectives) and ``report.html`` (the images embedded, the summary, the busiest links
    and the rank, collective and region tables in human units; no external resources) into
    ``out_dir``.
    Returns the path of report.html.

    All or nothing: the files are made in a temporary folder beside ``out_dir``, which then
    becomes ``out_dir`` (or, when ``out_dir`` exists, whose files replace their namesakes in
    it). A traffic sweep (``acesim traffic --json``) gets ``latency.png`` (latency against
    offered load), ``throughput.png`` (latency against accepted throughput),
    ``histograms.png`` (the latency distribution at each load, per pattern) and its points. A result that is neither raises :class:`ReportError` (located: file, line and
    column, or what is missing) and leaves nothing behind."""
    import pandas as pd

    from .plots import plot_collectives, plot_links, plot_timeline

    src = os.fspath(result_json_path)
    result = _load(src)
    given = os.fspath(out_dir)
    out_dir = os.path.abspath(given)
    parent, base = os.path.split(out_dir)
    if not os.path.isdir(parent):
        raise ReportError(f"{given}: cannot write the report: the folder '{parent}' does not exist")
    if os.path.lexists(out_dir) and not os.path.isdir(out_dir):
        raise ReportError(f"{given}: cannot write the report: it exists and is not a folder")
    tmp = _new_folder(parent, base)
    try:
        try:
            if isinstance(result, pd.DataFrame):
                summary = _traffic_summary(result)
                images = _traffic_images(result)
                tables = [("Load points", _table(_human(result.drop(columns=["latency_histogram"], errors="ignore"))))]
                return _write_html(src, tmp, out_dir, given, summary, images, tables)
            images = [
                ("links.png", "Link load", _png(plot_links(result))),
                ("timeline.png", "Timeline", _png(plot_timeline(result))),
            ]
            if len(result.collectives):
                images.append(("collectives.png", "Collectives", _png(plot_collectives(result))))
            summary = result.summary()
            named = (
                (f"Busiest links (the first {_BUSIEST_LINKS} that carried bytes)", _busiest_links(result)),
                ("Ranks", result.ranks),
                ("Collectives", result.collectives),
                ("Regions", result.regions),
            )
            tables = [(t, _table(_human(df))) for t, df in named]
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            what = f"missing field `{e.args[0]}`" if isinstance(e, KeyError) and e.args else f"{type(e).__name__}: {e}"
            raise ReportError(f"{src}: not a readable acesim result (acesim run --json): {what}") from None
        return _write_html(src, tmp, out_dir, given, summary, images, tables)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_html(
    src: str,
    tmp: str,
    out_dir: str,
    given: str,
    summary: str,
    images: list[tuple[str, str, bytes]],
    tables: list[tuple[str, str]],
) -> str:
    """Writes the images and report.html into ``tmp``, which then becomes ``out_dir`` (or
    fills it, file by file, when it exists)."""
    for name, _, data in images:
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    title = f"acesim report: {os.path.basename(src)}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<pre>{html.escape(summary)}</pre>",
    ]
    for _, caption, data in images:
        b64 = base64.b64encode(data).decode("ascii")
        parts.append(f"<h2>{caption}</h2>")
        parts.append(f'<img alt="{caption}" src="data:image/png;base64,{b64}">')
    for caption, table in tables:
        parts.append(f"<h2>{caption}</h2>" + table)
    parts.append("</body></html>\n")
    with open(os.path.join(tmp, "report.html"), "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    if os.path.lexists(out_dir):
        # Fill the existing folder file by file, each replaced in one rename.
        for name in sorted(os.listdir(tmp)):
            os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))
        os.rmdir(tmp)
    else:
        os.rename(tmp, out_dir)
    return os.path.join(given, "report.html")
