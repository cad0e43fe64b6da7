"""The `live-stream` lab: its catalog entry, the curriculum's numbers, divergence, features."""

from __future__ import annotations

import math

import pytest
import torch

from backend.labs.live_stream import LiveStreamLab, Params
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


def step_until_diverged(ws, count: int) -> list[dict]:
    """Step `count` times, expecting the run to diverge; every message up to that status."""
    send(ws, {"type": "control", "action": "step", "count": count})
    status, seen = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "diverged")
    return [*seen, status]


def test_catalog_entry(client):
    labs = {lab["id"]: lab for lab in client.get("/api/labs").json()}
    entry = labs["live-stream"]
    assert (entry["chapter"], entry["order"]) == (1, 3)
    props = entry["schema"]["properties"]
    defaults = {k: props[k]["default"] for k in ("features", "loss", "lr", "init", "epochs")}
    assert defaults == {
        "features": "zscore",
        "loss": "mse",
        "lr": 1e-2,
        "init": "normal",
        "epochs": 20000,
    }
    assert (props["surface_x"]["default"], props["surface_y"]["default"]) == (
        "users",
        "reservations",
    )
    assert "curvature" in entry["tensors"]


@pytest.mark.slow
def test_twenty_thousand_epochs_reach_the_book_numbers():
    torch.manual_seed(0)
    lab = LiveStreamLab(Params(), 0, torch.device("cpu"))
    for _ in range(lab.max_steps() - 1):
        lab.step(False)
    f = lab.step(True)
    s = f.scalars
    assert s["mse"] == pytest.approx(19_565, rel=0.005)
    assert s["loss"] == s["mse"]  # the default convention is torch's MSELoss
    assert s["max_error"] == pytest.approx(279, rel=0.01)
    assert s["pred_new"] == pytest.approx(30_162, rel=0.001)
    assert f.meta["pred_new_optimum"] == pytest.approx(30_159, abs=5)
    assert f.meta["optimum_loss"] <= s["mse"]


def test_the_default_play_speed_shows_the_convergence_within_seconds(client):
    """The catalog's play_speed is within the server's cap and the z-scored run gets within
    2× the closed-form optimum's loss in under 5 s of it (7,839 steps; at the old 100 steps
    a second that took 78 s, longer than a learner watches)."""
    from backend.config import Settings

    entry = next(e for e in client.get("/api/labs").json() if e["id"] == "live-stream")
    speed = entry["play_speed"]
    assert speed <= Settings().max_steps_per_s
    lab = LiveStreamLab(Params(), 0, torch.device("cpu"))
    target = 2 * lab.step(True).meta["optimum_loss"]
    steps = 1
    while lab.step(False).scalars["loss"] >= target:
        steps += 1
        assert steps < 5 * speed, f"not within 2x the optimum after {steps} steps"


def test_frames_carry_the_new_stream_and_the_curvatures(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "live-stream")
        f = frames(step(ws, 1))[-1]
        names = set(f["tensors"])
        assert {"weights", "grad", "loss_surface", "prediction", "curvature"} <= names
        labels = {t["name"]: t.get("labels") for t in f["header"]["tensors"]}
        assert labels["curvature"] == ["w_users", "w_reservations", "w_hour", "w_push", "b"]
        assert f["tensors"]["curvature"].tolist() == pytest.approx([1.8, 1.8, 1.8, 1.8, 2.0])
        meta = f["header"]["meta"]
        assert meta["new_stream"] == [180000, 12000, 20, 2]
        assert meta["surface"]["x"] == "w_users" and meta["surface"]["y"] == "w_reservations"
        assert meta["critical_lr"] == pytest.approx(0.342, abs=1e-3)
        s = f["header"]["scalars"]
        assert {"pred_new", "max_error", "mse", "growth"} <= set(s)


def test_raw_inputs_at_lr_1e9_diverge_and_reset_recovers(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "live-stream", {"features": "raw", "lr": 1e-9})
        assert ready["step"] == 0
        msgs = step_until_diverged(ws, 50)
        assert msgs[-1]["state"] == "diverged" and msgs[-1]["step"] == 12  # inf by epoch 12
        rows = scalar_rows(msgs)
        assert rows[5]["growth"] == pytest.approx(418, rel=0.02)
        last = frames(msgs)[-1]["header"]
        assert not math.isfinite(float(last["scalars"]["loss"]))
        assert last["meta"]["growth_predicted"] == pytest.approx(418, rel=0.01)
        assert last["meta"]["critical_lr"] == pytest.approx(9.3e-11, rel=0.01)
        grads = frames(msgs)[0]["tensors"]["grad"]
        assert abs(grads[0]) / abs(grads[4]) > 1e4  # users' gradient dwarfs the bias's
        send(ws, {"type": "control", "action": "reset"})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        assert f["step"] == 0 and math.isfinite(f["header"]["scalars"]["loss"])
        status, _ = recv_until(ws, lambda m: m["type"] == "status")
        assert status["state"] == "paused"


@pytest.mark.parametrize(
    ("features", "labels"),
    [
        ("onehot", ["w_users", "w_reservations", "w_hour", "w_push_app", "w_push_sms", "b"]),
        ("log_users", ["w_log_users", "w_reservations", "w_hour", "w_push", "b"]),
    ],
)
def test_extra_feature_sets(client, features, labels):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "live-stream", {"features": features, "surface_y": "bias"})
        f = frames(step(ws, 3))[-1]
        assert [t for t in f["header"]["tensors"] if t["name"] == "grad"][0]["labels"] == labels
        assert f["header"]["meta"]["surface"]["y"] == "b"
        assert f["header"]["meta"]["features"] == features
        assert math.isfinite(f["header"]["meta"]["pred_new_optimum"])


def test_one_hot_push_fits_the_table_better():
    def final(features: str) -> float:
        torch.manual_seed(0)
        lab = LiveStreamLab(Params(features=features), 0, torch.device("cpu"))
        return lab.opt_loss

    assert final("onehot") < 0.6 * final("zscore")  # SMS and app pushes get their own weight


def test_the_descent_path_stays_inside_the_drawn_surface():
    """Every step's (w_users, w_reservations), the path the view draws, lies inside the
    surface's ranges of the frame drawn after it (the path swung past the box of the start
    and the optimum: w_users reached 4,204 while the surface stopped at 1,534)."""
    torch.manual_seed(0)
    lab = LiveStreamLab(Params(), 0, torch.device("cpu"))
    path = []
    for i in range(1, 3001):
        f = lab.step(i % 500 == 0)
        path.append((f.scalars["w_users"], f.scalars["w_reservations"]))
        if f.tensors:
            (x0, x1), (y0, y1) = f.meta["surface"]["ranges"]
            outside = [(x, y) for x, y in path if not (x0 <= x <= x1 and y0 <= y <= y1)]
            assert not outside, (i, f.meta["surface"]["ranges"], outside[:3])
    assert max(x for x, _ in path) > 1_534  # the run did leave the first box
