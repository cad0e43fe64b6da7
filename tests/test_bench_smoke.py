"""The benchmark harness runs end to end on tiny sizes. No timing is asserted: the numbers
themselves are `python -m bench`'s business (docs/benchmarks.md)."""

from __future__ import annotations

import math

import pytest

from bench.frame_bytes import gpt_frame
from bench.procs import Child
from bench.report import Figure, percentiles, table
from bench.server import Server


def test_figures_judge_their_targets_and_render():
    assert Figure("s", "ratio", 0.95, "", ("≥", 0.9)).ok is True
    assert Figure("s", "lag", 16.0, "ms", ("≤", 15.0)).ok is False
    assert Figure("s", "missing", None, "", ("≥", 0.0)).ok is False
    assert Figure("s", "info", 3.0).ok is None
    assert percentiles([5.0, 1.0, 3.0, 2.0, 4.0]) == {"p50": 3.0, "p95": 5.0, "p99": 5.0}
    assert math.isnan(Figure("s", "x", float("nan"), target=("≤", 1.0)).value)
    figs = [Figure("a", "ratio", 0.95, "", ("≥", 0.9)), Figure("a", "lag", 20.0, "ms", ("≤", 15.0))]
    text = table(figs)
    assert "pass" in text and "MISS" in text
    md = table(figs, markdown=True).splitlines()
    assert md[0].startswith("| scenario") and len(md) == 4


def test_a_gpt_frame_is_smaller_on_the_wire_than_as_json():
    data, sizes = gpt_frame("default (reverse, T=13)")
    assert sizes["wire"] == len(data)
    assert sizes["wire"] < sizes["json"] and sizes["wire_tensors"] < sizes["json_tensors"]
    assert sizes["values"] > 0


def test_the_bare_loop_trains_the_labs_model_with_the_labs_optimizer():
    """The overhead ratio compares like with like: same shapes, batch, schedule and every
    AdamW setting (the lab once decayed weights where the bare loop did not)."""
    from bench.baseline import same_model_check

    assert same_model_check()["same"]


@pytest.mark.slow
def test_a_client_process_steps_a_real_server_and_sees_the_frame_clock():
    with Server(name="smoke") as srv:
        child = Child(
            "latency",
            {"url": srv.ws_url, "lab": "gpt", "params": {}, "n": 3, "gap_s": 0.0},
            name="smoke",
        )
        try:
            assert child.read(120)["ready"] is True
            child.tell("go")
            steps = child.result(120)["steps"]
        finally:
            child.close()
        assert srv.rss() > 0
    assert [s["step"] for s in steps] == [1, 2, 3]
    for s in steps:  # every frame carried the server's clock (SHAOMAI_FRAME_CLOCK=1)
        assert s["delivery"] is not None and s["seconds"] > 0


@pytest.mark.slow
def test_the_lecture_scenario_runs_its_join_storm_with_node_viewers():
    """bench/lecture.py at its tiniest: a driver plays, 20 Node viewers join at once."""
    from types import SimpleNamespace

    from bench import lecture

    res = lecture.run(SimpleNamespace(quick=True, tiny=True))
    figs = {f.name: f for f in res.figures}
    assert figs["storm: viewers joined"].value == 20
    assert figs["storm: driver control round trip, worst"].value is not None
    assert res.raw["storm"]["cpu"]["server"] > 0
