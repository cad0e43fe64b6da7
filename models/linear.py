"""Linear regression, the first model: y = x·w + b, fitted by its gradient.

Two loss conventions appear in the sources: L = (1/2n)Σ(ŷ−y)² ("half_mse", the textbook's,
whose gradient has no factor 2) and torch's MSELoss L = (1/n)Σ(ŷ−y)² ("mse"). The same
step size moves twice as far under "mse", so its critical learning rate is half.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from models.hooks import HookPoint

Convention = Literal["half_mse", "mse"]


@dataclass(frozen=True)
class LinearConfig:
    n_features: int = 1
    loss: Convention = "half_mse"
    init_std: float = 0.0  # 0 = start at w = b = 0 (the two-point example); the book uses 0.01


class LinearRegression(nn.Module):
    def __init__(self, cfg: LinearConfig):
        super().__init__()
        self.cfg = cfg
        self.weight = nn.Parameter(torch.randn(cfg.n_features) * cfg.init_std)
        self.bias = nn.Parameter(torch.zeros(()))
        self.hook_pred = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        return self.hook_pred(x @ self.weight + self.bias)  # [N]


def loss_fn(pred: Tensor, y: Tensor, convention: Convention) -> Tensor:
    mse = ((pred - y) ** 2).mean(-1)
    return 0.5 * mse if convention == "half_mse" else mse


def design(x: Tensor) -> Tensor:
    """x with a column of ones for the bias: [N, F+1]."""
    return torch.cat([x, torch.ones(x.shape[0], 1, dtype=x.dtype)], dim=1)


def closed_form(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Least-squares optimum (weights, bias), solved in float64 (same for both conventions)."""
    sol = torch.linalg.lstsq(design(x.double()), y.double().unsqueeze(1)).solution[:, 0]
    return sol[:-1], sol[-1]


def critical_lr(x: Tensor, convention: Convention) -> float:
    """Full-batch gradient descent diverges above 2/λmax of the loss's Hessian."""
    a = design(x.double())
    hessian = a.T @ a / a.shape[0] * (1.0 if convention == "half_mse" else 2.0)
    return 2.0 / float(torch.linalg.eigvalsh(hessian)[-1])


def loss_surface(
    x: Tensor, y: Tensor, params: Tensor, i: int, j: int, xs: Tensor, ys: Tensor, conv: Convention
) -> Tensor:
    """Loss over a grid where parameter i takes xs and j takes ys, the others held at `params`.

    `params` is [F+1] (weights then bias); returns [len(ys), len(xs)] (rows = j axis).
    """
    a = design(x.double())  # [N, P]
    p = params.double()
    base = a @ p  # [N]
    gi = xs.double()[None, :, None] - p[i]  # [1, Gx, 1]
    gj = ys.double()[:, None, None] - p[j]  # [Gy, 1, 1]
    pred = base + gi * a[:, i] + gj * a[:, j]  # [Gy, Gx, N]
    return loss_fn(pred, y.double(), conv)
