"""Which norm gradient clipping uses, and the derivative bounds behind vanishing gradients.

The `rnn` lab's clipping panel: the curriculum's A = [[1,−2,0],[3,1,−1],[0,2,−4]] set as a
real parameter's gradient and clipped by `torch.nn.utils.clip_grad_norm_` at max_norm 5.0.
Clipping measures the 2-norm of every entry together (Frobenius, 6), so the gradient is
scaled by 5/6 = 0.8333; the entrywise L1 norm (14), the matrix 1-norm (max column sum, 5)
and the spectral norm (4.852) sit beside it to show what it is not.

The derivative curves: f′(x) of sigmoid, tanh and ReLU by autograd on a grid. Backprop
through one RNN step multiplies by diag(f′)·Whh, so ‖∂h_{t+1}/∂h_t‖ ≤ max f′ · ‖Whh‖₂:
with sigmoid (max f′ = 0.25) the product shrinks unless ‖Whh‖₂ > 4; tanh's max is 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

A = ((1.0, -2.0, 0.0), (3.0, 1.0, -1.0), (0.0, 2.0, -4.0))


@dataclass(frozen=True)
class NormExampleConfig:
    matrix: tuple[tuple[float, ...], ...] = A
    max_norm: float = 5.0


ACTIVATIONS = {"sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu}


def norm_example(cfg: NormExampleConfig = NormExampleConfig()) -> dict:
    """The matrix's norms by torch, and what clip_grad_norm_ does to it as a gradient."""
    a = torch.tensor(cfg.matrix, dtype=torch.float64)
    weight = nn.Parameter(torch.zeros_like(a))
    weight.grad = a.clone()  # the matrix IS the gradient of a real parameter
    total = float(torch.nn.utils.clip_grad_norm_([weight], cfg.max_norm))
    clipped = weight.grad
    # The scale torch applied, read back from the gradient it changed (1.0 when unclipped).
    coef = float((clipped[a != 0] / a[a != 0]).mean())
    return {
        "matrix": a.tolist(),
        "max_norm": cfg.max_norm,
        "l1_entrywise": float(a.abs().sum()),
        "frobenius": float(torch.linalg.matrix_norm(a, "fro")),
        "matrix_1": float(torch.linalg.matrix_norm(a, 1)),  # max column sum of |a|
        "spectral": float(torch.linalg.matrix_norm(a, 2)),  # largest singular value
        "clip_total": total,  # what clip_grad_norm_ measured: the Frobenius norm
        "clip_coef": coef,
        "clipped": clipped.tolist(),
    }


def derivative_curves(lo: float = -6.0, hi: float = 6.0, n: int = 121) -> dict:
    """f′(x) for each activation by autograd on n points from lo to hi (0 among them when
    the grid is symmetric and n odd), and each curve's largest value."""
    x = torch.linspace(lo, hi, n, dtype=torch.float64, requires_grad=True)
    curves, peaks = {}, {}
    with torch.enable_grad():  # also when called under no_grad (a picture, generation)
        for name, f in ACTIVATIONS.items():
            (grad,) = torch.autograd.grad(f(x).sum(), x)  # [n]: elementwise, so d/dx_i of the sum
            curves[name] = grad.tolist()
            peaks[name] = float(grad.max())
    return {"x": x.detach().tolist(), "curves": curves, "max": peaks}
