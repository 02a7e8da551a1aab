"""Result from a saved JSON summary (no simulator needed)."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
from conftest import sample_summary

import acesim
from acesim.results import parse_topology


def test_scalars_and_tables(summary_path: str) -> None:
    r = acesim.Result.from_json(summary_path)
    assert not r.live
    assert r.predicted_time_ps == 5_003_000 and r.predicted_time == pytest.approx(5.003e-6)
    assert (r.num_ranks, r.events, r.packet_hops) == (4, 1234, 99)
    ranks = r.ranks
    assert list(ranks.columns) == [
        "rank",
        "node",
        "finish_ps",
        "compute_ps",
        "overhead_ps",
        "blocked_complete_ps",
        "blocked_poll_ps",
    ]
    assert ranks["blocked_poll_ps"].tolist() == [0, 2_000_000, 0, 2_000_000]
    assert ranks["blocked_complete_ps"].tolist() == [1_500_000, 0, 1_500_000, 0]
    assert len(r.links) == 9 * 6 and r.links["src_router"].dtype == "Int64"
    assert list(r.operations.columns[:4]) == ["kind", "rank", "src", "dst"]
    assert r.regions.iloc[0]["name"] == "step"
    assert r.collectives.iloc[0]["algorithm"] == "ring"
    assert list(r.receives.columns) == [
        "rank",
        "src",
        "tag",
        "size",
        "protocol",
        "posted_ps",
        "landed_ps",
        "complete_ps",
    ]
    assert len(r.trace) == 20 and set(r.trace["kind"]) == {
        "compute",
        "overhead",
        "blocked",
        "region",
        "collective",
    }
    assert r.topology["dims"] == [3, 3]
    text = r.summary()
    assert "5.003 us" in text and "region step" in text and "barrier (ring)" in text
    assert "busiest links" in text


def test_older_summaries_without_links_or_detail(tmp_path) -> None:
    data = sample_summary(with_extras=False)
    r = acesim.Result(data)
    assert r.links.empty and list(r.links.columns)[:3] == ["link", "name", "class"]
    assert r.trace.empty
    assert r.topology == {
        "kind": "torus",
        "dims": [3, 3],
        "routers": 9,
        "nodes": 9,
        "wrap": [True, True],
    }
    with pytest.raises(ValueError, match="per-link"):
        r.links_csv()


def test_links_from_names_and_csv() -> None:
    data = sample_summary()
    for rec in data["links"]:
        del rec["src_router"], rec["dst_router"]
    r = acesim.Result(data)
    links = r.links
    row = links[links["name"] == "r4.p0->r5"].iloc[0]
    assert (row["src_router"], row["dst_router"]) == (4, 5)
    nic = links[links["name"] == "nic2->r2"].iloc[0]
    assert pd.isna(nic["src_router"]) and nic["dst_router"] == 2
    csv_text = r.links_csv()
    assert csv_text.splitlines()[0] == (
        "link,name,class,bandwidth_bytes_per_s,bytes,packets,busy_ps,utilization,wait_ps,stall_ps"
    )
    assert len(csv_text.splitlines()) == 1 + len(links)


def test_save_json_atomic(tmp_path, summary_path: str) -> None:
    r = acesim.Result.from_json(summary_path)
    out = tmp_path / "sub"
    out.mkdir()
    r.save_json(out / "copy.json")
    assert os.listdir(out) == ["copy.json"]
    assert json.loads((out / "copy.json").read_text()) == r.data


def test_parse_topology() -> None:
    assert parse_topology("fat_tree: 12 routers, 8 nodes, 1 NICs/node") == {
        "kind": "fat_tree",
        "routers": 12,
        "nodes": 8,
    }
    assert parse_topology("torus 2x2x2: 8 routers, 16 nodes, 1 NICs/node")["dims"] == [2, 2, 2]


def test_needs_data() -> None:
    with pytest.raises(TypeError):
        acesim.Result()
