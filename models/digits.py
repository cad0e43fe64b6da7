"""The digits classifier: an MLP (models/mlp.py) on 8×8 digits, and the losses it compares.

The book trains 784→512→256→10 on MNIST; here the same recipe runs on scikit-learn's 8×8
digits with 64→128→64→10. Two losses that are the same function on paper:

- ``ce``: ``F.cross_entropy`` (log-softmax, which subtracts the largest logit first);
- ``hand``: softmax written out as exp(z)/Σexp(z), then −log of the right class's
  probability. In float32 exp overflows above z ≈ 88.7 and a probability that underflows
  to 0 makes −log infinite: the hand version breaks where cross_entropy does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor
from torch.nn import functional as F

from models.mlp import MLP, Activation, Init, MLPConfig

LossKind = Literal["ce", "hand"]
N_CLASSES = 10
BOOK_SHAPE = MLPConfig(d_in=784, hidden=(512, 256), d_out=10)  # the book's MNIST network


@dataclass(frozen=True)
class DigitsConfig:
    hidden: tuple[int, ...] = (128, 64)
    activation: Activation = "relu"
    # The book's torch version uses Kaiming; its hand-written one randn·0.01 ("small").
    init: Init = "kaiming"
    loss: LossKind = "ce"
    d_in: int = 64  # 8×8 pixels
    input_scale: float = 16.0  # pixel counts are 0..16; the network sees 0..1


def build(cfg: DigitsConfig) -> MLP:
    return MLP(MLPConfig(cfg.d_in, cfg.hidden, N_CLASSES, cfg.activation, cfg.init))


def book_model() -> MLP:
    """The book's 784→512→256→10 (to count its parameters; never trained here)."""
    return MLP(BOOK_SHAPE)


def prepare(images: Tensor, cfg: DigitsConfig) -> Tensor:
    """[N, 8, 8] counts 0..16 -> [N, 64] inputs in 0..1."""
    return images.reshape(images.shape[0], -1) / cfg.input_scale  # [N, 64]


def hand_softmax(logits: Tensor) -> Tensor:
    """Softmax as written on paper: no max subtracted, so large logits overflow."""
    e = torch.exp(logits)
    return e / e.sum(dim=-1, keepdim=True)


def hand_softmax_nll(logits: Tensor, y: Tensor) -> Tensor:
    """Mean −log p(right class) with the hand softmax (no clamp: log 0 is −inf)."""
    p = hand_softmax(logits)
    return -torch.log(p.gather(1, y[:, None])).mean()


def loss_fn(logits: Tensor, y: Tensor, kind: LossKind) -> Tensor:
    if kind == "hand":
        return hand_softmax_nll(logits, y)
    return F.cross_entropy(logits, y)


def param_count(model: torch.nn.Module) -> tuple[int, int]:
    """(all parameters, weights only) of a model, counted from its tensors."""
    total = sum(p.numel() for p in model.parameters())
    weights = sum(p.numel() for name, p in model.named_parameters() if name.endswith("weight"))
    return total, weights


@torch.no_grad()
def evaluate(model: MLP, x: Tensor, y: Tensor, kind: LossKind) -> tuple[float, float, Tensor]:
    """(loss, accuracy, predictions) on a whole split."""
    logits = model(x)
    preds = logits.argmax(dim=1)
    return float(loss_fn(logits, y, kind)), float((preds == y).float().mean()), preds


def confusion(preds: Tensor, y: Tensor, n: int = N_CLASSES) -> Tensor:
    """[n, n] counts: row = true class, column = predicted class."""
    return torch.bincount(y * n + preds, minlength=n * n).reshape(n, n)  # [true, pred]
