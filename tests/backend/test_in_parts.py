"""Work in parts (backend/in_parts.py): an evaluation or a text sample too long for one step
is spread over the next steps on a frozen copy of the model, so no frame waits behind it,
and its result is still the model's at the step it was asked."""

from __future__ import annotations

import copy
import math
from collections import defaultdict

import pytest
import torch
from torch import nn

import backend.labs.gpt as gpt_lab
from backend.in_parts import AT_ONCE_STEPS, MAX_PART_STEPS, MAX_PARTS, frozen_copy, parts_for
from backend.labs._gpt_params import Params as GPTParams
from backend.labs.base import LabParams
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab

CPU = torch.device("cpu")


class Fit(TrainingLab):
    """y = x·w: a linear model whose held-out loss is asked every 4 steps, in 5 parts."""

    id = "fit-in-parts"
    Params = LabParams
    title = {"zh": "拟合", "en": "Fit"}
    eval_every = 4
    in_parts = True

    def setup(self) -> None:
        self.held_x = torch.randn(30, 3, generator=torch.Generator().manual_seed(1))
        self.held_y = self.held_x @ torch.tensor([[1.0], [-2.0], [0.5]])
        self.asked: list[int] = []

    def arms(self) -> list[ArmSpec]:
        return [ArmSpec("fit", lambda: nn.Linear(3, 1), OptimConfig("sgd", lr=0.1), 0)]

    def batch(self, gen: torch.Generator):
        x = torch.randn(8, 3, generator=gen)
        return x, x @ torch.tensor([[1.0], [-2.0], [0.5]])

    def loss(self, arm: Arm, batch):
        x, y = batch
        return ((arm.model(x) - y) ** 2).mean()

    def evaluate(self, arm: Arm) -> dict[str, float]:
        self.asked.append(self.t)
        with torch.no_grad():
            return {"held": float(((arm.model(self.held_x) - self.held_y) ** 2).mean())}

    def evaluate_in_parts(self, arm: Arm):
        return self._parts(arm) if self.in_parts else None

    def _parts(self, arm: Arm):
        self.asked.append(self.t)
        model = frozen_copy(arm.model)
        total = 0.0
        for i, (x, y) in enumerate(zip(self.held_x.chunk(5), self.held_y.chunk(5), strict=True)):
            if i:
                yield
            with torch.no_grad():
                total += float(((model(x) - y) ** 2).sum())
        return {"held": total / len(self.held_x)}


def _fit(in_parts: bool) -> tuple[Fit, list[dict[str, float]]]:
    lab = Fit(LabParams(), 0, CPU)
    lab.in_parts = in_parts
    rows = [lab.step(False).scalars for _ in range(13)]
    return lab, rows


def test_an_evaluation_in_parts_is_the_models_at_the_step_it_was_asked():
    whole, rows_whole = _fit(False)
    parted, rows_parted = _fit(True)
    assert whole.asked == [4, 8, 12]
    assert parted.asked == [4, 12]  # none asked at 8: the one asked at 4 was under way
    at_once = {i + 1: r["held"] for i, r in enumerate(rows_whole) if "held" in r}
    in_parts = {i + 1: r["held"] for i, r in enumerate(rows_parted) if "held" in r}
    assert list(at_once) == [4, 8, 12]
    assert list(in_parts) == [8]  # the fifth part's step; 12's is still under way
    assert in_parts[8] == pytest.approx(at_once[4], rel=1e-6)  # though the model trained on
    assert rows_parted[4]["loss"] == rows_whole[4]["loss"]  # training is not touched


def test_a_saved_state_leaves_an_evaluation_under_way_behind():
    lab, _ = _fit(True)  # the one asked at step 12 is under way
    saved = Fit(LabParams(), 0, CPU)
    saved.load_state_dict(lab.state_dict())
    assert saved.arm.evaluating is None
    saved_rows = [saved.step(False).scalars for _ in range(4)]  # steps 14-17
    rows = [lab.step(False).scalars for _ in range(4)]
    assert not any("held" in r for r in saved_rows)  # nothing half-done carried over
    assert ["held" in r for r in rows] == [False, False, True, False]  # the source's, at 16


def test_a_fork_finishes_the_evaluation_under_way_and_both_runs_report_it():
    """Before a fork or a move (Session._copy_state(finish=True)): the numbers of the
    evaluation asked at step 12 go out with step 14 in the source and in its copy."""
    untouched, _ = _fit(True)
    held_at_16 = [untouched.step(False).scalars for _ in range(4)][2]["held"]
    lab, _ = _fit(True)
    lab.finish_parts()
    assert lab.arm.evaluating is None
    fork = Fit(LabParams(), 0, CPU)
    fork.load_state_dict(copy.deepcopy(lab.state_dict()))
    rows = [lab.step(False).scalars for _ in range(4)]  # steps 14-17
    fork_rows = [fork.step(False).scalars for _ in range(4)]
    assert rows == fork_rows  # the copy steps as the source does, the evaluation's included
    assert ["held" in r for r in rows] == [True, False, False, False]
    assert rows[0]["held"] == held_at_16  # the model's at step 12, as the parts would have


def test_parts_grow_with_the_work_and_stop_at_the_cap():
    assert parts_for(0.1) == parts_for(AT_ONCE_STEPS) == 1  # a short pause: at once
    assert parts_for(AT_ONCE_STEPS + 0.1) == math.ceil((AT_ONCE_STEPS + 0.1) / MAX_PART_STEPS)
    assert parts_for(1000.0) == MAX_PARTS


