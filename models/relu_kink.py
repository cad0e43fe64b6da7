"""Two straight lines and a ReLU between them: where "deep" starts.

A: y = a_w·x + a_b, then B: z = b_w·y + b_b. Without a ReLU the two collapse into one line,
z = (b_w·a_w)·x + (b_w·a_b + b_b) (2x−10 then 3y+7 is 6x−23). With a ReLU after A the
composition bends once, at x = −a_b/a_w (x = 5): it is the program
``if x > 5: z = 6*x - 23 else: z = 7``. Both are a 1→1→1 MLP from models/mlp.py.

With k hidden ReLU units the output is a polyline with (up to) k kinks, which can follow any
curve on an interval, more closely the more units, like Liu Hui cutting a circle into ever
more sides. `fit_model` builds that 1→k→1 MLP with its kinks spread over the interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

from models.hooks import capture
from models.mlp import MLP, MLPConfig

Target = Literal["sin", "arc", "abs", "step"]


@dataclass(frozen=True)
class KinkConfig:
    a_w: float = 2.0  # A: y = a_w·x + a_b
    a_b: float = -10.0
    b_w: float = 3.0  # B: z = b_w·y + b_b
    b_b: float = 7.0
    relu: bool = True  # a ReLU between A and B


# -- the two-line composition -----------------------------------------------------------


def compose_model(cfg: KinkConfig) -> MLP:
    """A then (ReLU) then B, as the 1→1→1 MLP whose weights are the four numbers."""
    act = "relu" if cfg.relu else "linear"
    model = MLP(MLPConfig(d_in=1, hidden=(1,), d_out=1, activation=act))
    with torch.no_grad():
        model.layers[0].linear.weight.fill_(cfg.a_w)
        model.layers[0].linear.bias.fill_(cfg.a_b)
        model.out.weight.fill_(cfg.b_w)
        model.out.bias.fill_(cfg.b_b)
    return model


def compose_curves(cfg: KinkConfig, x: Tensor) -> dict[str, Tensor]:
    """The hidden pre-activation y, the hidden output h and z over the points x [N]."""
    model = compose_model(cfg)
    names = ("layers.0.hook_pre", "layers.0.hook_post", "hook_logits")
    with torch.no_grad(), capture(model, names) as store:
        model(x[:, None])  # [N, 1]
    return {n: store[n][:, 0] for n in names}  # each [N]


def kink(cfg: KinkConfig) -> float | None:
    """Where A's output crosses 0 (the ReLU's corner), or None when A is flat."""
    if not cfg.relu or cfg.a_w == 0:
        return None
    return -cfg.a_b / cfg.a_w


def pieces(cfg: KinkConfig) -> tuple[float, float, float]:
    """(slope, intercept) of z on the side where the ReLU passes y, and z on the other side."""
    return cfg.b_w * cfg.a_w, cfg.b_w * cfg.a_b + cfg.b_b, cfg.b_b


def num(v: float) -> str:
    """A number as a person writes it: 6, -23, 0.5, 3.333 (no 6.0, no float noise)."""
    v = round(v, 6) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.4e}"


def line(m: float, c: float, var: str = "x") -> str:
    """m·x + c as code: '6*x - 23', 'x', '-x + 1', '7'."""
    m, c = round(m, 6), round(c, 6)
    if m == 0:
        return num(c)
    head = var if m == 1 else f"-{var}" if m == -1 else f"{num(m)}*{var}"
    if c == 0:
        return head
    return f"{head} {'+' if c > 0 else '-'} {num(abs(c))}"


def program(cfg: KinkConfig) -> str:
    """The plain program the network computes, written from the four numbers."""
    m, c, flat = pieces(cfg)
    if not cfg.relu:
        return f"z = {line(m, c)}"
    if cfg.a_w == 0:  # A is a constant: the ReLU clips it once, no kink
        return f"z = {line(0, cfg.b_w * max(cfg.a_b, 0.0) + cfg.b_b)}"
    k = -cfg.a_b / cfg.a_w
    op = ">" if cfg.a_w > 0 else "<"  # A rises: active right of the kink; falls: left of it
    return f"if x {op} {num(k)}:\n    z = {line(m, c)}\nelse:\n    z = {num(flat)}"


# -- many units: a polyline fit ----------------------------------------------------------

TARGETS: dict[str, Callable[[Tensor], Tensor]] = {
    "sin": lambda x: torch.sin(math.pi * x),
    "arc": lambda x: (1 - x * x).clamp_min(0).sqrt(),  # the upper half of the unit circle
    "abs": lambda x: x.abs(),
    "step": lambda x: (x > 0).float(),
}


@dataclass(frozen=True)
class FitConfig:
    units: int = 8
    target: Target = "sin"
    points: int = 201  # samples of the target on [-1, 1]; odd, so x = 0 is one of them
    lo: float = -1.0
    hi: float = 1.0


def fit_data(cfg: FitConfig) -> tuple[Tensor, Tensor]:
    half = (cfg.points - 1) // 2
    x = torch.arange(-half, half + 1, dtype=torch.float32) / half  # [N], exact 0 in the middle
    x = cfg.lo + (x + 1) * (cfg.hi - cfg.lo) / 2
    return x, TARGETS[cfg.target](x)


def fit_model(cfg: FitConfig, gen: torch.Generator) -> MLP:
    """A 1→k→1 ReLU MLP whose k kinks start spread evenly (with jitter) over the interval.

    torch's default init puts most kinks −b/w outside a small interval, where they do
    nothing; starting them inside lets every unit help from the first step.
    """
    k = cfg.units
    model = MLP(MLPConfig(d_in=1, hidden=(k,), d_out=1, activation="relu"))
    with torch.no_grad():
        at = cfg.lo + (torch.arange(k) + torch.rand(k, generator=gen)) * (cfg.hi - cfg.lo) / k
        sign = torch.where(torch.rand(k, generator=gen) < 0.5, -1.0, 1.0)
        w = sign * (0.5 + torch.rand(k, generator=gen))  # [k]
        model.layers[0].linear.weight.copy_(w[:, None])
        model.layers[0].linear.bias.copy_(-w * at)
        model.out.weight.copy_(torch.randn(1, k, generator=gen) / math.sqrt(k))
        model.out.bias.zero_()
    return model


def kinks(model: MLP) -> Tensor:
    """x where each hidden unit's input crosses 0 [k]; NaN for a unit with w = 0."""
    lin = model.layers[0].linear
    w, b = lin.weight.detach()[:, 0], lin.bias.detach()
    return torch.where(w != 0, -b / torch.where(w != 0, w, 1.0), torch.nan)


def unit_parts(model: MLP, x: Tensor) -> tuple[Tensor, Tensor]:
    """(output [N], each unit's share v_j·relu(w_j·x + b_j) [k, N]); output = Σ shares + bias."""
    with torch.no_grad(), capture(model, "layers.0.hook_post") as store:
        out = model(x[:, None])[:, 0]  # [N]
    parts = (store["layers.0.hook_post"] * model.out.weight.detach()[0]).T  # [k, N]
    return out, parts
