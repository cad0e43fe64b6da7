"""One weight: the price of an apple, found by gradient descent.

3 apples cost 6. The model guesses the price x, predicts x·apples, and is scored with the
squared error (x·apples − price)². From x = 1 the loss is 9 and dL/dx = −18; the optimum is
x = price/apples = 2. The loss is a parabola whose curvature is 2·apples² = 18, so plain
gradient descent is stable for lr < 2/18 and lands on the optimum in one step at lr = 1/18.

Everything here is a real torch computation: the gradient is autograd's, the curvature is
autograd's second derivative, and the loss curve is the model evaluated on a grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from models.hooks import HookPoint


@dataclass(frozen=True)
class AppleConfig:
    apples: float = 3.0
    price: float = 6.0
    x0: float = 1.0  # the first guess of one apple's price (the book starts at 1)


class Apple(nn.Module):
    """pred = x · apples, with x the only parameter."""

    def __init__(self, cfg: AppleConfig):
        super().__init__()
        self.cfg = cfg
        # float32 on purpose: a diverging run overflows to inf like any real training run.
        self.x = nn.Parameter(torch.tensor(float(cfg.x0)))
        self.hook_pred = HookPoint()

    def forward(self) -> Tensor:
        return self.hook_pred(self.x * self.cfg.apples)  # []

    def loss(self) -> Tensor:
        return loss_fn(self(), self.cfg.price)


def loss_fn(pred: Tensor, price: float) -> Tensor:
    return (pred - price) ** 2


def slope(model: Apple) -> float:
    """dL/dx at the current x, by autograd, without touching x.grad (the tangent's slope)."""
    (g,) = torch.autograd.grad(model.loss(), model.x)
    return float(g)


def curvature(model: Apple) -> float:
    """d²L/dx² by double backward (constant for a parabola: 2·apples²)."""
    (g,) = torch.autograd.grad(model.loss(), model.x, create_graph=True)
    (h,) = torch.autograd.grad(g, model.x)
    return float(h)


def critical_lr(model: Apple) -> float:
    """Gradient descent on a parabola diverges above 2 / curvature."""
    return 2.0 / curvature(model)


def curve(cfg: AppleConfig, xs: Tensor) -> Tensor:
    """The loss at every x in xs: the same model math, on a grid. [G] -> [G]."""
    return loss_fn(xs * cfg.apples, cfg.price)


def optimum(cfg: AppleConfig) -> float:
    return cfg.price / cfg.apples
