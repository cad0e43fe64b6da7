"""Websocket conversation with the `attention` lab: stages revealed by step, live edits."""

from __future__ import annotations

import pytest

from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


def next_frame(ws) -> dict:
    msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
    return msg


def set_params(ws, params: dict) -> dict:
    send(ws, {"type": "set", "params": params})
    return next_frame(ws)


def test_step_reveals_the_seven_stages_then_done(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "attention", {"preset": "causal"})
        assert ready["params"]["preset"] == "causal"
        msgs = step(ws, 6)
        fs = frames(msgs)
        assert [f["step"] for f in fs] == [1, 2, 3, 4, 5, 6]
        assert [f["header"]["meta"]["stage"] for f in fs] == [2, 3, 4, 5, 6, 7]
        assert set(fs[0]["tensors"]) == {"x", "w_q", "w_k", "w_v", "q", "k", "v", "probe_sweep"}
        last = fs[-1]
        assert {"scores", "scaled", "allowed", "masked", "weights", "out"} <= set(last["tensors"])
        w = last["tensors"]["weights"]
        assert w.shape == (4, 4)
        assert [round(float(v), 4) for v in w[1]] == [0.4256, 0.5744, 0.0, 0.0]
        assert last["tensors"]["out"].shape == (4, 2)
        assert last["tensors"]["probe_sweep"].shape == (10, 4)
        meta = last["header"]["meta"]
        assert meta["tokens"] == ["今天", "天气", "真", "好"] and meta["mask_kind"] == "causal"
        assert [s["shape"] for s in meta["chain"]["steps"]][:5] == [
            [2, 5, 8],
            [2, 5, 4, 2],
            [2, 4, 5, 2],
            [2, 4, 5, 5],
            [2, 4, 5, 2],
        ]
        assert meta["chain"]["steps"][-1]["shape"] == [2, 5, 8]
        assert meta["chain"]["steps"][1]["same_memory"] is True
        assert 0.5 * 64 < meta["probe"]["var_raw"] < 1.5 * 64
        assert scalar_rows(msgs)[6]["stage"] == 7.0
        # One more step finds the last stage reached: the session is done, nothing new.
        send(ws, {"type": "control", "action": "step", "count": 1})
        status, seen = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "done")
        assert status["step"] == 6 and not frames(seen)


def test_scores_preset_and_live_edits_keep_the_stage(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "attention", {"preset": "scores"})
        last = frames(step(ws, 6))[-1]
        assert [round(float(v), 3) for v in last["tensors"]["weights"][0]] == [0.844, 0.114, 0.042]
        assert [round(float(v), 3) for v in last["tensors"]["out"][0]] == [0.928, 0.270]
        assert last["header"]["meta"]["focus_row"] == 0

        # Tie W_K = W_Q: a live change, the stage stays at 7 and the scores turn symmetric.
        f = set_params(ws, {"tie_qk": True})
        assert f["header"]["meta"]["stage"] == 7
        assert f["header"]["meta"]["symmetry_error"] == 0.0
        s = f["tensors"]["scores"]
        assert (s == s.T).all()

        # Edit one cell of W_V as the view does: preset custom with every matrix.
        x = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        w_q = [[1.0] * 4, [0.0, 1.0, 0.0, 1.0], [1.0, 0.0, -1.0, 0.0]]
        w_k = [[1.0] * 4, [1.0, -1.0, 1.0, -1.0], [-0.5] * 4]
        w_v = [[1.0, 0.0], [0.0, 2.0], [2.0, 5.0]]
        f = set_params(
            ws,
            {"preset": "custom", "tie_qk": False, "tokens": ["a", "b", "c"], "x": x,
             "w_q": w_q, "w_k": w_k, "w_v": w_v, "mask": "none"},
        )  # fmt: skip
        assert f["header"]["meta"]["stage"] == 7 and f["header"]["meta"]["tokens"] == [
            "a",
            "b",
            "c",
        ]
        out0 = [float(v) for v in f["tensors"]["out"][0]]
        assert out0[1] == pytest.approx(0.1142 * 2 + 0.0420 * 5, abs=2e-3)

        # Reset starts the stages over.
        send(ws, {"type": "control", "action": "reset"})
        f = next_frame(ws)
        assert f["step"] == 0 and f["header"]["meta"]["stage"] == 1
        assert "q" not in f["tensors"]


def test_custom_mask_and_bad_matrices_are_refused_with_the_field(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "attention", {"preset": "context"})
        step(ws, 6)
        f = set_params(ws, {"mask": "custom", "mask_custom": [[True] * 4] * 4})
        assert f["header"]["meta"]["mask_kind"] == "custom"
        assert f["tensors"]["allowed"].sum() == 16

        send(ws, {"type": "set", "params": {"mask_custom": [[False] * 4] * 4}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and "at least one key" in err["message"]

        send(ws, {"type": "set", "params": {"preset": "custom", "w_q": [[1.0, 2.0]]}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and "w_q" in err["message"]

        send(ws, {"type": "set", "params": {"x": [[11.0] * 4] * 4}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params"


def test_d_probe_and_heads_are_live(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "attention")
        f = set_params(ws, {"d_probe": 1024, "heads": "8"})
        p = f["header"]["meta"]["probe"]
        assert p["d"] == 1024 and 700 < p["var_raw"] < 1300 and 0.7 < p["var_scaled"] < 1.3
        assert p["entropy_raw"] < p["entropy_scaled"]
        assert f["header"]["meta"]["chain"]["steps"][1]["shape"] == [2, 5, 8, 1]
