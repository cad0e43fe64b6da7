"""The trainer's contract (backend/trainer.py, docs/trainer.md) on a toy lab: arms in lockstep
on the same batches, divergence per arm, scalar and tensor names, clipping, the schedule,
state that forks. The optimizer configs: tests/backend/test_optim.py."""

from __future__ import annotations

import asyncio
import copy
import math

import pytest
import torch
from pydantic_core import PydanticCustomError
from torch import nn

from backend.config import Settings
from backend.labs.base import LabError, LabInput, LabParams, TensorOut, param, validate_input
from backend.optim import OptimConfig
from backend.sessions import Session
from backend.trainer import Arm, ArmSpec, TrainingLab

CPU = torch.device("cpu")


class ToyParams(LabParams):
    lrs: list[float] = param([0.05, 0.05], zh="学习率", en="Learning rates", max_length=4)
    seeds: list[int] = param([0, 0], zh="种子", en="Seeds", max_length=4)
    noise: float = param(0.0, zh="噪声", en="Arm noise", ge=0, le=1)


class Toy(TrainingLab):
    """y = x·w + noise: a 3 → 1 linear model per arm, SGD at each arm's lr."""

    id = "toy"
    Params = ToyParams
    title = {"zh": "玩具", "en": "Toy"}

    def setup(self) -> None:
        self.seen: list[list[torch.Tensor]] = []  # per step: the batch each arm trained on
        self.w_true = torch.tensor([[1.0], [-2.0], [0.5]])

    def arms(self) -> list[ArmSpec]:
        p = self.params
        return [
            ArmSpec(f"arm{i}", lambda: nn.Linear(3, 1), OptimConfig("sgd", lr=lr), seed)
            for i, (lr, seed) in enumerate(zip(p.lrs, p.seeds, strict=True))
        ]

    def stages(self, model: nn.Module):
        return [("weight", [model.weight]), ("bias", [model.bias])]

    def batch(self, gen: torch.Generator):
        x = torch.randn(16, 3, generator=gen)
        self.seen.append([])
        return x, x @ self.w_true

    def loss(self, arm: Arm, batch):
        x, y = batch
        self.seen[-1].append(x)
        pred = arm.model(x)
        if self.params.noise:  # the arm's own randomness: its generator
            pred = pred + self.params.noise * torch.randn(pred.shape, generator=arm.generator)
        return ((pred - y) ** 2).mean()

    def picture(self, arm: Arm):
        return [TensorOut("w", arm.model.weight.detach()[0], "f32")], {"lr": arm.spec.optim.lr}


def toy(**params) -> Toy:
    torch.manual_seed(0)
    return Toy(ToyParams(**params), 0, CPU)


# -- lockstep -----------------------------------------------------------------------------
def test_every_arm_trains_on_the_same_batch_each_step():
    lab = toy(lrs=[0.05, 0.2, 0.01], seeds=[0, 1, 2])
    for _ in range(5):
        lab.step(False)
    assert len(lab.seen) == 5
    for batches in lab.seen:
        assert len(batches) == 3 and all(torch.equal(b, batches[0]) for b in batches)


def test_twin_arms_stay_identical():
    scalars = toy().step(False).scalars
    assert scalars["arm.0.loss"] == scalars["arm.1.loss"] == scalars["loss"]


# -- names --------------------------------------------------------------------------------
def test_one_arm_keeps_plain_names():
    lab = toy(lrs=[0.05], seeds=[0])
    frame = lab.step(True)
    assert set(frame.scalars) == {"loss", "grad_norm.weight", "grad_norm.bias"}
    assert [t.name for t in frame.tensors] == ["w"]
    assert frame.meta["lr"] == 0.05 and frame.meta["arms"] == [
        {"label": "arm0", "title": None, "diverged": False}
    ]


