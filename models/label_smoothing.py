"""Label smoothing, in both conventions the sources use.

With ε = 0.1 and K classes the target distribution is either
- "others" (the text's table): 1 − ε on the target, ε/(K−1) on each other class
  (K = 4: 0.90 and 0.0333);
- "uniform" (the text's code, and torch's `CrossEntropyLoss(label_smoothing=ε)`): ε spread
  over all K classes, the target included: 1 − ε + ε/K on the target, ε/K elsewhere
  (K = 4: 0.925 and 0.025).
The loss is the cross-entropy against that distribution, −Σ q·log p. A perplexity computed
as e^(this loss) is above the model's true perplexity e^(−mean log p_target): the smoothed
target puts mass on classes a good model gives almost none.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

Convention = Literal["uniform", "others"]


def smoothed_targets(target: Tensor, k: int, eps: float, convention: Convention) -> Tensor:
    """target [N] class ids -> the smoothed distributions [N, K] (rows sum to 1)."""
    if convention == "uniform":
        on, off = 1.0 - eps + eps / k, eps / k
    elif convention == "others":
        on, off = 1.0 - eps, eps / (k - 1)
    else:
        raise ValueError(f"unknown convention {convention!r}")
    q = torch.full((target.numel(), k), off, dtype=torch.float64)
    return q.scatter_(1, target.reshape(-1, 1), on)  # [N, K]


def smoothed_ce(
    logits: Tensor,
    target: Tensor,
    eps: float,
    convention: Convention = "uniform",
    ignore_index: int | None = None,
) -> Tensor:
    """Mean over the kept positions of −Σ q·log_softmax(logits). logits [..., K], target
    [...]; ignore_index drops positions (padding), as torch's does."""
    k = logits.shape[-1]
    logp = F.log_softmax(logits.reshape(-1, k), dim=-1)  # [N, K]
    flat = target.reshape(-1)
    keep = torch.ones_like(flat, dtype=torch.bool) if ignore_index is None else flat != ignore_index
    q = smoothed_targets(flat.clamp(0, k - 1), k, eps, convention).to(logp.dtype)  # [N, K]
    per = -(q * logp).sum(-1)  # [N]
    return per[keep].mean()
