"""LayerNorm against BatchNorm on a padded batch of two sentences (the `transformer` lab).

The batch: 今天 天气 真 好 + 3 PAD beside 人工 智能 正在 改变 我们 的 世界, three features a
token (今天 = [0.12, 0.45, 0.78] as the text has it; the others drawn once from a seeded
generator). Both norms are torch's own modules, without their affine part.
- LayerNorm normalises each token over its own features: 今天 → [−1.2247, 0, 1.2247] in any
  batch, whatever is padded beside it.
- BatchNorm normalises each feature over every position of the batch (B·T of them), PAD
  rows included: its mean and variance, and so 今天's output, change with how much padding
  the batch holds and with the other sentence. Computed on the real tokens only, it gives
  another answer. That, and sentences of varying length, is why sequence models use
  LayerNorm, not causality.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

SHORT = ("今天", "天气", "真", "好")
LONG = ("人工", "智能", "正在", "改变", "我们", "的", "世界")
PAD_TOKEN = "PAD"
TODAY = (0.12, 0.45, 0.78)


@dataclass(frozen=True)
class PaddedBatchConfig:
    d: int = 3
    seed: int = 0  # the features of every token but 今天
    eps: float = 1e-5


def padded_batch(
    cfg: PaddedBatchConfig = PaddedBatchConfig(),
) -> tuple[Tensor, Tensor, list[list[str]]]:
    """(x [2, 7, d], real [2, 7] bool, tokens): PAD rows are zeros."""
    T = len(LONG)
    gen = torch.Generator().manual_seed(cfg.seed)
    feats = (torch.rand(len(SHORT) + T, cfg.d, generator=gen) * 2 - 1).round(decimals=2)
    feats[0, :3] = torch.tensor(TODAY)
    x = torch.zeros(2, T, cfg.d)
    x[0, : len(SHORT)] = feats[: len(SHORT)]
    x[1] = feats[len(SHORT) :]
    real = torch.zeros(2, T, dtype=torch.bool)
    real[0, : len(SHORT)] = True
    real[1] = True
    tokens = [[*SHORT, *[PAD_TOKEN] * (T - len(SHORT))], list(LONG)]
    return x, real, tokens


@torch.no_grad()
def compare_norms(cfg: PaddedBatchConfig = PaddedBatchConfig()) -> dict[str, Tensor | list]:
    """Both norms on the padded batch, BatchNorm also on its real tokens only, and 今天
    alone (a batch of one sentence without padding)."""
    x, real, tokens = padded_batch(cfg)
    B, T, d = x.shape
    ln = nn.LayerNorm(d, eps=cfg.eps, elementwise_affine=False)
    bn = nn.BatchNorm1d(d, eps=cfg.eps, affine=False, track_running_stats=False)
    flat = x.reshape(B * T, d)  # [B·T, d]: BatchNorm's statistics run over every position
    bn_padded = bn(flat).reshape(B, T, d)
    bn_real = torch.zeros_like(x)
    bn_real[real] = bn(x[real])  # [n_real, d]: the statistics of real tokens only
    short = x[0, : len(SHORT)]  # the short sentence on its own: no PAD, no other sentence
    return {
        "x": x,
        "real": real,
        "tokens": tokens,
        "layernorm": ln(x),  # [B, T, d]
        "batchnorm_padded": bn_padded,
        "batchnorm_real": bn_real,
        "bn_mean_padded": flat.mean(0),  # [d]
        "bn_var_padded": flat.var(0, unbiased=False),
        "bn_mean_real": x[real].mean(0),
        "bn_var_real": x[real].var(0, unbiased=False),
        "today_layernorm_alone": ln(short)[0],
        "today_batchnorm_alone": bn(short)[0],
    }
