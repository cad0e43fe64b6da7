"""The one-weight apple model reproduces the curriculum's numbers (CURRICULUM.md ch. 1)."""

from __future__ import annotations

import math

import pytest
import torch

from models import apple


def train(lr: float, steps: int, zero_grad: bool = True) -> list[tuple[float, float, float]]:
    """(x, loss, grad) before each step of plain SGD from x = 1."""
    model = apple.Apple(apple.AppleConfig())
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    out = []
    for _ in range(steps):
        loss = model.loss()
        loss.backward()
        out.append((model.x.item(), loss.item(), model.x.grad.item()))
        opt.step()
        if zero_grad:
            opt.zero_grad()
    return out


def test_first_two_steps():
    (x0, l0, g0), (x1, l1, g1) = train(lr=1 / 36, steps=2)
    assert (x0, l0, g0) == (1.0, 9.0, -18.0)
    assert (x1, l1, g1) == (1.5, 2.25, -9.0)


def test_optimum_curvature_and_critical_lr():
    model = apple.Apple(apple.AppleConfig())
    assert apple.optimum(model.cfg) == 2.0
    assert apple.curvature(model) == 18.0
    assert apple.critical_lr(model) == pytest.approx(2 / 18)
    assert apple.critical_lr(model) == pytest.approx(0.111, abs=5e-4)
    assert apple.slope(model) == -18.0
    assert model.x.grad is None  # the tangent's slope never touches .grad


def test_one_over_curvature_lands_in_one_step():
    (_, _, _), (x1, l1, g1) = train(lr=1 / 18, steps=2)
    assert x1 == pytest.approx(2.0, abs=1e-6)
    assert l1 == pytest.approx(0.0, abs=1e-9)


def test_above_critical_diverges_below_converges():
    below = train(lr=0.11, steps=2000)
    assert below[-1][1] < 1e-6
    edge = train(lr=2 / 18, steps=50)  # x bounces between 1 and 3 forever
    assert {round(x, 4) for x, _, _ in edge[-4:]} == {1.0, 3.0}
    above = train(lr=0.12, steps=400)
    losses = [loss for _, loss, _ in above]
    assert losses[10] > losses[0]
    assert not all(math.isfinite(v) for v in losses)  # float32 overflows: a real divergence


def test_forgetting_zero_grad_accumulates():
    model = apple.Apple(apple.AppleConfig())
    grads = []
    for _ in range(3):
        model.loss().backward()
        grads.append(float(model.x.grad))
    assert grads == [-18.0, -36.0, -54.0]


def test_curve_is_the_model_on_a_grid():
    cfg = apple.AppleConfig()
    xs = torch.tensor([1.0, 1.5, 2.0, 3.0])
    assert apple.curve(cfg, xs).tolist() == [9.0, 2.25, 0.0, 9.0]
