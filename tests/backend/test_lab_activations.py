"""Websocket conversation with `activations`: curves and readouts, live choices, no training."""

from __future__ import annotations

import pytest

from tests.wsutil import frames, recv_until, send, step


def test_curves_readouts_and_live_choices(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "activations", "params": {}, "seed": 0})
        ready, _ = recv_until(ws, lambda m: m["type"] == "ready")
        assert ready["params"]["relu"] is True and ready["params"]["extent"] == 5.0
        f = recv_until(ws, lambda m: m["type"] == "frame")[0]
        names = ["relu", "sigmoid", "tanh", "gelu", "silu"]
        heads = {t["name"]: t for t in f["header"]["tensors"]}
        assert heads["f"]["labels"] == heads["df"]["labels"] == names
        t = f["tensors"]
        assert t["f"].shape == (5, 401) and t["df"].shape == (5, 401)
        assert t["max_df"].tolist() == pytest.approx([1, 0.25, 1, 1.1289, 1.0998], abs=1e-4)
        assert t["df0"].tolist() == [0.0, 0.25, 1.0, 0.5, 0.5]  # ReLU'(0) is 0 in PyTorch
        assert t["f0"].tolist() == [0.0, 0.5, 0.0, 0.0, 0.0]
        assert t["min_f"][4] == pytest.approx(-0.2785, abs=5e-4)  # SiLU is not a 0–1 gate
        relu_df = t["df"][0]
        assert relu_df[201:].min() == 1 and relu_df[:200].max() == 0 and relu_df[200] == 0

        send(ws, {"type": "set", "params": {"gelu": False, "silu": False, "probe": 2.0}})
        reply, seen = recv_until(ws, lambda m: m["type"] == "params")
        assert reply["reset"] is False
        g = frames(seen)[-1]
        assert g["tensors"]["f"].shape == (3, 401)
        probe = g["tensors"]["probe"]  # [A, 2]: f and f' at x = 2
        assert probe[0].tolist() == pytest.approx([2.0, 1.0])
        assert probe[2].tolist() == pytest.approx([0.96403, 0.07065], abs=1e-5)

        msgs = step(ws, 1)  # a step recomputes the picture, then there is nothing more to do
        assert frames(msgs)[0]["tensors"]["f"].shape == (3, 401)
        send(ws, {"type": "control", "action": "step", "count": 1})
        recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "done")
