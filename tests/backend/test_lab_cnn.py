"""The `cnn` lab: a CNN and an MLP of about its size as arms; the default recipe reaches
over 95% test accuracy on the real model; frames carry feature maps, kernels, confusion
matrices; a drawing gets both softmaxes and the CNN's maps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.labs.cnn import CNNLab, Params
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


@pytest.mark.slow  # ~3 s on an idle 2-core machine, 12-20 s while six helpers share it
def test_default_recipe_beats_95_percent_on_the_whole_test_split():
    lab = CNNLab(Params(compare_mlp=False, eval_every=200), seed=0, device=torch.device("cpu"))
    for _ in range(150):  # a few seconds of play on this machine
        lab.step(False)
    s = lab.evaluate(lab.arm)
    assert s["test_acc"] > 0.95, s
    assert s["gap"] == pytest.approx(s["train_acc"] - s["test_acc"])


def test_two_arms_frame_names_shapes_and_param_counts(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "cnn", "params": {}, "seed": 0})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        t, meta = f["tensors"], f["header"]["meta"]
        assert t["arm.0.input"].shape == (8, 8)
        assert t["arm.0.convs.0.hook_post"].shape == (8, 8, 8)
        assert t["arm.0.convs.1.hook_post"].shape == (16, 4, 4)
        assert t["arm.0.convs.0.kernels"].shape == (8, 1, 3, 3)
        assert t["arm.0.convs.1.kernels"].shape == (16, 8, 3, 3)
        assert t["arm.1.templates"].shape == (25, 8, 8)
        for i in (0, 1):
            assert t[f"arm.{i}.confusion"].sum() == 359  # the whole test split
            assert abs(float(t[f"arm.{i}.probs"].sum()) - 1) < 1e-5
        assert [a["label"] for a in meta["arms"]] == ["CNN", "MLP"]
        assert [a["params"] for a in meta["arms"]] == [1898, 1885]  # counted from the models
        assert meta["mlp_hidden"] == [25] and meta["channels"] == [8, 16]
        assert meta["split"] == {"train": 1438, "test": 359}

        msgs = step(ws, 10)
        rows = scalar_rows(msgs)
        assert [i for i in rows if "arm.0.test_acc" in rows[i]] == [10]
        r = rows[10]
        assert r["arm.0.gap"] == pytest.approx(r["arm.0.train_acc"] - r["arm.0.test_acc"])
        assert {"arm.0.grad_norm.convs.0", "arm.0.grad_norm.convs.1", "arm.0.grad_norm.out"} <= set(
            r
        )
        last = frames(msgs)[-1]
        assert last["header"]["meta"]["arms"][0]["kind"] == "cnn"


def test_augmentation_changes_the_batches_and_a_drawing_gets_both_answers(client):
    plain = CNNLab(Params(), seed=0, device=torch.device("cpu"))
    aug = CNNLab(Params(augment=True), seed=0, device=torch.device("cpu"))
    xa, ya = plain.batch(torch.Generator().manual_seed(3))
    xb, yb = aug.batch(torch.Generator().manual_seed(3))
    assert torch.equal(ya, yb) and not torch.equal(xa, xb)  # same digits, moved
    assert (xb >= -1e-6).all() and (xb <= 1 + 1e-6).all()

    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "cnn")
        image = np.zeros((32, 32))
        image[2:30, 14:18] = 1.0  # a "1"
        send(ws, {"type": "infer", "input": {"image": image.tolist()}})
        f, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
        assert f["type"] == "frame"
        t = f["tensors"]
        assert t["input"].shape == (8, 8) and t["input"].max() <= 16
        assert t["arm.0.convs.0.hook_post"].shape == (8, 8, 8)
        assert t["arm.0.convs.1.hook_post"].shape == (16, 4, 4)
        for i in (0, 1):
            assert abs(float(t[f"arm.{i}.probs"].sum()) - 1) < 1e-5
        assert len(f["header"]["meta"]["preds"]) == 2


def test_stem_ablation_is_a_third_arm(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "cnn", "params": {"compare_stem": True}, "seed": 0})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        t, arms = f["tensors"], f["header"]["meta"]["arms"]
        assert [a["label"] for a in arms] == ["CNN", "CNN 7×7/2", "MLP"]
        assert [a["params"] for a in arms] == [1898, 1738, 1885]
        assert t["arm.1.convs.0.kernels"].shape == (8, 1, 7, 7)
        assert t["arm.1.convs.0.hook_post"].shape == (8, 4, 4)  # 8×8 halved by the stride
        assert t["arm.1.convs.1.hook_post"].shape == (16, 2, 2)
