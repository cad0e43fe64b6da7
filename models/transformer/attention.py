"""Softmax attention, the `mixer="softmax"` of the family: MHA, GQA and MQA by n_kv_heads.

Two equal paths. Training uses the fused `F.scaled_dot_product_attention`, which never
materialises the [T, S] pattern. When a capture asks for `hook_attn_scores` or
`hook_pattern`, the same maths runs explicitly (minGPT style) so the pattern can be shown;
tests hold the two paths equal for every variant. GQA: each of the n_kv_heads key/value
heads serves n_heads / n_kv_heads consecutive query heads (repeat_interleave, as Llama and
Qwen do). QK-norm normalises q and k per head before RoPE. As in TransformerLens, `hook_q`
/ `hook_k` hold q and k before the rotation, `hook_rot_q` / `hook_rot_k` after; hook_k and
hook_v hold this step's new rows, [B, n_kv_heads, T, d_head]. ALiBi's distance penalty is
part of `hook_attn_scores` (the scores the softmax sees, before the causal mask).

Sparse attention (`cfg.sparse` other than "dense"; models.transformer.sparse): the causal
mask is replaced by the sparse one, a bool mask to SDPA in the fused path (with ALiBi: -inf
in the bias), the same mask on the explicit path's scores, so `hook_pattern` is zero outside
it; `hook_mask` holds it ([T, S], or [B, H, T, S] for block selection). A dense config takes
none of this code.

CLA (kv_share > 1): a layer that does not own K/V has only a query projection and reads
its owner's (k, v) — all positions, cache included — from `shared`, filled by the owner
earlier in the same forward pass.
"""

from __future__ import annotations

import math
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.hooks import HookPoint, is_capturing
from models.positional import alibi_bias, alibi_slopes, apply_rope, rope_cos_sin
from models.transformer.cache import KVCache
from models.transformer.config import TransformerConfig
from models.transformer.norms import make_norm
from models.transformer.sparse import sparse_mask


def causal_mask(t_new: int, t_past: int, device: torch.device | None = None) -> Tensor:
    """[t_new, t_past + t_new] bool, True where query i (at t_past + i) may see key j."""
    q_pos = torch.arange(t_past, t_past + t_new, device=device)[:, None]
    k_pos = torch.arange(t_past + t_new, device=device)[None, :]
    return k_pos <= q_pos


@lru_cache(maxsize=16)
def _rope_tables(n_ctx: int, d: int, theta: float, layout: str) -> tuple[Tensor, Tensor]:
    """One (cos, sin) pair per shape, shared by every layer (read-only): SmolLM2's 30 layers
    × 8,192 positions would otherwise hold 120 MB of identical tables."""
    with torch.device("cpu"):  # real tensors even when a loader builds the model on "meta"
        cos, sin = rope_cos_sin(torch.arange(n_ctx), d, theta, layout)
    return cos.float(), sin.float()


class Rotary(nn.Module):
    """RoPE for d features in the config's layout: angles for every position up to n_ctx."""

    def __init__(self, cfg: TransformerConfig, d: int):
        super().__init__()
        self.layout = cfg.rope_layout
        cos, sin = _rope_tables(cfg.n_ctx, d, cfg.rope_theta, self.layout)
        self.register_buffer("cos", cos, persistent=False)  # [n_ctx, d]
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, x: Tensor, t_past: int) -> Tensor:
        """Rotate x [..., T, d] whose rows sit at positions t_past .. t_past + T - 1."""
        T = x.shape[-2]
        return apply_rope(
            x, self.cos[t_past : t_past + T], self.sin[t_past : t_past + T], self.layout
        )


