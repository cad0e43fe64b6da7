"""The `norms` lab: its arms in lockstep over the websocket, the gradient at init as the
waterfall's first column, per-layer attention statistics, the cited 222.2, and the story
the page tells, on every seed and thread count: at step 120 post-norm without warm-up is still
at chance where pre-norm has solved the task, and a warm-up lets post-norm train by step 300
(without one, when it leaves chance depends on the seed and the CPU)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from backend.labs.norms import CITED, EVAL_EVERY, N_STATS, NormsLab, Params
from models.norm_stats import attention_stats
from tests.trained import trained_outcome
from tests.wsutil import frames, open_lab, scalar_rows, step

SMALL = {"n_layers": 2, "d_model": 16, "seq_len": 3, "batch": 8}
CHANCE = math.log(10)  # copy's answers: one of 10 symbols


def test_four_placements_step_in_lockstep_with_their_pictures(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "norms", SMALL)
        assert ready["params"]["compare"] == "placement" and ready["params"]["warmup"] == 0
        msgs = step(ws, EVAL_EVERY)
    rows = scalar_rows(msgs)
    for s in range(1, EVAL_EVERY + 1):
        assert {f"arm.{i}.loss" for i in range(4)} <= set(rows[s])
        assert {f"arm.{i}.grad_norm.blocks.1" for i in range(4)} <= set(rows[s])
    for i in range(4):  # the first evaluation: accuracy, logit, entropy
        assert {"seq_acc", "max_logit", "entropy"} <= {
            k.split(".", 2)[2] for k in rows[EVAL_EVERY] if k.startswith(f"arm.{i}.")
        }
    f = frames(msgs)[-1]
    meta = f["header"]["meta"]
    assert [a["label"] for a in meta["arms"]] == ["pre", "post", "OLMo-2", "sandwich"]
    assert [a["placement"] for a in meta["arms"]] == ["pre", "post", "olmo2", "sandwich"]
    assert meta["cited"] == CITED and CITED["max_logit"] == 222.2 and CITED["layer"] == 4
    for i, arm in enumerate(meta["arms"]):
        assert len(arm["max_logit"]) == len(arm["entropy"]) == len(arm["qk_cap"]) == 2
        assert arm["stages"] == ["embed", "blocks.0", "blocks.1", "unembed"]
        assert len(arm["init_grad"]) == len(arm["grad_now"]) == 4
        assert all(0 < h <= meta["uniform_entropy"] + 1e-6 for h in arm["entropy"])
        ent = f["tensors"][f"arm.{i}.head_entropy"]
        assert ent.shape == (2, 4)  # [layers, heads]
        assert np.allclose(ent.mean(1), arm["entropy"], atol=1e-5)
        assert f["tensors"][f"arm.{i}.grad_norm"].shape == (4,)


def test_step_zero_streams_the_gradient_at_init_and_forks_see_the_same():
    lab = NormsLab(Params(**SMALL), 0, torch.device("cpu"))
    snap = lab.snapshot()
    for i, arm in enumerate(lab.arm_list):
        init = [snap.scalars[f"arm.{i}.grad_norm.{s}"] for s, _ in arm.stages]
        assert init == lab.init_grad[i] and all(g > 0 for g in init)
        assert all(p.grad is None for p in arm.model.parameters())  # nothing left behind
    # on the fixed held-out batch: a second lab (a fork rebuilds the same init) reads the same
    again = NormsLab(Params(**SMALL), 0, torch.device("cpu"))
    assert again.init_grad == lab.init_grad


def test_compare_norm_and_qk_norm_build_two_arms_of_the_chosen_placement():
    lab = NormsLab(Params(**SMALL, compare="norm", placement="post"), 0, torch.device("cpu"))
    assert [(a.model.cfg.norm, a.model.cfg.norm_placement) for a in lab.arm_list] == [
        ("layernorm", "post"),
        ("rmsnorm", "post"),
    ]
    lab = NormsLab(Params(**SMALL, compare="qk_norm"), 0, torch.device("cpu"))
    meta = lab.snapshot().meta["arms"]
    assert [a["label"] for a in meta] == ["QK-norm off", "QK-norm on"]
    assert meta[0]["qk_cap"] == [None, None]
    d = 16 // 4
    assert meta[1]["qk_cap"] == pytest.approx([math.sqrt(d)] * 2)  # gains 1 at init
    assert all(m <= c + 1e-5 for m, c in zip(meta[1]["max_logit"], meta[1]["qk_cap"], strict=True))


def test_bad_heads_are_refused_with_the_field():
    with pytest.raises(ValueError, match="split evenly"):
        Params(d_model=32, n_heads=3)


def test_the_picture_shows_the_last_evaluation_and_a_loaded_run_is_measured_again():
    """Between evaluations a frame carries the attention statistics measured at the last
    one (its step named), the same numbers its scalars streamed; another run's state loaded
    is measured afresh from its weights (not this run's picture)."""
    lab = NormsLab(Params(**SMALL), 0, torch.device("cpu"))
    for _ in range(EVAL_EVERY - 1):
        lab.step(False)
    at_eval = lab.step(True)
    for _ in range(EVAL_EVERY // 2 - 1):
        lab.step(False)
    later = lab.step(True)  # half-way to the next evaluation
    for i, (a, b) in enumerate(zip(at_eval.meta["arms"], later.meta["arms"], strict=True)):
        assert a["stats_step"] == b["stats_step"] == EVAL_EVERY
        assert b["max_logit"] == a["max_logit"] and b["entropy"] == a["entropy"]
        assert max(a["max_logit"]) == pytest.approx(at_eval.scalars[f"arm.{i}.max_logit"])
        assert b["grad_now"] != a["grad_now"]  # the gradients are the last step's
    other = NormsLab(Params(**SMALL), 1, torch.device("cpu"))
    for _ in range(12):
        other.step(False)
    lab.load_state_dict(copy.deepcopy(other.state_dict()))  # (it shares the live tensors)
    arms = lab.snapshot().meta["arms"]
    for i, arm in enumerate(lab.arm_list):
        assert arms[i]["stats_step"] == 12
        assert arms[i]["max_logit"] == attention_stats(arm.model, lab.eval_x[:N_STATS]).max_logit


class _PreAndPost(NormsLab):
    """The placement comparison's first two arms, pre-norm and post-norm, alone: the arms
    train in lockstep on the same batches, so they are the page's arms at half the cost."""

    def arms(self):
        return super().arms()[:2]


@trained_outcome
def test_without_warm_up_post_norm_stays_at_chance_where_pre_norm_solves_copy(seed):
    """The defaults' story (6 layers, AdamW 3e-3, no warm-up) at step 120, on every seed and
    thread count: pre-norm has solved copy (measured: exact by step 80-100), post-norm is
    still guessing (it leaves chance after step 200 at the earliest)."""
    lab = _PreAndPost(Params(), seed, torch.device("cpu"))
    for _ in range(119):
        lab.step(False)
    s = lab.step(False).scalars
    got = {
        n: (s[f"arm.{i}.held_loss"], s[f"arm.{i}.seq_acc"]) for i, n in enumerate(["pre", "post"])
    }
    assert got["pre"][1] > 0.95 and got["pre"][0] < 0.3, got
    assert got["post"][1] == 0.0 and got["post"][0] > 0.95 * CHANCE, got  # still guessing


class _PostOnly(NormsLab):
    """compare=norm's first arm alone (post-norm LayerNorm): the arms train in lockstep on the
    same batches, so it is the arm the page shows, at half the cost."""

    def arms(self):
        return super().arms()[:1]


def _post_alone(seed: int, steps: int, **params) -> dict[str, float]:
    lab = _PostOnly(Params(compare="norm", placement="post", **params), seed, torch.device("cpu"))
    for _ in range(steps - 1):
        lab.step(False)
    s = lab.step(False).scalars
    return {k.rsplit(".", 1)[-1]: v for k, v in s.items() if k.endswith(("seq_acc", "held_loss"))}


@trained_outcome
def test_a_warm_up_lets_post_norm_train(seed):
    """Post-norm alone, with a 100-step warm-up to the same learning rate: it has solved copy
    by step 300 on every seed and thread count (measured: exact at 220-240). Cold, it has not
    left chance by step 200 on any of them; when it leaves chance after that depends on the
    seed and the CPU (seq_acc at 300 read 0.0 to 0.98 across seeds and machines), so that
    is not asserted."""
    warm = _post_alone(seed, 300, warmup=100)
    assert warm["seq_acc"] > 0.95 and warm["held_loss"] < 0.1, warm
    cold = _post_alone(seed, EVAL_EVERY * 10)  # step 200
    assert cold["seq_acc"] < 0.1 and cold["held_loss"] > 0.8 * CHANCE, cold
