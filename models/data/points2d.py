"""2-D toy classification sets for chapter 2: "buy or not" blobs and concentric circles.

Every set is seeded, lives in the box [-EXTENT, EXTENT]², and returns (x [N, 2] float32,
y [N] float32 of 0/1). `pos_frac` sets the share of positives (class 1), so a lab can make
the classes unbalanced and show accuracy lying. The coordinates are already standardized
(z-scores): "age" and "income" of the buy-or-not story are x1 and x2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

Kind = Literal["blobs", "circles"]

EXTENT = 4.0  # every point (generated or clicked) lies in [-EXTENT, EXTENT]²


@dataclass(frozen=True)
class PointsConfig:
    kind: Kind = "blobs"
    n: int = 200
    pos_frac: float = 0.5  # share of class 1 ("buys", or the inner circle)
    # Blobs: centres at ±centre on the diagonal with this std. The defaults overlap a little
    # (no line gets every point right); a larger centre or smaller std leaves a gap.
    centre: float = 0.7
    std: float = 1.0
    # Circles: the inner class within radius `inner`, the outer ring around radius `outer`.
    inner: float = 1.0
    outer: float = 2.4
    ring_noise: float = 0.25


def counts(n: int, pos_frac: float) -> tuple[int, int]:
    """(positives, negatives), at least one of each."""
    n_pos = min(max(round(n * pos_frac), 1), n - 1)
    return n_pos, n - n_pos


def make(cfg: PointsConfig, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    n_pos, n_neg = counts(cfg.n, cfg.pos_frac)
    if cfg.kind == "circles":
        pos, neg = _circles(cfg, n_pos, n_neg, gen)
    else:
        pos = torch.randn(n_pos, 2, generator=gen) * cfg.std + cfg.centre
        neg = torch.randn(n_neg, 2, generator=gen) * cfg.std - cfg.centre
    x = torch.cat([pos, neg]).clamp(-EXTENT, EXTENT)  # [N, 2]
    y = torch.cat([torch.ones(n_pos), torch.zeros(n_neg)])  # [N]
    # Shuffle so that a prefix (mini-batch, a table of the first rows) mixes both classes.
    order = torch.randperm(cfg.n, generator=gen)
    return x[order], y[order]


def _circles(
    cfg: PointsConfig, n_pos: int, n_neg: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    # Inner disc: radius ∝ sqrt(u) fills it evenly; outer ring: a noisy circle.
    r_in = cfg.inner * torch.rand(n_pos, generator=gen).sqrt()
    a_in = torch.rand(n_pos, generator=gen) * 2 * math.pi
    r_out = cfg.outer + torch.randn(n_neg, generator=gen) * cfg.ring_noise
    a_out = torch.rand(n_neg, generator=gen) * 2 * math.pi
    pos = torch.stack([r_in * a_in.cos(), r_in * a_in.sin()], 1)  # [P, 2]
    neg = torch.stack([r_out * a_out.cos(), r_out * a_out.sin()], 1)  # [Q, 2]
    return pos, neg


def with_points(
    x: torch.Tensor, y: torch.Tensor, extra: list[tuple[float, float, int]] | tuple = ()
) -> tuple[torch.Tensor, torch.Tensor]:
    """Append the learner's clicked points (x1, x2, class) to a set."""
    if not extra:
        return x, y
    t = torch.tensor([list(p) for p in extra], dtype=torch.float32)  # [M, 3]
    return torch.cat([x, t[:, :2].clamp(-EXTENT, EXTENT)]), torch.cat([y, (t[:, 2] > 0).float()])


def grid(n: int, extent: float = EXTENT) -> tuple[torch.Tensor, torch.Tensor]:
    """(axis [n], points [n*n, 2]) covering the box; row i of a [n, n] picture is x2 = axis[i]."""
    axis = torch.linspace(-extent, extent, n)
    g2, g1 = torch.meshgrid(axis, axis, indexing="ij")  # [n, n] each
    return axis, torch.stack([g1.flatten(), g2.flatten()], 1)  # [n*n, 2]
