"""The `optimizers` lab: five optimizers as arms in lockstep; torch's Adam defaults; Adam's
first step ≈ lr per coordinate, ≈ 3.16·lr (0.1/√0.001) without bias correction; Rosenbrock
solved by Adam; per-arm learning rates applied live; forks continue on the same noise."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from backend.labs.optimizers import LABELS, OPTIMIZERS, OptimizersLab, Params, torch_defaults
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

CPU = torch.device("cpu")
ADAM, NO_BIAS = OPTIMIZERS.index("adam"), OPTIMIZERS.index("adam_no_bias")


def make(**params) -> OptimizersLab:
    return OptimizersLab(Params(**params), 0, CPU)


def point(lab: OptimizersLab, i: int) -> list[float]:
    return lab.arm_list[i].model.point.tolist()


def test_torch_adam_defaults_read_from_torch():
    assert torch_defaults()["Adam"] == {"lr": 1e-3, "betas": [0.9, 0.999], "eps": 1e-8}
    lab = make(lr_mode="torch")
    group = lab.arm_list[ADAM].optimizer.param_groups[0]
    assert isinstance(lab.arm_list[ADAM].optimizer, torch.optim.Adam)
    assert (group["lr"], group["betas"], group["eps"]) == (1e-3, (0.9, 0.999), 1e-8)
    assert lab.arm_list[NO_BIAS].optimizer.param_groups[0]["lr"] == 1e-3
    meta = lab.snapshot().meta
    assert meta["torch_defaults"]["Adam"]["lr"] == 1e-3
    want = {"lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
    assert {k: meta["arms"][ADAM][k] for k in want} == want


@pytest.mark.parametrize("surface", ["valley", "rosenbrock", "mlp"])
def test_first_step_is_lr_with_bias_correction_and_3_16_lr_without(surface):
    lab = make(surface=surface)
    starts = [p.detach().clone() for p in lab.arm_list[ADAM].params]
    f = lab.step(True)
    lr = lab.arm_list[ADAM].spec.optim.lr
    assert lr == lab.arm_list[NO_BIAS].spec.optim.lr
    # Adam: m̂ = g, v̂ = g², a step of lr·g/(|g| + eps) ≈ lr on *every* coordinate.
    moved = torch.cat(
        [(p.detach() - s).flatten() for p, s in zip(lab.arm_list[ADAM].params, starts, strict=True)]
    )
    nonzero = moved[moved != 0].abs()
    assert nonzero.numel() > 0 and nonzero.max() / lr == pytest.approx(1.0, rel=1e-4)
    assert f.scalars[f"arm.{ADAM}.step_lr"] == pytest.approx(1.0, rel=1e-4)
    # Without bias correction: 0.1·g / √(0.001·g²) = 0.1/√0.001 = 3.1623 learning rates.
    assert f.scalars[f"arm.{NO_BIAS}.step_lr"] == pytest.approx(0.1 / math.sqrt(0.001), rel=1e-4)
    assert f.scalars[f"arm.{NO_BIAS}.step"] == pytest.approx(3.16228 * lr, rel=1e-4)
    arms = f.meta["arms"]
    assert arms[NO_BIAS]["first_step_lr"] == pytest.approx(3.16228, rel=1e-4)
    assert arms[ADAM]["first_step_lr"] == pytest.approx(1.0, rel=1e-4)
    assert [a["label"] for a in arms] == [LABELS[k] for k in OPTIMIZERS]
    # A snapshot (pause, a live change) still says how large the last update was.
    assert lab.snapshot().scalars[f"arm.{NO_BIAS}.step_lr"] == f.scalars[f"arm.{NO_BIAS}.step_lr"]


def test_on_the_valley_each_coordinate_moves_lr_and_3_16_lr():
    lab = make(surface="valley")
    (x0, y0) = point(lab, ADAM)
    lab.step(False)
    (xa, ya), (xn, yn) = point(lab, ADAM), point(lab, NO_BIAS)
    assert (xa - x0, y0 - ya) == pytest.approx((0.1, 0.1), rel=1e-4)  # downhill on both axes
    assert (xn - x0, y0 - yn) == pytest.approx((0.316228, 0.316228), rel=1e-4)


def test_arms_step_in_lockstep_on_one_shared_batch():
    lab = make(surface="mlp", noise=True, batch_size=8)
    seen: list[tuple[int, int]] = []
    loss = lab.loss
    lab.loss = lambda arm, batch: seen.append((arm.index, id(batch))) or loss(arm, batch)
    batches = []
    draw = lab.batch
    lab.batch = lambda gen: batches.append(draw(gen)) or batches[-1]
    # Every arm starts from the same weights (same seed): a fair race. Bitwise: the same
    # draws from the same generator.
    first = [torch.cat([p.flatten() for p in a.params]) for a in lab.arm_list]
    assert all(torch.equal(first[0], w) for w in first[1:])
    for _ in range(3):
        f = lab.step(False)
        assert {f"arm.{i}.loss" for i in range(5)} <= set(f.scalars)
    assert len(batches) == 3 and lab.t == 3
    assert [i for i, _ in seen] == [0, 1, 2, 3, 4] * 3
    assert len({b for _, b in seen[:5]}) == 1  # one batch object for the five arms
    assert len(batches[0]["x"]) == 8


def test_adam_reaches_rosenbrocks_minimum():
    lab = make(surface="rosenbrock")
    for _ in range(1000):
        f = lab.step(False)
    x, y = point(lab, ADAM)
    assert f.scalars[f"arm.{ADAM}.loss"] < 1e-4
    assert (x, y) == pytest.approx((1.0, 1.0), abs=0.01)


def test_a_per_arm_learning_rate_applies_live_and_keeps_the_state():
    lab = make(surface="valley", lr_mode="custom")
    for _ in range(3):
        lab.step(False)
    opt = lab.arm_list[ADAM].optimizer
    lab.update_live(Params(surface="valley", lr_mode="custom", adam_lr=0.02, sgd_lr=0.01))
    assert lab.arm_list[ADAM].optimizer is opt  # not rebuilt: m and v are kept
    assert opt.state[lab.arm_list[ADAM].params[0]]["step"] == 3
    f = lab.step(False)
    assert opt.param_groups[0]["lr"] == 0.02
    assert lab.arm_list[0].optimizer.param_groups[0]["lr"] == 0.01
    assert lab.arm_list[NO_BIAS].optimizer.param_groups[0]["lr"] == 0.1  # the others stay
    assert f.scalars[f"arm.{ADAM}.lr"] == 0.02
    assert f.scalars[f"arm.{ADAM}.step"] == pytest.approx(
        0.02 * f.scalars[f"arm.{ADAM}.step_lr"], rel=1e-6
    )
    # β's too: momentum's β1 goes into the SGD group, RMSProp's β2 is torch's alpha.
    lab.update_live(Params(lr_mode="custom", momentum_beta1=0.5, rmsprop_beta2=0.9))
    assert lab.arm_list[1].optimizer.param_groups[0]["momentum"] == 0.5
    assert lab.arm_list[2].optimizer.param_groups[0]["alpha"] == 0.9


def test_lr_modes_tuned_torch_custom():
    assert make(surface="rosenbrock").arm_list[0].spec.optim.lr == 0.002  # tuned
    assert make(surface="rosenbrock", lr_mode="torch").arm_list[2].spec.optim.lr == 0.01  # RMSprop
    assert make(lr_mode="custom", sgd_lr=0.5).arm_list[0].spec.optim.lr == 0.5


def test_one_arm_diverges_the_others_race_on():
    lab = make(surface="rosenbrock", lr_mode="custom", sgd_lr=0.1, momentum_lr=0.002)
    for _ in range(30):
        f = lab.step(False)
    assert lab.arm_list[0].diverged and f.scalars["arm.0.diverged"] == 1.0
    assert not any(a.diverged for a in lab.arm_list[1:])
    assert math.isfinite(f.scalars["loss"])  # the session goes on


def test_noise_is_shared_and_a_fork_continues_on_the_same_noise():
    lab = make(surface="valley", noise=True, noise_sigma=5.0)
    for _ in range(4):
        lab.step(False)
    fork = make(surface="valley", noise=True, noise_sigma=5.0)
    fork.load_state_dict(copy.deepcopy(lab.state_dict()))  # as the session forks
    a, b = lab.step(True), fork.step(True)
    assert a.scalars == b.scalars
    assert a.meta["arms"] == b.meta["arms"]
    # The noise changed the path: SGD's point differs from the noiseless run's.
    clean = make(surface="valley")
    for _ in range(5):
        clean.step(False)
    assert point(clean, 0) != point(lab, 0)


def test_websocket_frames_and_contour(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "optimizers", {"surface": "rosenbrock"})
        props = ready["schema"]["properties"]
        assert props["adam_lr"]["live"] is True and props["adam_beta2"]["widget"] == "hidden"
        msgs = step(ws, 5)
        f = frames(msgs)[-1]
        assert f["tensors"]["surface"].shape == (64, 64)
        meta = f["header"]["meta"]
        assert meta["extent"] == [[-2.0, 2.0], [-1.0, 3.0]] and meta["minimum"] == [1.0, 1.0]
        assert len(meta["arms"]) == 5
        rows = scalar_rows(msgs)
        assert sorted(rows) == [1, 2, 3, 4, 5]
        for i in range(5):
            assert {f"arm.{i}.x", f"arm.{i}.y", f"arm.{i}.loss", f"arm.{i}.step_lr"} <= set(rows[5])
        assert rows[1][f"arm.{NO_BIAS}.step_lr"] == pytest.approx(3.16228, rel=1e-4)
        send(ws, {"type": "set", "params": {"lr_mode": "custom", "adam_lr": 0.05}})
        reply, _ = recv_until(ws, lambda m: m["type"] in ("params", "error"))
        assert reply["type"] == "params" and reply["params"]["adam_lr"] == 0.05
        rows = scalar_rows(step(ws, 1))
        assert rows[6][f"arm.{ADAM}.lr"] == 0.05  # live: the run went on, step 6


def test_mlp_frames_carry_each_arms_boundary_and_the_points(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "optimizers", {"surface": "mlp", "dataset": "xor"})
        f = frames(step(ws, 2))[-1]
        t = f["tensors"]
        assert t["points"].shape == (250, 3)
        for i in range(5):
            assert t[f"arm.{i}.boundary"].shape == (32, 32)
        assert f["header"]["meta"]["boundary"]["extent"] == 6.0
