"""Websocket conversations with the `gpt` lab: training frames, generation, limits, the leak."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from backend.labs.gpt import GPTLab, Params
from tests.trained import trained_outcome
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

SMALL_TEXT = {"data": "text-en", "n_ctx": 32, "batch": 16}


def infer(ws, **inp) -> list[dict]:
    """Every frame of one generation (until the frame marked last), or [error]."""
    send(ws, {"type": "infer", "input": inp})
    out = []
    while True:
        msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
        if msg["type"] == "error":
            return [msg]
        assert msg["header"]["infer"] is True
        out.append(msg)
        if msg["header"]["meta"]["last"]:
            return out


def error_of(ws, **inp) -> dict:
    (err,) = infer(ws, **inp)
    assert err["type"] == "error", err
    return err


def test_twenty_steps_stream_attention_patterns_of_every_layer_and_head(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "gpt")
        assert ready["params"]["data"] == "reverse" and ready["params"]["causal"] is True
        msgs = step(ws, 20)
        fs = frames(msgs)
        assert [f["step"] for f in fs] == list(range(1, 21))  # step ≤ 50: a frame per step
        f = fs[-1]
        names = {t["name"]: t for t in f["header"]["tensors"]}
        T = 13  # <s> + 6 symbols + | + 6 answers, minus the last token
        for i in range(2):
            head = names[f"blocks.{i}.attn.hook_pattern"]
            assert head["dtype"] == "u8" and head["shape"] == [4, T, T]  # [heads, T, T]
            pattern = f["tensors"][f"blocks.{i}.attn.hook_pattern"]
            assert np.allclose(pattern.sum(-1), 1.0, atol=T * 0.5 / 255)  # rows are softmaxes
            assert np.all(np.triu(pattern, 1) <= 0.5 / 255)  # causal: nothing above the diagonal
        assert names["grad_norm"]["labels"] == ["embed", "blocks.0", "blocks.1", "unembed"]
        assert (f["tensors"]["grad_norm"] > 0).all()
        # Norms and odds are drawn as bars: f16, within f16's precision of the exact scalars.
        exact = [scalar_rows(msgs)[20][f"grad_norm.{k}"] for k in names["grad_norm"]["labels"]]
        assert np.allclose(f["tensors"]["grad_norm"], exact, rtol=1e-3)
        small = ("grad_norm", "resid_norm", "embed_norm", "next_probs", "target_prob")
        assert {names[n]["dtype"] for n in small} == {"f16"}
        assert f["tensors"]["resid_norm"].shape == (3, T)  # embed + 2 blocks, per position
        assert names["embed_norm"]["labels"] == ["token", "position"]
        assert f["tensors"]["embed_norm"].shape == (2, T) and (f["tensors"]["embed_norm"] > 0).all()
        assert f["tensors"]["next_probs"].shape == (T, 8)
        assert f["tensors"]["target_prob"].shape == (T,)
        meta = f["header"]["meta"]
        assert meta["tokens"][0] == "<s>" and meta["tokens"][7] == "|" and len(meta["tokens"]) == T
        assert meta["graded"] == [False] * 7 + [True] * 6
        assert len(meta["next_top"]) == T and len(meta["next_top"][0]) == 8
        assert meta["kind"] == "task" and meta["n_params"] > 90_000
        assert meta["prompt_example"].startswith("<s>") and meta["prompt_example"].endswith("|")
        rows = scalar_rows(msgs)
        assert set(rows) >= set(range(1, 21))
        for s in range(1, 21):
            assert {"loss", "lr", "train_seq_acc", "grad_norm.blocks.1"} <= set(rows[s])
        assert "seq_acc" not in rows[10] and "seq_acc" not in rows[20]  # held-out: every 200
        assert rows[1]["lr"] == pytest.approx(3e-3 / 50)  # warm-up: step 1 runs at (0 + 1)/50
        assert rows[20]["loss"] < rows[1]["loss"]


@trained_outcome
def test_reverse_is_solved_well_before_step_100_on_every_seed_and_thread_count(seed):
    """The default recipe's held-out exact-sequence accuracy passes 95% by step 100 (the
    test below reads seed 0's run over the websocket); measured: steps 38-40 on all six."""
    lab = GPTLab(Params(), seed, torch.device("cpu"))
    while lab.solved_at is None and lab.t < 100:
        lab.step(False)
    assert lab.solved_at is not None and lab.solved_at < 100, lab.t


