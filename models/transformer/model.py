"""The Transformer: embed (+ positions) -> n_layers blocks -> final norm -> unembed.

A block is a token mixer (softmax attention, MHA family or MLA; or linear attention, the
delta rule or an SSM, whose cache is a fixed-size state) and an FFN, each a residual
branch with its norm where `norm_placement` puts it:
- pre (GPT-2, Llama):      x + f(norm(x))        and a final norm after the last block
- post (2017, BERT):       norm(x + f(x))        no final norm: every block ends normalised
- sandwich (CogView, Gemma 2): x + norm_out(f(norm_in(x)))
- olmo2 (OLMo 2):          x + norm(f(x))        the branch output is normalised, not its input
With `cross_attention`, a cross-attention branch over the encoder's memory sits between the
two (the 2017 decoder). Hook points are named from the module tree (`blocks.0.attn.hook_pattern`,
`blocks.0.hook_resid_post`, ...; see `models.hooks.capture`). Generation with a KV cache
lives in `models.generate`.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from models.hooks import HookPoint, name_hooks
from models.positional import scaled_embedding, sinusoidal_table
from models.transformer.attention import Attention, CrossAttention
from models.transformer.cache import KVCache, StateCache
from models.transformer.config import TransformerConfig
from models.transformer.ffn import MoE, make_ffn
from models.transformer.linear_attention import LinearAttention
from models.transformer.mla import MLAttention
from models.transformer.norms import make_norm
from models.transformer.ssm import SSMMixer


def make_mixer(cfg: TransformerConfig, layer: int) -> nn.Module:
    """The token mixer of one block (`cfg.mixer`): softmax attention (MHA family or MLA),
    linear attention or the delta rule (linear_attention.py), or a diagonal SSM (ssm.py)."""
    if cfg.mixer in ("linear", "delta"):
        return LinearAttention(cfg, layer)
    if cfg.mixer == "ssm":
        return SSMMixer(cfg, layer)
    return MLAttention(cfg, layer) if cfg.attention == "mla" else Attention(cfg, layer)


class Block(nn.Module):
    def __init__(self, cfg: TransformerConfig, layer: int):
        super().__init__()
        self.placement = cfg.norm_placement
        sandwich = cfg.norm_placement == "sandwich"
        # Construction order matters: it fixes the init's random draws (GPT-2's ln1, attn,
        # ln2, mlp order keeps today's gpt-lab model bit for bit).
        self.ln1 = make_norm(cfg, cfg.d_model)
        self.attn = make_mixer(cfg, layer)
        self.ln1_post = make_norm(cfg, cfg.d_model) if sandwich else None
        self.cross_attn = None
        if cfg.cross_attention:
            self.ln_cross = make_norm(cfg, cfg.d_model)
            self.cross_attn = CrossAttention(cfg, layer)
            self.ln_cross_post = make_norm(cfg, cfg.d_model) if sandwich else None
            self.hook_resid_cross = HookPoint()  # after the cross-attention branch
        self.ln2 = make_norm(cfg, cfg.d_model)
        self.mlp = make_ffn(cfg, layer)
        self.ln2_post = make_norm(cfg, cfg.d_model) if sandwich else None
        self.drop = nn.Dropout(cfg.dropout)
        self.hook_resid_pre = HookPoint()
        self.hook_resid_mid = HookPoint()
        self.hook_resid_post = HookPoint()

    def _in(self, x: Tensor, norm: nn.Module) -> Tensor:
        """The branch's input."""
        return norm(x) if self.placement in ("pre", "sandwich") else x

    def _out(self, x: Tensor, h: Tensor, norm: nn.Module, norm_out: nn.Module | None) -> Tensor:
        """The stream after adding the branch output h."""
        if self.placement == "pre":
            return x + h
        if self.placement == "post":
            return norm(x + h)
        return x + (norm_out(h) if norm_out is not None else norm(h))  # sandwich, olmo2

    def forward(
        self,
        x: Tensor,
        t_past: int = 0,
        cache: KVCache | None = None,
        shared: dict | None = None,
        memory: Tensor | None = None,
        key_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
    ) -> Tensor:
        x = self.hook_resid_pre(x)
        kw = {} if key_mask is None else {"key_mask": key_mask}
        h = self.drop(self.attn(self._in(x, self.ln1), t_past, cache, shared, **kw))
        x = self.hook_resid_mid(self._out(x, h, self.ln1, self.ln1_post))
        if self.cross_attn is not None:
            h = self.drop(self.cross_attn(self._in(x, self.ln_cross), memory, memory_mask))
            x = self.hook_resid_cross(self._out(x, h, self.ln_cross, self.ln_cross_post))
        h = self.mlp(self._in(x, self.ln2))
        return self.hook_resid_post(self._out(x, h, self.ln2, self.ln2_post))  # [B, T, d_model]

    def residual_projections(self) -> list[nn.Linear]:
        cross = [self.cross_attn.out] if self.cross_attn is not None else []
        return [self.attn.out, *cross, *self.mlp.residual_projections()]


