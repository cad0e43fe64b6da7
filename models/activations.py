"""Activation functions and their slopes, the slopes taken by autograd (not by a formula).

The facts a learner should see: sigmoid' ≤ 0.25 and tanh' ≤ 1 (so a stack of them shrinks
gradients), ReLU' is 1 where the unit is active and 0 elsewhere — at exactly 0 PyTorch
returns 0 — and SiLU dips to about −0.278 near x ≈ −1.278, so it is not a 0–1 gate.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from models.mlp import ACTIVATIONS

NAMES = ("relu", "sigmoid", "tanh", "gelu", "silu")


@dataclass(frozen=True)
class StatsConfig:
    # Extremes are read on a fixed wide, fine grid, whatever range the learner is viewing:
    # every extreme of these five lies well inside [-10, 10].
    extent: float = 10.0
    half: int = 20000  # grid step extent/half = 5e-4


def grid(extent: float, half: int) -> Tensor:
    """2·half + 1 points on [-extent, extent] with x = 0 exactly in the middle [N]."""
    return torch.arange(-half, half + 1, dtype=torch.float64) * (extent / half)


def value_and_slope(name: str, x: Tensor) -> tuple[Tensor, Tensor]:
    """f(x) and autograd's df/dx at every point of x (each point is independent)."""
    x = x.detach().clone().requires_grad_(True)
    y = ACTIVATIONS[name](x)
    (dy,) = torch.autograd.grad(y.sum(), x)  # Σ f(x_i) has ∂/∂x_i = f'(x_i)
    return y.detach(), dy


def stats(name: str, cfg: StatsConfig = StatsConfig()) -> dict[str, float]:
    """max f', where it is (first and last x: ReLU' is 1 on all of x > 0), min f, where it
    is, and f, f' at exactly 0."""
    x = grid(cfg.extent, cfg.half)
    f, df = value_and_slope(name, x)
    i_max, i_min = int(df.argmax()), int(f.argmin())
    i_last = int((df == df[i_max]).nonzero().max())
    f0, df0 = value_and_slope(name, torch.zeros(1, dtype=torch.float64))
    return {
        "max_df": float(df[i_max]),
        "argmax_df": float(x[i_max]),
        "argmax_df_last": float(x[i_last]),
        "min_f": float(f[i_min]),
        "argmin_f": float(x[i_min]),
        "f0": float(f0[0]),
        "df0": float(df0[0]),
    }
