"""Websocket conversation with the `svm` lab: frames, live C and loss, support vectors."""

from __future__ import annotations

import math

import pytest

from tests.backend.test_lab_logistic import set_params
from tests.wsutil import frames, open_lab, scalar_rows, step


def test_open_and_train(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "svm")
        assert ready["params"]["C"] == 1.0 and ready["params"]["loss"] == "hinge"
        msgs = step(ws, 30)
        f = frames(msgs)[-1]
        shapes = {n: a.shape for n, a in f["tensors"].items()}
        assert shapes == {
            "boundary": (64, 64),
            "points": (40, 3),
            "margins": (40,),
            "support": (40,),
            "point_loss": (40,),
            "loss_curves": (4, 121),
            "weights": (3,),
            "grad": (3,),
        }
        meta = f["header"]["meta"]
        assert len(meta["w"]) == 2 and meta["loss"] == "hinge"
        heads = {m["name"]: m for m in f["header"]["tensors"]}
        assert heads["boundary"]["dtype"] == "u8"
        assert (
            heads["boundary"]["min"] >= -meta["clip"] and heads["boundary"]["max"] <= meta["clip"]
        )
        assert heads["loss_curves"]["labels"] == ["hinge", "logistic", "squared", "zero_one"]
        t = f["tensors"]
        # The server's support vectors are exactly the points with y·f(x) ≤ 1 (+ tolerance).
        assert ((t["margins"] <= 1.02) == (t["support"] > 0.5)).all()
        s = f["header"]["scalars"]
        assert s["n_support"] == t["support"].sum()
        assert s["margin_width"] == pytest.approx(2 / math.hypot(*meta["w"]), rel=1e-5)
        rows = scalar_rows(msgs)
        assert rows[30]["loss"] < rows[1]["loss"]


def test_c_and_loss_are_live(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "svm")
        step(ws, 400)
        wide = frames(step(ws, 1))[-1]["header"]["scalars"]["margin_width"]
        reply, f = set_params(ws, {"C": 100.0})
        assert reply["reset"] is False and f["header"]["meta"]["C"] == 100.0
        narrow = frames(step(ws, 1500))[-1]["header"]["scalars"]["margin_width"]
        assert narrow < wide  # larger C, narrower margin
        reply, f = set_params(ws, {"loss": "squared"})
        assert reply["reset"] is False and f["header"]["meta"]["loss"] == "squared"
        m, pl = f["tensors"]["margins"], f["tensors"]["point_loss"]
        assert pl == pytest.approx((1 - m) ** 2, rel=1e-4, abs=1e-5)


def test_clicked_points(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "svm", {"points": [[-3.0, 3.0, 1]]})
        f = frames(step(ws, 1))[-1]
        assert f["tensors"]["points"].shape == (41, 3)
        assert f["header"]["meta"]["n_user"] == 1
        err, _ = set_params(ws, {"points": [[5.0, 0.0, 1]]})
        assert err["type"] == "error" and err["code"] == "invalid_params"
