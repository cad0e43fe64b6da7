"""The 2-D classification sets of TensorFlow Playground, seeded, and their input features.

`circle`, `xor`, `gauss` and `spiral` follow playground's dataset.ts: points within radius 5
(xor and gauss in about [-6, 6]²), `noise` from 0 to 0.5 (playground's slider / 100). With
two classes they are playground's sets; class 1 is its +1 (blue), class 0 its −1 (orange).
With `classes` = K > 2 they grow: K concentric rings, quadrants taken mod K, K Gaussian blobs
on a circle, a K-armed spiral.

Features are computed from (x1, x2) exactly as playground feeds them (raw, not rescaled):
x1, x2, x1², x2², x1·x2, sin x1, sin x2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

Kind = Literal["circle", "xor", "gauss", "spiral"]
RADIUS = 5.0
EXTENT = 6.0  # pictures (boundary, neuron maps) cover [-EXTENT, EXTENT]²

FEATURES = ("x1", "x2", "x1sq", "x2sq", "x1x2", "sinx1", "sinx2")


@dataclass(frozen=True)
class PlaygroundConfig:
    kind: Kind = "circle"
    n: int = 500  # playground's numSamples
    noise: float = 0.0  # 0..0.5
    classes: int = 2
    train_frac: float = 0.5  # playground's "ratio of training to test data"


@dataclass(frozen=True)
class Split:
    x_train: Tensor  # [N_train, 2]
    y_train: Tensor  # [N_train] int64 class ids
    x_test: Tensor  # [N_test, 2]
    y_test: Tensor  # [N_test]


def _uniform(n: int, lo: float, hi: float, gen: torch.Generator) -> Tensor:
    return lo + (hi - lo) * torch.rand(n, generator=gen, dtype=torch.float64)


def circle(n: int, noise: float, k: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    # Ring i spans [R·(i + 0.4·[i>0])/K, R·(i+1)/K]: for K = 2, playground's disc of radius
    # 2.5 and ring 3.5–5. The label is the ring the *noisy* point falls in (as playground).
    xs, ys = [], []
    per = n // k
    for i in range(k):
        lo = RADIUS * (i + (0.4 if i else 0.0)) / k
        r = _uniform(per, lo, RADIUS * (i + 1) / k, gen)
        a = _uniform(per, 0, 2 * math.pi, gen)
        p = torch.stack([r * a.sin(), r * a.cos()], 1)  # [per, 2]
        noisy = p + _uniform(2 * per, -RADIUS, RADIUS, gen).view(per, 2) * noise
        ring = (noisy.norm(dim=1) * k / RADIUS).floor().clamp(0, k - 1).long()
        xs.append(p)
        ys.append(k - 1 - ring)  # the innermost disc is the last class (playground's +1)
    return torch.cat(xs), torch.cat(ys)


def xor(n: int, noise: float, k: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    # Uniform in [-5, 5]² pushed 0.3 away from the axes; the label is the noisy point's
    # quadrant (Q1, Q2, Q3, Q4 = 0..3) plus one, mod K: for K = 2, x1·x2 ≥ 0 is class 1.
    p = _uniform(2 * n, -5, 5, gen).view(n, 2)
    p = p + torch.where(p > 0, 0.3, -0.3)
    noisy = p + _uniform(2 * n, -5, 5, gen).view(n, 2) * noise
    right, up = noisy[:, 0] >= 0, noisy[:, 1] >= 0
    quad = torch.where(up, torch.where(right, 0, 1), torch.where(right, 3, 2))
    return p, (quad + 1) % k


def gauss(n: int, noise: float, k: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    # Blobs on a circle of radius 2√2; for K = 2 at (−2, −2) and (2, 2). Playground's
    # variance grows linearly from 0.5 (noise 0) to 4 (noise 0.5).
    std = math.sqrt(0.5 + 7.0 * noise)
    xs, ys = [], []
    per = n // k
    for j in range(k):
        a = 5 * math.pi / 4 + 2 * math.pi * j / k
        centre = torch.tensor([math.cos(a), math.sin(a)], dtype=torch.float64) * 2 * math.sqrt(2)
        xs.append(centre + std * torch.randn(per, 2, generator=gen, dtype=torch.float64))
        ys.append(torch.full((per,), j))
    return torch.cat(xs), torch.cat(ys)


def spiral(n: int, noise: float, k: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    # Arm j turns 1.75 times out to radius 5, rotated by π + 2πj/K (playground: 0 and π).
    xs, ys = [], []
    per = n // k
    i = torch.arange(per, dtype=torch.float64)
    for j in range(k):
        r = i / per * RADIUS
        t = 1.75 * i / per * 2 * math.pi + math.pi + 2 * math.pi * j / k
        p = torch.stack([r * t.sin(), r * t.cos()], 1)  # [per, 2]
        xs.append(p + _uniform(2 * per, -1, 1, gen).view(per, 2) * noise)
        ys.append(torch.full((per,), j))
    return torch.cat(xs), torch.cat(ys)


MAKERS = {"circle": circle, "xor": xor, "gauss": gauss, "spiral": spiral}


def make(cfg: PlaygroundConfig, seed: int) -> Split:
    """Generate, shuffle and split; the same seed gives the same points."""
    gen = torch.Generator().manual_seed(seed)
    x, y = MAKERS[cfg.kind](cfg.n, cfg.noise, cfg.classes, gen)
    order = torch.randperm(len(x), generator=gen)
    x, y = x[order].float(), y[order].long()
    n_train = min(max(round(len(x) * cfg.train_frac), 1), len(x) - 1)
    return Split(x[:n_train], y[:n_train], x[n_train:], y[n_train:])


def featurize(xy: Tensor, names: tuple[str, ...] | list[str]) -> Tensor:
    """The chosen input features of points xy [N, 2] -> [N, F], in FEATURES order."""
    x1, x2 = xy[:, 0], xy[:, 1]
    table = {
        "x1": x1,
        "x2": x2,
        "x1sq": x1 * x1,
        "x2sq": x2 * x2,
        "x1x2": x1 * x2,
        "sinx1": torch.sin(x1),
        "sinx2": torch.sin(x2),
    }
    return torch.stack([table[f] for f in FEATURES if f in names], 1)  # [N, F]


def grid(n: int, extent: float = EXTENT) -> tuple[Tensor, Tensor]:
    """(axis [n], points [n*n, 2]); row i of a [n, n] picture is x2 = axis[i] (bottom up)."""
    axis = torch.linspace(-extent, extent, n)
    g2, g1 = torch.meshgrid(axis, axis, indexing="ij")  # [n, n] each
    return axis, torch.stack([g1.flatten(), g2.flatten()], 1)  # [n*n, 2]
