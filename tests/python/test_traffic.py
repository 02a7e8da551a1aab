"""Synthetic traffic from Python."""

from __future__ import annotations

import pytest

import acesim
from acesim import Machine

SMALL = {"nic.mtu": "64 B", "nic.header": "8 B", "nic.control_packet": "8 B"}


def test_traffic_returns_a_curve(core) -> None:
    m = Machine.torus([4, 4]).with_(SMALL)
    df = acesim.traffic(m, "uniform", [0.1, 0.5], measure="2 us", warmup="1 us")
    assert list(df["load"]) == [0.1, 0.5]
    assert (df["accepted"] <= df["offered"] + 0.02).all()
    assert (df["max_link_utilization"] <= 1.0).all()
    assert df.loc[0, "saturated"] == False  # noqa: E712
    assert abs(df.loc[0, "accepted"] - 0.1) < 0.02
    # Same seed, same numbers.
    again = acesim.traffic(m, "uniform", [0.1, 0.5], measure="2 us", warmup="1 us")
    assert df.equals(again)
    # Each row says where it came from, so that sweeps of many machines concatenate.
    row = df.iloc[0]
    assert (row["packet_bytes"], row["seed"], row["model"], row["routing"]) == (64, 1, "packet", "auto")
    assert row["machine"] == "<torus>" and len(row["machine_hash"]) == 16
    other = acesim.traffic(m.set("link.latency", "2 ns"), "uniform", [0.1], measure="2 us", warmup="1 us")
    assert other.loc[0, "machine_hash"] != row["machine_hash"]
    assert acesim.version() == row["acesim_version"]


def test_traffic_check_mode(core) -> None:
    # Load 1.0 stops at the drain limit with packets in flight; the checks count them and
    # change no result.
    m = Machine.torus([4, 4]).with_(SMALL)
    args = dict(measure="2 us", warmup="1 us", drain="1 us", injection="periodic")
    checked = acesim.traffic(m, "uniform", [0.3, 1.0], check=True, **args)
    assert checked.loc[1, "packets_lost"] > 0
    assert checked.equals(acesim.traffic(m, "uniform", [0.3, 1.0], **args))


def test_traffic_on_threads_gives_the_same_curve(core) -> None:
    m = Machine.torus([4, 4]).with_(SMALL)
    args = dict(measure="2 us", warmup="1 us")
    one = acesim.traffic(m, "uniform", [0.2, 0.9], **args)
    assert one.equals(acesim.traffic(m, "uniform", [0.2, 0.9], threads=2, **args))
    assert one.equals(acesim.traffic(m, "uniform", [0.2, 0.9], threads=0, **args))
    with pytest.raises(ValueError, match="threads"):
        acesim.traffic(m, "uniform", [0.2], threads=-1, **args)
    with pytest.raises(acesim.InputError, match="17 partitions"):
        acesim.traffic(m, "uniform", [0.2], threads=17, **args)


def test_dragonfly_routing_from_python(core) -> None:
    m = Machine.from_toml(
        "[topology]\nkind='dragonfly'\np=2\na=4\nh=2\n[router]\nvcs=3\nrouting='valiant'\n"
    ).with_(SMALL)
    df = acesim.traffic(m, "worst_case", [0.3], measure="2 us", warmup="1 us")
    assert df.loc[0, "minimal_fraction"] < 0.05
    assert df.loc[0, "hops_mean"] > 3


def test_traffic_errors(core) -> None:
    m = Machine.torus([4, 4]).with_(SMALL)
    with pytest.raises(acesim.InputError, match="outside"):
        acesim.traffic(m, "uniform", [1.5])
    with pytest.raises(acesim.InputError, match="power-of-two|pattern"):
        acesim.traffic(Machine.torus([3, 3]).with_(SMALL), "bit_complement", [0.1])
    with pytest.raises(TypeError, match="packet"):
        acesim.traffic(m, "uniform", [0.1], packet=1.5)  # type: ignore[arg-type]
