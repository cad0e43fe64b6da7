"""Websocket conversations with `real-llm`: SmolLM2-135M-Instruct answering token by token.

The model is read from its GGUF and dequantized once for this process (~15–45 s on a shared
machine: the first generating test pays it, the others reuse it). Everything asserted is
the real model's output: its greedy answer, its attention, its KV cache's bytes.
"""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from backend.labs import _real_models
from backend.labs.real_llm import EXAMPLE
from tests.wsutil import open_lab, recv_until, send

LOAD_S = 240.0  # the first generation waits for the load
U8 = 0.5 / 255


def generate(ws, seconds: float = LOAD_S, **inp) -> list[dict]:
    """Every frame of one generation (until the frame marked last), or [error]."""
    send(ws, {"type": "infer", "input": inp})
    out = []
    while True:
        msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"), seconds=seconds)
        if msg["type"] == "error":
            return [msg]
        assert msg["header"]["infer"] is True
        out.append(msg)
        if msg["header"]["meta"]["last"]:
            return out


def error_of(ws, **inp) -> dict:
    (err,) = generate(ws, **inp)
    assert err["type"] == "error", err
    return err


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.slow
def test_what_is_the_capital_of_france_greedy_answers_paris(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "real-llm")
        assert ready["params"]["qk_layout"] == "unpermuted"
        fs = generate(ws, prompt=EXAMPLE, max_new=16, temperature=0)
        metas = [f["header"]["meta"] for f in fs]
        last = metas[-1]
        assert "Paris" in last["text"] and last["stopped"] == "eos"
        assert [m["index"] for m in metas] == list(range(len(fs)))
        assert last["prompt_tokens"][0] == "<|im_start|>"  # the chat template wrapped it
        n_prompt = len(last["prompt_tokens"])
        for i, (f, m) in enumerate(zip(fs, metas, strict=True)):
            # The real cache: one row a token, 46,080 B a row in f32, as the config says.
            assert m["cache_rows"] == n_prompt + i
            assert m["cache_bytes"] == 46_080 * m["cache_rows"]
            assert m["bytes_per_token"] == m["config_bytes_per_token"] == 46_080
            att = f["tensors"]["new_token_attention"]
            assert att.shape == (30, 9, m["cache_rows"])  # every layer and head, every key
            assert np.allclose(att.sum(-1), 1.0, atol=m["cache_rows"] * U8)
            # The logit lens's last layer is the model's own output: greedy picks its top.
            assert m["lens_tokens"][-1] == m["token"]
            j = m["top_ids"].index(m["token_id"])
            raw = f["tensors"]["top_raw_probs"][j]
            assert f["tensors"]["lens_chosen"][-1] == pytest.approx(raw, abs=1e-4)
            assert m["forward_ms"] > 0 and m["tokens_per_s"] > 0
        assert sum(last["quant"].values()) == last["quant_total"] > 130e6
        assert max(last["quant"], key=last["quant"].get) == "Q4_1"  # 4-bit, read from the file
        # Live odds: the last step under other settings, from its real logits.
        send(
            ws,
            {
                "type": "infer",
                "input": {"action": "odds", "index": 5, "temperature": 1.5, "top_k": 3},
            },
        )
        msg, _ = recv_until(ws, lambda m: m["type"] == "frame")
        odds = msg["tensors"]["top_probs"]
        assert msg["header"]["meta"]["kind"] == "odds" and msg["header"]["meta"]["index"] == 5
        assert (odds > 0).sum() == 3 and odds.sum() == pytest.approx(1.0, abs=1e-5)
        assert np.allclose(
            msg["tensors"]["top_raw_probs"], fs[5]["tensors"]["top_raw_probs"][: len(odds)]
        )
        # Bad input is refused with its field.
        assert error_of(ws, prompt="")["field"] == "input.prompt"
        assert error_of(ws, prompt="x", max_new=500)["field"] == "input.max_new"
        assert error_of(ws, prompt="x", top_p=0)["field"] == "input.top_p"
        assert error_of(ws, action="odds", index=180)["field"] == "input.index"


