"""Deep stacks, plain or residual: the family chapter 4 uses to show why depth was hard.

`DeepStack(cfg)`: `layers.0` maps the input to `width`, `layers.1 .. layers.{depth-1}` map
width to width, `out` maps width to the classes. A layer is linear → norm (BatchNorm,
LayerNorm or none) → activation; a residual layer adds that to its input,
x + α·act(norm(W x + b)), with α = 1/√(residual layers) unless told (ReLU branches of
unit gain add up: without α the signal's second moment doubles every layer, 2^29 at depth
30). `layers.0` is never residual (its input has another width).

Init (every Linear, the output layer too; biases 0 except PyTorch's default):
- "zeros": all weights 0. With tanh or ReLU (act(0) = 0) every hidden output is 0, so every
  weight's gradient is 0 forever: only the output bias learns.
- "constant": all weights `constant` (0.5). Every unit of a layer computes the same number
  and gets the same gradient: the rows of each weight matrix stay identical forever.
- "normal": N(0, sigma²) (the book's randn·0.01); "xavier": xavier_normal_ (gain 1);
  "kaiming_in" / "kaiming_out": kaiming_normal_ for ReLU, fan_in / fan_out; "default":
  nn.Linear's own (kaiming_uniform_ with a = √5: bound 1/√fan_in).
`noise` > 0 adds N(0, noise²) to every weight after the init: the symmetry breaks.

Dropout (`dropout` = p > 0): inverted dropout on the outputs of the last `dropout_layers`
layers in training mode, as torch's F.dropout does it (a kept unit is scaled by 1/(1 − p),
so nothing changes at eval time), with its masks drawn from the generator handed to
`forward(x, gen)`: a lab's run never touches the global RNG.

Hook points: `layers.{i}.hook_pre` (the linear's output), `layers.{i}.hook_post` (the
layer's output, after the residual sum, before dropout), `hook_logits`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from models.hooks import HookPoint

Activation = Literal["relu", "tanh", "sigmoid", "gelu"]
Init = Literal["zeros", "constant", "normal", "xavier", "kaiming_in", "kaiming_out", "default"]
Norm = Literal["none", "batchnorm", "layernorm"]

ACTIVATIONS = {"relu": F.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "gelu": F.gelu}


@dataclass(frozen=True)
class DeepConfig:
    d_in: int = 2
    width: int = 32
    depth: int = 30  # hidden layers (layers.0 .. layers.{depth-1}), then `out`
    d_out: int = 2
    activation: Activation = "sigmoid"
    init: Init = "normal"
    sigma: float = 0.01  # "normal": N(0, sigma²)
    constant: float = 0.5  # "constant"
    noise: float = 0.0  # N(0, noise²) added to every weight after the init
    residual: bool = False
    norm: Norm = "none"
    branch_scale: float = 0.0  # α of a residual branch; 0: 1/√(depth − 1)
    dropout: float = 0.0  # p of inverted dropout after the last `dropout_layers` layers
    dropout_layers: int = 1  # the late layers (where dropout usually sits)

    def replace(self, **changes) -> DeepConfig:
        return replace(self, **changes)

    @property
    def alpha(self) -> float:
        if self.branch_scale:
            return self.branch_scale
        return 1.0 / math.sqrt(max(1, self.depth - 1))


class Layer(nn.Module):
    def __init__(self, d_in: int, d_out: int, cfg: DeepConfig, residual: bool):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out)
        if cfg.norm == "batchnorm":
            self.norm: nn.Module = nn.BatchNorm1d(d_out)
        elif cfg.norm == "layernorm":
            self.norm = nn.LayerNorm(d_out)
        else:
            self.norm = nn.Identity()
        self.act = ACTIVATIONS[cfg.activation]
        self.residual = residual
        self.alpha = cfg.alpha
        self.hook_pre = HookPoint()
        self.hook_post = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        h = self.act(self.norm(self.hook_pre(self.linear(x))))
        return self.hook_post(x + self.alpha * h if self.residual else h)


class DeepStack(nn.Module):
    def __init__(self, cfg: DeepConfig):
        super().__init__()
        self.cfg = cfg
        self.layers = nn.ModuleList(
            Layer(cfg.d_in if i == 0 else cfg.width, cfg.width, cfg, cfg.residual and i > 0)
            for i in range(cfg.depth)
        )
        self.out = nn.Linear(cfg.width, cfg.d_out)
        self.hook_logits = HookPoint()
        init_weights(self, cfg)

    def forward(self, x: Tensor, gen: torch.Generator | None = None) -> Tensor:
        p, first = self.cfg.dropout, self.cfg.depth - self.cfg.dropout_layers
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if p and self.training and i >= first:
                x = inverted_dropout(x, p, gen)
        return self.hook_logits(self.out(x))

    def linears(self) -> list[nn.Linear]:
        return [layer.linear for layer in self.layers] + [self.out]


def inverted_dropout(x: Tensor, p: float, gen: torch.Generator | None = None) -> Tensor:
    """Zero each unit with probability p and scale the kept ones by 1/(1 − p) (what
    F.dropout does in training), the mask drawn from `gen`."""
    where = gen.device if gen is not None else x.device  # a CPU generator: draw there
    keep = (torch.rand(x.shape, generator=gen, device=where) >= p).to(x.device)  # [..., units]
    return x * keep / (1.0 - p)


@torch.no_grad()
def init_weights(model: DeepStack, cfg: DeepConfig) -> None:
    """The chosen init on every Linear (torch.nn.init's own functions), then the noise.
    Draws from the global generator: build under torch.manual_seed (the trainer does)."""
    for lin in model.linears():
        w = lin.weight
        if cfg.init == "default":
            lin.reset_parameters()  # nn.Linear's own: kaiming_uniform_(a=√5), bias ±1/√fan_in
        else:
            if cfg.init == "zeros":
                nn.init.zeros_(w)
            elif cfg.init == "constant":
                nn.init.constant_(w, cfg.constant)
            elif cfg.init == "normal":
                nn.init.normal_(w, 0.0, cfg.sigma)
            elif cfg.init == "xavier":
                nn.init.xavier_normal_(w)
            elif cfg.init == "kaiming_in":
                nn.init.kaiming_normal_(w, mode="fan_in", nonlinearity="relu")
            elif cfg.init == "kaiming_out":
                nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
            nn.init.zeros_(lin.bias)
        if cfg.noise:
            w.add_(torch.randn_like(w) * cfg.noise)


def init_facts(fan_in: int, fan_out: int) -> dict[str, float]:
    """The init scales of a fan_in → fan_out Linear, from torch.nn.init's own helpers
    (calculate_gain, the fan of a real [fan_out, fan_in] weight), and the std / largest |w|
    of a matrix each init really draws (seeded)."""
    w = torch.empty(fan_out, fan_in)
    fi, fo = nn.init._calculate_fan_in_and_fan_out(w)
    relu = nn.init.calculate_gain("relu")
    leaky = nn.init.calculate_gain("leaky_relu", math.sqrt(5))  # nn.Linear's a = √5
    g = torch.Generator().manual_seed(0)
    drawn = {
        "xavier_normal": nn.init.xavier_normal_(w.clone(), generator=g).std().item(),
        "kaiming_fan_in": nn.init.kaiming_normal_(
            w.clone(), mode="fan_in", nonlinearity="relu", generator=g
        )
        .std()
        .item(),
        "kaiming_fan_out": nn.init.kaiming_normal_(
            w.clone(), mode="fan_out", nonlinearity="relu", generator=g
        )
        .std()
        .item(),
        "linear_default_bound": nn.init.kaiming_uniform_(w.clone(), a=math.sqrt(5), generator=g)
        .abs()
        .max()
        .item(),
    }
    return {
        "fan_in": fi,
        "fan_out": fo,
        "gain_relu": relu,
        "xavier_normal": 1.0 * math.sqrt(2.0 / (fi + fo)),  # xavier_normal_'s std, gain 1
        "kaiming_fan_in": relu / math.sqrt(nn.init._calculate_correct_fan(w, "fan_in")),
        "kaiming_fan_out": relu / math.sqrt(nn.init._calculate_correct_fan(w, "fan_out")),
        # kaiming_uniform_'s bound: gain · √3 / √fan_in
        "linear_default_bound": leaky * math.sqrt(3.0) / math.sqrt(fi),
        **{f"drawn_{k}": v for k, v in drawn.items()},
    }
