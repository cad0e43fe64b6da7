"""Optimizer configs: one frozen dataclass per arm's optimizer, built onto a model's params.

`OptimConfig(kind, lr, ...).build(params)` returns a torch optimizer; `apply(opt)` writes a
changed config's numbers into an existing one (a live learning-rate or β change keeps the
optimizer's state). Every kind is torch's own except `adam_no_bias`: Adam without the bias
correction, whose first step is lr·(1-β1)·g / (√((1-β2)·g²) + eps) ≈ 3.16·lr per coordinate
for betas (0.9, 0.999), against ≈ lr for Adam (chapter 4: why Adam corrects the bias).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

Kind = Literal["sgd", "momentum", "nesterov", "rmsprop", "adam", "adam_no_bias", "adamw"]
KINDS: tuple[str, ...] = Kind.__args__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class OptimConfig:
    kind: Kind = "sgd"
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)  # Adam family: torch's defaults
    eps: float = 1e-8  # Adam family and RMSProp
    momentum: float = 0.9  # momentum and nesterov only ("sgd" is plain SGD)
    alpha: float = 0.99  # RMSProp's moving-average decay (torch's default)
    weight_decay: float = 0.0  # adamw: decoupled; every other kind: L2 added to the gradient

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown optimizer {self.kind!r}; one of {', '.join(KINDS)}")

    def build(self, params: Iterable[Tensor]) -> torch.optim.Optimizer:
        # foreach: the same arithmetic as the per-tensor loop (bitwise, checked in
        # tests/backend/test_optim.py) in one call per kind of op, not one per parameter:
        # on the CPU torch's default is the loop, which was a fifth of a toy model's step.
        k, wd, fe = self.kind, self.weight_decay, True
        if k == "sgd":
            return torch.optim.SGD(params, lr=self.lr, weight_decay=wd, foreach=fe)
        if k in ("momentum", "nesterov"):
            return torch.optim.SGD(
                params,
                lr=self.lr,
                momentum=self.momentum,
                nesterov=k == "nesterov",
                weight_decay=wd,
                foreach=fe,
            )
        if k == "rmsprop":
            return torch.optim.RMSprop(
                params, lr=self.lr, alpha=self.alpha, eps=self.eps, weight_decay=wd, foreach=fe
            )
        if k == "adam":
            return torch.optim.Adam(params, lr=self.lr, betas=self.betas, eps=self.eps, weight_decay=wd, foreach=fe)  # fmt: skip
        if k == "adamw":
            return torch.optim.AdamW(params, lr=self.lr, betas=self.betas, eps=self.eps, weight_decay=wd, foreach=fe)  # fmt: skip
        return AdamNoBias(params, lr=self.lr, betas=self.betas, eps=self.eps, weight_decay=wd)

    def hyper(self) -> dict[str, object]:
        """The numbers this kind's param groups hold (what `apply` writes)."""
        k = self.kind
        out: dict[str, object] = {"lr": self.lr, "weight_decay": self.weight_decay}
        if k in ("momentum", "nesterov"):
            out["momentum"] = self.momentum
        elif k == "rmsprop":
            out.update(alpha=self.alpha, eps=self.eps)
        elif k != "sgd":
            out.update(betas=self.betas, eps=self.eps)
        return out

    def apply(self, opt: torch.optim.Optimizer) -> None:
        """Write this config's numbers into `opt`'s groups (same kind: state is kept)."""
        hyper = self.hyper()
        for group in opt.param_groups:
            group.update(hyper)


class AdamNoBias(torch.optim.Optimizer):
    """Adam without bias correction: m and v start at 0 and are used as they are, so the
    first steps are too large by 1/√(1-β2) · (1-β1) ≈ 3.16 (β = 0.9, 0.999) and shrink
    towards Adam's as β2ᵗ fades. `weight_decay` is L2, added to the gradient (as Adam's)."""

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ):
        if lr < 0 or eps < 0 or not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"bad AdamNoBias settings lr={lr} betas={betas} eps={eps}")
        super().__init__(
            params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        )

    @torch.no_grad()
    def step(self, closure=None):  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if group["weight_decay"]:
                    g = g.add(p, alpha=group["weight_decay"])
                state = self.state[p]
                if not state:
                    state["step"] = torch.zeros(())
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                m, v = state["exp_avg"], state["exp_avg_sq"]
                state["step"] += 1
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                p.addcdiv_(m, v.sqrt().add_(group["eps"]), value=-group["lr"])
        return loss
