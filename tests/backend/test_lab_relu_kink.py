"""Websocket conversation with `relu-kink`: the curves, the live program, the polyline fit."""

from __future__ import annotations

import pytest

from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


def first_frame(ws, params: dict | None = None) -> dict:
    send(ws, {"type": "open", "lab": "relu-kink", "params": params or {}, "seed": 0})
    ready, _ = recv_until(ws, lambda m: m["type"] in ("ready", "error"))
    assert ready["type"] == "ready", ready
    return recv_until(ws, lambda m: m["type"] == "frame")[0]


def test_compose_frame_and_the_if_program(client):
    with client.websocket_connect("/ws") as ws:
        f = first_frame(ws)
        assert {t["name"] for t in f["header"]["tensors"]} == {
            "layers.0.hook_pre",
            "layers.0.hook_post",
            "hook_logits",
            "without_relu",
        }
        t = f["tensors"]
        assert t["hook_logits"].shape == (301,)
        meta = f["header"]["meta"]
        assert meta["program"] == "if x > 5:\n    z = 6*x - 23\nelse:\n    z = 7"
        assert meta["kink"] == 5.0 and meta["composed"] == "z = 6*x - 23"
        assert meta["a"] == "y = 2*x - 10" and meta["b"] == "z = 3*y + 7"
        x0, x1 = meta["x_range"]
        xs = [x0 + (x1 - x0) * i / 300 for i in range(301)]
        z = t["hook_logits"].tolist()
        for x, v in zip(xs, z, strict=True):
            assert v == pytest.approx(7 if x <= 5 else 6 * x - 23, abs=1e-3)
        assert t["without_relu"].tolist() == pytest.approx([6 * x - 23 for x in xs], abs=1e-3)

        # The four numbers are live: the program is rewritten without a reset.
        send(ws, {"type": "set", "params": {"a_b": -6.0, "b_b": 1.0}})
        reply, seen = recv_until(ws, lambda m: m["type"] == "params")
        assert reply["reset"] is False
        g = frames(seen)[-1]["header"]["meta"]
        assert g["program"] == "if x > 3:\n    z = 6*x - 17\nelse:\n    z = 1"

        send(ws, {"type": "set", "params": {"relu": False}})
        _, seen = recv_until(ws, lambda m: m["type"] == "params")
        g = frames(seen)[-1]["header"]["meta"]
        assert g["program"] == "z = 6*x - 17" and g["kink"] is None


def test_compose_mode_has_nothing_to_train(client):
    with client.websocket_connect("/ws") as ws:
        first_frame(ws)
        send(ws, {"type": "control", "action": "step", "count": 3})
        status, _ = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "done")
        assert status["step"] == 0


def test_fit_mode_trains_a_polyline(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "relu-kink", {"mode": "fit", "units": 12, "target": "arc"})
        msgs = step(ws, 30)
        f = frames(msgs)[-1]
        t = f["tensors"]
        assert t["target"].shape == (201,) and t["hook_logits"].shape == (201,)
        assert t["units"].shape == (12, 201)
        assert t["kinks"].shape == (12,) and t["kink_y"].shape == (12,)
        assert f["header"]["meta"]["mode"] == "fit" and f["header"]["meta"]["units"] == 12
        rows = scalar_rows(msgs)
        assert sorted(rows) == list(range(1, 31))
        assert rows[30]["loss"] < rows[1]["loss"]
        assert 0 <= rows[30]["kinks_inside"] <= 12


def test_the_catalog_says_where_play_does_something(client):
    """One rule for the page's play/step: `plays` is true, false (a step only redraws what
    every change draws) or a condition on the params (relu-kink: fit mode only)."""
    entries = {e["id"]: e for e in client.get("/api/labs").json()}
    assert entries["relu-kink"]["plays"] == {"mode": "fit"}
    for lab in ("softmax-ce", "activations", "real-bert", "real-llm"):
        assert entries[lab]["plays"] is False, lab
    for lab in ("conv", "attention", "tokenizer", "kv-cache", "apple", "mlp-playground"):
        assert entries[lab]["plays"] is True, lab  # they train, or step through stages
    for e in entries.values():
        if e["plays"] is False:
            assert not e["trains"], e["id"]
