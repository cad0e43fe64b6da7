"""Build one of our models straight from a checkpoint's tensors, without a random init.

The model is made on the "meta" device (no memory, no init), then the checkpoint's tensors
become its parameters (`assign=True`: no copy, so a 135M model costs its weights once, not
twice). A tied unembedding is tied again afterwards (assigning gives each key its own
Parameter). RoPE's tables are real CPU tensors (made under torch.device("cpu")).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from models.transformer import Transformer, TransformerConfig


def build(cls: type[Transformer], cfg: TransformerConfig, state: dict[str, Tensor]) -> Transformer:
    """cls(cfg) holding exactly `state` (strict: every key, no extra); float32 as given."""
    with torch.device("meta"):
        model = cls(cfg)
    model.load_state_dict(state, strict=True, assign=True)
    if cfg.tied_embeddings:
        model.unembed.weight = model.embed.weight
    meta = [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if meta:
        raise RuntimeError(f"tensors left unloaded: {meta[:5]}")
    return model


def freeze(model: nn.Module) -> nn.Module:
    """Eval mode, no gradients: a shared model is read-only (sessions only run forwards)."""
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model
