"""The `positions` lab's models and measurements: one small decoder, five position schemes.

The arms are one `TransformerConfig` with `positional` swapped (none, sinusoidal, learned,
RoPE, ALiBi). They train at length `train_len` and are tested at `test_len` (= n_ctx, so the
learned table has rows past train_len that no gradient ever reached). What this file
measures, all from torch:
- accuracy by position on a long held-out batch (the extrapolation curve), and where it
  breaks: the first position past train_len whose running accuracy falls below halfway
  between chance and 1; beside it what order-blind guessing scores (`bag_accuracy`);
- RoPE's two layouts: a model run in the other layout after permuting its q/k features
  (`convert_rope_layout`) gives the same logits to rounding; the same weights run in the
  other layout unpermuted (`mixed_rope_layout`) do not;
- RoPE's wavelengths 2π/ω_i per feature pair, to set beside train_len: pairs slower than
  train_len never turned a full circle in training, so past it they show angles never seen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from models.positional import frequencies, interleaved_to_half
from models.transformer import Transformer, TransformerConfig

SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi")


@dataclass(frozen=True)
class PositionsConfig:
    # 2 layers × 4 heads × d_model 64 learn lag-2 at length 32 in ~150 steps (learned,
    # RoPE) to ~250 (ALiBi, sinusoidal) on one CPU thread; NoPE gets part of the way.
    n_layers: int = 2
    d_model: int = 64
    n_heads: int = 4
    train_len: int = 32  # L: every training sequence has this length
    test_len: int = 128  # 4L: n_ctx of every arm, and the held-out batch's length
    n_symbols: int = 10
    rope_theta: float = 10000.0
    rope_layout: str = "rotate_half"
    causal: bool = True  # False: NoPE becomes permutation-equivariant and cannot find lag

    def __post_init__(self) -> None:
        if self.test_len < self.train_len:
            raise ValueError(f"test_len {self.test_len} < train_len {self.train_len}")

    def arm(self, scheme: str) -> TransformerConfig:
        if scheme not in SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}: one of {SCHEMES}")
        return TransformerConfig(
            n_layers=self.n_layers,
            d_model=self.d_model,
            n_heads=self.n_heads,
            n_ctx=self.test_len,
            d_vocab=self.n_symbols + 1,
            positional=scheme,
            rope_theta=self.rope_theta,
            rope_layout=self.rope_layout,
            causal=self.causal,
        )


# -- the extrapolation curve ------------------------------------------------------------------


@torch.no_grad()
def accuracy_by_position(logits: Tensor, y: Tensor, mask: Tensor) -> Tensor:
    """Fraction right at each position over the batch: [T]; NaN where nothing is graded."""
    right = ((logits.argmax(-1) == y) & mask).sum(0).float()  # [T]
    graded = mask.sum(0).float()  # [T]
    return torch.where(graded > 0, right / graded.clamp(min=1), torch.nan)


@torch.no_grad()
def bag_accuracy(x: Tensor, y: Tensor, mask: Tensor, n_symbols: int) -> float:
    """What order-blind guessing scores: at every graded position, the sequence's most
    frequent symbol (ties: the lowest). A model that sees only which tokens a sequence holds,
    not where (NoPE without the causal mask), can do this and no better than about this —
    above 1/n_symbols, because the label is one of the sequence's own tokens."""
    counts = torch.zeros(x.shape[0], n_symbols + 1).scatter_add_(
        1, x, torch.ones_like(x, dtype=torch.float)
    )
    mode = counts[:, :n_symbols].argmax(1)  # [B]; <s> (id n_symbols) left out
    right = (y == mode[:, None]) & mask  # [B, T]
    return float(right.sum() / mask.sum())


def span_mean(acc: Tensor, start: int, stop: int) -> float:
    """Mean of the graded positions in [start, stop); NaN when none is graded."""
    part = acc[start:stop]
    part = part[~part.isnan()]
    return float(part.mean()) if len(part) else math.nan


def breaks_at(acc: Tensor, train_len: int, chance: float, window: int = 8) -> int | None:
    """First position p >= train_len where the accuracy over [p, p + window) falls below
    halfway between chance and 1; None if it holds to the end."""
    bar = (1.0 + chance) / 2
    for p in range(train_len, len(acc) - window + 1):
        if span_mean(acc, p, p + window) < bar:
            return p
    return None


# -- RoPE's two layouts -----------------------------------------------------------------------


def _qk_rows(cfg: TransformerConfig, perm: Tensor) -> Tensor:
    """Row order of a fused qkv weight with `perm` applied inside every q and k head."""
    H, Hkv, dh = cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    heads = [perm + h * dh for h in range(H + Hkv)]  # q heads, then k heads
    v = torch.arange((H + Hkv) * dh, (H + 2 * Hkv) * dh)
    return torch.cat([*heads, v])


@torch.no_grad()
def convert_rope_layout(model: Transformer, layout: str) -> Transformer:
    """The same network in the other RoPE layout: q/k features permuted inside each head so
    that every score, and so every output, is unchanged (up to rounding).

    `interleaved_to_half` gives P with rope_half(x[P]) = rope_interleaved(x)[P]: an
    interleaved model's q, k become a rotate-half model's q[P], k[P] (dot products over
    permuted features are equal); the other way round uses P's inverse.
    """
    cfg = model.cfg
    if cfg.positional != "rope" or layout == cfg.rope_layout:
        raise ValueError("convert a RoPE model to the layout it does not have")
    perm = interleaved_to_half(cfg.d_head)
    if layout == "interleaved":
        perm = perm.argsort()
    out = Transformer(cfg.replace(rope_layout=layout))
    state = dict(model.state_dict())
    rows = _qk_rows(cfg, perm)
    for i in range(cfg.n_layers):
        for name in (f"blocks.{i}.attn.qkv.weight", f"blocks.{i}.attn.qkv.bias"):
            if name in state:
                state[name] = state[name][rows]
    out.load_state_dict(state)
    return out.train(model.training)


@torch.no_grad()
def mixed_rope_layout(model: Transformer) -> Transformer:
    """The same weights run with the other layout and no permutation: a checkpoint loaded
    into code that pairs its features differently."""
    cfg = model.cfg
    other = "interleaved" if cfg.rope_layout == "rotate_half" else "rotate_half"
    out = Transformer(cfg.replace(rope_layout=other))
    out.load_state_dict(model.state_dict())
    return out.train(model.training)


def rope_wavelengths(d_head: int, theta: float) -> Tensor:
    """Positions a feature pair takes to turn a full circle, 2π/ω_i, fastest first: [d/2]."""
    return 2 * math.pi / frequencies(d_head, theta, torch.float64)
