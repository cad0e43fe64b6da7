"""The family's encoder-decoder (2017): an encoder of the family's blocks without a mask,
a decoder whose blocks add cross-attention over the encoder's memory, one embedding table.

    cfg = EncoderDecoderConfig(encoder=TransformerConfig(causal=False, ...),
                               decoder=TransformerConfig(cross_attention=True, ...))
    model = EncoderDecoder(cfg)
    logits = model(src, tgt_in)            # [B, T, V]

Both stacks are `Transformer`s of the family. What the family's config does not say lives
here: one table shared by source, target and the output projection (`shared_embeddings`),
a final norm after each stack even when its blocks are post-norm (`final_norms`, as the
text's model), and a bias on the output logits (`output_bias`). `param_count()` is exact
from the configs alone (a test holds it to `sum(p.numel())`), so the text's 63-million
parameter model is counted without allocating it (`scale_reference`).

Hooks (capture by name): `encoder.blocks.{i}.attn.hook_pattern` [B, H, S, S],
`decoder.blocks.{i}.attn.hook_pattern` [B, H, T, T] (masked), and
`decoder.blocks.{i}.cross_attn.hook_pattern` [B, H, T, S] (the alignment).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.hooks import HookPoint, name_hooks
from models.transformer.config import TransformerConfig
from models.transformer.model import Transformer
from models.transformer.norms import make_norm


@dataclass(frozen=True)
class EncoderDecoderConfig:
    encoder: TransformerConfig  # causal=False, no cross-attention
    decoder: TransformerConfig  # cross_attention=True, causal
    shared_embeddings: bool = True  # one table: source, target and output projection
    final_norms: bool = True  # a norm after each stack, also after post-norm blocks
    output_bias: bool = True  # a bias on the logits (the text's model has one)
    pad_id: int = 0

    def __post_init__(self) -> None:
        e, d = self.encoder, self.decoder
        if e.causal or e.cross_attention:
            raise ValueError("the encoder sees every source position: causal=False, no cross")
        if not d.cross_attention or not d.causal:
            raise ValueError(
                "the decoder is causal and attends over the memory: cross_attention=True"
            )
        if e.d_model != d.d_model:
            raise ValueError("the memory must have the decoder's width: same d_model")
        if self.shared_embeddings and (
            e.d_vocab != d.d_vocab or not (e.tied_embeddings and d.tied_embeddings)
        ):
            raise ValueError("one shared table needs one vocabulary and tied_embeddings on both")

    def _extra_norm(self, cfg: TransformerConfig) -> int:
        """A final norm this file adds (the family has none after post-norm blocks)."""
        return cfg._norm_params(cfg.d_model) if self.final_norms and not cfg.has_final_norm else 0

    def param_count(self) -> int:
        e, d = self.encoder, self.decoder
        n = e.param_count() + d.param_count()
        if self.shared_embeddings:
            n -= e.d_vocab * e.d_model  # the decoder's table (and so its output) is the encoder's
        n += self._extra_norm(e) + self._extra_norm(d)
        return n + (d.d_vocab if self.output_bias else 0)

    def attention_modules(self) -> int:
        """Attention modules: encoder self, decoder masked self and cross."""
        return self.encoder.n_layers + 2 * self.decoder.n_layers


def toy_config(
    vocab: int,
    src_len: int,
    tgt_len: int,
    n_layers: int = 2,
    d_model: int = 64,
    n_heads: int = 4,
    norm_placement: str = "post",
    qk_norm: bool = False,
) -> EncoderDecoderConfig:
    """The lab's small model: the text's shape (post-norm, ReLU FFN 4·d, sinusoidal positions,
    one table) at toy size."""
    base = TransformerConfig(
        n_layers=n_layers,
        d_model=d_model,
        n_heads=n_heads,
        d_vocab=vocab,
        positional="sinusoidal",
        norm_placement=norm_placement,
        ffn="relu",
        tied_embeddings=True,
        qk_norm=qk_norm,
    )
    return EncoderDecoderConfig(
        encoder=base.replace(causal=False, n_ctx=src_len),
        decoder=base.replace(cross_attention=True, n_ctx=tgt_len),
    )


def scale_reference(qk_norm: bool = False) -> EncoderDecoderConfig:
    """The text's model, as a shape: 6 + 6 post-norm layers of d 512, 8 heads, FFN 2048, one
    37,000-token table for source, target and output, an output bias, a final LayerNorm on
    each stack. 63,121,544 parameters; with LayerNorm QK-norm in all 18 attention modules
    (weight and bias over d_head 64, on q and k) 63,126,152."""
    return toy_config(37_000, 256, 256, n_layers=6, d_model=512, n_heads=8, qk_norm=qk_norm)


class EncoderDecoder(nn.Module):
    def __init__(self, cfg: EncoderDecoderConfig):
        super().__init__()
        self.cfg = cfg
        self.encoder = Transformer(cfg.encoder)
        self.decoder = Transformer(cfg.decoder)
        if cfg.shared_embeddings:  # one Parameter: counted once by .parameters()
            self.decoder.embed.weight = self.encoder.embed.weight
            self.decoder.unembed.weight = self.encoder.embed.weight
        self.enc_norm = self._final(cfg.encoder)
        self.dec_norm = self._final(cfg.decoder)
        self.out_bias = nn.Parameter(torch.zeros(cfg.decoder.d_vocab)) if cfg.output_bias else None
        self.hook_logits = HookPoint()
        name_hooks(self)  # encoder.blocks.0..., decoder.blocks.0...: unique names

    def _final(self, cfg: TransformerConfig) -> nn.Module:
        return make_norm(cfg, cfg.d_model) if self.cfg._extra_norm(cfg) else nn.Identity()

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        """src [B, S] -> (memory [B, S, d_model], memory_mask [B, S]: True for real tokens)."""
        mask = src != self.cfg.pad_id
        return self.enc_norm(self.encoder.hidden(src, key_mask=mask)), mask

    def decode(self, tgt_in: Tensor, memory: Tensor, memory_mask: Tensor) -> Tensor:
        """tgt_in [B, T] (bos + target so far) -> logits [B, T, V]. Padding after a target's
        end is never seen by a real position (causal mask); the memory's is masked."""
        x = self.decoder.hidden(tgt_in, memory=memory, memory_mask=memory_mask)
        logits = F.linear(self.dec_norm(x), self.decoder.unembed.weight, self.out_bias)
        return self.hook_logits(logits)  # [B, T, V]

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        memory, mask = self.encode(src)
        return self.decode(tgt_in, memory, mask)


def noam_lr(step: int | Tensor, d_model: int, warmup: int) -> float | Tensor:
    """The 2017 schedule: d^−0.5 · min(step^−0.5, step · warmup^−1.5), step from 1. It rises
    linearly for `warmup` steps to d^−0.5 · warmup^−0.5, then falls as 1/√step."""
    if isinstance(step, Tensor):
        s = step.double().clamp(min=1)
        return d_model**-0.5 * torch.minimum(s**-0.5, s * warmup**-1.5)
    s = max(1, step)
    return d_model**-0.5 * min(s**-0.5, s * warmup**-1.5)
