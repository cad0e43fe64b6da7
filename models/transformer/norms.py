"""The norm a config asks for: LayerNorm (mean and variance) or RMSNorm (scale only).

RMSNorm drops LayerNorm's centring and bias: x / √(mean(x²) + ε) · g. Llama, Qwen and OLMo-2
use it; it is cheaper and trains as well. `nn.RMSNorm` is torch's own (2.4+).
"""

from __future__ import annotations

from torch import nn

from models.transformer.config import TransformerConfig


def make_norm(cfg: TransformerConfig, n: int) -> nn.Module:
    """A norm over the last dimension of size n (d_model for the stream, d_head for QK-norm,
    d_c for MLA's latent). LayerNorm has a bias when cfg.bias; RMSNorm never does."""
    if cfg.norm == "rmsnorm":
        return nn.RMSNorm(n, eps=cfg.norm_eps)
    return nn.LayerNorm(n, eps=cfg.norm_eps, bias=cfg.bias)
