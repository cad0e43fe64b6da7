"""The `positional-encoding` lab: its numerical checks, and a websocket conversation."""

from __future__ import annotations

import math

import torch

from backend.labs import positional_encoding as pe_lab
from models import positional as pos
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


def test_checks_are_rounding_small_and_the_permutation_is_exact():
    pe = pos.sinusoidal_table(64, 64)
    assert pe_lab.offset_error(pe @ pe.T) < 1e-4  # entries up to 32 in float32
    r = pos.sinusoidal_rotation(4, 64)
    assert pe_lab.rotation_error(pe, r, 4) < 1e-5
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 16, generator=g)
    _, _, s = pe_lab.rope_scores(q, k, 32, 10000.0)
    assert s.shape == (32, 32)
    for o in (-5, 0, 7):
        d = s.diagonal(o)
        assert (d - d[0]).abs().max() < 1e-4  # score(m, n) depends on m − n only
    assert (s.diagonal(3)[0] - s.diagonal(-3)[0]).abs() > 1e-3  # direction matters

    a, b = pe_lab.nopos_outputs(0, "none")
    assert a.shape == (3, 8)
    # 狗追猫 = 猫追狗 with rows swapped: equal to float rounding (attention sums the keys in
    # another order), far below the 0.1 that positions make below
    torch.testing.assert_close(b, a[list(pe_lab.PERM)], rtol=0, atol=1e-5)
    wa, wb = pe_lab.nopos_outputs(0, "learned")
    assert (wb - wa[list(pe_lab.PERM)]).abs().max() > 0.1  # positions break the symmetry


def test_snapshot_checks_and_norms(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "positional-encoding", {"n_ctx": 32, "d_model": 16, "offset": 3})
        assert ready["params"]["task"] == "sort"
        send(ws, {"type": "seek", "step": 0})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        t, meta = f["tensors"], f["header"]["meta"]
        assert t["pe"].shape == (32, 16) and t["pe_sim"].shape == (32, 32)
        assert t["rotation"].shape == (16, 16) and t["rope_scores"].shape == (32, 32)
        assert t["rope_q"].shape == (32, 8, 2)
        assert list(t["pe"][0]) == [0.0, 1.0] * 8  # sin 0, cos 0
        c = meta["checks"]
        assert c["rotation_error"] < 1e-5 and c["offset_error"] < 1e-4 and c["rope_error"] < 1e-4
        assert c["perm_error"] < 1e-6 < 0.1 < c["withpos_diff"]
        e, e_scaled, p = (float(v) for v in t["norms"])
        assert t["norms"].shape == (3,)
        assert abs(e - 1) < 0.15  # std 1/√d: norm ≈ 1
        assert abs(e_scaled / e - 4) < 1e-4  # × √16
        assert abs(p - math.sqrt(8)) < 1e-4  # |PE(p)| = √(d/2)
        assert meta["gpt"]["n_ctx"] == 17 and meta["gpt"]["task"] == "sort"
        assert t["hook_pos_embed"].shape == (17, 64) and t["pos_sim"].shape == (17, 17)


def test_training_the_small_gpt_moves_its_position_embeddings(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "positional-encoding", {"task": "reverse", "seq_len": 4})
        msgs = step(ws, 30)
        rows = scalar_rows(msgs)
        assert set(rows[30]) >= {"loss", "accuracy", "seq_accuracy"}
        assert rows[30]["loss"] < rows[1]["loss"]
        fs = frames(msgs)
        first, last = fs[0]["tensors"]["hook_pos_embed"], fs[-1]["tensors"]["hook_pos_embed"]
        assert first.shape == last.shape == (9, 64)
        assert abs(last - first).max() > 0.01

        # A live slider recomputes the static picture without resetting training.
        send(ws, {"type": "set", "params": {"d_model": 32, "offset": 2}})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        assert f["step"] == 30 and f["tensors"]["pe"].shape == (64, 32)
        assert f["header"]["meta"]["offset"] == 2

        send(ws, {"type": "set", "params": {"d_model": 33}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and "even" in err["message"]
