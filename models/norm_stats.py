"""Where the norm goes, which norm, and QK-norm: the `norms` lab's arms and what it measures.

The arms are one Transformer (models.transformer) with one choice changed: the norm's
placement (pre, post, OLMo-2, sandwich), the norm itself (LayerNorm, RMSNorm), or QK-norm
off and on. What the lab streams besides the loss and the engine's per-layer gradient norms
comes from here, measured on the model's own attention (`hook_attn_scores`, `hook_pattern`):

- the largest attention logit per layer: max over heads and visible (query, key) pairs of
  q·k/√d_head, the number that grows without bound when q and k grow;
- the attention entropy per layer, −Σ p log p over each query's visible keys, averaged over
  heads and queries, with the uniform pattern's entropy (mean of log(t + 1): query t sees
  t + 1 keys under the causal mask) beside it as the ceiling;
- QK-norm's cap: with q and k each normalised per head, |q̂·k̂|/√d ≤ ‖q̂‖‖k̂‖/√d, and a
  normalised vector's length is bounded by its norm's learned gain (and bias):
  ‖g ⊙ x̂ + b‖ ≤ √d·max|g| + ‖b‖. The cap is the gains', not a constant: gains that grow
  let the logit grow too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from models.hooks import capture
from models.transformer import Transformer, TransformerConfig

Compare = Literal["placement", "norm", "qk_norm"]


@dataclass(frozen=True)
class NormArmsConfig:
    """Which choice the arms differ in; the others are the base config's."""

    compare: Compare = "placement"
    placements: tuple[str, ...] = ("pre", "post", "olmo2", "sandwich")
    norms: tuple[str, ...] = ("layernorm", "rmsnorm")


def arm_configs(arms: NormArmsConfig, base: TransformerConfig) -> dict[str, TransformerConfig]:
    """label -> config: the base with the compared choice set to each of its values."""
    if arms.compare == "placement":
        return {p: base.replace(norm_placement=p) for p in arms.placements}
    if arms.compare == "norm":
        return {n: base.replace(norm=n) for n in arms.norms}
    if arms.compare == "qk_norm":
        return {"qk_off": base.replace(qk_norm=False), "qk_on": base.replace(qk_norm=True)}
    raise ValueError(f"unknown compare {arms.compare!r}")


@dataclass(frozen=True)
class AttentionStats:
    max_logit: list[float]  # per layer: the largest visible q·k/√d
    entropy: list[float]  # per layer: mean attention entropy (nats)
    head_entropy: list[list[float]]  # [layer][head]
    uniform_entropy: float  # the ceiling: every query spreads evenly over what it sees


def uniform_entropy(t: int) -> float:
    """Mean over queries 0..t-1 of log(keys seen) under the causal mask (query i sees i+1)."""
    return float(torch.log(torch.arange(1, t + 1, dtype=torch.float64)).mean())


@torch.no_grad()
def attention_stats(model: Transformer, x: Tensor) -> AttentionStats:
    """Every layer's largest attention logit and mean entropy on the batch x [B, T]."""
    L = model.cfg.n_layers
    names = [f"blocks.{i}.attn.hook_{k}" for i in range(L) for k in ("attn_scores", "pattern")]
    was = model.training
    model.eval()
    try:
        with capture(model, names) as store:
            model(x)
    finally:
        model.train(was)
    T = x.shape[1]
    seen = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()  # [T, T] causal
    if not model.cfg.causal:
        seen = torch.ones_like(seen)
    max_logit, entropy, heads = [], [], []
    for i in range(L):
        scores = store[f"blocks.{i}.attn.hook_attn_scores"]  # [B, H, T, T], before the mask
        pattern = store[f"blocks.{i}.attn.hook_pattern"]  # [B, H, T, T], masked softmax
        max_logit.append(float(scores.masked_fill(~seen, float("-inf")).amax()))
        h = -torch.special.xlogy(pattern, pattern).sum(-1)  # [B, H, T]; 0·log 0 = 0
        per_head = h.mean(dim=(0, 2))  # [H]
        heads.append(per_head.tolist())
        entropy.append(float(per_head.mean()))
    return AttentionStats(
        max_logit, entropy, heads, uniform_entropy(T) if model.cfg.causal else math.log(T)
    )


def _norm_reach(norm: nn.Module, d: int) -> float:
    """The longest vector the norm can output: √d·max|g| (+ ‖b‖ for a LayerNorm bias)."""
    g = norm.weight.detach().abs().max() if norm.weight is not None else torch.tensor(1.0)
    b = getattr(norm, "bias", None)
    reach = math.sqrt(d) * float(g)
    return reach + (float(b.detach().norm()) if b is not None else 0.0)


@torch.no_grad()
def qk_caps(model: Transformer) -> list[float | None]:
    """Per layer, the largest logit QK-norm allows: ‖q̂‖max · ‖k̂‖max / √d_head, from the
    learned gains; None for a layer without QK-norm (no cap: q and k can grow freely)."""
    out: list[float | None] = []
    d = model.cfg.d_head
    for block in model.blocks:
        attn = block.attn
        if not getattr(attn, "qk_norm", False):
            out.append(None)
            continue
        out.append(_norm_reach(attn.q_norm, d) * _norm_reach(attn.k_norm, d) / math.sqrt(d))
    return out


def layer_grad_norms(model: Transformer) -> list[float]:
    """Each block's gradient norm (all its parameters' .grad as one vector): what the
    engine streams per stage, for a gradient computed outside a training step."""
    out = []
    for block in model.blocks:
        grads = [p.grad.flatten() for p in block.parameters() if p.grad is not None]
        out.append(float(torch.cat(grads).norm()) if grads else 0.0)
    return out
