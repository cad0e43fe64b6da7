"""Sparse attention masks (the config's `sparse`, `window`, `stride`, `block_size`,
`top_blocks`, `sinks`) and reachability: which earlier tokens can reach position t at all.

A mask is bool, True where query i (absolute position t_past + row) may see key j, the
causal mask included: [T, S] for the fixed kinds, [B, H, T, S] for block selection (each
query head picks its own blocks).

- window:  j > i - window (the last `window` keys, itself included)
- strided: the window, and every key a multiple of `stride` back (Sparse Transformer, 2019)
- block:   keys in blocks of `block_size`; a query sees its own block (causally) and the
           `top_blocks` earlier blocks it scores highest. The score of a block is q · (the
           block's mean key) / √d, as in MoBA (2025); NSA scores compressed keys instead.
           The choice is a top-k, not differentiable: gradients reach the chosen keys only.
           Earlier blocks are always complete, so a cached decode chooses what a
           recomputation chooses.
- sinks:   the first `sinks` keys stay visible to every later query (StreamingLLM), with
           any kind.

Information also flows along the residual stream (a position keeps what it had), so after
L layers position t holds what the composition (M_L ∨ I) · … · (M_1 ∨ I) reaches: with a
window w, L·(w − 1) tokens back.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from models.transformer.config import TransformerConfig


def positions(t_new: int, t_past: int, device: torch.device | None = None) -> tuple[Tensor, Tensor]:
    """Query positions [T, 1] and key positions [1, S] (S = t_past + t_new)."""
    q_pos = torch.arange(t_past, t_past + t_new, device=device)[:, None]
    k_pos = torch.arange(t_past + t_new, device=device)[None, :]
    return q_pos, k_pos


def static_mask(
    kind: str,
    t_new: int,
    t_past: int = 0,
    window: int = 0,
    stride: int = 0,
    sinks: int = 0,
    device: torch.device | None = None,
) -> Tensor:
    """[T, S] bool for the kinds that do not look at the data (dense, window, strided)."""
    q_pos, k_pos = positions(t_new, t_past, device)
    back = q_pos - k_pos  # [T, S]: how far back key j sits from query i
    causal = back >= 0
    if kind == "dense":
        seen = torch.ones_like(causal)
    elif kind == "window":
        seen = back < window
    elif kind == "strided":
        seen = (back < window) | (back % stride == 0)
    else:
        raise ValueError(f"{kind!r} is not a fixed mask (block selection needs q and k)")
    return causal & (seen | (k_pos < sinks))  # [T, S]


def block_scores(q: Tensor, k: Tensor, block_size: int) -> Tensor:
    """q [B, H, T, d], k [B, H, S, d] -> [B, H, T, n_full]: q · each complete block's mean key."""
    n_full = k.shape[2] // block_size
    means = k[:, :, : n_full * block_size].unflatten(2, (n_full, block_size)).mean(3)
    return q @ means.transpose(-2, -1) / math.sqrt(q.shape[-1])  # [B, H, T, n_full]


def block_mask(
    q: Tensor, k: Tensor, t_past: int, block_size: int, top_blocks: int, sinks: int = 0
) -> Tensor:
    """[B, H, T, S] bool: own block (causally), the top_blocks best earlier blocks, sinks.

    q [B, H, T, d]; k [B, H_kv, S, d] (GQA: a KV head's blocks are scored by each query head
    of its group).
    """
    if k.shape[1] != q.shape[1]:
        k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)  # [B, H, S, d]
    T, S = q.shape[2], k.shape[2]
    q_pos, k_pos = positions(T, t_past, q.device)
    own = q_pos // block_size  # [T, 1]: the query's block
    allowed = (k_pos <= q_pos) & ((k_pos // block_size == own) | (k_pos < sinks))  # [T, S]
    allowed = allowed.expand(q.shape[0], q.shape[1], T, S)  # [B, H, T, S]
    n_full = S // block_size
    if n_full == 0 or top_blocks == 0:
        return allowed.clone()
    scores = block_scores(q, k, block_size)  # [B, H, T, n_full]
    earlier = torch.arange(n_full, device=q.device)[None, :] < own  # [T, n_full]
    scores = scores.masked_fill(~earlier, float("-inf"))
    top = scores.topk(min(top_blocks, n_full), dim=-1)  # [B, H, T, k]
    chosen = torch.zeros_like(scores, dtype=torch.bool)
    chosen.scatter_(-1, top.indices, top.values > float("-inf"))  # [B, H, T, n_full]
    in_full = k_pos[0] < n_full * block_size  # [S]
    key_block = (k_pos[0] // block_size).clamp(max=n_full - 1)  # [S]
    picked = chosen[..., key_block] & in_full  # [B, H, T, S]
    return allowed | picked


def sparse_mask(cfg: TransformerConfig, q: Tensor, k: Tensor, t_past: int) -> Tensor:
    """The config's mask for queries q [B, H, T, d] over keys k [B, H_kv, S, d]."""
    if cfg.sparse == "block":
        return block_mask(q, k, t_past, cfg.block_size, cfg.top_blocks, cfg.sinks)
    T = q.shape[2]
    return static_mask(cfg.sparse, T, t_past, cfg.window, cfg.stride, cfg.sinks, q.device)


def config_mask(cfg: TransformerConfig, t: int) -> Tensor:
    """[t, t] bool: the fixed kinds' mask of a whole sequence (block selection: its
    guaranteed part, the own block and sinks; what it adds depends on the data)."""
    if cfg.sparse == "block":
        q_pos, k_pos = positions(t, 0)
        own = k_pos // cfg.block_size == q_pos // cfg.block_size
        return (k_pos <= q_pos) & (own | (k_pos < cfg.sinks))
    return static_mask(cfg.sparse, t, 0, cfg.window, cfg.stride, cfg.sinks)


def reachability(masks: list[Tensor]) -> Tensor:
    """Masks of layers 1..L (each [..., T, T], bool; a head axis already merged) -> the
    boolean composition R_L [..., T, T]: R[t, j] True when token j can influence position t
    after these layers. Each layer adds what its mask reads to what the residual kept."""
    T = masks[0].shape[-1]
    eye = torch.eye(T, dtype=torch.bool, device=masks[0].device)
    reach = eye.expand_as(masks[0]).float()
    for m in masks:
        reach = (((m | eye).float() @ reach) > 0).float()  # [..., T, T]
    return reach > 0


def reach_by_layer(masks: list[Tensor]) -> list[Tensor]:
    """R_1, ..., R_L: the reachability after each layer."""
    return [reachability(masks[: i + 1]) for i in range(len(masks))]


def farthest_back(reach: Tensor) -> Tensor:
    """[..., T] long: for each position t, t minus the earliest token that reaches it."""
    T = reach.shape[-1]
    idx = torch.arange(T, device=reach.device)
    first = torch.where(reach, idx, T).amin(-1)  # [..., T]
    return idx - first
