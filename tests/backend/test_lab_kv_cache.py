"""The `kv-cache` lab: the curriculum's figures on the Qwen3-0.6B shape, from the lab's own
frames, and the bytes four small models' caches really hold after a live decode."""

from __future__ import annotations

import pytest
import torch

from backend.labs.kv_cache import NEW_TOKENS, PROMPT, KVCacheLab, Params
from tests.wsutil import frames, recv_until, scalar_rows, send, step

KIB, GIB = 2**10, 2**30


def open_kv(ws, params: dict | None = None) -> dict:
    """Open the lab; returns its step-0 frame."""
    send(ws, {"type": "open", "lab": "kv-cache", "params": params or {}, "seed": 0})
    ready, _ = recv_until(ws, lambda m: m["type"] in ("ready", "error"))
    assert ready["type"] == "ready", ready
    frame, _ = recv_until(ws, lambda m: m["type"] == "frame")
    return frame


def test_qwen3_figures_come_from_the_config(client):
    with client.websocket_connect("/ws") as ws:
        f = open_kv(ws)
    m = f["header"]["meta"]
    assert (m["n_layers"], m["n_heads"], m["n_kv_heads"], m["d_head"]) == (28, 16, 8, 128)
    assert m["dtype"] == "bf16" and m["bytes_per_number"] == 2 and not m["changed"]
    assert m["param_count"] == 596_049_920
    fig = m["figures"]
    per_token = {arm: fig[arm]["bytes_per_token"] for arm in fig}
    assert per_token == {"mha": 224 * KIB, "gqa": 112 * KIB, "mqa": 14 * KIB, "mla": 31.5 * KIB}
    assert fig["gqa"]["numbers_per_layer"] == 2 * 8 * 128 and fig["mla"]["numbers_per_layer"] == 576
    assert fig["gqa"]["full_context"] == 4.375 * GIB and m["n_ctx"] == 40_960
    # the article's batch, 50 × 1,000 tokens: 5.34 GiB, double with MHA
    assert m["article"] == {"batch": 50, "length": 1000}
    assert fig["gqa"]["article"] / GIB == pytest.approx(5.34, abs=0.005)
    assert fig["mha"]["article"] == 2 * fig["gqa"]["article"] and fig["mha"]["vs_gqa"] == 2
    # the sliders' defaults are the article's batch too
    assert (m["length"], m["batch"]) == (1000, 50)
    assert fig["gqa"]["batch_total"] == fig["gqa"]["article"]


def test_sliders_change_the_figures(client):
    with client.websocket_connect("/ws") as ws:
        open_kv(ws)
        send(ws, {"type": "set", "params": {"length": 40_960, "batch": 2}})  # live: no rebuild
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        fig = f["header"]["meta"]["figures"]
        assert fig["gqa"]["per_sequence"] == 4.375 * GIB
        assert fig["gqa"]["batch_total"] == 2 * 4.375 * GIB
        send(ws, {"type": "set", "params": {"dtype": "f32", "n_layers": 14, "n_kv_heads": 4}})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        m = f["header"]["meta"]
        assert m["changed"] and m["bytes_per_number"] == 4
        assert m["figures"]["gqa"]["bytes_per_token"] == 2 * 14 * 4 * 128 * 4
        assert m["figures"]["mla"]["bytes_per_token"] == (512 + 64) * 14 * 4
        send(ws, {"type": "set", "params": {"n_kv_heads": 3}})  # 16 heads do not split by 3
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["field"] == "n_kv_heads"


def test_a_live_decode_holds_exactly_the_bytes_the_config_computes(client):
    with client.websocket_connect("/ws") as ws:
        f0 = open_kv(ws, {"decode_batch": 2})
        live0 = f0["header"]["meta"]["live"]
        assert {arm: live0[arm]["rows"] for arm in live0} == dict.fromkeys(live0, PROMPT)
        msgs = step(ws, 5)
    f = frames(msgs)[-1]
    m = f["header"]["meta"]
    rows = scalar_rows(msgs)
    for arm in ("mha", "gqa", "mqa", "mla"):
        live = m["live"][arm]
        assert live["rows"] == PROMPT + 5 and live["batch"] == 2  # a row a token
        # measured: cache.nbytes / (rows × sequences) = the config's bytes per token, which
        # for the small model's cache is the big shape's (same layers, KV heads, d_head)
        assert live["per_token"] == live["config_per_token"] == m["figures"][arm]["bytes_per_token"]
        assert live["nbytes"] == live["per_token"] * (PROMPT + 5) * 2
        assert rows[5][f"cache_bytes.{arm}"] == live["nbytes"]
        assert rows[3][f"cache_bytes.{arm}"] == live["per_token"] * (PROMPT + 3) * 2
    assert m["live"]["gqa"]["per_token"] == 112 * KIB
    assert m["max_rows"] == PROMPT + NEW_TOKENS
    # layer 0's cache drawn to scale: a row a cached token, numbers pooled by 16 (4096 / 256)
    pool = m["picture_pool"]
    assert pool == 16
    widths = {arm: f["tensors"][f"cache.{arm}"].shape for arm in m["live"]}
    assert widths == {
        "mha": (PROMPT + 5, 2 * 16 * 128 // pool),
        "gqa": (PROMPT + 5, 2 * 8 * 128 // pool),
        "mqa": (PROMPT + 5, 2 * 1 * 128 // pool),
        "mla": (PROMPT + 5, 576 // pool),
    }


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_measured_bytes_follow_the_number_type(client, dtype):
    with client.websocket_connect("/ws") as ws:
        open_kv(ws, {"dtype": dtype, "n_layers": 4})
        f = frames(step(ws, 2))[-1]
    m = f["header"]["meta"]
    size = {"f32": 4, "f16": 2}[dtype]
    assert m["live"]["mqa"]["per_token"] == 2 * 4 * 1 * 128 * size
    assert m["live"]["mla"]["per_token"] == (512 + 64) * 4 * size


def test_a_fork_replays_the_decode_to_the_same_rows():
    p, cpu = Params(n_layers=2), torch.device("cpu")
    lab = KVCacheLab(p, 5, cpu)
    for _ in range(3):
        lab.step(False)
    fork = KVCacheLab(p, 5, cpu)
    fork.load_state_dict(lab.state_dict())
    a, b = lab.step(True), fork.step(True)
    assert a.scalars == b.scalars and a.scalars["rows"] == PROMPT + 4
    assert all(x.data.equal(y.data) for x, y in zip(a.tensors, b.tensors, strict=True))
