"""A tiny decoder-only Transformer (GPT), nanoGPT/minGPT style, with named hook points.

token ids -> embed (+ positions) -> n_layers × pre-LN block -> final LayerNorm -> logits.
Each block: x + attn(ln1(x)), then x + mlp(ln2(x)). Every intermediate the labs draw passes
through a HookPoint named from the module tree (`blocks.0.attn.hook_pattern`); see
`models.hooks.capture`. Generation with a KV cache lives in `models.generate`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.attention import Attention, KVCache
from models.hooks import HookPoint, name_hooks
from models.positional import scaled_embedding, sinusoidal_table

Positional = Literal["none", "learned", "sinusoidal", "rope"]


@dataclass(frozen=True)
class GPTConfig:
    # 2 layers × 4 heads × d_model 64 (~100k parameters) learn the synthetic tasks in a
    # few hundred CPU steps and leave room for an induction circuit (it needs 2 layers).
    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64
    d_head: int = 0  # 0 means d_model // n_heads, so the heads split d_model evenly
    d_mlp: int = 0  # 0 means 4 * d_model, the GPT-2 ratio
    n_ctx: int = 32  # longest sequence: rows of the position table and of RoPE's angles
    d_vocab: int = 16
    dropout: float = 0.0  # synthetic tasks draw fresh samples every step: nothing to overfit
    positional: Positional = "learned"  # GPT-2 adds learned position embeddings
    causal: bool = True  # False removes the mask: training "cheats" by reading the answer
    rope_theta: float = 10000.0  # RoPE base; larger = slower rotations, longer wavelengths

    def __post_init__(self) -> None:
        if self.d_head == 0:
            if self.d_model % self.n_heads:
                raise ValueError(f"d_model {self.d_model} not divisible by n_heads {self.n_heads}")
            object.__setattr__(self, "d_head", self.d_model // self.n_heads)
        if self.d_mlp == 0:
            object.__setattr__(self, "d_mlp", 4 * self.d_model)
        if self.positional not in ("none", "learned", "sinusoidal", "rope"):
            raise ValueError(f"unknown positional {self.positional!r}")
        if self.positional == "sinusoidal" and self.d_model % 2:
            raise ValueError("sinusoidal positions need an even d_model")
        if self.positional == "rope" and self.d_head % 2:
            raise ValueError("RoPE rotates pairs of features: d_head must be even")

    def replace(self, **changes) -> GPTConfig:
        """A copy with changes, re-deriving d_head and d_mlp unless they are given.

        (`dataclasses.replace` would keep the old filled-in values: d_model 64 -> 128
        would keep d_head 16 and d_mlp 256.)
        """
        changes.setdefault("d_head", 0)
        changes.setdefault("d_mlp", 0)
        return dataclasses.replace(self, **changes)


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.d_mlp)
        self.proj = nn.Linear(cfg.d_mlp, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.hook_pre = HookPoint()
        self.hook_post = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        h = self.hook_post(F.gelu(self.hook_pre(self.fc(x))))  # [B, T, d_mlp]
        return self.drop(self.proj(h))


class Block(nn.Module):
    """Pre-LayerNorm residual block: normalising the branch input, not the stream, keeps
    the residual path an identity at init, so deep stacks train without warm-up tricks."""

    def __init__(self, cfg: GPTConfig, layer: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg, layer)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = MLP(cfg)
        self.drop = nn.Dropout(cfg.dropout)
        self.hook_resid_pre = HookPoint()
        self.hook_resid_mid = HookPoint()
        self.hook_resid_post = HookPoint()

    def forward(self, x: Tensor, cache: KVCache | None = None) -> Tensor:
        x = self.hook_resid_pre(x)
        x = self.hook_resid_mid(x + self.drop(self.attn(self.ln1(x), cache)))
        return self.hook_resid_post(x + self.mlp(self.ln2(x)))  # [B, T, d_model]


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
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
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg, i) for i in range(cfg.n_layers))
        self.ln_final = nn.LayerNorm(cfg.d_model)
        self.unembed = nn.Linear(cfg.d_model, cfg.d_vocab, bias=False)
        self.hook_embed = HookPoint()
        self.hook_pos_embed = HookPoint()  # only called for learned and sinusoidal positions
        self.hook_logits = HookPoint()
        self._init_weights()
        name_hooks(self)

    def _init_weights(self) -> None:
        """GPT-2 init: N(0, 0.02), residual output projections shrunk by 1/√(2·n_layers) so
        the stream's variance does not grow with depth."""
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        for block in self.blocks:
            for proj in (block.attn.out, block.mlp.proj):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * self.cfg.n_layers))
        if self.cfg.positional == "sinusoidal":
            # Vaswani: std 1/√d, times √d at use -> RMS 1, on a par with the table's 1/√2.
            nn.init.normal_(self.embed.weight, std=self.cfg.d_model**-0.5)

    def num_params(self, non_embedding: bool = False) -> int:
        n = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n -= self.embed.weight.numel() + self.unembed.weight.numel()
            if self.cfg.positional == "learned":
                n -= self.pos_embed.weight.numel()
        return n

    def forward(self, idx: Tensor, cache: KVCache | None = None) -> Tensor:
        """idx [B, T] token ids -> logits [B, T, d_vocab].

        With a cache, idx holds only the new tokens; they sit at positions cache.rows..,
        and their keys/values are appended to the cache.
        """
        B, T = idx.shape
        t_past = cache.rows if cache is not None else 0
        if t_past + T > self.cfg.n_ctx:
            raise ValueError(f"sequence of {t_past + T} exceeds n_ctx {self.cfg.n_ctx}")
        x = self.hook_embed(self.embed(idx) * self.embed_scale)  # [B, T, d_model]
        if self.cfg.positional in ("learned", "sinusoidal"):
            pos = torch.arange(t_past, t_past + T, device=idx.device)
            table = self.pos_embed(pos) if self.cfg.positional == "learned" else self.pos_table[pos]
            x = x + self.hook_pos_embed(table.expand(B, T, -1))  # [B, T, d_model]
        x = self.drop(x)
        for block in self.blocks:
            x = block(x, cache)
        return self.hook_logits(self.unembed(self.ln_final(x)))  # [B, T, d_vocab]

    def new_cache(self) -> KVCache:
        return KVCache.empty(self.cfg.n_layers)


