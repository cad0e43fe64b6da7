"""A multi-layer perceptron with named hook points on every layer.

Hook names: ``layers.{i}.hook_pre`` (the affine output) and ``layers.{i}.hook_post`` (after
the activation) for hidden layers, and ``hook_logits`` for the output layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from models.hooks import HookPoint

Activation = Literal["relu", "tanh", "sigmoid", "gelu", "silu", "linear"]
Init = Literal["default", "kaiming", "xavier", "small", "zeros"]

ACTIVATIONS = {
    "relu": F.relu,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "gelu": F.gelu,
    "silu": F.silu,
    "linear": lambda x: x,
}


@dataclass(frozen=True)
class MLPConfig:
    d_in: int
    hidden: tuple[int, ...] = (8, 8)
    d_out: int = 1
    activation: Activation = "relu"
    # "default" is torch's nn.Linear init (Kaiming-uniform with a=√5); "small" is the
    # book's randn·0.01, which trains slowly in deep nets; "zeros" never breaks symmetry.
    init: Init = "default"


class Layer(nn.Module):
    def __init__(self, d_in: int, d_out: int, activation: Activation):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out)
        self.act = ACTIVATIONS[activation]
        self.hook_pre = HookPoint()
        self.hook_post = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        return self.hook_post(self.act(self.hook_pre(self.linear(x))))


class MLP(nn.Module):
    def __init__(self, cfg: MLPConfig):
        super().__init__()
        self.cfg = cfg
        sizes = (cfg.d_in, *cfg.hidden)
        self.layers = nn.ModuleList(
            Layer(a, b, cfg.activation) for a, b in zip(sizes[:-1], sizes[1:], strict=True)
        )
        self.out = nn.Linear(sizes[-1], cfg.d_out)
        self.hook_logits = HookPoint()
        init_weights(self, cfg.init)

    def forward(self, x: Tensor) -> Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.hook_logits(self.out(x))

    def linears(self) -> list[nn.Linear]:
        return [layer.linear for layer in self.layers] + [self.out]


def init_weights(model: MLP, init: Init) -> None:
    if init == "default":
        return
    with torch.no_grad():
        for lin in model.linears():
            if init == "kaiming":
                nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            elif init == "xavier":
                nn.init.xavier_normal_(lin.weight)
            elif init == "small":
                lin.weight.copy_(torch.randn_like(lin.weight) * 0.01)
            elif init == "zeros":
                lin.weight.zero_()
            lin.bias.zero_()


def layer_grad_norms(model: MLP) -> tuple[Tensor, list[str]]:
    """Per-layer gradient norms (weights and bias together) and their labels: the stages
    of `models.stages.grad_stages` ("layers.{i}", "out")."""
    from models.stages import grad_stages, stage_grad_norms

    stages = grad_stages(model)
    return torch.tensor(stage_grad_norms(stages)), [label for label, _ in stages]
