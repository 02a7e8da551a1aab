"""MPI traces from Python: simulate() and compare_models() read DUMPI, SimGrid and OTF2
traces by their path, with the trace and job-layout keyword arguments of `acesim run`."""

from __future__ import annotations

import os

import pytest

import acesim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTBGP = os.path.join(ROOT, "tests", "data", "dumpi", "sst-macro-testbgp", "testbgp.meta")
TI = os.path.join(ROOT, "tests", "data", "simgrid-ti", "actions_with_isend.txt")
TORUS = os.path.join(ROOT, "examples", "machines", "torus-4x4.toml")


def test_a_dumpi_trace_replays_with_its_traced_windows() -> None:
    r = acesim.simulate(TORUS, TESTBGP)
    assert r.num_ranks == 7
    # The same prediction as `acesim run` (tests/data/dumpi README and docs/traces.md).
    # 8_797_561_480 before ties at one picosecond were ordered by origin (the order of a run
    # on threads): one tie between two of its messages goes the other way.
    assert r.predicted_time_ps == 8_798_174_824
    assert all(p["traced_ps"] > 11_000_000_000 for p in r.data["per_rank"])
    assert (r.ranks["traced_ps"] > r.ranks["finish_ps"]).all()


def test_jobs_fill_the_machine_and_collectives_can_be_skipped() -> None:
    full = acesim.simulate(TORUS, TESTBGP, jobs="fill")
    assert full.num_ranks == 14  # 16 nodes hold two jobs of 7
    skipped = acesim.simulate(TORUS, TESTBGP, collectives="skip", max_message="64KiB")
    assert skipped.predicted_time_ps < acesim.simulate(TORUS, TESTBGP).predicted_time_ps


def test_a_simgrid_trace_needs_a_host_speed() -> None:
    r = acesim.simulate("table1", TI, flops="1Gf")
    # Rank 2 computes 2e9 + 2.5e8 + 2.5e8 + 5e8 flops = 3 s at 1 Gflop/s, and the run
    # cannot end earlier.
    assert r.predicted_time_ps >= 3 * 10**12
    with pytest.raises(acesim.InputError, match="flops=RATE in Python"):
        acesim.simulate("table1", TI)
    with pytest.raises(acesim.InputError, match="field `flops`"):
        acesim.simulate("table1", TI, flops="fast")


def test_bad_replay_arguments_name_their_keyword() -> None:
    with pytest.raises(acesim.InputError, match="field `jobs`"):
        acesim.simulate(TORUS, TESTBGP, jobs="many")
    with pytest.raises(acesim.InputError, match="field `compute_scale`"):
        acesim.simulate(TORUS, TESTBGP, compute_scale=-1.0)
    with pytest.raises(acesim.InputError, match="field `collectives`"):
        acesim.simulate(TORUS, TESTBGP, collectives="maybe")
    with pytest.raises(TypeError, match="ignore_calls"):
        acesim.simulate(TORUS, TESTBGP, ignore_calls="MPI_Barrier")


def test_compare_models_replays_a_trace_at_both_levels() -> None:
    c = acesim.compare_models(TORUS, TESTBGP, compute_scale=0.0)
    assert c.ranks == 7
    assert c.packet["predicted_time_ps"] > 0 and c.flow["predicted_time_ps"] > 0


def test_sweep_varies_the_job_layout_of_a_trace() -> None:
    df = acesim.sweep(
        TORUS,
        TESTBGP,
        {"collectives": ["run", "skip"], "router.routing": ["minimal"]},
        replay={"jobs": "fill", "compute_scale": 0.0},
        processes=0,
        progress=False,
    )
    assert list(df["collectives"]) == ["run", "skip"]
    run, skip = df["predicted_time_ps"]
    assert skip < run
    one = acesim.simulate(TORUS, TESTBGP, jobs="fill", compute_scale=0.0)
    assert run == one.predicted_time_ps
    with pytest.raises(TypeError, match="replay keys"):
        acesim.sweep(TORUS, TESTBGP, {"model": ["packet"]}, replay={"bogus": 1}, processes=0)