class AttentionCore(nn.Module):
    """What MHA and MLA share: hooks, ALiBi, and the fused and explicit paths of
    softmax(q·kᵀ / √d_qk + bias, masked) · v."""

    def __init__(self, cfg: TransformerConfig, layer: int, cross: bool = False):
        super().__init__()
        self.layer = layer  # index into the KV cache
        self.owner = layer if cross else cfg.kv_owner(layer)
        self.owns_kv = cross or cfg.owns_kv(layer)
        self.n_heads, self.n_kv_heads, self.d_head = cfg.n_heads, cfg.n_kv_heads, cfg.d_head
        self.causal = cfg.causal and not cross  # memory positions are all visible
        self.rope = cfg.positional == "rope" and not cross
        self.alibi = cfg.positional == "alibi" and not cross
        self.sparse = cfg if cfg.sparse != "dense" and not cross else None
        self.dropout = cfg.dropout
        self.pattern_drop = nn.Dropout(cfg.dropout)
        self.hook_q, self.hook_k, self.hook_v = HookPoint(), HookPoint(), HookPoint()
        self.hook_attn_scores = HookPoint()  # scaled q·k (+ ALiBi), BEFORE the mask: finite
        self.hook_pattern = HookPoint()  # softmax of the masked scores; rows sum to 1
        self.hook_z = HookPoint()  # pattern @ v, per head, before the output projection
        if self.rope:
            self.hook_rot_q, self.hook_rot_k = HookPoint(), HookPoint()
        if self.alibi:
            self.register_buffer("alibi_slopes", alibi_slopes(cfg.n_heads), persistent=False)
        if self.sparse is not None:
            self.hook_mask = HookPoint()  # the sparse mask, causal part included

    def wants_pattern(self) -> bool:
        return is_capturing(self.hook_attn_scores) or is_capturing(self.hook_pattern)

    def mix(
        self, q: Tensor, k: Tensor, v: Tensor, t_past: int, key_mask: Tensor | None = None
    ) -> Tensor:
        """q [B, H, T, d_qk], k [B, H_kv, S, d_qk], v [B, H_kv, S, d_v] -> z [B, H, T, d_v].

        key_mask [B, S] bool, True where a key is a real token (False: padding, never seen).
        """
        if self.wants_pattern():
            return self.hook_z(self._explicit(q, k, v, t_past, key_mask))
        T = q.shape[2]
        mask, is_causal = None, False
        if self.sparse is not None:
            mask = self._sparse(q, k, t_past)  # [T, S] or [B, H, T, S] bool
            if self.alibi:
                bias = alibi_bias(self.alibi_slopes, T, t_past, q.device).to(q.dtype)
                mask = bias.masked_fill(~mask, float("-inf"))  # [H, T, S] or [B, H, T, S]
        elif self.alibi:
            mask = self._bias(T, t_past, q.device).to(q.dtype)  # [H, T, S], -inf masked
        elif self.causal and t_past == 0 and key_mask is None:
            is_causal = True  # top-left aligned mask is right when q and k start together
        elif self.causal and (T > 1 or key_mask is not None):  # (one new row sees every key)
            mask = causal_mask(T, t_past, q.device)  # [T, t_past + T], bottom-right
        if key_mask is not None:
            pad = key_mask[:, None, None, :]  # [B, 1, 1, S]
            if mask is None:
                mask = pad
            elif mask.dtype == torch.bool:
                mask = mask & pad  # [B, 1, T, S]
            else:
                mask = mask.masked_fill(~pad, float("-inf"))  # [B, H, T, S]
        kw = {"enable_gqa": True} if k.shape[1] != q.shape[1] else {}
        drop = self.dropout if self.training else 0.0
        z = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=drop, is_causal=is_causal, **kw
        )  # [B, H, T, d_v]
        return self.hook_z(z)

    def _sparse(self, q: Tensor, k: Tensor, t_past: int) -> Tensor:
        return self.hook_mask(sparse_mask(self.sparse, q, k, t_past))

    def _bias(self, T: int, t_past: int, device: torch.device) -> Tensor:
        """ALiBi's penalty with the causal mask folded in as -inf: [H, T, S]."""
        bias = alibi_bias(self.alibi_slopes, T, t_past, device)  # [H, T, S]
        if self.causal:
            bias = bias.masked_fill(~causal_mask(T, t_past, device), float("-inf"))
        return bias

    def _explicit(
        self, q: Tensor, k: Tensor, v: Tensor, t_past: int, key_mask: Tensor | None = None
    ) -> Tensor:
        """The same maths as the fused kernel, with the pattern materialised and hooked."""
        allowed = self._sparse(q, k, t_past) if self.sparse is not None else None
        if k.shape[1] != q.shape[1]:  # GQA / MQA: each KV head serves a group of queries
            group = q.shape[1] // k.shape[1]
            k = k.repeat_interleave(group, dim=1)  # [B, H, S, d_qk]
            v = v.repeat_interleave(group, dim=1)  # [B, H, S, d_v]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # [B, H, T, S]
        if self.alibi:
            scores = scores + alibi_bias(self.alibi_slopes, q.shape[2], t_past, q.device)
        scores = self.hook_attn_scores(scores)
        if allowed is not None:  # sparse: the causal mask is part of it
            scores = scores.masked_fill(~allowed, float("-inf"))
        elif self.causal:
            allowed = causal_mask(q.shape[2], t_past, q.device)  # [T, S]
            scores = scores.masked_fill(~allowed, float("-inf"))
        if key_mask is not None:
            scores = scores.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        pattern = self.hook_pattern(scores.softmax(dim=-1))  # [B, H, T, S]
        return self.pattern_drop(pattern) @ v  # [B, H, T, d_v]


