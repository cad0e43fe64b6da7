"""BatchNorm by hand, as the course text writes it, beside torch's nn.BatchNorm1d.

Both normalise a training batch with the batch's *biased* variance (divide by B). They part
in the running statistics kept for eval mode: the text's hand-written update uses the same
biased variance, torch's uses the unbiased one (divide by B − 1), so after one batch
torch's running_var is B/(B − 1) times larger in its batch part. In eval mode both
normalise with the running statistics instead of the batch's: the same example then gives
the same output whatever batch it came in.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn


@dataclass(frozen=True)
class BatchNormCompare:
    batch_size: int
    mean: Tensor  # [F] the batch mean
    var_biased: Tensor  # [F] divide by B (what both normalise with)
    var_unbiased: Tensor  # [F] divide by B − 1
    hand_running_var: Tensor  # [F] the text's update (biased)
    torch_running_var: Tensor  # [F] nn.BatchNorm1d's update (unbiased)
    max_out_diff: float  # largest |hand − torch| of the normalised batch (train mode)


def hand_batchnorm(
    x: Tensor,
    running_mean: Tensor,
    running_var: Tensor,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> tuple[Tensor, Tensor, Tensor]:
    """The text's training step: normalise x [B, F] by its batch statistics and update the
    running ones with the biased variance. Returns (y, new running_mean, new running_var)."""
    mean = x.mean(0)  # [F]
    var = x.var(0, unbiased=False)  # [F] divide by B
    y = (x - mean) / torch.sqrt(var + eps)
    new_mean = (1 - momentum) * running_mean + momentum * mean
    new_var = (1 - momentum) * running_var + momentum * var  # the biased one: torch differs
    return y, new_mean, new_var


@torch.no_grad()
def compare(x: Tensor, momentum: float = 0.1, eps: float = 1e-5) -> BatchNormCompare:
    """One training step of both on the same batch x [B, F], from the same fresh state
    (running mean 0, running var 1)."""
    f = x.shape[1]
    bn = nn.BatchNorm1d(f, momentum=momentum, eps=eps, affine=False).to(x.device).train()
    y_torch = bn(x)
    y_hand, _, hand_var = hand_batchnorm(
        x, torch.zeros(f, device=x.device), torch.ones(f, device=x.device), momentum, eps
    )
    return BatchNormCompare(
        batch_size=x.shape[0],
        mean=x.mean(0),
        var_biased=x.var(0, unbiased=False),
        var_unbiased=x.var(0, unbiased=True),
        hand_running_var=hand_var,
        torch_running_var=bn.running_var.clone(),
        max_out_diff=float((y_hand - y_torch).abs().max()),
    )
