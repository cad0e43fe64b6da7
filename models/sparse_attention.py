"""What the sparse-attention lab measures on a trained (or training) Transformer.

- `arm_configs`: one decoder as dense, window, sinks + window, strided and block-selection
  attention (the family's `sparse` fields, models/transformer/sparse.py).
- `source_distance`: on the copy and reverse tasks, how far back the token a graded position
  must output sits (reverse: 1, 3, 5, …; copy: n + 1 for every answer), so the loss can be
  read by distance and "past the window".
- `merged_masks`: the masks each layer really used on an input (block selection is
  data-dependent: a key counts when any head chose it); `window_reach`: L·(w − 1), measured
  on the composed masks.
- `first_token_mass`: the attention mass on the first token (the task's <s>, which carries
  nothing the answer needs) per layer and head, beside the share a uniform softmax over the
  same visible keys would give it. A head with nothing useful to read must still put its
  mass somewhere: mass well above that share is an attention sink, with RoPE or without.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch.nn.functional as F
from torch import Tensor

from models.transformer import TransformerConfig
from models.transformer.sparse import config_mask, farthest_back, reachability, static_mask

ARMS = ("dense", "window", "sinks+window", "strided", "block")


@dataclass(frozen=True)
class SparseArms:
    window: int = 4  # keys a windowed query sees, itself included
    sinks: int = 2  # first tokens kept visible by the sinks + window arm
    stride: int = 4  # strided: the window and every stride-th key back
    block_size: int = 4
    top_blocks: int = 1  # earlier blocks a query selects (plus its own)


def arm_configs(base: TransformerConfig, s: SparseArms) -> dict[str, TransformerConfig]:
    return {
        "dense": base,
        "window": base.replace(sparse="window", window=s.window),
        "sinks+window": base.replace(sparse="window", window=s.window, sinks=s.sinks),
        "strided": base.replace(sparse="strided", window=s.window, stride=s.stride),
        "block": base.replace(sparse="block", block_size=s.block_size, top_blocks=s.top_blocks),
    }


def source_distance(task: str, n: int) -> list[int]:
    """Per input position of `<s> a1..an | answer` (T = 2n + 1): how far back the symbol it
    must predict sits (0: ungraded). Position p predicts answer k = p - n - 1."""
    out = [0] * (2 * n + 1)
    for k in range(n):
        p = n + 1 + k
        src = 1 + k if task == "copy" else n - k  # index of the symbol the answer repeats
        out[p] = p - src
    return out


def merged_masks(cfg: TransformerConfig, store: dict[str, Tensor], B: int, T: int) -> list[Tensor]:
    """Each layer's mask from a capture of `blocks.{i}.attn.hook_mask` (dense: causal),
    heads merged (block selection: a key counts when any head chose it): [B, T, T] each."""
    out = []
    for i in range(cfg.n_layers):
        m = store.get(f"blocks.{i}.attn.hook_mask")
        if m is None:
            m = config_mask(cfg, T)
        out.append(m.any(1) if m.dim() == 4 else m.expand(B, T, T))  # [B, T, T]
    return out


def window_reach(window: int, layers: int, T: int) -> int:
    """How far back a window of `window` reaches after `layers` layers in a sequence of T."""
    mask = static_mask("window", T, 0, window)
    return int(farthest_back(reachability([mask] * layers)).max())


def first_token_mass(patterns: list[Tensor], masks: list[Tensor], first: int = 1) -> dict:
    """patterns: per layer [B, H, T, T]; masks: per layer [B, T, T] (or [T, T]).

    Over query rows past the first token that can see it: the mean mass on token 0 per
    layer and head, and the mean share 1 / (visible keys) a uniform softmax would give.
    """
    mass, uniform = [], []
    for p, m in zip(patterns, masks, strict=True):
        m = m.expand(p.shape[0], *m.shape[-2:])  # [B, T, T]
        rows = m[:, :, 0].clone()
        rows[:, :first] = False  # row 0 sees only itself
        w = rows[:, None, :].float()  # [B, 1, T]
        n = w.sum().clamp(min=1.0)
        mass.append(((p[:, :, :, 0] * w).sum((0, 2)) / n).tolist())  # [H]
        share = 1.0 / m.sum(-1).float()  # [B, T]
        uniform.append(float((share * rows).sum() / rows.sum().clamp(min=1)))
    return {"per_head": mass, "uniform": uniform}


def loss_by_distance(logits: Tensor, y: Tensor, distance: list[int]) -> dict[int, float]:
    """Mean cross-entropy of the graded positions grouped by source distance."""
    ce = F.cross_entropy(logits.transpose(1, 2), y, reduction="none").mean(0)  # [T]
    out: dict[int, list[float]] = {}
    for p, d in enumerate(distance):
        if d:
            out.setdefault(d, []).append(float(ce[p]))
    return {d: sum(v) / len(v) for d, v in sorted(out.items())}


def acc_by_distance(logits: Tensor, y: Tensor, distance: list[int]) -> dict[int, float]:
    right = (logits.argmax(-1) == y).float().mean(0)  # [T]
    out: dict[int, list[float]] = {}
    for p, d in enumerate(distance):
        if d:
            out.setdefault(d, []).append(float(right[p]))
    return {d: sum(v) / len(v) for d, v in sorted(out.items())}
