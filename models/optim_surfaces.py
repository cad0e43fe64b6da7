"""Two-dimensional loss surfaces for racing optimizers: an elongated valley and Rosenbrock.

Each surface is an `nn.Module` whose only parameter is the 2-D point p = (x, y), so a torch
optimizer moves it exactly as it moves a network's weights, and the path it leaves is the
sequence of points. The contour picture is the same function evaluated on a grid.

- valley: f(x, y) = a·x² + b·y². With a = 0.1, b = 10 the curvatures are 0.2 and 20, a
  condition number of 100: plain gradient descent must keep lr < 2/20 = 0.1 or it diverges
  across the narrow y direction, and at such an lr it crawls along x (each step shrinks x by
  1 − 0.2·lr). Momentum and Adam's per-coordinate scaling are the two cures.
- rosenbrock: f(x, y) = (1 − x)² + 100·(y − x²)², minimum 0 at (1, 1) at the end of a
  curved, flat-bottomed banana valley.

Gradient noise ("mini-batch" on a surface with no data): `noisy_loss` adds ⟨ξ, p⟩ with
ξ ~ N(0, σ²·I) drawn from a generator, so the gradient autograd computes is ∇f(p) + ξ, an
unbiased noisy gradient like a mini-batch's, while the loss reported stays f(p).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

Kind = Literal["valley", "rosenbrock"]


@dataclass(frozen=True)
class SurfaceConfig:
    kind: Kind = "valley"
    a: float = 0.1  # valley: curvature 2a along x (the long, shallow direction)
    b: float = 10.0  # valley: curvature 2b along y (the steep walls); b/a = condition number
    start: tuple[float, float] | None = None  # None: the surface's own START


# Where each race starts and the box its contour picture covers: ((x0, x1), (y0, y1)).
START: dict[str, tuple[float, float]] = {"valley": (-8.0, 1.5), "rosenbrock": (-1.2, 1.0)}
EXTENT: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "valley": ((-9.0, 3.0), (-3.0, 3.0)),
    "rosenbrock": ((-2.0, 2.0), (-1.0, 3.0)),
}
MINIMUM: dict[str, tuple[float, float]] = {"valley": (0.0, 0.0), "rosenbrock": (1.0, 1.0)}


def value(cfg: SurfaceConfig, x: Tensor, y: Tensor) -> Tensor:
    """f(x, y), elementwise over tensors of one shape (a point, or a whole grid)."""
    if cfg.kind == "valley":
        return cfg.a * x**2 + cfg.b * y**2
    return (1 - x) ** 2 + 100 * (y - x**2) ** 2


class Surface(nn.Module):
    """The 2-D point as a parameter; `forward()` is the loss at that point (a 0-d tensor)."""

    def __init__(self, cfg: SurfaceConfig):
        super().__init__()
        self.cfg = cfg
        start = cfg.start if cfg.start is not None else START[cfg.kind]
        self.point = nn.Parameter(torch.tensor(start, dtype=torch.float32))  # [2]

    def forward(self) -> Tensor:
        return value(self.cfg, self.point[0], self.point[1])

    def noisy_loss(self, xi: Tensor | None) -> Tensor:
        """f(p) + ⟨ξ, p⟩: its gradient is ∇f(p) + ξ (ξ None or zero: the exact gradient)."""
        loss = self()
        return loss if xi is None else loss + (xi.to(self.point) * self.point).sum()


def gradient_noise(sigma: float, gen: torch.Generator) -> Tensor:
    """ξ ~ N(0, σ²·I) in 2-D, drawn from `gen` (one draw a step, shared by every arm)."""
    return torch.randn(2, generator=gen) * sigma  # [2]


def grid(cfg: SurfaceConfig, n: int) -> tuple[Tensor, Tensor, Tensor]:
    """(xs [n], ys [n], z [n, n]) over the surface's EXTENT, z[i, j] = f(xs[j], ys[i])
    (row i is y = ys[i], bottom up), computed in float64."""
    (x0, x1), (y0, y1) = EXTENT[cfg.kind]
    xs = torch.linspace(x0, x1, n, dtype=torch.float64)
    ys = torch.linspace(y0, y1, n, dtype=torch.float64)
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")  # [n, n] each
    return xs, ys, value(cfg, gx, gy)
