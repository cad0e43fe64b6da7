"""Logistic regression, one neuron with a sigmoid: p = σ(θ0 + θ1·x1 + θ2·x2 [+ ...]).

Trained with binary cross-entropy. A straight boundary cannot separate concentric circles;
adding the features x1², x2², x1·x2 makes the boundary a conic, which can. Metrics at a
threshold (precision, recall, accuracy, the confusion matrix) and the "always predict no"
baseline live here too, so the lab only reports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from models.hooks import HookPoint

Features = Literal["linear", "quadratic"]

FEATURE_NAMES = {
    "linear": ("x1", "x2"),
    "quadratic": ("x1", "x2", "x1²", "x2²", "x1·x2"),
}


@dataclass(frozen=True)
class LogisticConfig:
    features: Features = "linear"
    # θ = 0 starts at p = 0.5 everywhere: the boundary appears from nothing as it trains.
    init: Literal["zeros", "default"] = "zeros"


def expand(x: Tensor, features: Features) -> Tensor:
    """[N, 2] -> [N, F]: the inputs the neuron sees."""
    if features == "linear":
        return x
    x1, x2 = x[:, 0], x[:, 1]
    return torch.stack([x1, x2, x1 * x1, x2 * x2, x1 * x2], 1)  # [N, 5]


class LogisticRegression(nn.Module):
    """forward(x [N, 2]) -> logits [N]; p = sigmoid(logits)."""

    def __init__(self, cfg: LogisticConfig):
        super().__init__()
        self.cfg = cfg
        self.linear = nn.Linear(len(FEATURE_NAMES[cfg.features]), 1)
        if cfg.init == "zeros":
            nn.init.zeros_(self.linear.weight)
            nn.init.zeros_(self.linear.bias)
        self.hook_features = HookPoint()
        self.hook_logits = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        feats = self.hook_features(expand(x, self.cfg.features))  # [N, F]
        return self.hook_logits(self.linear(feats)[:, 0])  # [N]

    def prob(self, x: Tensor) -> Tensor:
        return torch.sigmoid(self(x))

    def theta(self) -> tuple[Tensor, list[str]]:
        """(θ0, θ1, ...) and their labels: the bias first, as the formula writes it."""
        vals = torch.cat([self.linear.bias.detach(), self.linear.weight.detach()[0]])
        names = ["θ0"] + [f"θ{i + 1} ({n})" for i, n in enumerate(FEATURE_NAMES[self.cfg.features])]
        return vals, names


def bce(logits: Tensor, y: Tensor) -> Tensor:
    """Mean binary cross-entropy −[y·log p + (1−y)·log(1−p)], computed stably from logits."""
    return F.binary_cross_entropy_with_logits(logits, y)


@dataclass(frozen=True)
class Metrics:
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else 0.0

    @property
    def precision(self) -> float:
        # Undefined with no positive prediction; 0 is the usual convention (sklearn's too).
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def matrix(self) -> Tensor:
        """[[TN, FP], [FN, TP]]: rows are the true class (no, yes), columns the prediction."""
        return torch.tensor([[self.tn, self.fp], [self.fn, self.tp]], dtype=torch.float32)


def metrics(p: Tensor, y: Tensor, threshold: float) -> Metrics:
    """Confusion counts of the prediction p ≥ threshold against labels y (0/1)."""
    pred = p >= threshold
    truth = y > 0.5
    return Metrics(
        tp=int((pred & truth).sum()),
        fp=int((pred & ~truth).sum()),
        fn=int((~pred & truth).sum()),
        tn=int((~pred & ~truth).sum()),
    )


def always_no(y: Tensor) -> Metrics:
    """The baseline that answers "no" for everyone: its accuracy is the share of negatives."""
    return metrics(torch.zeros_like(y), y, 0.5)