def test_reverse_is_solved_with_an_anti_diagonal_head(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt")
        msgs = step(ws, 100)
        rows = scalar_rows(msgs)
        f = frames(msgs)[-1]
        solved = f["header"]["meta"]["solved_at"]
        assert rows[solved]["seq_acc"] > 0.95  # held-out exact-sequence accuracy (seed 0: 38)
        assert f["step"] == 100 and solved < 100
        # Held-out every 200 steps, and at once when the fresh training batch passes 95%: the
        # step it is solved at is exact, not rounded up to the next scheduled evaluation.
        assert solved % 200 and rows[solved]["train_seq_acc"] > 0.95 < rows[solved]["seq_acc"]
        assert sorted(s for s, r in rows.items() if "seq_acc" in r) == [solved]
        # answer query q reads prompt position 2n + 1 - q: an anti-diagonal in the pattern
        q = np.arange(7, 13)
        best = max(
            f["tensors"][f"blocks.{i}.attn.hook_pattern"][:, q, 13 - q].mean(-1).max()
            for i in range(2)
        )
        assert best > 0.5


def test_infer_streams_tokens_with_the_kv_cache_growing_one_row_a_token(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt")
        step(ws, 3)
        fs = infer(ws, prompt="012345|", max_new=5, temperature=0, use_cache=True)
        assert len(fs) == 5
        per_row = 2 * 2 * 4 * 16 * 4  # K and V × layers × heads × d_head × 4 bytes
        for i, f in enumerate(fs):
            m = f["header"]["meta"]
            rows = 8 + i  # <s> is added: 8 prompt tokens, then one more per generated token
            assert m["index"] == i and m["prompt_tokens"][0] == "<s>" and len(m["tokens"]) == i + 1
            assert m["cache_rows"] == [rows, rows] and m["cache_bytes"] == rows * per_row
            assert m["bytes_per_row"] == per_row
            assert m["positions"] == (8 if i == 0 else 1) and m["positions_no_cache"] == rows
            head = {t["name"]: t for t in f["header"]["tensors"]}
            assert head["new_token_attention"]["dtype"] == "u8"
            assert f["tensors"]["new_token_attention"].shape == (2, 4, rows)  # [L, H, T]
            assert len(m["context"]) == rows
            probs = f["tensors"]["top_probs"]
            assert head["top_probs"]["labels"][0] == m["token"]  # greedy: the top candidate
            assert probs[0] == pytest.approx(m["prob"]) and probs.sum() <= 1 + 1e-6
            raw = f["tensors"]["top_raw_probs"]  # the model's own odds, before greedy/top-k/top-p
            assert raw.shape == probs.shape and raw[0] == raw.max() and 0 < raw.sum() <= 1 + 1e-6
            assert m["history"]["positions"][-1] == m["total"]["positions"]
            assert len(m["history"]["positions_no_cache"]) == i + 1  # a skipped frame loses nothing
        total = fs[-1]["header"]["meta"]["total"]
        assert total["positions"] == 8 + 4 and total["positions_no_cache"] == sum(range(8, 13))
        assert total["flops"] < total["flops_no_cache"]
        assert fs[-1]["header"]["meta"]["text"].startswith("<s>012345|")

        plain = infer(ws, prompt="012345|", max_new=3, temperature=0, use_cache=False)
        for i, f in enumerate(plain):
            m = f["header"]["meta"]
            assert m["cache_rows"] == [0, 0] and m["cache_bytes"] == 0
            assert m["positions"] == m["positions_no_cache"] == 8 + i
        same = [f["header"]["meta"]["token"] for f in plain]
        assert same == [f["header"]["meta"]["token"] for f in fs[:3]]  # the cache changes no token


def test_bad_infer_input_is_refused_with_its_field(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt")
        assert error_of(ws, max_new=3)["field"] == "input.prompt"
        assert error_of(ws, prompt="")["field"] == "input.prompt"
        assert error_of(ws, prompt="01|", max_new=500)["field"] == "input.max_new"
        assert error_of(ws, prompt="01|", temperature=-1)["field"] == "input.temperature"
        assert error_of(ws, prompt="01|", top_p=0)["field"] == "input.top_p"
        assert error_of(ws, prompt="01|", beam=3)["field"] == "input.beam"
        err = error_of(ws, prompt="01Z|")  # not a symbol of the reverse task
        assert err["field"] == "input.prompt" and "'Z'" in err["message"]
        # ...and named, so the page says it in the learner's language
        assert err["key"] == "gpt.err_not_symbol" and err["values"]["symbol"] == "Z"
        assert len(infer(ws, prompt="01|", max_new=2)) == 2  # the session still works


def test_models_over_the_memory_cap_are_refused_with_the_field_to_lower(client):
    big = {"data": "text-en", "n_layers": 6, "d_model": 256, "n_heads": 8, "n_ctx": 256}
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "gpt", "params": {**big, "batch": 256}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "too_large" and err["field"] == "batch"
        assert err["key"] == "err.too_large_lower" and err["values"]["field"] == "batch"
        assert err["values"]["mb"] > err["values"]["cap"] == 512
        send(ws, {"type": "open", "lab": "gpt", "params": {"n_heads": 3}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and err["field"] == "d_model"
    assert GPTLab.estimate_mb(Params(**big, batch=2))[0] < 512  # a smaller batch fits


def test_pasted_text_is_bounded_and_its_size_named(settings):
    settings = Settings(
        data_dir=settings.data_dir, max_message_bytes=4_000_000
    )  # JSON escapes: 6 bytes a 字
    too_big = "小烧麦" * 70_000  # 630,000 bytes of UTF-8
    with TestClient(create_app(settings)) as c, c.websocket_connect("/ws") as ws:
        params = {"data": "text-pasted", "pasted": too_big}
        send(ws, {"type": "open", "lab": "gpt", "params": params})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and err["field"] == "pasted"
        assert "630,000 bytes" in err["message"] and "200,000" in err["message"]
        send(ws, {"type": "open", "lab": "gpt", "params": {"data": "text-pasted", "pasted": "ab"}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["field"] == "pasted" and "at least 100" in err["message"]
        text = "The little shaomai learns to speak by guessing the next word. " * 4
        open_lab(ws, "gpt", {"data": "text-pasted", "pasted": text, "n_ctx": 16, "batch": 4})
        assert frames(step(ws, 2))[-1]["header"]["meta"]["kind"] == "text"


def test_text_streams_perplexity_a_sample_and_generation_without_cache_when_not_causal(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt", {**SMALL_TEXT, "causal": False})
        msgs = step(ws, 3)
        rows = scalar_rows(msgs)
        assert rows[3]["ppl"] == pytest.approx(math.exp(rows[3]["loss"]), rel=1e-6)
        f = frames(msgs)[-1]
        meta = f["header"]["meta"]
        assert meta["kind"] == "text" and meta["causal"] is False and len(meta["tokens"]) == 32
        assert f["tensors"]["blocks.0.attn.hook_pattern"].shape == (4, 32, 32)
        assert np.triu(f["tensors"]["blocks.0.attn.hook_pattern"], 1).max() > 0  # sees ahead
        assert meta["sample"]["text"].startswith(meta["prompt_example"])
        fs = infer(ws, prompt="The ", max_new=3, use_cache=True)
        m = fs[-1]["header"]["meta"]
        assert m["use_cache"] is False and m["cache_note"] == "not_causal"
        assert m["cache_rows"] == [0, 0] and m["text"].startswith("The ")


@pytest.mark.slow
def test_without_the_causal_mask_text_loss_collapses(client):
    """The leak: each position reads the token it must predict (measured: 0.11 vs 1.73)."""
    final = {}
    for causal in (True, False):
        with client.websocket_connect("/ws") as ws:
            open_lab(ws, "gpt", {**SMALL_TEXT, "causal": causal})
            rows = scalar_rows(step(ws, 200))
            final[causal] = (rows[200]["loss"], rows[200]["val_loss"])
    assert final[False][0] < 0.3 * final[True][0]
    assert final[False][1] < 0.5 < 1.5 < final[True][1]
