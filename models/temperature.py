"""Tomorrow's temperature from the last two days: ŷ = (A·t₋₂ + B·t₋₁) / C.

It starts as the averaging rule A = B = 1, C = 2. Multiplying A, B and C by the same k
changes nothing, so only the ratios a = A/C and b = B/C are identifiable: the loss is
constant along every ray k·(A, B, C), a valley of equal solutions (the Hessian has a zero
eigenvalue along it at the optimum). Inside the (a, b) plane a second, softer valley runs
along a + b ≈ 1 because yesterday and the day before are nearly the same number.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from models.hooks import HookPoint


@dataclass(frozen=True)
class TwoDayConfig:
    a0: float = 1.0  # the averaging rule: (t₋₂ + t₋₁) / 2
    b0: float = 1.0
    c0: float = 2.0


def predict(x: Tensor, a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """The rule itself; parameters broadcast against x[..., 0] (grids use the same code)."""
    return (a * x[..., 0] + b * x[..., 1]) / c


class TwoDay(nn.Module):
    def __init__(self, cfg: TwoDayConfig = TwoDayConfig()):
        super().__init__()
        self.cfg = cfg
        self.A = nn.Parameter(torch.tensor(cfg.a0))
        self.B = nn.Parameter(torch.tensor(cfg.b0))
        self.C = nn.Parameter(torch.tensor(cfg.c0))
        self.hook_pred = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        return self.hook_pred(predict(x, self.A, self.B, self.C))  # [N]

    def vector(self) -> Tensor:
        return torch.stack([self.A, self.B, self.C]).detach()  # [3]


def mse(pred: Tensor, y: Tensor) -> Tensor:
    return ((pred - y) ** 2).mean(-1)


def loss_at(x: Tensor, y: Tensor, abc: Tensor) -> Tensor:
    """Loss at the parameter vector (A, B, C)."""
    return mse(predict(x, abc[0], abc[1], abc[2]), y)


def _grid_loss(x: Tensor, y: Tensor, a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """mse of predict() for every pair (a[j, i], b[j, i]) with c[j, i], where a, b, c are
    [Gb, Ga] grids built from rows and columns. The sum a·t₋₂ + b·t₋₁ is formed once per
    grid cell, [Gb, Ga, N], in the grids' dtype (float32 keeps a 48×48 picture at a few ms)."""
    xd, yd = x.to(a.dtype), y.to(a.dtype)
    r = (a / c)[..., None] * xd[:, 0] + (b / c)[..., None] * xd[:, 1]  # [Gb, Ga, N]
    r.sub_(yd).square_()
    return r.mean(-1)  # [Gb, Ga]


def ratio_surface(x: Tensor, y: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """Loss over the identifiable plane (A/C, B/C) = (a, b) with C = 1: [len(b), len(a)]."""
    aa, bb = torch.meshgrid(a, b, indexing="xy")  # [Gb, Ga] each
    return _grid_loss(x, y, aa, bb, torch.ones_like(aa))


def valley_surface(x: Tensor, y: Tensor, cs: Tensor, as_: Tensor, b_ratio: float) -> Tensor:
    """Loss over (C, A) with B = b_ratio·C, a slice through the current point: every ray
    A = k·C from the origin is a level line, the valley floor is A = a_opt(b_ratio)·C.
    Returns [len(as_), len(cs)] (rows = A)."""
    cc, aa = torch.meshgrid(cs, as_, indexing="xy")  # [Ga, Gc] each
    return _grid_loss(x, y, aa, b_ratio * cc, cc)


def closed_form_ratios(x: Tensor, y: Tensor) -> Tensor:
    """Least-squares (a, b) = (A/C, B/C), in float64: [2]."""
    return torch.linalg.lstsq(x.double(), y.double()[:, None]).solution[:, 0]


def best_a_given_b(x: Tensor, y: Tensor, b: float) -> float:
    """argmin over a of the loss with B/C = b held: the slope of the valley floor A = a·C."""
    xd, yd = x.double(), y.double()
    return float((xd[:, 0] * (yd - b * xd[:, 1])).sum() / (xd[:, 0] ** 2).sum())


def hessian(x: Tensor, y: Tensor, abc: Tensor) -> Tensor:
    """Hessian of the loss in (A, B, C) at abc, by autograd (float64): [3, 3]."""
    xd, yd = x.double(), y.double()
    return torch.autograd.functional.hessian(lambda p: loss_at(xd, yd, p), abc.double())