def test_several_arms_prefix_their_scalars_and_tensors_and_average_the_loss():
    lab = toy(lrs=[0.05, 0.1], seeds=[0, 1])
    frame = lab.step(True)
    s = frame.scalars
    assert set(s) == {"loss"} | {
        f"arm.{i}.{k}" for i in (0, 1) for k in ("loss", "grad_norm.weight", "grad_norm.bias")
    }
    assert s["loss"] == pytest.approx((s["arm.0.loss"] + s["arm.1.loss"]) / 2)
    assert [t.name for t in frame.tensors] == ["arm.0.w", "arm.1.w"]
    labels = [(a["label"], a["lr"]) for a in frame.meta["arms"]]
    assert labels == [("arm0", 0.05), ("arm1", 0.1)]  # each arm's picture meta in its entry


def test_grad_norms_are_each_stages_gradient_norm():
    lab = toy(lrs=[0.0], seeds=[0])  # lr 0: the gradient stays on the weights it was taken at
    s = lab.step(False).scalars
    assert s["grad_norm.weight"] == pytest.approx(float(lab.model.weight.grad.norm()))
    assert s["grad_norm.bias"] == pytest.approx(float(lab.model.bias.grad.norm()))


# -- divergence ---------------------------------------------------------------------------
def test_a_diverged_arm_stops_while_the_others_train_on():
    lab = toy(lrs=[0.05, 50.0], seeds=[0, 0])  # lr 50 on this quadratic blows up
    rows = [lab.step(False).scalars for _ in range(40)]
    gone = next(i for i, r in enumerate(rows) if "arm.1.diverged" in r)
    assert not math.isfinite(rows[gone]["arm.1.loss"])
    frozen = lab.arm_list[1].model.weight.detach().nan_to_num().clone()
    later = lab.step(False).scalars
    assert torch.equal(lab.arm_list[1].model.weight.detach().nan_to_num(), frozen)  # no step
    assert later["arm.1.diverged"] == 1.0 and "arm.1.loss" in later  # its last numbers stay
    assert all(math.isfinite(r["loss"]) for r in rows)  # the run goes on: arm 0's loss
    assert rows[-1]["loss"] == rows[-1]["arm.0.loss"] < rows[0]["arm.0.loss"]
    assert [a.diverged for a in lab.arm_list] == [False, True]


def _session_state(lrs: list[float], steps: int) -> str:
    async def run() -> str:
        session = Session(Toy, ToyParams(lrs=lrs, seeds=[0] * len(lrs)), 0, Settings(), "::1")
        await session.start()
        await session.step_n(steps)
        state = session.state
        await session.close()
        return state

    return asyncio.run(run())


def test_the_session_diverges_only_when_every_arm_has():
    assert _session_state([0.05, 50.0], 60) == "paused"
    assert _session_state([50.0, 80.0], 60) == "diverged"
    assert _session_state([50.0], 60) == "diverged"


# -- clipping and schedule ----------------------------------------------------------------
class Clipped(Toy):
    clip_norm = 0.5


def test_clipping_scales_the_gradient_and_reports_its_coefficient():
    torch.manual_seed(0)
    lab = Clipped(ToyParams(lrs=[0.1], seeds=[0]), 0, CPU)
    before = [p.detach().clone() for p in lab.model.parameters()]
    gen = torch.Generator()
    gen.set_state(lab.data_gen.get_state())
    x = torch.randn(16, 3, generator=gen)  # the batch the step will draw
    twin = copy.deepcopy(lab.model)
    ((twin(x) - x @ lab.w_true) ** 2).mean().backward()
    grads = [p.grad for p in twin.parameters()]
    total = float(torch.cat([g.flatten() for g in grads]).norm())
    s = lab.step(False).scalars
    assert total > 0.5 and s["clip_coef"] == pytest.approx(0.5 / total, rel=1e-5)
    for p, b, g in zip(lab.model.parameters(), before, grads, strict=True):
        assert torch.allclose(p.detach(), b - 0.1 * s["clip_coef"] * g, atol=1e-6)
    # the norms streamed are the gradient's own, before clipping
    assert s["grad_norm.weight"] == pytest.approx(float(grads[0].norm()), rel=1e-5)


class Scheduled(Toy):
    stream_lr = True

    def schedule(self, t: int) -> float:
        return 1.0 / (t + 1)


