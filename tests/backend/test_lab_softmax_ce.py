"""Websocket conversation with the `softmax-ce` lab: a static lab whose params are all live."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.backend.test_lab_logistic import set_params
from tests.wsutil import frames, open_lab, recv_until, send, step

NAMES = {
    "logits": (4,),
    "softmax": (4,),
    "square_norm": (4,),
    "exp_naive": (4,),
    "softmax_naive": (4,),
    "ce_examples": (3,),
    "ce_curve": (201,),
    "table": (5, 10),
    "table_ce": (2, 5),
    "lik_product": (100,),
    "lik_logsum": (100,),
    "grad_mse": (201,),
    "grad_bce": (201,),
}


def test_open_shows_the_curriculum_numbers(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "softmax-ce")
        assert ready["params"]["logits"] == [2.0, 1.0, 0.1, -3.0]
        msgs = step(ws, 1)
        (f,) = frames(msgs)
        assert {n: a.shape for n, a in f["tensors"].items()} == NAMES
        s = f["header"]["scalars"]
        assert [round(s[k], 3) for k in ("ce_p09", "ce_p03", "ce_p001")] == [0.105, 1.204, 4.605]
        assert round(s["table_mean_ce"], 3) == 1.665
        picks = f["tensors"]["table_ce"][0]
        assert [round(float(p), 3) for p in picks] == [0.178, 0.202, 0.129, 0.236, 0.221]
        assert f["header"]["meta"]["table_labels"] == [2, 9, 5, 8, 7]
        assert f["tensors"]["square_norm"].argmax() == 3 and f["tensors"]["softmax"].argmax() == 0
        assert s["product"] == 0.0 and math.isfinite(s["log_sum"])
        assert f["header"]["meta"]["underflow_at"] is not None
        assert s["naive_bad"] == 0
        # A static lab is done after its one step.
        assert msgs[-1]["state"] == "paused"
        send(ws, {"type": "control", "action": "step", "count": 1})
        done, _ = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "done")
        assert done["step"] == 1


def test_overflow_live(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "softmax-ce")
        reply, f = set_params(ws, {"logits": [90.0, 1.0, 0.0], "n_samples": 20})
        assert reply["reset"] is False
        t = f["tensors"]
        assert np.isinf(t["exp_naive"][0]) and np.isnan(t["softmax_naive"][0])
        assert np.isfinite(t["softmax"]).all() and t["softmax"][0] == pytest.approx(1.0)
        assert f["header"]["scalars"]["naive_bad"] == 1
        assert t["lik_product"].shape == (20,) and f["header"]["meta"]["underflow_at"] is None


def test_target_must_be_one_of_the_logits(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "softmax-ce")
        err, _ = set_params(ws, {"target": 7})
        assert err["type"] == "error" and err["code"] == "invalid_params"
        err, _ = set_params(ws, {"logits": [1.0] * 11})
        assert err["code"] == "invalid_params" and err["field"] == "logits"
        err, _ = set_params(ws, {"logits": [1.0, 1e6]})
        assert err["code"] == "invalid_params"
        reply, f = set_params(ws, {"logits": [0.0, 3.0], "target": 1, "y_true": 0})
        assert f["header"]["scalars"]["loss"] == pytest.approx(math.log(1 + math.exp(-3)), abs=1e-6)
        g = f["tensors"]["grad_bce"]
        assert g.min() >= 0  # y = 0: p − y ≥ 0 everywhere
