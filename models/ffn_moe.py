"""The ffn-moe lab's model side: four FFNs of one toy decoder, and what is measured on them.

The arms are the Transformer family (models.transformer) with only `ffn` changed: ReLU,
GELU, SwiGLU, and a mixture of experts whose first layer keeps a dense SwiGLU (as
DeepSeek-V3's first three). Measured here, by torch, never typed in:

- `silu_minimum()`: SiLU's minimum, x·σ(x) at the root of its derivative (Newton in float64
  from the grid's best point): about −0.27846 at x ≈ −1.27846. SiLU is not a 0–1 gate.
- `dead_fraction`: per layer, the share of FFN units whose pre-activation is never positive
  on a batch. Under ReLU such a unit outputs 0 and gets no gradient (it stays dead); GELU
  and SiLU still pass a small negative output and gradient there.
- `top_share`: the load share of the n busiest experts (1.0 with top-2 routing: every
  token's two slots go to the same two experts; 2/E when the load is even).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from models.hooks import capture
from models.transformer import Transformer, TransformerConfig
from models.transformer.ffn import MoE

ARMS = ("relu", "gelu", "swiglu", "moe")


@dataclass(frozen=True)
class FFNMoEConfig:
    # A char-level decoder on the bundled text. 8 experts top-2 on the English text at lr
    # 1e-2 and seed 0: without balancing the load collapses onto two experts within ~50
    # steps (top-2 share > 0.8); with it (coef 0.1) it stays near even (docs/ffn-moe.md).
    n_layers: int = 2
    d_model: int = 32
    n_heads: int = 4
    n_ctx: int = 32
    d_vocab: int = 64
    d_ff: int = 128  # every dense FFN, and the MoE model's first (dense) layer
    n_experts: int = 8
    top_k: int = 2
    expert_ffn: int = 32
    shared_expert: bool = False
    balance_coef: float = 0.1

    def transformer(self, ffn: str) -> TransformerConfig:
        """One arm's decoder: the same everywhere but the FFN."""
        moe = ffn == "moe"
        return TransformerConfig(
            n_layers=self.n_layers,
            d_model=self.d_model,
            n_heads=self.n_heads,
            n_ctx=self.n_ctx,
            d_vocab=self.d_vocab,
            d_ff=self.d_ff,
            positional="rope",
            norm="rmsnorm",
            bias=False,
            ffn=ffn,  # type: ignore[arg-type]
            n_experts=self.n_experts,
            top_k=self.top_k,
            expert_ffn=self.expert_ffn if moe else 0,
            shared_expert=self.shared_expert and moe,
            balance_coef=self.balance_coef,
            dense_layers=1 if moe else 0,
        )


def silu_minimum() -> tuple[float, float]:
    """(x, silu(x)) at SiLU's minimum: the grid's best point, then Newton on silu'(x) = 0."""
    grid = torch.linspace(-6.0, 0.0, 6001, dtype=torch.float64)
    x = grid[torch.nn.functional.silu(grid).argmin()].clone()
    for _ in range(20):
        s = torch.sigmoid(x)
        d1 = s * (1 + x * (1 - s))  # silu'(x)
        d2 = s * (1 - s) * (2 + x * (1 - 2 * s))  # silu''(x)
        x = x - d1 / d2
    return float(x), float(torch.nn.functional.silu(x))


def activation_curves(lo: float = -4.0, hi: float = 4.0, n: int = 81) -> tuple[Tensor, Tensor]:
    """xs [n] and ReLU, GELU, SiLU of them [3, n] for the page's curves."""
    xs = torch.linspace(lo, hi, n)
    F = torch.nn.functional
    return xs, torch.stack([F.relu(xs), F.gelu(xs), F.silu(xs)])  # [3, n]


def moe_layers(model: nn.Module) -> list[tuple[int, MoE]]:
    """(layer index, MoE) of every routed layer."""
    return [(i, b.mlp) for i, b in enumerate(model.blocks) if isinstance(b.mlp, MoE)]


def dense_layers(model: Transformer) -> list[int]:
    return [i for i, b in enumerate(model.blocks) if not isinstance(b.mlp, MoE)]


@torch.no_grad()
def dead_fraction(model: Transformer, x: Tensor) -> dict[int, float]:
    """Per dense layer: the share of FFN units whose pre-activation (ReLU/GELU: fc's output;
    SwiGLU: the gate's) is ≤ 0 at every position of batch x [B, T]."""
    layers = dense_layers(model)
    names = [f"blocks.{i}.mlp.hook_pre" for i in layers]
    with capture(model, names) as store:
        model(x)
    out = {}
    for i, name in zip(layers, names, strict=True):
        pre = store[name].flatten(0, -2)  # [B·T, d_ff]
        out[i] = float((pre <= 0).all(dim=0).float().mean())
    return out


def top_share(load: Tensor, n: int = 2) -> float:
    """The load share of the n busiest experts."""
    return float(load.sort(descending=True).values[:n].sum())


@torch.no_grad()
def routes(model: Transformer, x: Tensor) -> dict[int, tuple[Tensor, Tensor, Tensor]]:
    """Per MoE layer on one example x [1, T]: each token's chosen experts [T, k], their
    weights [T, k], and the load of this example [E]."""
    model(x)
    return {i: (m.chosen[0], m.gates[0], m.load.clone()) for i, m in moe_layers(model)}
