"""The `linear-attention` lab: four mixers in lockstep; each recurrent arm's three forms
agree on the example; cache bytes measured from a real decode (softmax grows, the states
do not) equal the config; the overwrite demo; bad params refused."""

from __future__ import annotations

import numpy as np
import torch

from backend.labs.linear_attention import LinearAttentionLab, Params
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

LABELS = ["Softmax", "Linear", "Delta", "SSM"]
SMALL = {"d_model": 32, "n_pairs": 5, "batch": 32}


def test_four_mixers_train_in_lockstep_and_three_forms_agree(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "linear-attention", SMALL)
        assert ready["params"]["positional"] == "none"
        msgs = step(ws, 12)
    rows = scalar_rows(msgs)
    for s in range(1, 13):
        assert {f"arm.{i}.loss" for i in range(4)} <= set(rows[s])
        assert rows[s]["loss"] == np.mean([rows[s][f"arm.{i}.loss"] for i in range(4)])
    for i in range(4):
        assert rows[12][f"arm.{i}.loss"] < rows[1][f"arm.{i}.loss"], i
    f = frames(msgs)[-1]
    meta = f["header"]["meta"]
    arms = meta["arms"]
    assert [a["label"] for a in arms] == LABELS
    assert meta["tokens"][-1].endswith("?") and meta["answer"] != meta["stale"]
    T = len(meta["tokens"])
    for i in (0, 1):  # softmax and linear: a causal pattern whose rows sum to 1
        pattern = f["tensors"][f"arm.{i}.blocks.0.attn.hook_pattern"]
        assert pattern.shape == (4, T, T)
        assert np.all(np.triu(pattern, 1) <= 0.5 / 255)
        assert np.allclose(pattern.sum(-1), 1.0, atol=T / 255)
    expected = {
        "Linear": ["parallel", "recurrent", "chunked"],
        "Delta": ["parallel", "recurrent", "chunked"],
        "SSM": ["recurrence", "convolution", "scan"],
    }
    for a in arms[1:]:
        forms = a["forms"]
        assert forms["names"] == expected[a["label"]]
        assert max(forms["max_abs_diff"].values()) < 1e-6, a["label"]
        shown = list(forms["shown"].values())  # the page prints these to six decimals
        assert all(np.round(s, 6).tolist() == np.round(shown[0], 6).tolist() for s in shown)
    assert "forms" not in arms[0]


def test_measured_cache_bytes_grow_for_softmax_and_stay_for_every_state():
    lab = LinearAttentionLab(Params(), 0, torch.device("cpu"))
    arms = lab.snapshot().meta["arms"]
    soft, linear, delta, ssm = arms
    n = len(soft["decode_bytes"])
    assert n == 48
    # 1 layer, 4 heads of 16, float32: softmax K and V 2 × 4 × 16 × 4 B a token
    assert soft["decode_bytes"] == [512 * (t + 1) for t in range(n)]
    assert soft["kv_bytes_per_token"] == 512 and soft["state_bytes"] == 0
    sizes = {"Linear": 4 * 16 * 17 * 4, "Delta": 4 * 16 * 16 * 4, "SSM": 64 * 8 * 4}
    for a in (linear, delta, ssm):
        assert a["decode_bytes"] == [sizes[a["label"]]] * n
        assert a["state_bytes"] == sizes[a["label"]] and a["kv_bytes_per_token"] == 0
        assert a["flops_per_token"][0] == a["flops_per_token"][1]
    assert soft["flops_per_token"][1] > soft["flops_per_token"][0]


def test_overwrite_demo_rides_every_frame_and_follows_its_sliders(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-attention", SMALL)
        f = frames(step(ws, 1))[-1]
        mem = f["header"]["meta"]["memory"]
        plain, delta = f["tensors"]["memory.plain"], f["tensors"]["memory.delta"]
        assert plain.shape == delta.shape == (8, 8)
        assert sum(mem["rewritten"]) == 4
        assert mem["acc_delta"] == [1.0, 1.0] and mem["acc_plain"][0] < 1.0
        rw = np.array(mem["rewritten"])
        first = np.array(mem["first"])
        stale_plain = plain[np.arange(8), first][rw]
        assert stale_plain.mean() > 0.8  # plain still reads the old value
        send(ws, {"type": "set", "params": {"mem_keys": 12, "mem_rewrites": 0}})
        recv_until(ws, lambda m: m["type"] == "params")
        f = frames(step(ws, 1))[-1]
        mem = f["header"]["meta"]["memory"]
        assert f["tensors"]["memory.plain"].shape == (12, 8)
        assert mem["acc_plain"][0] is None and sum(mem["rewritten"]) == 0
        for bad in ({"mem_keys": 4, "mem_rewrites": 6}, {"d_model": 48, "n_heads": 5}):
            send(ws, {"type": "set", "params": bad})
            reply, _ = recv_until(ws, lambda m: m["type"] in ("params", "error"))
            assert reply["type"] == "error" and reply["code"] == "invalid_params", bad


def test_three_forms_still_agree_once_trained():
    """Trained outputs grow (~5): the check runs in float64, so the forms agree far below
    the page's six decimals (in float32 they drifted to ~3e-6 by rounding alone)."""
    lab = LinearAttentionLab(Params(), 0, torch.device("cpu"))
    for _ in range(30):
        lab.step(False)
    for a in lab.snapshot().meta["arms"][1:]:
        assert max(a["forms"]["max_abs_diff"].values()) < 1e-9, a["label"]
