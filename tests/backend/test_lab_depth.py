"""The `depth` lab: plain, residual and reference arms in lockstep over the websocket; the
plain sigmoid N(0, 0.01) stack's early layers get no gradient while the reference arm's do;
zero and constant inits in the frames; init facts and the BatchNorm comparison in meta."""

from __future__ import annotations

import numpy as np
import torch

from backend.labs.depth import DepthLab, Params
from tests.wsutil import frames, open_lab, scalar_rows, step

SMALL = {"width": 16, "batch": 32}


def test_three_arms_step_together_and_the_plain_arms_early_layers_vanish(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "depth", SMALL)
        assert (ready["params"]["depth"], ready["params"]["activation"]) == (30, "sigmoid")
        msgs = step(ws, 3)
    rows = scalar_rows(msgs)
    last = rows[3]
    for i in range(3):
        assert f"arm.{i}.loss" in last and f"arm.{i}.grad_norm.layers.29" in last
    plain = [last[f"arm.0.grad_norm.layers.{j}"] for j in (0, 10, 29)]
    ref = [last[f"arm.2.grad_norm.layers.{j}"] for j in (0, 10, 29)]
    assert plain[0] < 1e-30 * plain[2] and plain[1] < 1e-20 * plain[2], plain
    assert ref[0] > 0.05 * ref[2], ref  # residual · Kaiming · ReLU: the first layer learns
    f = frames(msgs)[-1]
    meta = f["header"]["meta"]
    assert [a["label"] for a in meta["arms"]] == ["plain", "residual", "reference"]
    for i in range(3):
        hist = f["tensors"][f"arm.{i}.act_hist"]
        assert hist.shape == (30, 40)  # [layers, bins], each row scaled to its peak
        assert np.allclose(hist.max(1), 1.0, atol=1 / 255)
        assert f["tensors"][f"arm.{i}.weight"].shape == (16, 16)
        heads = {x["name"]: x.get("labels") for x in f["header"]["tensors"]}
        labels = heads[f"arm.{i}.grad_norm"]
        assert labels[0] == "out" and labels[-1] == "layers.0"  # input at the bottom
    facts = meta["init_facts"]
    assert [round(facts[k], 4) for k in ("xavier_normal", "kaiming_fan_in")] == [0.0510, 0.0625]
    assert [round(facts[k], 4) for k in ("kaiming_fan_out", "linear_default_bound")] == [
        0.0884,
        0.0442,
    ]
    bn = meta["batchnorm"]
    assert bn["batch_size"] == 8
    for b, u, hand, tor in zip(
        bn["var_biased"],
        bn["var_unbiased"],
        bn["hand_running_var"],
        bn["torch_running_var"],
        strict=True,
    ):
        assert np.isclose(u, b * 8 / 7)
        assert np.isclose(hand, 0.9 + 0.1 * b) and np.isclose(tor, 0.9 + 0.1 * u)


def lab(**kw) -> DepthLab:
    return DepthLab(Params(**kw), 0, torch.device("cpu"))


def test_zero_init_keeps_every_weight_at_zero_and_constant_init_keeps_rows_equal():
    z = lab(depth=2, width=8, activation="tanh", init="zeros", reference=False)
    before = z.snapshot().meta["arms"][0]["out_bias"]
    for _ in range(10):
        z.step(False)
    arm = z.snapshot().meta["arms"][0]
    assert arm["nonzero_weights"] == 0 and arm["weights_total"] == 2 * 8 + 8 * 8 + 8 * 2
    assert arm["out_bias"] != before  # only the output bias learns
    c = lab(depth=3, width=8, activation="tanh", init="constant", reference=False)
    for _ in range(10):
        c.step(False)
    assert [a["row_spread"] for a in c.snapshot().meta["arms"]] == [0.0, 0.0]
    n = lab(depth=3, width=8, activation="tanh", init="constant", noise=True, reference=False)
    for _ in range(10):
        n.step(False)
    assert all(a["row_spread"] > 1e-4 for a in n.snapshot().meta["arms"])


def test_batchnorm_arm_reports_train_and_eval_mode_of_one_example():
    b = lab(depth=4, width=8, activation="relu", init="kaiming_in", norm="batchnorm")
    for _ in range(5):
        b.step(False)
    arms = b.snapshot().meta["arms"]
    modes = arms[0]["bn_modes"]
    assert modes["train_a"] != modes["train_b"]  # the batch changes the example's output
    assert 0 <= modes["eval"] <= 1
    assert "bn_modes" not in arms[2]  # the reference arm has no norm