def test_the_schedule_sets_the_live_lr_every_step():
    torch.manual_seed(0)
    lab = Scheduled(ToyParams(lrs=[0.2], seeds=[0]), 0, CPU)
    lrs = [lab.step(False).scalars["lr"] for _ in range(4)]
    assert lrs == pytest.approx([0.2, 0.1, 0.2 / 3, 0.05])
    assert lab.opt.param_groups[0]["lr"] == pytest.approx(0.05)
    lab.update_live(ToyParams(lrs=[0.4], seeds=[0]))  # a live lr change keeps the schedule
    assert lab.step(False).scalars["lr"] == pytest.approx(0.4 / 5)


# -- state --------------------------------------------------------------------------------
def test_state_dict_holds_every_arms_model_optimizer_and_generator():
    lab = toy(lrs=[0.05, 0.1], seeds=[0, 1], noise=0.3)
    for _ in range(4):
        lab.step(False)
    fork = toy(lrs=[0.05, 0.1], seeds=[0, 1], noise=0.3)
    fork.load_state_dict(copy.deepcopy(lab.state_dict()))
    assert fork.t == lab.t == 4
    for _ in range(4):
        assert lab.step(False).scalars == fork.step(False).scalars


def test_an_old_single_model_state_still_loads():
    lab = toy(lrs=[0.05], seeds=[0])
    lab.step(False)
    old = {"model": lab.model.state_dict(), "opt": lab.opt.state_dict(), "t": 1}
    back = toy(lrs=[0.05], seeds=[0])
    back.load_state_dict(copy.deepcopy(old))
    assert torch.equal(back.model.weight, lab.model.weight) and back.t == 1


# -- declared input -----------------------------------------------------------------------
class Knob(LabInput):
    layer: int
    value: float = 0.0

    def model_post_init(self, _):
        if abs(self.value) > 10:
            raise PydanticCustomError("toy.err_range", "value past {limit}", {"limit": "10"})


def test_declared_input_is_refused_with_the_fields_path_and_its_key():
    assert validate_input(Knob, {"layer": 2}).layer == 2
    with pytest.raises(LabError) as bad:
        validate_input(Knob, {"layer": "two"})
    assert bad.value.field == "input.layer" and bad.value.code == "bad_message"
    with pytest.raises(LabError) as extra:
        validate_input(Knob, {"layer": 1, "colour": 3})
    assert extra.value.field == "input.colour"
    with pytest.raises(LabError) as keyed:
        validate_input(Knob, {"layer": 1, "value": 11})
    assert keyed.value.key == "toy.err_range" and keyed.value.values == {"limit": "10"}
    assert str(keyed.value) == "value past 10"


def test_a_fork_keeps_which_arms_have_diverged():
    lab = toy(lrs=[0.05, 50.0], seeds=[0, 1])
    for _ in range(30):
        lab.step(False)
    assert [a.diverged for a in lab.arm_list] == [False, True]
    fork = toy(lrs=[0.05, 50.0], seeds=[0, 1])
    fork.load_state_dict(copy.deepcopy(lab.state_dict()))
    assert [a.diverged for a in fork.arm_list] == [False, True]
    a, b = lab.step(False).scalars, fork.step(False).scalars
    assert a.keys() == b.keys() and a["loss"] == b["loss"] and b["arm.1.diverged"] == 1.0


# -- shared pictures, update size, stages of bare parameters, pictures spread over arms ----
class Shared(Toy):
    pictures_later = True

    def shared_picture(self):
        return [TensorOut("truth", self.w_true[:, 0], "f32")]


def _finished(frame):
    if frame.finish is not None:
        frame.finish()
    return [t.name for t in frame.tensors]


def test_the_shared_picture_is_in_every_frame_once_even_finished_later():
    torch.manual_seed(0)
    lab = Shared(ToyParams(lrs=[0.05, 0.1, 0.2], seeds=[0, 1, 2]), 0, CPU)
    want = ["arm.0.w", "arm.1.w", "arm.2.w", "truth"]
    assert _finished(lab.snapshot()) == want
    assert _finished(lab.step(True)) == want
    later = lab.step(True, later=True)
    assert later.finish is not None and later.tensors == []  # not drawn yet
    assert _finished(later) == want
    assert lab.step(False).tensors == []  # a frame not sent has no pictures at all
    one = Shared(ToyParams(lrs=[0.05], seeds=[0]), 0, CPU)
    assert _finished(one.step(True, later=True)) == ["w", "truth"]


