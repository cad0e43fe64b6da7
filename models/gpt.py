"""The GPT: the Transformer family's `gpt-nano` preset, under the names labs use today.

`GPT` is `models.transformer.Transformer` and `GPTConfig` is `TransformerConfig` (aliases,
not subclasses: a GPT is one configuration of the family). The defaults are today's gpt-lab
model: 2 pre-LN blocks × 4 heads × d_model 64, learned positions, GELU MLP of 4·d_model,
biases, untied unembedding, GPT-2 init; its parameter names (`blocks.0.attn.qkv.weight`,
`blocks.0.mlp.fc.weight`, ...) and random init are bit for bit what they were, so saved runs
load unchanged. One rename: the MLP width is `d_ff` (was `d_mlp`).

`grad_stages`, `stage_grad_norms` now live in `models.stages` (every family); they and
`layer_grad_norms` are re-exported here.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from models.stages import grad_stages, stage_grad_norms
from models.transformer import Transformer, TransformerConfig
from models.transformer.config import Positional

GPT = Transformer
GPTConfig = TransformerConfig

__all__ = [
    "GPT",
    "GPTConfig",
    "Positional",
    "grad_stages",
    "layer_grad_norms",
    "stage_grad_norms",
]


def layer_grad_norms(model: nn.Module) -> tuple[Tensor, list[str]]:
    """Gradient norm of each stage and its label (see `models.stages.grad_stages`)."""
    stages = grad_stages(model)
    return torch.tensor(stage_grad_norms(stages)), [label for label, _ in stages]
