"""A run's tables as Parquet files (``Result.to_parquet``, ``acesim run --parquet DIR``,
``acesim parquet RESULT.json``): one file per table, each carrying what the run was (acesim's
version, the model, the machine's name and hash, the predicted time) in its schema's
metadata under ``acesim``, so that tables of many runs can be read together and told
apart."""

from __future__ import annotations

import json
import os
import secrets
from typing import Any, Protocol


class Result(Protocol):
    """What is written of a run (an :class:`acesim.Result`; its tables are read by name)."""

    @property
    def data(self) -> dict[str, Any]: ...
    @property
    def model(self) -> str: ...
    @property
    def machine_id(self) -> dict[str, Any]: ...
    @property
    def predicted_time_ps(self) -> int: ...

__all__ = ["TABLES", "write_parquet", "read_metadata"]

# The tables written; `trace` only for runs with one (simulate(..., trace=True)).
TABLES = ("ranks", "operations", "receives", "links", "regions", "collectives", "trace")


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as e:
        raise ImportError(
            "writing Parquet needs pyarrow: pip install pyarrow (scripts/setup installs it)"
        ) from e
    return pyarrow


def provenance(result: Result) -> dict[str, Any]:
    """What the run was, as every file records it."""
    from . import __version__

    data = result.data
    return {
        "acesim_version": data.get("acesim_version", __version__),
        "model": result.model,
        "machine": result.machine_id,
        "topology": data.get("topology"),
        "ranks": data.get("ranks"),
        "predicted_time_ps": result.predicted_time_ps,
    }


def write_parquet(result: Result, folder: str | os.PathLike[str]) -> list[str]:
    """Writes ``ranks.parquet``, ``operations.parquet``, ... into ``folder`` (made if
    missing), each through a temporary file and a rename; returns their paths."""
    pa = _pyarrow()
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    meta = json.dumps(provenance(result)).encode()
    written = []
    for name in TABLES:
        df = getattr(result, name)
        if name == "trace" and not len(df):
            continue
        table = pa.Table.from_pandas(df, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"acesim": meta})
        path = os.path.join(folder, f"{name}.parquet")
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            pa.parquet.write_table(table, tmp)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        written.append(path)
    return written


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``acesim`` metadata of a Parquet file written here."""
    pa = _pyarrow()
    meta = pa.parquet.read_schema(os.fspath(path)).metadata or {}
    return dict(json.loads(meta[b"acesim"])) if b"acesim" in meta else {}