@pytest.mark.slow
def test_a_second_session_costs_no_second_copy_and_the_wrong_layout_babbles(client):
    with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
        open_lab(a, "real-llm")
        generate(a, prompt=EXAMPLE, max_new=1)  # the model is loaded (once per process)
        before = rss_mb()
        open_lab(b, "real-llm")
        fb = generate(b, prompt=EXAMPLE, max_new=3)
        grown = rss_mb() - before
        assert _real_models.LOADS["smollm2"] == 1
        weights = fb[-1]["header"]["meta"]["weights_mb"]
        assert weights > 500 and grown < 0.1 * weights  # measured: the second session adds MBs
        # Both sessions at once on the one model: each capture stays its own (the lock).
        prompts = {a: EXAMPLE, b: "Name a colour."}
        for ws, prompt in prompts.items():
            send(ws, {"type": "infer", "input": {"prompt": prompt, "max_new": 4}})
        for ws in prompts:
            for _ in range(4):
                msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
                assert msg["type"] == "frame", msg  # not an error from mixed-up captures
                m = msg["header"]["meta"]
                assert msg["tensors"]["new_token_attention"].shape == (30, 9, m["cache_rows"])
                if m["last"]:
                    break
        # The Q/K rows as llama.cpp stores them, under rotate-half RoPE: the layout mismatch.
        send(b, {"type": "set", "params": {"qk_layout": "as_stored"}})
        recv_until(b, lambda m: m["type"] == "params")
        wrong = generate(b, prompt=EXAMPLE, max_new=8)[-1]["header"]["meta"]
        assert wrong["qk_layout"] == "as_stored" and "Paris" not in wrong["text"]
    right, bad = _real_models.shared("smollm2"), _real_models.shared("smollm2-wrong")

    def storages(m) -> dict[int, int]:
        return {
            p.untyped_storage().data_ptr(): p.untyped_storage().nbytes() for p in m.parameters()
        }

    right_s, bad_s = storages(right.model), storages(bad.model)
    own = sum(n for ptr, n in bad_s.items() if ptr not in right_s)  # what the variant adds
    assert own == 30 * (576 + 2 * 192) * 576 * 4  # its fused Q/K/V rows; the rest is shared
    assert _real_models.LOADS["smollm2-wrong"] == 1


def test_a_context_the_server_cannot_hold_is_refused_as_too_large(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", max_session_mb=256)
    with TestClient(create_app(settings)) as c, c.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "real-llm", "params": {"context": 8192}, "seed": 0})
        err, _ = recv_until(ws, lambda m: m["type"] in ("error", "ready"))
        assert err["code"] == "too_large" and err["field"] == "context"  # 360 MiB of cache
        open_lab(ws, "real-llm", {"context": 2048})  # 90 MiB: fine


def test_a_qwen3_folder_under_the_models_dir_is_a_choice(client, tmp_path, monkeypatch):
    """A tiny random Qwen3 checkpoint in the real format (as tests/models writes it)."""
    pytest.importorskip("transformers")
    import torch

    from models.real.qwen3 import load_qwen3
    from tests.models.test_real_qwen3 import write_checkpoint

    folder = tmp_path / "tiny-qwen3"
    write_checkpoint(folder, tied=False)
    monkeypatch.setenv("SHAOMAI_MODELS_DIR", str(tmp_path))
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "real-llm", "params": {"model": "qwen3:nope"}, "seed": 0})
        err, _ = recv_until(ws, lambda m: m["type"] in ("error", "ready"))
        assert err["code"] == "invalid_params" and err["field"] == "model"
        open_lab(ws, "real-llm", {"model": "qwen3:tiny-qwen3"})
        fs = generate(ws, prompt="the cat sat on", chat=False, max_new=3, temperature=0)
    metas = [f["header"]["meta"] for f in fs]
    assert len(fs) == 3 and metas[0]["n_layers"] == 2 and metas[0]["n_kv_heads"] == 2
    for f, m in zip(fs, metas, strict=True):
        assert f["tensors"]["new_token_attention"].shape == (2, 4, m["cache_rows"])
        assert m["bytes_per_token"] == m["config_bytes_per_token"] == 2 * 2 * 2 * 24 * 4
    model, tok = load_qwen3(folder)  # the same shared copy: its own greedy first token
    with torch.inference_mode():
        first = int(model(torch.tensor([tok.encode("the cat sat on").ids]))[0, -1].argmax())
    assert metas[0]["token_id"] == first