def grad_stages(model: GPT) -> list[tuple[str, list[nn.Parameter]]]:
    """The stages whose gradient norms a lab streams: embeddings, every block, final norm +
    unembedding. A lab finds them once; walking the module tree every step costs ~0.5 ms."""
    return [
        ("embed", [p for n, p in model.named_parameters() if n.startswith(("embed", "pos_"))]),
        *((f"blocks.{i}", list(b.parameters())) for i, b in enumerate(model.blocks)),
        ("unembed", [*model.ln_final.parameters(), *model.unembed.parameters()]),
    ]


def stage_grad_norms(stages: list[tuple[str, list[nn.Parameter]]]) -> list[float]:
    """Each stage's gradient norm (all its parameters' gradients as one vector). One fused
    norm over every gradient, read once, then per stage the root of the summed squares in
    Python: a lab pays this every step, and each extra tensor op there costs ~15 µs (with
    the per-stage tensor maths it took ~210 µs a step, now ~140)."""
    grads, counts = [], []
    for _, params in stages:
        have = [p.grad for p in params if p.grad is not None]
        grads += have
        counts.append(len(have))
    norms = torch.stack(torch._foreach_norm(grads)).tolist() if grads else []
    out, start = [], 0
    for n in counts:
        out.append(math.sqrt(sum(x * x for x in norms[start : start + n])))
        start += n
    return out


def layer_grad_norms(model: GPT) -> tuple[Tensor, list[str]]:
    """Gradient norm of each stage and its label (see `grad_stages`)."""
    stages = grad_stages(model)
    return torch.tensor(stage_grad_norms(stages)), [label for label, _ in stages]
