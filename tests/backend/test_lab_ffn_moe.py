"""The `ffn-moe` lab: four FFN arms in lockstep; the MoE arm's load, routes and parameter
counts; the balancing loss as a live switch, and the collapse it prevents (on the trained
model with the lab's defaults)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.labs.ffn_moe import FFNMoELab, Params
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

LABELS = ["ReLU", "GELU", "SwiGLU", "MoE"]


def test_four_arms_train_and_the_moe_arm_streams_its_load(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "ffn-moe", {"steps": 100})
        assert ready["params"]["balance"] is True and ready["params"]["text"] == "en"
        msgs = step(ws, 25)
        rows = scalar_rows(msgs)
        for s in range(1, 26):
            assert {f"arm.{i}.loss" for i in range(4)} <= set(rows[s])
            load = [rows[s][f"arm.3.load.1.{e}"] for e in range(8)]
            assert sum(load) == pytest.approx(1.0)  # every routed slot lands somewhere
            assert rows[s]["arm.3.top2.1"] == pytest.approx(sum(sorted(load)[-2:]))
            assert rows[s]["arm.3.balance.1"] >= 1.0 - 1e-6  # E·Σ f·P ≥ 1, 1 when even
        for i in range(4):
            assert rows[25][f"arm.{i}.val_loss"] < rows[1][f"arm.{i}.loss"], i
        assert {"arm.0.dead.0", "arm.0.dead.1", "arm.2.dead.1", "arm.3.dead.0"} <= set(rows[25])
        assert "arm.3.dead.1" not in rows[25]  # the MoE layer has no dense units
        f = frames(msgs)[-1]
        meta = f["header"]["meta"]
        assert [a["label"] for a in meta["arms"]] == LABELS
        T = len(meta["tokens"])
        chosen, gates = f["tensors"]["arm.3.route.1.chosen"], f["tensors"]["arm.3.route.1.gates"]
        assert chosen.shape == gates.shape == (T, 2)
        assert np.all((chosen >= 0) & (chosen < 8)) and np.all(chosen[:, 0] != chosen[:, 1])
        assert np.allclose(gates.sum(1), 1.0, atol=1e-5)
        moe = meta["arms"][3]
        assert moe["active_param_count"] < moe["param_count"]
        assert moe["param_count"] - moe["active_param_count"] == 6 * 3 * 32 * 32  # 6 idle experts
        assert meta["arms"][0]["active_param_count"] == meta["arms"][0]["param_count"]
        assert meta["silu_min"]["y"] == pytest.approx(-0.27846, abs=1e-5)
        assert meta["qwen3"] == {"d_ff": 3072, "d_model": 1024, "ratio": 3.0}
        ds = meta["deepseek_v3"]
        assert round(ds["total"] / 1e9) == 671 and round(ds["active"] / 1e9) == 38
        assert (ds["n_experts"], ds["top_k"], ds["shared"], ds["dense_layers"]) == (256, 8, 1, 3)
        assert f["tensors"]["act_curves"].shape == (3, len(f["tensors"]["act_xs"]))

        send(ws, {"type": "set", "params": {"balance": False}})  # live: no restart
        msg, _ = recv_until(ws, lambda m: m["type"] == "params")
        assert msg["params"]["balance"] is False
        more = scalar_rows(step(ws, 1))
        assert min(more) == 26  # the same run goes on


@pytest.mark.slow
def test_without_balancing_the_load_collapses_onto_two_experts_and_evens_out_with_it():
    """The lab's defaults (seed 0): balancing off for 100 steps, then on for 50."""
    torch.set_num_threads(1)
    lab = FFNMoELab(Params(balance=False), 0, torch.device("cpu"))
    off, on = [], []
    for _ in range(100):
        off.append(lab.step(False).scalars["arm.3.top2.1"])
    lab.update_live(Params(balance=True))
    for _ in range(50):
        on.append(lab.step(False).scalars["arm.3.top2.1"])
    collapsed, even = np.mean(off[25:]), np.mean(on[25:])
    assert collapsed > 0.65  # two of 8 experts take over 65% of the slots (even: 25%)
    assert even < 0.4
    assert max(off[25:]) > 0.75
