"""The benchmark harness runs end to end on tiny sizes. No timing is asserted: the numbers
themselves are `python -m bench`'s business (docs/benchmarks.md)."""

from __future__ import annotations

import math

import pytest
import torch

from bench import gpu
from bench.baseline import lab_class, new_lab
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


def test_the_gpu_scenario_says_it_did_not_run_without_cuda():
    from types import SimpleNamespace

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: the scenario would run for real")
    (fig,) = gpu.run(SimpleNamespace(quick=True)).figures
    assert fig.name == "not run" and fig.ok is None and "no CUDA device" in fig.note


@pytest.mark.slow
def test_the_gpu_scenarios_rounds_run_end_to_end_on_a_tiny_model_on_the_cpu():
    """bench/gpu.py's measurement, device aside: a real server plays the lab beside the bare
    loop of the same config; every round trains the asked steps in all three."""
    tiny = {"data": "text-en", "n_layers": 1, "n_heads": 2, "d_model": 32, "n_ctx": 16, "batch": 4}
    out = gpu.measure(tiny, 6, 1, torch.device("cpu"))
    (row,) = out["rows"]
    assert row["steps"] == 6 and row["state"] == "done" and row["frames"] >= 1
    assert row["bare"] > 0 and row["lab"] > 0
    assert out["params"] == new_lab(tiny, torch.device("cpu")).model.num_params()
    names = {f.name for f in gpu.figures(out)}
    assert {"session steps/s (1 client)", "session / bare (median of rounds)"} <= names


def test_the_gpu_scenarios_model_is_about_ten_million_parameters_and_fits_its_servers_cap():
    """The gpt lab takes the scenario's shape (d_model up to 384), its config counts ≈ 10M
    parameters, and the lab's memory estimate fits the cap the scenario's server is given."""

    lab_cls = lab_class("gpt")
    p = lab_cls.Params(**gpu.BIG)
    mb, _ = lab_cls.estimate_mb(p)
    assert 512 < mb <= float(gpu.SERVER_ENV["SHAOMAI_MAX_SESSION_MB"])
    n = new_lab(gpu.BIG, torch.device("cpu")).model.cfg.param_count()
    assert 9e6 < n < 12e6


def test_the_bench_passes_an_existing_pythonpath_on_to_its_server_and_clients(monkeypatch):
    """On a lent GPU machine the web stack's wheels sit in a folder named on PYTHONPATH
    (bench/gpu_device.sh): the server and client processes must still see it."""
    from bench.server import ROOT, python_path

    monkeypatch.setenv("PYTHONPATH", "/tmp/site")
    assert python_path() == f"{ROOT}:/tmp/site"
    monkeypatch.delenv("PYTHONPATH")
    assert python_path() == str(ROOT)
