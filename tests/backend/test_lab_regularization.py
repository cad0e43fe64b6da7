"""The `regularization` lab: dropout arms in lockstep over the websocket with the train/test
gap, inverted dropout on a real activation, L1's sparsity against L2, batch sizes with the
learning rate scaled, and early stopping at the best held-out loss."""

from __future__ import annotations

import math

import pytest
import torch

from backend.labs.regularization import Params, RegularizationLab
from tests.wsutil import frames, open_lab, scalar_rows, step


def test_dropout_arms_report_the_gap_and_scale_kept_units(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "regularization", {"width": 64})
        msgs = step(ws, 20)
    rows = scalar_rows(msgs)
    for s in (10, 20):
        for i in range(4):
            r = rows[s]
            assert math.isclose(r[f"arm.{i}.gap"], r[f"arm.{i}.train_acc"] - r[f"arm.{i}.val_acc"])
    assert "arm.0.val_acc" not in rows[15]  # evaluated every 10 updates
    meta = frames(msgs)[-1]["header"]["meta"]
    assert [a["label"] for a in meta["arms"]] == ["p=0", "p=0.25", "p=0.5", "p=0.75"]
    assert meta["n_train"] + meta["n_test"] == 1797  # stratified: 199 of the asked 200
    assert abs(meta["n_train"] - 200) <= 10
    assert "dropout_demo" not in meta["arms"][0]
    demo = meta["arms"][2]["dropout_demo"]
    assert demo["scale"] == 2.0
    for h, d, kept in zip(demo["h"], demo["train"], demo["kept"], strict=True):
        assert d == (pytest.approx(h * 2) if kept else 0.0)  # inverted: 1/(1 − p)
    assert any(demo["kept"]) and not all(demo["kept"])


def lab(**kw) -> RegularizationLab:
    return RegularizationLab(Params(width=64, **kw), 0, torch.device("cpu"))


def test_l1_makes_weights_sparse_and_batch_size_scales_the_lr():
    r = lab(study="l1_l2", l1=1e-3, l2=1e-3)
    for _ in range(60):
        r.step(False)
    arms = r.snapshot().meta["arms"]
    assert [a["label"] for a in arms] == ["none", "L1 λ=0.001", "L2 λ=0.001"]
    assert arms[1]["sparsity"] > 3 * arms[0]["sparsity"]  # L1 pushes weights to zero
    assert arms[2]["weight_l2"] < arms[0]["weight_l2"]
    b = lab(study="batch_size", scale_lr=True)
    assert [a.optimizer.param_groups[0]["lr"] for a in b.arm_list] == [0.0125, 0.05, 0.2]
    b.step(False)
    assert [a.spec.label for a in b.arm_list] == ["b=8", "b=32", "b=128"]


def test_early_stopping_marks_the_best_held_out_loss():
    r = lab(patience=2, n_train=50)
    seen: dict[int, list[tuple[int, float]]] = {i: [] for i in range(4)}
    for t in range(1, 151):
        f = r.step(False)
        if t % 10 == 0:
            for i in range(4):
                seen[i].append((t, f.scalars[f"arm.{i}.val_loss"]))
    early = [a["early"] for a in r.snapshot().meta["arms"]]
    for i, e in enumerate(early):
        best_t, best = min(seen[i], key=lambda x: x[1])
        assert (e["step"], e["val_loss"]) == (best_t, best)
        assert e["stop"] == e["step"] + 20  # patience ran out two evaluations after the best
        assert e["step"] < 150  # 50 images: the held-out loss turns up before the end
