"""The `attention-variants` lab: five arms in lockstep, each learning; their KV caches
measured from a live decode equal to the config's bytes; MLA's absorbed-vs-explicit check."""

from __future__ import annotations

import numpy as np
import torch

from backend.labs.attention_variants import AttentionVariantsLab, Params
from tests.wsutil import frames, open_lab, scalar_rows, step

LABELS = ["MHA", "GQA", "MQA", "CLA", "MLA"]
SMALL = {"d_model": 32, "seq_len": 4, "warmup": 5, "lr": 1e-2}


def test_five_arms_train_in_lockstep_and_each_loss_falls(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "attention-variants", SMALL)
        assert ready["params"]["task"] == "copy"
        msgs = step(ws, 20)
    rows = scalar_rows(msgs)
    assert set(rows) >= set(range(1, 21))
    for s in range(1, 21):  # every arm steps every step: one batch, five updates
        assert {f"arm.{i}.loss" for i in range(5)} <= set(rows[s])
        assert rows[s]["loss"] == np.mean([rows[s][f"arm.{i}.loss"] for i in range(5)])
    for i in range(5):
        assert rows[20][f"arm.{i}.loss"] < 0.8 * rows[1][f"arm.{i}.loss"], i
        assert f"arm.{i}.grad_norm.blocks.1" in rows[20]
    f = frames(msgs)[-1]
    meta = f["header"]["meta"]
    assert [a["label"] for a in meta["arms"]] == LABELS
    T = len(meta["tokens"])
    for i in range(5):
        for layer in range(2):
            pattern = f["tensors"][f"arm.{i}.blocks.{layer}.attn.hook_pattern"]
            assert pattern.shape == (4, T, T)  # [heads, T, T] per arm and layer
            assert np.all(np.triu(pattern, 1) <= 0.5 / 255)  # causal


def test_measured_cache_bytes_equal_the_config_for_every_arm():
    lab = AttentionVariantsLab(Params(), 0, torch.device("cpu"))
    arms = lab.snapshot().meta["arms"]
    per_token = {a["label"]: a["measured_bytes_per_token"] for a in arms}
    # 2 layers, 4 heads of 16, float32: K and V × layers × KV heads × d_head × 4 bytes
    assert per_token == {
        "MHA": 2 * 2 * 4 * 16 * 4,
        "GQA": 2 * 2 * 2 * 16 * 4,
        "MQA": 2 * 2 * 1 * 16 * 4,
        "CLA": 2 * 1 * 4 * 16 * 4,  # one layer of two keeps K/V
        "MLA": (16 + 8) * 2 * 4,  # latent d_c + RoPE key d_rope, every layer
    }
    for a in arms:
        assert a["measured_bytes_per_token"] == a["config_bytes_per_token"]
        prompt = len(lab.prompt)
        assert a["cache_rows"] == prompt + len(lab.answer) - 1  # the last token is not fed back
        assert a["cache_bytes"] == a["cache_rows"] * a["config_bytes_per_token"]


def test_mla_absorbed_agrees_with_explicit_unless_rope_is_inside_the_latent():
    for rope_in, trained in ((False, 0), (False, 5), (True, 0), (True, 5)):
        lab = AttentionVariantsLab(Params(mla_rope_in_latent=rope_in), 0, torch.device("cpu"))
        for _ in range(trained):
            lab.step(False)
        check = lab.snapshot().meta["arms"][4]["mla_check"]
        rel = check["max_abs_diff"] / check["max_abs_score"]
        if rope_in:
            assert rel > 0.05, (trained, check)  # visibly different scores
        else:
            assert check["max_abs_diff"] < 1e-6 and rel < 1e-5, (trained, check)
