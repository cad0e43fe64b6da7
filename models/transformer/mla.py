"""Multi-head latent attention (DeepSeek-V2): cache a small latent, rebuild K and V from it.

Each token's keys and values come from one latent c = norm(W_dkv x) of width d_c; every head
rebuilds its own k = W_uk c and v = W_uv c. Only c is cached (plus k_rope below), so the
cache holds d_c + d_rope numbers a token and layer instead of 2·H·d_head.

RoPE cannot live inside that path: q·(R_n W_uk c_n) puts a position-dependent rotation
between W_uk and c, so W_uk can no longer be folded into the query ("absorbed": q·(W_uk c)
= (W_ukᵀ q)·c, one matrix per head applied to the query once). DeepSeek's fix is a
*decoupled* part: d_rope extra query dims per head and one shared d_rope key per token,
rotated, concatenated to the nope part. Score = (q_nope·k_nope + q_rope·k_rope) / √(d_head +
d_rope). `scores` computes it explicitly, `scores_absorbed` the absorbed way: they agree to
rounding — unless `mla_rope_in_latent` puts RoPE inside the compressed path, when the
absorbed form (which cannot see the key's rotation) visibly disagrees.

Hooks: hook_latent [B, T, d_c] (this step's new latents), hook_q [B, H, T, d_head + d_rope]
(as scored, rotated), hook_k / hook_v the rebuilt K/V of every position [B, H, S, ·].
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from models.hooks import HookPoint
from models.transformer.attention import AttentionCore, Rotary
from models.transformer.cache import KVCache
from models.transformer.config import TransformerConfig
from models.transformer.norms import make_norm


class MLAttention(AttentionCore):
    def __init__(self, cfg: TransformerConfig, layer: int):
        super().__init__(cfg, layer)
        H, dh, dr, d = cfg.n_heads, cfg.d_head, cfg.d_rope, cfg.d_model
        self.d_rope, self.d_c = dr, cfg.d_c
        self.in_latent = cfg.mla_rope_in_latent
        if cfg.d_cq:  # queries through their own latent (DeepSeek-V2's q_a / q_b)
            self.q_down = nn.Linear(d, cfg.d_cq, bias=cfg.bias)
            self.q_norm = make_norm(cfg, cfg.d_cq)
            self.q_up = nn.Linear(cfg.d_cq, H * (dh + dr), bias=cfg.bias)
        else:
            self.q = nn.Linear(d, H * (dh + dr), bias=cfg.bias)
        if self.owns_kv:
            self.kv_down = nn.Linear(d, cfg.d_c + dr, bias=cfg.bias)  # [c | k_rope]
            self.kv_norm = make_norm(cfg, cfg.d_c)
            self.kv_up = nn.Linear(cfg.d_c, 2 * H * dh, bias=cfg.bias)  # per head [k | v]
        self.out = nn.Linear(H * dh, d, bias=cfg.bias)
        self.hook_latent = HookPoint()
        if self.rope:
            self.rotary = Rotary(cfg, dr) if dr else None
            self.rotary_latent = Rotary(cfg, dh) if self.in_latent else None

    # -- the pieces ------------------------------------------------------------------------
    def _queries(self, x: Tensor, t_past: int) -> tuple[Tensor, Tensor]:
        """q_nope [B, H, T, d_head] and q_rope [B, H, T, d_rope], rotated where RoPE goes."""
        B, T, _ = x.shape
        q = self.q_up(self.q_norm(self.q_down(x))) if hasattr(self, "q_up") else self.q(x)
        q = q.view(B, T, self.n_heads, self.d_head + self.d_rope).transpose(1, 2)  # [B, H, T, dq]
        q_nope, q_rope = q.split([self.d_head, self.d_rope], dim=-1)
        if self.rope and self.rotary is not None:
            q_rope = self.rotary(q_rope, t_past)
        if self.rope and self.in_latent:
            q_nope = self.rotary_latent(q_nope, t_past)
        return q_nope, q_rope

    def _latents(self, x: Tensor, t_past: int) -> tuple[Tensor, Tensor]:
        """This step's latent c [B, T, d_c] and rotated shared key k_rope [B, T, d_rope]."""
        c, k_rope = self.kv_down(x).split([self.d_c, self.d_rope], dim=-1)
        c = self.hook_latent(self.kv_norm(c))
        if self.rope and self.rotary is not None:
            k_rope = self.rotary(k_rope, t_past)  # [B, T, d_rope]: one key shared by heads
        return c, k_rope

    def _expand(self, c: Tensor, k_rope: Tensor) -> tuple[Tensor, Tensor]:
        """The explicit K [B, H, S, d_head + d_rope] and V [B, H, S, d_head] from latents."""
        B, S, _ = c.shape
        H, dh = self.n_heads, self.d_head
        kv = self.kv_up(c).view(B, S, H, 2 * dh).transpose(1, 2)  # [B, H, S, 2*dh]
        k_nope, v = kv.split(dh, dim=-1)  # [B, H, S, dh] each
        if self.rope and self.in_latent:
            k_nope = self.rotary_latent(k_nope, 0)  # RoPE inside the compressed path
        k = torch.cat([k_nope, k_rope[:, None].expand(B, H, S, self.d_rope)], dim=-1)
        return k, v  # [B, H, S, dh + dr], [B, H, S, dh]

    # -- forward ---------------------------------------------------------------------------
    def forward(
        self,
        x: Tensor,
        t_past: int = 0,
        cache: KVCache | None = None,
        shared: dict[int, tuple[Tensor, Tensor]] | None = None,
        key_mask: Tensor | None = None,
    ) -> Tensor:
        B, T, _ = x.shape
        q = self.hook_q(torch.cat(self._queries(x, t_past), dim=-1))  # [B, H, T, dh + dr]
        if self.owns_kv:
            c, k_rope = self._latents(x, t_past)
            if cache is not None:
                c, k_rope = cache.append(self.layer, c, k_rope)  # [B, S, d_c], [B, S, d_rope]
            k, v = self._expand(c, k_rope)
            k, v = self.hook_k(k), self.hook_v(v)
            if shared is not None:
                shared[self.layer] = (k, v)
        else:
            k, v = shared[self.owner]
        z = self.mix(q, k, v, t_past, key_mask)  # [B, H, T, dh]
        return self.out(z.transpose(1, 2).contiguous().view(B, T, self.n_heads * self.d_head))

    # -- the two ways to score ---------------------------------------------------------------
    def scores(self, x: Tensor) -> Tensor:
        """Scaled scores of x [B, T, d_model] with itself, K rebuilt explicitly: [B, H, T, T]."""
        q = torch.cat(self._queries(x, 0), dim=-1)  # [B, H, T, dh + dr]
        k, _ = self._expand(*self._latents(x, 0))  # [B, H, T, dh + dr]
        return q @ k.transpose(-2, -1) / (self.d_head + self.d_rope) ** 0.5

    def scores_absorbed(self, x: Tensor) -> Tensor:
        """The same scores with W_uk folded into the query: K is never rebuilt. [B, H, T, T]

        q_nope·(W_uk c + b) = (W_ukᵀ q_nope)·c + q_nope·b per head; the rope part as before.
        """
        H, dh = self.n_heads, self.d_head
        q_nope, q_rope = self._queries(x, 0)  # [B, H, T, dh], [B, H, T, dr]
        c, k_rope = self._latents(x, 0)  # [B, T, d_c], [B, T, dr]
        w_uk = self.kv_up.weight.view(H, 2 * dh, self.d_c)[:, :dh]  # [H, dh, d_c]
        q_latent = torch.einsum("bhtd,hdc->bhtc", q_nope, w_uk)  # [B, H, T, d_c]
        s = q_latent @ c[:, None].transpose(-2, -1)  # [B, H, T, T]
        if self.kv_up.bias is not None:
            b_k = self.kv_up.bias.view(H, 2 * dh)[:, :dh]  # [H, dh]
            s = s + (q_nope * b_k[None, :, None, :]).sum(-1, keepdim=True)  # [B, H, T, 1]
        s = s + q_rope @ k_rope[:, None].transpose(-2, -1)  # [B, H, T, T]
        return s / (self.d_head + self.d_rope) ** 0.5
