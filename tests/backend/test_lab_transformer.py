"""The `transformer` lab over the websocket: training frames with every attention map, the
warm-up schedule as the live lr, the learner's phrase by greedy and beam search, refusals
with their keys; and (slow) the default model learning the held-out numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from backend.labs.transformer import Params, TransformerLab, Translate
from models.transformer.encoder_decoder import noam_lr
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

SMALL = {"d_model": 32, "batch": 16, "max_number": 99}


def infer(ws, **inp) -> dict:
    send(ws, {"type": "infer", "input": inp})
    msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
    return msg


def test_frames_carry_every_attention_map_and_the_schedule_is_the_lr(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "transformer", SMALL)
        assert ready["params"]["direction"] == "en-zh"
        msgs = step(ws, 12)
    rows = scalar_rows(msgs)
    for s in range(1, 13):  # the trainer's lr = factor · d^-0.5 · min(s^-0.5, s·w^-1.5)
        assert rows[s]["lr"] == pytest.approx(
            0.3 * noam_lr(s, 32, ready["params"]["warmup"]), rel=1e-6
        )
        assert rows[s]["ppl_smoothed"] == pytest.approx(math.exp(rows[s]["loss"]), rel=1e-5)
        assert rows[s]["ppl"] == pytest.approx(math.exp(rows[s]["nll"]), rel=1e-5)
    f = frames(msgs)[-1]
    meta = f["header"]["meta"]
    S, T = len(meta["example"]["src"]), len(meta["example"]["tokens"])
    for i in range(2):
        assert f["tensors"][f"encoder.blocks.{i}.attn.hook_pattern"].shape == (4, S, S)
        dec = f["tensors"][f"decoder.blocks.{i}.attn.hook_pattern"]
        assert dec.shape == (4, T, T) and np.all(np.triu(dec, 1) <= 0.5 / 255)  # masked
        assert f["tensors"][f"decoder.blocks.{i}.cross_attn.hook_pattern"].shape == (4, T, S)
    scale = meta["scale"]
    assert scale["hand"]["params"] == 63_121_544 and scale["torch_qk"]["params"] == 63_126_152
    assert scale["hand"]["ppl_smoothed"] == pytest.approx(math.exp(2.8955))
    ls = meta["smoothing"]
    assert ls["uniform"]["q"] == pytest.approx([0.925, 0.025, 0.025, 0.025])
    assert ls["others"]["q"] == pytest.approx([0.9, 0.1 / 3, 0.1 / 3, 0.1 / 3])
    assert ls["uniform"]["ce"] == pytest.approx(ls["torch_ce"])  # torch's is the uniform one
    assert meta["norms"]["layernorm"][0][0] == pytest.approx([-1.2247, 0.0, 1.2247], abs=1e-4)
    sched = meta["schedule"]
    w = sched["warmup"]  # the peak is at the end of the warm-up
    assert max(sched["lr"]) == pytest.approx(0.3 * noam_lr(w, 32, w))


def test_a_typed_phrase_is_translated_greedily_and_by_beam_with_cross_attention(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "transformer", SMALL)
        step(ws, 3)
        f = infer(ws, text="Forty two", width=3, alpha=0.6)
    assert f["type"] == "frame" and f["header"]["infer"] is True
    meta = f["header"]["meta"]
    assert meta["src"] == ["forty", "two"]
    assert len(meta["hypotheses"]) == 3
    scores = [h["score"] for h in meta["hypotheses"]]
    assert scores == sorted(scores, reverse=True)
    for h in meta["hypotheses"]:
        assert h["score"] == pytest.approx(h["logprob"] / ((5 + h["length"]) / 6) ** 0.6)
    for which in ("greedy", "beam"):
        T = len(meta[which]["tokens"])
        for i in range(2):
            assert f["tensors"][f"{which}.decoder.blocks.{i}.cross_attn.hook_pattern"].shape == (
                4,
                T,
                2,
            )


def test_bad_phrases_are_refused_with_their_keys_and_the_session_goes_on(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "transformer", SMALL)
        err = infer(ws, text="forty banana")
        assert err["type"] == "error" and err["key"] == "transformer.err_unknown"
        assert err["values"]["token"] == "banana" and err["field"] == "input.text"
        err = infer(ws, text="one " * 9)
        assert err["key"] == "transformer.err_long" and err["values"]["max"] == 2
        assert infer(ws, text="   ")["key"] == "transformer.err_empty"
        assert infer(ws, text="x" * 81)["field"] == "input.text"
        assert infer(ws, text="two", width=9)["field"] == "input.width"
        assert infer(ws, text="two")["type"] == "frame"


@pytest.mark.slow
def test_the_default_model_learns_numbers_it_never_saw():
    lab = TransformerLab(Params(), 0, torch.device("cpu"))
    best = 0.0
    for _ in range(700):
        fr = lab.step(False)
        best = max(best, fr.scalars.get("val_exact", 0.0))
        if best > 0.9:
            break
    assert best > 0.9, best  # held-out numbers, exactly (teacher-forced = greedy)
    out = next(lab.answer(Translate(text="three hundred twenty one"))).meta
    assert out["greedy"]["text"] == "三百二十一" and out["beam"]["text"] == "三百二十一", out