class Sized(Toy):
    stream_update_size = True


def test_the_update_size_is_the_real_change_of_the_weights():
    torch.manual_seed(0)
    lab = Sized(ToyParams(lrs=[0.05, 0.3], seeds=[0, 1]), 0, CPU)
    for _ in range(3):
        before = [[p.detach().clone() for p in a.params] for a in lab.arm_list]
        s = lab.step(False).scalars
        for arm, old in zip(lab.arm_list, before, strict=True):
            delta = torch.cat(
                [(p.detach() - q).flatten() for p, q in zip(arm.params, old, strict=True)]
            )
            assert s[f"arm.{arm.index}.update_max"] == float(delta.abs().max())
            assert s[f"arm.{arm.index}.update_norm"] == pytest.approx(float(delta.norm()))
            assert arm.update_max == s[f"arm.{arm.index}.update_max"]
    assert not any("update" in k for k in toy().step(False).scalars)  # only when declared


def test_a_modules_own_parameters_form_a_stage():
    from models.stages import grad_stages

    class Point(nn.Module):
        def __init__(self):
            super().__init__()
            self.point = nn.Parameter(torch.zeros(2))

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.zeros(2))
            self.b = nn.Parameter(torch.zeros(()))
            self.head = nn.Linear(2, 1)

    point = Point()
    assert grad_stages(point) == [("point", [point.point])]
    pair = Pair()
    got = [(label, [id(p) for p in ps]) for label, ps in grad_stages(pair)]
    assert got == [
        ("params", [id(pair.w), id(pair.b)]),
        ("head", [id(pair.head.weight), id(pair.head.bias)]),
    ]


class Spread(Toy):
    """Three arms whose pictures say which thread drew them, and after which arm's update."""

    pictures_later = True

    def setup(self) -> None:
        super().setup()
        self.drawn: list[tuple[int, int, bool]] = []  # (arm, updates seen, on a helper)
        self.updates = 0

    def loss(self, arm: Arm, batch):
        self.updates += 1
        return super().loss(arm, batch)

    def picture(self, arm: Arm):
        import threading

        helper = threading.current_thread().name.startswith("picture")
        self.drawn.append((arm.index, self.updates, helper))
        w = arm.model.weight.detach()[0].clone()  # a copy: the weights as they are now
        return [TensorOut("w", w, "f32")], {"lr": arm.spec.optim.lr}


def _spread_run(later: bool) -> tuple[list[bytes], list[tuple[int, int, bool]]]:
    """Step as the session's worker does: a frame left unfinished is deferred to the next
    backward pass; the last is settled."""
    from backend import wire

    torch.manual_seed(0)
    lab = Spread(ToyParams(lrs=[0.05, 0.1, 0.2], seeds=[0, 1, 2]), 0, CPU)
    sent: list[bytes] = []
    for i in range(6):
        frame = lab.step(True, later=later)
        frame.step = i + 1

        def send(f=frame):
            if f.finish is not None:
                f.finish()
            sent.append(wire.encode(f, {}))

        if frame.finish is not None:
            lab.defer(send)
        else:
            send()
    lab.settle()
    return sent, lab.drawn


def test_several_arms_pictures_are_drawn_beside_the_next_arms_backward():
    beside, drawn = _spread_run(True)
    inline, drawn_inline = _spread_run(False)
    assert beside == inline  # byte for byte
    assert not any(helper for _, _, helper in drawn_inline)
    for step in range(5):  # the last step's frame is settled in line
        got = drawn[3 * step : 3 * step + 3]
        # arm i's picture beside arm i+1's backward (after i+1's loss: i + 2 updates of
        # this step's 3), the last arm's beside the next step's first backward
        assert got == [(0, 3 * step + 2, True), (1, 3 * step + 3, True), (2, 3 * step + 4, True)]
