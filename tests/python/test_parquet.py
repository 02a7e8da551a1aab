"""Result.to_parquet and `acesim run --parquet` / `acesim parquet` (needs pyarrow)."""

from __future__ import annotations

import json
import os

import pytest
from conftest import sample_summary

from acesim.cli import main
from acesim.results import Result

pytest.importorskip("pyarrow")


def test_tables_round_trip_with_what_the_run_was(tmp_path) -> None:
    import pandas as pd

    from acesim.parquet import read_metadata

    data = sample_summary()
    data["model"] = "flow"
    data["machine"] = {"name": "preset table1", "hash": "0123456789abcdef"}
    r = Result(data)
    paths = r.to_parquet(tmp_path / "t")
    names = sorted(os.path.basename(p) for p in paths)
    assert names == sorted(f"{t}.parquet" for t in ("ranks", "operations", "receives", "links", "regions", "collectives", "trace"))
    assert sorted(os.listdir(tmp_path / "t")) == names  # no temporary file left
    for table in ("ranks", "operations", "links", "trace", "regions"):
        back = pd.read_parquet(tmp_path / "t" / f"{table}.parquet")
        pd.testing.assert_frame_equal(back, getattr(r, table).reset_index(drop=True), check_dtype=False)
    meta = read_metadata(tmp_path / "t" / "links.parquet")
    assert meta["model"] == "flow" and meta["machine"]["hash"] == "0123456789abcdef"
    assert meta["predicted_time_ps"] == data["predicted_time_ps"] and meta["ranks"] == data["ranks"]
    # Without a trace, no trace file.
    data = sample_summary(with_extras=False)
    assert "trace.parquet" not in [os.path.basename(p) for p in Result(data).to_parquet(tmp_path / "u")]


def test_run_and_parquet_commands_write_the_tables(core, tmp_path, monkeypatch) -> None:
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    with open("ring.py", "w") as f:
        f.write("def program(ctx):\n    h = ctx.put((ctx.rank + 1) % ctx.size, 64, tag=1)\n    ctx.poll(1)\n    ctx.complete(h)\n")
    assert main(["run", "ring.py", "--ranks", "8", "--machine", "table1", "--parquet", "tables", "--json", "r.json", "-q"]) == 0
    ops = pd.read_parquet("tables/operations.parquet")
    assert len(ops) == 8 and set(ops["kind"]) == {"put"}
    assert json.load(open("r.json"))["predicted_time_ps"] == int(pd.read_parquet("tables/ranks.parquet")["finish_ps"].max())
    assert sorted(os.listdir(".")) == ["r.json", "ring.py", "tables"]  # the JSON passed through is gone
    assert main(["parquet", "r.json", "-o", "again"]) == 0
    pd.testing.assert_frame_equal(pd.read_parquet("again/links.parquet"), pd.read_parquet("tables/links.parquet"))
    # Not a run's summary: an error naming the file, and no folder.
    with open("points.json", "w") as f:
        f.write("[]")
    assert main(["parquet", "points.json"]) == 2
    assert not os.path.exists("points-tables")
