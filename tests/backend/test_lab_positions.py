"""The `positions` lab over the websocket: five arms in lockstep on the lag task, each
scored by position at the test length every 25 steps; the RoPE arm's layout check (the
converted model agrees to rounding, the mixed one does not); RoPE's wavelengths in meta; a
test length shorter than the train length is refused and the session keeps running."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from backend.labs.positions import Params, PositionsLab
from tests.trained import across_runs
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

LABELS = ["NoPE", "Sinusoidal", "Learned", "RoPE", "ALiBi"]
SMALL = {"d_model": 32, "train_len": 16, "test_len": 64, "lr": 1e-2, "warmup": 5}


def test_five_arms_step_together_and_are_scored_by_position(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "positions", SMALL)
        assert ready["params"]["lag"] == 2 and ready["params"]["causal"] is True
        msgs = step(ws, 25)
    rows = scalar_rows(msgs)
    for s in range(1, 26):
        assert {f"arm.{i}.loss" for i in range(5)} <= set(rows[s])
        assert rows[s]["loss"] == np.mean([rows[s][f"arm.{i}.loss"] for i in range(5)])
    for i in range(5):
        assert rows[25][f"arm.{i}.loss"] < rows[1][f"arm.{i}.loss"], i
        assert {f"arm.{i}.acc_in", f"arm.{i}.acc_past"} <= set(rows[25])  # held out, at 25
        assert f"arm.{i}.acc_in" not in rows[24]
    f = frames(msgs)[-1]
    meta = f["header"]["meta"]
    assert [a["label"] for a in meta["arms"]] == LABELS
    assert [a["scheme"] for a in meta["arms"]] == ["none", "sinusoidal", "learned", "rope", "alibi"]
    assert (meta["train_len"], meta["test_len"], meta["chance"]) == (16, 64, 0.1)
    assert 0.1 < meta["bag_accuracy"] < 0.3  # guessing each sequence's most frequent symbol
    for i, a in enumerate(meta["arms"]):
        curve = f["tensors"][f"arm.{i}.acc_by_pos"]
        assert curve.shape == (64,)  # one accuracy per test position
        assert np.isnan(curve[:3]).all() and not np.isnan(curve[3:]).any()  # graded from lag+1
        assert math.isclose(a["acc_in"], float(np.nanmean(curve[:16])), rel_tol=1e-6)
        assert math.isclose(rows[25][f"arm.{i}.acc_past"], float(curve[16:].mean()), rel_tol=1e-6)
    # Learned: no gradient ever reached rows 16..63 of its table, so at 25 steps it is
    # already better inside L than past it.
    assert meta["arms"][2]["acc_in"] > meta["arms"][2]["acc_past"]
    check = meta["arms"][3]["layout_check"]
    assert (check["layout"], check["other"]) == ("rotate_half", "interleaved")
    assert check["max_abs_diff"] < 1e-5 * check["max_abs_logit"]
    assert check["mixed_max_abs_diff"] > 0.1
    assert check["converted"]["output"] == check["trained"]["output"]
    assert len(check["trained"]["output"]) == len(check["input"]) == 16
    assert len(meta["wavelengths"]) == 4  # d_head 8: four rotating pairs
    assert meta["slow_pairs"] == sum(w > 16 for w in meta["wavelengths"])


def test_a_test_length_below_the_train_length_is_refused(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "positions", SMALL)
        send(ws, {"type": "set", "params": {"test_len": 16, "train_len": 32}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and err["field"].startswith("test_len"), err
        step(ws, 1)  # the session kept its params and runs on


@pytest.mark.slow  # six trainings of 75 steps
def test_mixing_layouts_breaks_a_trained_rope_arm_and_converting_does_not():
    def layout_check(seed: int) -> dict:
        lab = PositionsLab(Params(**SMALL, rope_layout="interleaved"), seed, torch.device("cpu"))
        for _ in range(75):
            lab.step(False)
        return lab.snapshot().meta["arms"][3]["layout_check"]

    # a trained outcome: on every seed and thread count (tests/trained.py)
    runs = across_runs(layout_check)
    for run, c in runs.items():
        assert c["other"] == "rotate_half"
        trained, converted, mixed = c["trained"], c["converted"], c["mixed"]
        assert trained["acc"] > 0.9, (run, trained)
        assert abs(converted["loss"] - trained["loss"]) < 1e-5
        assert mixed["loss"] > trained["loss"] + 0.5, (run, c)
        assert mixed["acc"] < trained["acc"] - 0.3, (run, c)
    check = runs[(0, 1)]  # seed 0, one thread: the example the page shows
    mixed = check["mixed"]
    graded = check["graded"]
    wrong = [o != t for o, t, g in zip(mixed["output"], check["target"], graded, strict=True) if g]
    assert any(wrong)  # the example's output, as the page shows it, is visibly broken
