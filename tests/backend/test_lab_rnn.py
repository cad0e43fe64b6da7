"""The `rnn` lab over the websocket: training streams loss, the clip coefficient and the
gradient's own norm; frames carry the hidden-state map, top-k, ‖h_t‖ and BPTT with its
bound, the norm example; `infer` generates greedy or sampled; bad text and prompts are
refused with the lab's keys."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.labs.rnn import Params, RNNLab
from models.data.texts import load_text
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

SMALL = {"d_hidden": 32, "batch": 16}


def infer(ws, **inp) -> dict:
    send(ws, {"type": "infer", "input": inp})
    msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
    return msg


def test_training_streams_loss_clip_and_the_pictures(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "rnn", SMALL)
        assert ready["params"]["clip"] is True and ready["params"]["max_norm"] == 5.0
        msgs = step(ws, 30)
    rows = scalar_rows(msgs)
    assert rows[30]["loss"] < rows[1]["loss"] - 0.3  # nats/char fall
    for s in range(1, 31):
        r = rows[s]
        assert r["clip_coef"] == pytest.approx(min(1.0, 5.0 / (r["grad_total"] + 1e-6)), rel=1e-4)
    assert "val_loss" in rows[25] and "memorised" in rows[25]
    f = frames(msgs)[-1]
    meta, t = f["header"]["meta"], f["tensors"]
    H, T = 32, 48
    assert t["hidden"].shape == (H, T) and len(meta["heat_chars"]) == T
    assert "".join(meta["heat_chars"]) == load_text("en")[:T]
    nxt = t["next"]
    assert nxt.shape == (8,) and np.all(np.diff(nxt) <= 0) and 0 < nxt.sum() <= 1 + 1e-5
    for name in ("h_norm", "bptt", "bptt_bound"):
        assert t[name].shape == (32,)  # one per step of the window
    assert np.all(t["bptt"] <= t["bptt_bound"] * (1 + 1e-4))
    assert t["derivs"].shape == (3, 121) and t["derivs"][0].max() == 0.25
    n = meta["norms"]
    assert (n["l1_entrywise"], n["frobenius"], n["matrix_1"]) == (14, 6, 5)
    assert n["clip_coef"] == pytest.approx(0.8333, abs=5e-5)
    assert meta["threshold"] == 0.12 and meta["sample"]["step"] == 25
    assert meta["sample"]["span"][0] == rows[25]["memorised"]
    assert meta["whh_spectral"] > 0 and meta["rate"] == pytest.approx(meta["whh_spectral"])


def test_clip_off_streams_no_coefficient_and_a_large_gradient_is_clipped(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "rnn", {**SMALL, "clip": False})
        rows = scalar_rows(step(ws, 3))
        assert "clip_coef" not in rows[3] and rows[3]["grad_total"] > 0
        # A tiny max_norm, switched on live: every step is clipped, by max_norm / ‖g‖.
        send(ws, {"type": "set", "params": {"clip": True, "max_norm": 0.1}})
        reply, _ = recv_until(ws, lambda m: m["type"] in ("params", "error"))
        assert reply["type"] == "params"
        rows = scalar_rows(step(ws, 3))
    last = max(rows)
    assert rows[last]["clip_coef"] < 1
    assert rows[last]["clip_coef"] == pytest.approx(0.1 / rows[last]["grad_total"], rel=1e-3)


def test_infer_greedy_and_sampled_generation(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "rnn", SMALL)
        step(ws, 5)
        g1 = infer(ws, prompt="The ", mode="greedy", length=40, seed=1)
        g2 = infer(ws, prompt="The ", mode="greedy", length=40, seed=2)
        s1 = infer(ws, prompt="The ", mode="sample", temperature=1.0, length=40, seed=1)
        s1b = infer(ws, prompt="The ", mode="sample", temperature=1.0, length=40, seed=1)
        s2 = infer(ws, prompt="The ", mode="sample", temperature=1.0, length=40, seed=2)
    for f in (g1, s1):
        assert f["type"] == "frame" and f["header"]["infer"] is True
    m = g1["header"]["meta"]
    assert len(m["text"]) == 40 and m["temperature"] == 0.0
    assert m["text"] == g2["header"]["meta"]["text"]  # greedy: the seed plays no part
    assert s1["header"]["meta"]["text"] == s1b["header"]["meta"]["text"]
    assert s1["header"]["meta"]["text"] != s2["header"]["meta"]["text"]
    # Greedy takes the top candidate each step.
    assert all(c[0] == ch for c, ch in zip(m["top_chars"], m["text"], strict=True))
    assert g1["tensors"]["gen_hidden"].shape == (32, 4 + 40 - 1)  # prompt + generated − 1
    assert g1["tensors"]["gen_top"].shape == (40, 8)
    span = m["span"]
    text = load_text("en")
    if span["length"]:
        piece = m["text"][span["start"] : span["start"] + span["length"]]
        assert text[span["where"] : span["where"] + span["length"]] == piece


def test_bad_text_and_prompts_are_refused_with_the_labs_keys(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "rnn", "params": {"text": "pasted", "pasted": "short"}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["key"] == "rnn.err_too_short" and err["field"] == "pasted"
        send(ws, {"type": "open", "lab": "rnn", "params": {"text": "pasted", "pasted": ""}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["key"] == "rnn.err_too_short"
        send(ws, {"type": "open", "lab": "rnn", "params": {"pasted": "x" * 200_001}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["field"] == "pasted" and "200,000" in err["message"]
        pasted = "A small steamed dumpling guesses the next letter, again and again. " * 4
        open_lab(ws, "rnn", {**SMALL, "text": "pasted", "pasted": pasted})
        assert infer(ws, prompt="")["key"] == "rnn.err_empty"
        err = infer(ws, prompt="Q")
        assert err["key"] == "rnn.err_unknown" and err["values"]["char"] == "Q"
        assert infer(ws, prompt="A ", length=5)["type"] == "frame"  # still works


def test_zh_text_and_the_activation_params_build():
    for kw in ({"text": "zh"}, {"activation": "relu", "whh_scale": 2.0}, {"activation": "sigmoid"}):
        lab = RNNLab(Params(**SMALL, **kw), 0, torch.device("cpu"))
        f = lab.step(True)
        assert np.isfinite(f.scalars["loss"])
        assert lab.model.cfg.activation == kw.get("activation", "tanh")
    zh = RNNLab(Params(text="zh"), 0, torch.device("cpu"))
    assert "".join(zh.snapshot().meta["heat_chars"]) == load_text("zh")[:48]
