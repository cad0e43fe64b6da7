"""A small CNN for scikit-learn's 8×8 digits, its augmentation, and an MLP of about its size.

Each conv block is 3×3 conv (padding 1, so the map keeps its size) → ReLU → 2×2 max pool.
Two blocks take 8×8 to 4×4 to 2×2; a linear layer reads the flattened maps. The stem (the
first block's conv) is an ablation: "3x3" (stride 1, as CIFAR ResNets adapt it for small
images) or "7x7s2" (ImageNet ResNet's 7×7 stride-2 stem: on 8×8 digits it halves the
resolution before anything is learned, 8×8 → 4×4 → pooled 2×2). Hook names
(from the module tree): ``convs.{i}.hook_post`` (the block's maps after the ReLU, before
pooling: [B, C_i, H_i, W_i]) and ``hook_logits``.

Augmentation (`augment`) shifts each image by whole pixels and rotates it a few degrees,
drawn from a generator the caller owns (the data generator: a fork sees the same batches).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from models.hooks import HookPoint
from models.mlp import MLP, MLPConfig


@dataclass(frozen=True)
class CNNConfig:
    channels: tuple[int, ...] = (8, 16)  # one conv block per entry
    kernel: int = 3
    side: int = 8  # input images are side × side, one channel
    n_classes: int = 10
    stem: Literal["3x3", "7x7s2"] = "3x3"

    def __post_init__(self) -> None:
        if not self.channels:
            raise ValueError("a CNN needs at least one conv block")
        if self.side % (self.stem_stride * 2 ** len(self.channels)):
            raise ValueError(f"{len(self.channels)} poolings do not divide a side of {self.side}")
        if self.kernel % 2 == 0:
            raise ValueError("the kernel must be odd (padding k//2 keeps the map's size)")

    @property
    def stem_stride(self) -> int:
        return 2 if self.stem == "7x7s2" else 1

    def kernel_of(self, i: int) -> int:
        return 7 if i == 0 and self.stem == "7x7s2" else self.kernel

    @property
    def sides(self) -> tuple[int, ...]:
        """The map side inside each block (before its pool): 8, 4 for two blocks."""
        return tuple(self.side // (self.stem_stride * 2**i) for i in range(len(self.channels)))

    @property
    def flat(self) -> int:
        """Inputs of the linear head: last channels × the last pooled side²."""
        last = self.side // (self.stem_stride * 2 ** len(self.channels))
        return self.channels[-1] * last * last

    def param_count(self) -> int:
        """Exact: equals sum(p.numel()) of the built model."""
        n, c_in = 0, 1
        for i, c in enumerate(self.channels):
            n += c * c_in * self.kernel_of(i) ** 2 + c
            c_in = c
        return n + self.flat * self.n_classes + self.n_classes


class ConvBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int = 1):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=kernel // 2)
        self.hook_post = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        return F.max_pool2d(self.hook_post(F.relu(self.conv(x))), 2)


class CNN(nn.Module):
    def __init__(self, cfg: CNNConfig = CNNConfig()):
        super().__init__()
        self.cfg = cfg
        c_in = (1, *cfg.channels[:-1])
        self.convs = nn.ModuleList(
            ConvBlock(a, b, cfg.kernel_of(i), cfg.stem_stride if i == 0 else 1)
            for i, (a, b) in enumerate(zip(c_in, cfg.channels, strict=True))
        )
        self.out = nn.Linear(cfg.flat, cfg.n_classes)
        self.hook_logits = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        """x [B, 1, side, side] (or [B, side, side]) in 0..1 -> logits [B, n_classes]."""
        if x.dim() == 3:
            x = x[:, None]  # [B, 1, H, W]
        for block in self.convs:
            x = block(x)
        return self.hook_logits(self.out(x.flatten(1)))  # [B, flat] -> [B, n_classes]

    def kernels(self, i: int) -> Tensor:
        """Block i's learned kernels [C_out, C_in, k, k] (detached)."""
        return self.convs[i].conv.weight.detach()


def mlp_like(cfg: CNNConfig, d_in: int = 64) -> MLPConfig:
    """A one-hidden-layer MLP (d_in → h → classes, ReLU) whose parameter count is closest
    to the CNN's: (d_in + 1)·h + (h + 1)·classes ≈ cfg.param_count()."""
    target, n = cfg.param_count(), cfg.n_classes
    h = max(1, round((target - n) / (d_in + 1 + n)))
    return MLPConfig(d_in=d_in, hidden=(h,), d_out=n, activation="relu")


def mlp_param_count(cfg: MLPConfig) -> int:
    sizes = (cfg.d_in, *cfg.hidden, cfg.d_out)
    return sum((a + 1) * b for a, b in zip(sizes[:-1], sizes[1:], strict=True))


def build_mlp(cfg: MLPConfig) -> MLP:
    return MLP(cfg)


def augment(x: Tensor, gen: torch.Generator, shift: int = 1, degrees: float = 10.0) -> Tensor:
    """Each image [B, side, side] shifted by up to ±`shift` whole pixels on each axis and
    rotated by up to ±`degrees`, drawn from `gen`; bilinear, zeros come in at the edges."""
    b, side = x.shape[0], x.shape[-1]
    angle = (torch.rand(b, generator=gen) * 2 - 1) * math.radians(degrees)  # [B]
    dx = torch.randint(-shift, shift + 1, (b,), generator=gen).float()  # [B] pixels
    dy = torch.randint(-shift, shift + 1, (b,), generator=gen).float()
    cos, sin = torch.cos(angle), torch.sin(angle)
    # affine_grid maps output coords to input coords in [-1, 1]: a pixel is 2/side wide.
    theta = torch.stack(
        [
            torch.stack([cos, -sin, -dx * 2 / side], 1),
            torch.stack([sin, cos, -dy * 2 / side], 1),
        ],
        1,
    ).to(x)  # [B, 2, 3]
    grid = F.affine_grid(theta, (b, 1, side, side), align_corners=False)  # [B, H, W, 2]
    out = F.grid_sample(x[:, None], grid, mode="bilinear", align_corners=False)
    return out[:, 0]  # [B, side, side]
