"""Websocket conversation with the `logistic` lab: frames, live threshold, clicked points."""

from __future__ import annotations

import pytest

from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


def set_params(ws, params: dict) -> tuple[dict, dict]:
    """Send `set`; returns (the `params` reply, the frame it produced)."""
    send(ws, {"type": "set", "params": params})
    seen = []
    reply, before = recv_until(ws, lambda m: m["type"] in ("params", "error"))
    seen += before
    if reply["type"] == "error":
        return reply, {}
    framed = [m for m in seen if m["type"] == "frame"]
    frame = framed[-1] if framed else recv_until(ws, lambda m: m["type"] == "frame")[0]
    return reply, frame


def test_open_and_train(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "logistic")
        assert ready["params"]["threshold"] == 0.5 and ready["params"]["points"] == []
        assert ready["schema"]["properties"]["points"]["widget"] == "hidden"
        msgs = step(ws, 20)
        fs = frames(msgs)
        f = fs[-1]
        assert {t["name"] for t in f["header"]["tensors"]} == {
            "boundary",
            "points",
            "prob",
            "confusion",
            "theta",
            "grad",
        }
        t = f["tensors"]
        assert t["boundary"].shape == (64, 64)
        assert t["points"].shape == (200, 3) and t["prob"].shape == (200,)
        assert t["confusion"].shape == (2, 2) and t["confusion"].sum() == 200
        assert t["theta"].shape == (3,)
        theta_meta = next(m for m in f["header"]["tensors"] if m["name"] == "theta")
        assert theta_meta["labels"][0] == "θ0"
        boundary_meta = next(m for m in f["header"]["tensors"] if m["name"] == "boundary")
        assert (
            boundary_meta["dtype"] == "u8" and 0 <= boundary_meta["min"] < boundary_meta["max"] <= 1
        )
        rows = scalar_rows(msgs)
        assert sorted(rows) == list(range(1, 21))
        assert rows[20]["loss"] < rows[1]["loss"] < 0.6932
        assert rows[20]["baseline_accuracy"] == pytest.approx(0.5)
        meta = f["header"]["meta"]
        c = meta["counts"]
        assert c["tp"] + c["fp"] + c["fn"] + c["tn"] == meta["n"] == 200
        assert rows[20]["accuracy"] == pytest.approx((c["tp"] + c["tn"]) / 200)


def test_threshold_is_live(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "logistic")
        step(ws, 50)
        reply, f = set_params(ws, {"threshold": 0.95})
        assert reply["reset"] is False
        s = f["header"]["scalars"]
        assert f["header"]["meta"]["threshold"] == 0.95 and f["step"] == 50
        _, f2 = set_params(ws, {"threshold": 0.05})
        s2 = f2["header"]["scalars"]
        assert s2["recall"] > s["recall"] and s2["precision"] < s["precision"]


def test_clicked_points_join_live_and_bad_ones_are_refused(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "logistic", {"n": 40})
        step(ws, 5)
        reply, f = set_params(ws, {"points": [[1.5, -2.0, 1], [0.0, 0.0, 0]]})
        assert reply["reset"] is False and f["step"] == 5
        pts = f["tensors"]["points"]
        assert pts.shape == (42, 3) and pts[-2].tolist() == [1.5, -2.0, 1.0]
        assert f["header"]["meta"]["n_user"] == 2
        send(ws, {"type": "set", "params": {"points": [[1.0, 1.0, 2]]}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params"
        send(ws, {"type": "set", "params": {"points": [[0.0, 0.0, 1]] * 101}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and err["field"] == "points"


def test_circles_with_squared_features(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "logistic", {"dataset": "circles", "features": "quadratic", "lr": 1.0})
        f = frames(step(ws, 300))[-1]
        assert f["tensors"]["theta"].shape == (6,)
        assert f["header"]["scalars"]["accuracy"] == 1.0
