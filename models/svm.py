"""A linear maximum-margin classifier f(x) = w·x + b, labels y ∈ {−1, +1}.

Objective J = ½‖w‖² + C·Σᵢ ℓ(yᵢ·f(xᵢ)), the one scikit-learn's SVC(kernel="linear") solves
when ℓ is the hinge max(0, 1 − m). C multiplies the data term: a larger C buys fewer margin
violations with a larger ‖w‖, i.e. a narrower margin 2/‖w‖. The same objective with the
logistic loss ln(1 + e^{−m}) or the squared loss (1 − m)² gives the other two classifiers
the lab compares. Training is plain (sub)gradient descent from autograd.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from models.hooks import HookPoint

Loss = Literal["hinge", "logistic", "squared"]
LOSSES: tuple[Loss, ...] = ("hinge", "logistic", "squared")


@dataclass(frozen=True)
class SVMConfig:
    d_in: int = 2
    # Support vectors: points with margin y·f(x) ≤ 1 + tol. Gradient descent hovers near,
    # not exactly at, the points that sit on the margin, so a small tolerance counts them.
    sv_tol: float = 0.02


class LinearSVM(nn.Module):
    """forward(x [N, d]) -> decision values f(x) [N]; w and b start at zero."""

    def __init__(self, cfg: SVMConfig):
        super().__init__()
        self.cfg = cfg
        self.w = nn.Parameter(torch.zeros(cfg.d_in))
        self.b = nn.Parameter(torch.zeros(()))
        self.hook_decision = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        return self.hook_decision(x @ self.w + self.b)  # [N]

    def margin_width(self) -> float:
        """Distance between the lines f = −1 and f = +1: 2/‖w‖ (inf while w = 0)."""
        n = float(self.w.detach().norm())
        return 2.0 / n if n > 0 else float("inf")


def margin_loss(m: Tensor, loss: Loss) -> Tensor:
    """ℓ(m) elementwise, m = y·f(x) the signed margin."""
    if loss == "hinge":
        return torch.clamp(1 - m, min=0)
    if loss == "logistic":
        return F.softplus(-m)  # ln(1 + e^{−m}), stable for large |m|
    return (1 - m) ** 2


def objective(model: LinearSVM, x: Tensor, y: Tensor, c: float, loss: Loss) -> Tensor:
    """½‖w‖² + C·Σ ℓ(y·f(x)), y ∈ {−1, +1}."""
    m = y * model(x)
    return 0.5 * (model.w * model.w).sum() + c * margin_loss(m, loss).sum()


def support_mask(margins: Tensor, tol: float) -> Tensor:
    """Points on or inside the margin (y·f(x) ≤ 1): the ones the hinge solution rests on."""
    return margins <= 1 + tol


def loss_curves(m: Tensor) -> tuple[Tensor, list[str]]:
    """The three losses and the 0-1 loss they stand in for, over margins m: [4, len(m)]."""
    rows = [margin_loss(m, name) for name in LOSSES] + [(m <= 0).float()]
    return torch.stack(rows), [*LOSSES, "zero_one"]


def step_size(lr: float, c: float, n: int) -> float:
    """The step taken on J: lr / (1 + C·n).

    The data term's gradient grows with C·n; dividing by it lets one lr work from C = 0.001
    to C = 1000 (for small C·n the step is lr on ½‖w‖², for large C·n lr on the mean loss).
    """
    return lr / (1.0 + c * n)