class Transformer(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.d_vocab, cfg.d_model)
        self.embed_scale = 1.0
        if cfg.positional == "learned":
            self.pos_embed = nn.Embedding(cfg.n_ctx, cfg.d_model)
        elif cfg.positional == "sinusoidal":
            table = sinusoidal_table(cfg.n_ctx, cfg.d_model)  # [n_ctx, d_model]
            self.register_buffer("pos_table", table, persistent=False)
            self.embed_scale = scaled_embedding(cfg.d_model)
        # BERT: segment embeddings and a norm on the summed embeddings (only when asked for:
        # the construction order, and so the init's random draws, of other models is kept).
        if cfg.n_token_types:
            self.embed_types = nn.Embedding(cfg.n_token_types, cfg.d_model)
        self.embed_ln = make_norm(cfg, cfg.d_model) if cfg.embed_norm else None
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg, i) for i in range(cfg.n_layers))
        self.ln_final = make_norm(cfg, cfg.d_model) if cfg.has_final_norm else nn.Identity()
        self.unembed = nn.Linear(cfg.d_model, cfg.d_vocab, bias=False)
        self.hook_embed = HookPoint()
        self.hook_pos_embed = HookPoint()  # only called for learned and sinusoidal positions
        self.hook_logits = HookPoint()
        self._init_weights()
        if cfg.tied_embeddings:
            self.unembed.weight = self.embed.weight
        name_hooks(self)

    def _init_weights(self) -> None:
        """GPT-2 init: N(0, 0.02), residual output projections shrunk by 1/√(2·n_layers) so
        the stream's variance does not grow with depth. Norms start at 1 (and 0)."""
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        for block in self.blocks:
            for proj in block.residual_projections():
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * self.cfg.n_layers))
        if self.cfg.positional == "sinusoidal":
            # Vaswani: std 1/√d, times √d at use -> RMS 1, on a par with the table's 1/√2.
            nn.init.normal_(self.embed.weight, std=self.cfg.d_model**-0.5)

    def num_params(self, non_embedding: bool = False) -> int:
        n = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n -= self.embed.weight.numel()
            if not self.cfg.tied_embeddings:
                n -= self.unembed.weight.numel()
            if self.cfg.positional == "learned":
                n -= self.pos_embed.weight.numel()
            if self.cfg.n_token_types:
                n -= self.embed_types.weight.numel()
        return n

    def hidden(
        self,
        idx: Tensor,
        cache: KVCache | None = None,
        memory: Tensor | None = None,
        key_mask: Tensor | None = None,
        token_types: Tensor | None = None,
        memory_mask: Tensor | None = None,
    ) -> Tensor:
        """idx [B, T] -> the final (normalised) stream [B, T, d_model]: an encoder's memory.

        key_mask [B, S] (S = cached + new positions), True for real tokens: padding is never
        attended to (a padded batch of sentences, as BERT's attention_mask). token_types
        [B, T] (models with `n_token_types`; default all 0: segment A). memory_mask [B, S]:
        the same for an encoder's memory (cross-attention never reads its padding).
        """
        B, T = idx.shape
        t_past = cache.rows if cache is not None else 0
        if t_past + T > self.cfg.n_ctx:
            raise ValueError(f"sequence of {t_past + T} exceeds n_ctx {self.cfg.n_ctx}")
        if self.cfg.cross_attention and memory is None:
            raise ValueError("a cross-attention model needs memory=[B, S, d_model]")
        x = self.hook_embed(self.embed(idx) * self.embed_scale)  # [B, T, d_model]
        if self.cfg.positional in ("learned", "sinusoidal"):
            pos = torch.arange(t_past, t_past + T, device=idx.device)
            table = self.pos_embed(pos) if self.cfg.positional == "learned" else self.pos_table[pos]
            x = x + self.hook_pos_embed(table.expand(B, T, -1))  # [B, T, d_model]
        if self.cfg.n_token_types:
            if token_types is None:
                token_types = torch.zeros_like(idx)
            x = x + self.embed_types(token_types)  # [B, T, d_model]
        if self.embed_ln is not None:
            x = self.embed_ln(x)
        x = self.drop(x)
        shared = {} if self.cfg.kv_share > 1 else None  # CLA: owners' K/V for later layers
        for block in self.blocks:
            x = block(x, t_past, cache, shared, memory, key_mask, memory_mask)
        if isinstance(cache, StateCache):
            cache.advance(T)  # a state has no time axis: the cache counts positions itself
        return self.ln_final(x)

    def forward(
        self,
        idx: Tensor,
        cache: KVCache | None = None,
        memory: Tensor | None = None,
        key_mask: Tensor | None = None,
        token_types: Tensor | None = None,
        memory_mask: Tensor | None = None,
    ) -> Tensor:
        """idx [B, T] token ids -> logits [B, T, d_vocab].

        With a cache, idx holds only the new tokens; they sit at positions cache.rows..,
        and their keys/values (MLA: latents) are appended to the cache. key_mask,
        token_types and memory_mask: see `hidden`.
        """
        x = self.hidden(idx, cache, memory, key_mask, token_types, memory_mask)
        return self.hook_logits(self.unembed(x))  # [B, T, V]

    def new_cache(self) -> KVCache | StateCache:
        """An empty KV cache (softmax attention) or recurrent state (every other mixer)."""
        if self.cfg.mixer != "softmax":
            return StateCache.empty(self.cfg.n_layers)
        return KVCache.empty(self.cfg.n_layers)

    def aux_loss(self) -> Tensor:
        """MoE's load-balancing loss of the last forward pass × balance_coef (0 otherwise):
        add it to the training loss."""
        terms = [b.mlp.balance for b in self.blocks if isinstance(b.mlp, MoE)]
        if not terms:
            return torch.zeros((), device=self.embed.weight.device)
        return self.cfg.balance_coef * torch.stack(terms).sum()