# -- the gpt lab's text evaluation and sample ---------------------------------------------
SMALL_BATCH = {"data": "text-en", "n_ctx": 32, "batch": 4}  # 64 windows: 5.3 steps' time
PARTS = parts_for(64 / 4 / 3)  # its evaluation's parts (each under MAX_PART_STEPS)
WINDOWS = math.ceil(64 / PARTS)  # held-out windows a part
TOKENS = math.ceil(60 / PARTS)  # a sample's new tokens a part
SAMPLE_RUNS = math.ceil(60 / TOKENS)


def _gpt_run(monkeypatch, spread: bool, steps: int):
    """Steps of the text model at batch 4; each step's forwards on frozen copies, by size."""
    made = frozen_copy  # the real ones: a run before may have patched the lab's
    forwards: dict[int, list[tuple[int, int]]] = defaultdict(list)  # step -> [(B, T)]
    lab = None

    def counted(model):
        copied = made(model)
        copied.register_forward_pre_hook(lambda m, args: forwards[lab.t].append(args[0].shape))
        return copied

    monkeypatch.setattr(gpt_lab, "frozen_copy", counted)
    monkeypatch.setattr(gpt_lab, "parts_for", parts_for if spread else lambda cost: 1)
    monkeypatch.setattr(gpt_lab, "EVAL_SHARE", 1.0)  # every 25 steps at batch 4 (see below)
    lab = gpt_lab.GPTLab(GPTParams(**SMALL_BATCH), 0, CPU)
    frames = {}  # step -> its frame
    for _ in range(steps):
        frame = lab.step(True)
        frames[lab.t] = frame
    return lab, frames, forwards


def test_the_text_evaluation_is_spread_and_exact(monkeypatch):
    assert PARTS > 2
    steps = 50 + PARTS
    _, whole, _ = _gpt_run(monkeypatch, spread=False, steps=steps)
    lab, parted, forwards = _gpt_run(monkeypatch, spread=True, steps=steps)
    assert lab._parts() == PARTS
    vals = {t: f.scalars["val_loss"] for t, f in parted.items() if "val_loss" in f.scalars}
    at_once = {t: f.scalars["val_loss"] for t, f in whole.items() if "val_loss" in f.scalars}
    done = [25 + PARTS - 1, 50 + PARTS - 1]  # the step of each one's last part
    assert list(at_once) == [25, 50] and list(vals) == done
    assert vals[done[0]] == pytest.approx(at_once[25], rel=1e-5)
    assert vals[done[1]] == pytest.approx(at_once[50], rel=1e-5)
    assert parted[done[0] - 1].meta["eval"] == {}  # under way: nothing half-done is shown
    assert parted[done[0]].meta["eval"]["step"] == 25  # the page names the step it describes
    windows = {t: sum(b for b, _ in shapes if b > 1) for t, shapes in forwards.items()}
    assert max(windows.values()) <= WINDOWS  # a share of the 64 windows a step, never all
    assert sum(windows[t] for t in range(25, done[0] + 1)) == 64


def test_the_text_sample_is_spread_and_the_same_text(monkeypatch):
    steps = SAMPLE_RUNS + 2
    _, whole, _ = _gpt_run(monkeypatch, spread=False, steps=steps)
    _, parted, forwards = _gpt_run(monkeypatch, spread=True, steps=steps)
    first = whole[1].meta["sample"]
    assert first["step"] == 1
    assert "sample" not in parted[1].meta  # being written: the panel waits for it
    done = next(t for t, f in parted.items() if "sample" in f.meta)
    assert done == SAMPLE_RUNS and parted[done].meta["sample"] == first  # asked at 1, same words
    new_tokens = {t: sum(1 for b, _ in shapes if b == 1) for t, shapes in forwards.items()}
    assert max(new_tokens.values()) <= TOKENS and sum(new_tokens.values()) == 60


def test_the_sample_waits_for_an_evaluation_under_way(monkeypatch):
    """Both are due at step 100: one piece of work in parts a step, the evaluation's first;
    the sample's parts wait while a later evaluation runs too."""
    _, frames, forwards = _gpt_run(monkeypatch, spread=True, steps=170)
    for t, shapes in forwards.items():
        assert not (any(b > 1 for b, _ in shapes) and any(b == 1 for b, _ in shapes)), t
    evaluated = 100 + PARTS - 1  # the evaluation asked at 100, in parts up to this step
    assert "val_loss" in frames[evaluated].scalars
    steps = [frames[t].meta["sample"]["step"] for t in range(SAMPLE_RUNS, 171)]
    assert sorted(set(steps)) == [1, evaluated + 1]  # asked after it; nothing half-done shown
    written = [t for t in range(evaluated + 1, 171) if any(b == 1 for b, _ in forwards[t])]
    assert len(written) == SAMPLE_RUNS and written[-1] > 125  # it waited for 125's too


def test_a_small_batch_evaluates_less_often_so_evaluations_stay_a_small_share():
    """The text's evaluation is a fixed forward pass: at batch 4 every 75 steps, not 25."""
    lab = gpt_lab.GPTLab(GPTParams(**SMALL_BATCH), 0, CPU)
    frames = {}
    for _ in range(75 + PARTS - 1):
        frame = lab.step(False)
        frames[lab.t] = frame
    evaluated = [t for t, f in frames.items() if "val_loss" in f.scalars]
    assert evaluated == [75 + PARTS - 1]  # asked at 75 (not 25, 50), done in its parts
    for batch in (1, 2, 4, 8, 9, 64, 256):
        lab.update_live(GPTParams(**{**SMALL_BATCH, "batch": batch}))
        every = lab.eval_every_now()
        assert every % 25 == 0 and lab._eval_cost() <= gpt_lab.EVAL_SHARE * every
        assert every == 25 or lab._eval_cost() > gpt_lab.EVAL_SHARE * (every - 25)
    assert lab.eval_every_now() == 25  # batch 256: as every batch of 9 or more
