"""Multi-head self-attention with two equal paths, and the KV cache that generation grows.

Training uses the fused `F.scaled_dot_product_attention`, which never materialises the
[T, T] pattern. When a capture asks for `hook_attn_scores` or `hook_pattern`, the same
maths runs explicitly (minGPT style) so the pattern can be shown; tests hold the two paths
equal. With RoPE, q and k are rotated (rotate_half layout) before either path; as in
TransformerLens, `hook_q`/`hook_k` hold them before the rotation, `hook_rot_q`/`hook_rot_k`
after. q, k, v, z are per head: [B, H, T, d_head].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.hooks import HookPoint, is_capturing
from models.positional import apply_rope, rope_cos_sin

if TYPE_CHECKING:
    from models.gpt import GPTConfig


@dataclass
class KVCache:
    """Keys and values of every position seen so far, one entry per layer.

    Each entry is [B, H, T_past, d_head]; a decode step appends one row per layer, so the
    new token's query attends to all past keys without recomputing them.
    """

    keys: list[Tensor | None] = field(default_factory=list)
    values: list[Tensor | None] = field(default_factory=list)

    @classmethod
    def empty(cls, n_layers: int) -> KVCache:
        return cls([None] * n_layers, [None] * n_layers)

    def layer_rows(self, layer: int) -> int:
        k = self.keys[layer]
        return 0 if k is None else k.shape[2]

    @property
    def rows(self) -> int:
        """Positions cached (the same in every layer between forward passes)."""
        return self.layer_rows(0) if self.keys else 0

    @property
    def nbytes(self) -> int:
        """Bytes held: 2 (K and V) × layers × B × H × rows × d_head × element size."""
        return sum(t.nbytes for t in (*self.keys, *self.values) if t is not None)

    def append(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add this step's k, v [B, H, T_new, d_head]; return all of them [B, H, T_past+T_new, d_head]."""
        old_k, old_v = self.keys[layer], self.values[layer]
        if old_k is not None:
            k = torch.cat([old_k, k], dim=2)  # [B, H, T_past + T_new, d_head]
            v = torch.cat([old_v, v], dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v


def causal_mask(t_new: int, t_past: int, device: torch.device | None = None) -> Tensor:
    """[t_new, t_past + t_new] bool, True where query i (at t_past + i) may see key j."""
    q_pos = torch.arange(t_past, t_past + t_new, device=device)[:, None]
    k_pos = torch.arange(t_past + t_new, device=device)[None, :]
    return k_pos <= q_pos


class Attention(nn.Module):
    """H heads of scaled dot-product attention over the residual stream."""

    def __init__(self, cfg: GPTConfig, layer: int):
        super().__init__()
        self.layer = layer  # index into the KV cache
        self.n_heads, self.d_head = cfg.n_heads, cfg.d_head
        self.causal, self.rope = cfg.causal, cfg.positional == "rope"
        self.dropout = cfg.dropout
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.n_heads * cfg.d_head)
        self.out = nn.Linear(cfg.n_heads * cfg.d_head, cfg.d_model)
        self.pattern_drop = nn.Dropout(cfg.dropout)
        self.hook_q, self.hook_k, self.hook_v = HookPoint(), HookPoint(), HookPoint()
        self.hook_attn_scores = HookPoint()  # scaled q·k / √d_head, BEFORE the mask: finite
        self.hook_pattern = HookPoint()  # softmax of the masked scores; rows sum to 1
        self.hook_z = HookPoint()  # pattern @ v, per head, before the output projection
        if self.rope:
            self.hook_rot_q, self.hook_rot_k = HookPoint(), HookPoint()
            cos, sin = rope_cos_sin(torch.arange(cfg.n_ctx), cfg.d_head, cfg.rope_theta)
            self.register_buffer("rope_cos", cos.float(), persistent=False)  # [n_ctx, d_head]
            self.register_buffer("rope_sin", sin.float(), persistent=False)

    def wants_pattern(self) -> bool:
        return is_capturing(self.hook_attn_scores) or is_capturing(self.hook_pattern)

    def forward(self, x: Tensor, cache: KVCache | None = None) -> Tensor:
        B, T, _ = x.shape
        H, dh = self.n_heads, self.d_head
        t_past = cache.layer_rows(self.layer) if cache is not None else 0
        q, k, v = self.qkv(x).split(H * dh, dim=2)  # 3 × [B, T, H*dh]
        q = self.hook_q(q.view(B, T, H, dh).transpose(1, 2))  # [B, H, T, dh]
        k = self.hook_k(k.view(B, T, H, dh).transpose(1, 2))  # [B, H, T, dh]
        v = self.hook_v(v.view(B, T, H, dh).transpose(1, 2))  # [B, H, T, dh]
        if self.rope:
            cos = self.rope_cos[t_past : t_past + T]  # [T, dh]
            sin = self.rope_sin[t_past : t_past + T]
            q = self.hook_rot_q(apply_rope(q, cos, sin))
            k = self.hook_rot_k(apply_rope(k, cos, sin))
        if cache is not None:
            k, v = cache.append(self.layer, k, v)  # [B, H, t_past + T, dh]
        drop = self.dropout if self.training else 0.0
        if self.wants_pattern():
            z = self._explicit(q, k, v, t_past)
        else:
            mask, is_causal = None, False
            if self.causal and t_past == 0:
                is_causal = True  # top-left aligned mask is right when q and k start together
            elif self.causal and T > 1:  # (a single new row may see every key: no mask)
                mask = causal_mask(T, t_past, x.device)  # [T, t_past + T], bottom-right
            z = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=drop, is_causal=is_causal
            )  # [B, H, T, dh]
        z = self.hook_z(z)
        z = z.transpose(1, 2).contiguous().view(B, T, H * dh)  # [B, T, H*dh]
        return self.out(z)

    def _explicit(self, q: Tensor, k: Tensor, v: Tensor, t_past: int) -> Tensor:
        """The same maths as the fused kernel, with the pattern materialised and hooked."""
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # [B, H, T, S]
        scores = self.hook_attn_scores(scores)
        if self.causal:
            allowed = causal_mask(q.shape[2], t_past, q.device)  # [T, S]
            scores = scores.masked_fill(~allowed, float("-inf"))
        pattern = self.hook_pattern(scores.softmax(dim=-1))  # [B, H, T, S]
        return self.pattern_drop(pattern) @ v  # [B, H, T, dh]