class Attention(AttentionCore):
    """Self-attention with H query heads and n_kv_heads key/value heads (MHA/GQA/MQA).

    A layer owning K/V has one fused projection to [q | k | v] (GPT-2's `qkv`; its rows are
    q's H·d_head, then k's and v's n_kv_heads·d_head each); a CLA layer that borrows K/V has
    only `q`.
    """

    def __init__(self, cfg: TransformerConfig, layer: int):
        super().__init__(cfg, layer)
        H, Hkv, dh, d = cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.d_model
        self.split = [H * dh, Hkv * dh, Hkv * dh]
        if self.owns_kv:
            self.qkv = nn.Linear(d, (H + 2 * Hkv) * dh, bias=cfg.bias)
        else:
            self.q = nn.Linear(d, H * dh, bias=cfg.bias)
        self.out = nn.Linear(H * dh, d, bias=cfg.bias)
        self.qk_norm = cfg.qk_norm
        if cfg.qk_norm:
            self.q_norm, self.k_norm = make_norm(cfg, dh), make_norm(cfg, dh)
        if self.rope:
            self.rotary = Rotary(cfg, dh)

    def forward(
        self,
        x: Tensor,
        t_past: int = 0,
        cache: KVCache | None = None,
        shared: dict[int, tuple[Tensor, Tensor]] | None = None,
        key_mask: Tensor | None = None,
    ) -> Tensor:
        B, T, _ = x.shape
        H, Hkv, dh = self.n_heads, self.n_kv_heads, self.d_head
        if self.owns_kv:
            q, k, v = self.qkv(x).split(self.split, dim=2)  # [B, T, H*dh], 2 × [B, T, Hkv*dh]
            k = k.view(B, T, Hkv, dh).transpose(1, 2)  # [B, Hkv, T, dh]
            k = self.hook_k(self.k_norm(k) if self.qk_norm else k)
            v = self.hook_v(v.view(B, T, Hkv, dh).transpose(1, 2))  # [B, Hkv, T, dh]
            if self.rope:
                k = self.hook_rot_k(self.rotary(k, t_past))
            if cache is not None:
                k, v = cache.append(self.layer, k, v)  # [B, Hkv, t_past + T, dh]
            if shared is not None:
                shared[self.layer] = (k, v)
        else:
            q = self.q(x)  # [B, T, H*dh]
            k, v = shared[self.owner]  # the owner's, all positions: [B, Hkv, S, dh]
        q = q.view(B, T, H, dh).transpose(1, 2)  # [B, H, T, dh]
        q = self.hook_q(self.q_norm(q) if self.qk_norm else q)
        if self.rope:
            q = self.hook_rot_q(self.rotary(q, t_past))
        z = self.mix(q, k, v, t_past, key_mask)  # [B, H, T, dh]
        z = z.transpose(1, 2).contiguous().view(B, T, H * dh)  # [B, T, H*dh]
        return self.out(z)


class CrossAttention(AttentionCore):
    """Decoder queries over an encoder's memory [B, S, d_model]: no mask, no positions
    (the memory carries its own), K/V recomputed from the memory each call."""

    def __init__(self, cfg: TransformerConfig, layer: int):
        super().__init__(cfg, layer, cross=True)
        H, Hkv, dh, d = cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.d_model
        self.q = nn.Linear(d, H * dh, bias=cfg.bias)
        self.kv = nn.Linear(d, 2 * Hkv * dh, bias=cfg.bias)
        self.out = nn.Linear(H * dh, d, bias=cfg.bias)
        self.qk_norm = cfg.qk_norm
        if cfg.qk_norm:
            self.q_norm, self.k_norm = make_norm(cfg, dh), make_norm(cfg, dh)

    def forward(self, x: Tensor, memory: Tensor, memory_mask: Tensor | None = None) -> Tensor:
        """memory_mask [B, S] bool, True for real memory positions (a padded source batch)."""
        B, T, _ = x.shape
        S = memory.shape[1]
        H, Hkv, dh = self.n_heads, self.n_kv_heads, self.d_head
        q = self.q(x).view(B, T, H, dh).transpose(1, 2)  # [B, H, T, dh]
        k, v = self.kv(memory).view(B, S, 2 * Hkv, dh).transpose(1, 2).split(Hkv, dim=1)
        if self.qk_norm:  # k, v: [B, Hkv, S, dh]
            q, k = self.q_norm(q), self.k_norm(k)
        q, k, v = self.hook_q(q), self.hook_k(k), self.hook_v(v)
        z = self.mix(q, k, v, 0, memory_mask)  # [B, H, T, dh]
        return self.out(z.transpose(1, 2).contiguous().view(B, T, H * dh))  # [B, T, d_model]
