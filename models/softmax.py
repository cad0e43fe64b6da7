"""Softmax and cross-entropy, with the ways they go wrong when written naively.

- softmax vs "square and normalize": squaring gives a very negative logit a large share.
- exp overflows in float32 above ln(FLT_MAX) ≈ 88.72; subtracting the max first does not.
- cross-entropy of the right class is −ln p: 0.105 at p=0.9, 1.204 at 0.3, 4.605 at 0.01.
- the product of many likelihoods underflows to 0 in float32; the sum of their logs does not.
- after a sigmoid, MSE's gradient 2(p−y)·p(1−p) dies when saturated; BCE's is p − y.
Everything runs in float32 unless said otherwise, because that is what a model computes in.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torch.nn import functional as F

# ln of float32's largest finite value: exp(x) is inf in float32 for x above this.
EXP_OVERFLOW = math.log(torch.finfo(torch.float32).max)  # ≈ 88.7228

# The curriculum's prediction table: 5 samples × 10 classes, and each sample's true class.
TABLE = (
    (0.067, 0.108, 0.178, 0.197, 0.035, 0.071, 0.132, 0.049, 0.099, 0.062),
    (0.075, 0.082, 0.024, 0.03, 0.142, 0.115, 0.131, 0.091, 0.115, 0.202),
    (0.12, 0.044, 0.066, 0.108, 0.101, 0.129, 0.099, 0.113, 0.114, 0.107),
    (0.038, 0.136, 0.069, 0.147, 0.059, 0.083, 0.075, 0.062, 0.236, 0.135),
    (0.114, 0.033, 0.098, 0.097, 0.043, 0.065, 0.124, 0.221, 0.097, 0.108),
)
LABELS = (2, 9, 5, 8, 7)

# Probabilities of the right class whose cross-entropy the lab shows.
CE_EXAMPLES = (0.9, 0.3, 0.01)


def softmax_naive(z: Tensor) -> Tensor:
    """exp(z) / Σ exp(z) as written: inf / inf = nan once a logit passes EXP_OVERFLOW."""
    e = torch.exp(z)
    return e / e.sum(-1, keepdim=True)


def softmax_stable(z: Tensor) -> Tensor:
    """The same function with the max subtracted first: every exp is ≤ 1, nothing overflows."""
    e = torch.exp(z - z.max(-1, keepdim=True).values)
    return e / e.sum(-1, keepdim=True)


def square_normalize(z: Tensor) -> Tensor:
    """z² / Σ z²: positive and sums to 1, but a logit of −3 outweighs a logit of 2."""
    s = z * z
    return s / s.sum(-1, keepdim=True).clamp_min(torch.finfo(z.dtype).tiny)


def cross_entropy(z: Tensor, target: int) -> Tensor:
    """CE of one sample from logits, via torch (log-softmax, stable)."""
    return F.cross_entropy(z[None], torch.tensor([target]))


def ce_of_prob(p: Tensor) -> Tensor:
    """−ln p: the cross-entropy when the right class gets probability p."""
    return -torch.log(p)


def table_ce() -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(table [5, 10], picks [5], per-sample CE [5], mean CE) for the curriculum's table."""
    table = torch.tensor(TABLE, dtype=torch.float32)  # [5, 10]
    labels = torch.tensor(LABELS)
    picks = table.gather(1, labels[:, None])[:, 0]  # [5]
    per = F.nll_loss(torch.log(table), labels, reduction="none")  # [5]
    return table, picks, per, per.mean()


def likelihood_chain(probs: Tensor, n: int) -> tuple[Tensor, Tensor]:
    """Running product of n likelihoods and running sum of their logs, both in float32.

    `probs` is cycled to length n. Returns (product [n], log-sum [n]); the product reaches
    exactly 0 once it falls below float32's smallest subnormal (≈1.4e-45, ln ≈ −103.3).
    """
    p = probs.to(torch.float32).repeat(n // probs.numel() + 1)[:n]  # [n]
    return torch.cumprod(p, 0), torch.cumsum(torch.log(p), 0)


def first_zero(x: Tensor) -> int | None:
    """1-based index of the first exact zero (where the product underflowed), or None."""
    hits = torch.nonzero(x == 0)
    return int(hits[0, 0]) + 1 if hits.numel() else None


def sigmoid_loss_grads(z: Tensor, y: float) -> tuple[Tensor, Tensor]:
    """d loss / d logit over z, by autograd, for MSE (p − y)² and BCE after p = σ(z).

    Analytically 2(p − y)·p(1 − p) and p − y; the lab shows autograd's numbers.
    """
    z = z.detach().clone().requires_grad_(True)
    p = torch.sigmoid(z)
    target = torch.full_like(z, y)
    mse = ((p - target) ** 2).sum()
    (g_mse,) = torch.autograd.grad(mse, z)
    bce = F.binary_cross_entropy_with_logits(z, target, reduction="sum")
    (g_bce,) = torch.autograd.grad(bce, z)
    return g_mse, g_bce
