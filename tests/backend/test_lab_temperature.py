"""Websocket conversation with the `temperature` lab: frames, splits, frozen C, divergence."""

from __future__ import annotations

import pytest

from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


def step_until_diverged(ws, count: int) -> list[dict]:
    """Step `count` times, expecting the run to diverge; every message up to that status."""
    send(ws, {"type": "control", "action": "step", "count": count})
    status, seen = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "diverged")
    return [*seen, status]


def test_frames_and_first_steps(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "temperature")
        assert ready["params"]["split"] == "time"
        msgs = step(ws, 2)
        f = frames(msgs)[-1]
        shapes = {name: t.shape for name, t in f["tensors"].items()}
        assert shapes == {
            "ratio_surface": (48, 48),
            "valley": (48, 48),
            "series": (1095,),
            "prediction": (1093,),
            "split": (1093,),
            "hessian_eig": (3,),
        }
        header = f["header"]
        labels = {t["name"]: t.get("labels") for t in header["tensors"]}
        assert labels["hessian_eig"] == ["λ1", "λ2", "λ3"]
        assert sorted(set(f["tensors"]["split"].round().tolist())) == [0.0, 1.0, 2.0]
        s = header["scalars"]
        assert s["loss_scaled"] == pytest.approx(s["loss"], rel=1e-5)  # only ratios matter
        assert s["a"] == pytest.approx(s["A"] / s["C"])
        assert s["future_loss"] == s["test_loss"]  # in time order the test split is the future
        assert header["meta"]["split_mode"] == "time"
        assert header["meta"]["sizes"] == {"train": 765, "val": 164, "test": 164, "future": 164}
        rows = scalar_rows(msgs)
        assert rows[2]["loss"] < rows[1]["loss"]


def test_starts_at_the_averaging_rule(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "temperature", "params": {}, "seed": 0})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        s = f["header"]["scalars"]
        assert (s["A"], s["B"], s["C"]) == (1.0, 1.0, 2.0)
        series = f["tensors"]["series"]
        pred = f["tensors"]["prediction"]
        assert pred[10] == pytest.approx((series[10] + series[11]) / 2, abs=1e-4)


def test_shuffled_split_and_frozen_c(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "temperature", {"split": "shuffled", "train_c": False})
        f = frames(step(ws, 20))[-1]
        s = f["header"]["scalars"]
        assert s["C"] == 2.0 and s["grad_C"] == 0.0
        assert s["future_loss"] != s["test_loss"]  # shuffled: the test days are anywhere
        assert f["header"]["meta"]["split_mode"] == "shuffled"


def test_too_large_lr_diverges_with_c_frozen(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "temperature", {"lr": 0.05, "train_c": False})
        msgs = step_until_diverged(ws, 300)
        assert msgs[-1]["state"] == "diverged"
        assert any(m["type"] == "error" and m["code"] == "diverged" for m in msgs)


def test_too_large_lr_with_c_trained_inflates_the_scale_instead(client):
    # The loss is scale-invariant, so the first big steps push |(A, B, C)| up, and the
    # curvature (∝ 1/C²) drops until the step size is stable again: no divergence.
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "temperature", {"lr": 0.05})
        msgs = step(ws, 100)
        assert msgs[-1]["state"] == "paused"
        s = frames(msgs)[-1]["header"]["scalars"]
        assert s["C"] > 100
