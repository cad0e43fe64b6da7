"""Convolution worked examples, every number computed by torch (CURRICULUM.md ch. 4, `conv`).

- `correlate`: torch's conv2d is cross-correlation (the kernel is not flipped). The 5×5 image
  whose columns 0–1 are 1, with kernel [[1, 0], [0, −1]] at stride 1, gives 4×4 whose every
  row is [0, 1, 0, 0]: a vertical edge. `convolve` flips the kernel first (the textbook
  convolution): every row is [0, −1, 0, 0].
- `pool`: 2×2 average and max pooling (and which cell each max came from).
- `output_size`: ⌊(n + 2p − k)/s⌋ + 1, checked against the shape conv2d really returns, and
  where each window sits.
- `receptive_field`: two stacked 3×3 convs see a 5×5 patch (the input gradient of one output
  pixel is non-zero exactly there) with 18 weights, one 5×5 conv with 25.
- `one_by_one`: a 1×1 conv equals a linear layer applied to every pixel's channel vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

MAX_SIDE = 16  # images the learner edits: at most 16×16
MAX_KERNEL = 5

EDGE_IMAGE = [[1.0, 1.0, 0.0, 0.0, 0.0] for _ in range(5)]  # columns 0–1 are 1
EDGE_KERNEL = [[1.0, 0.0], [0.0, -1.0]]
AVG_INPUT = [[float(4 * r + c + 1) for c in range(4)] for r in range(4)]  # 1..16
MAX_INPUT = [[7.0, 1.0, 1.0, 6.0], [2.0, 3.0, 2.0, 2.0], [1.0, 2.0, 1.0, 2.0], [8.0, 3.0, 3.0, 9.0]]
PRESETS: dict[str, list[list[float]]] = {
    "example": EDGE_KERNEL,
    "edge": [[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]],  # Sobel: vertical edges
    "blur": [[1 / 9] * 3 for _ in range(3)],
    "sharpen": [[0.0, -1.0, 0.0], [-1.0, 5.0, -1.0], [0.0, -1.0, 0.0]],
}


def _map(x: Tensor | list) -> Tensor:
    return torch.as_tensor(x, dtype=torch.float32)


def correlate(
    image: Tensor | list, kernel: Tensor | list, stride: int = 1, padding: int = 0
) -> Tensor:
    """torch's conv2d of one [H, W] image with one [k, k] kernel -> [H', W'] (no flip)."""
    x, w = _map(image), _map(kernel)
    return F.conv2d(x[None, None], w[None, None], stride=stride, padding=padding)[0, 0]


def convolve(
    image: Tensor | list, kernel: Tensor | list, stride: int = 1, padding: int = 0
) -> Tensor:
    """The textbook convolution: the kernel flipped on both axes, then conv2d."""
    return correlate(image, torch.flip(_map(kernel), (0, 1)), stride, padding)


@dataclass(frozen=True)
class Pooled:
    input: Tensor  # [H, W]
    avg: Tensor  # [H/2, W/2]
    max: Tensor  # [H/2, W/2]
    argmax: Tensor  # [H/2, W/2] int64: flat index (r·W + c) of the cell each max came from


def pool(x: Tensor | list, size: int = 2) -> Pooled:
    t = _map(x)[None, None]  # [1, 1, H, W]
    mx, idx = F.max_pool2d(t, size, return_indices=True)
    return Pooled(t[0, 0], F.avg_pool2d(t, size)[0, 0], mx[0, 0], idx[0, 0])


def output_formula(n: int, k: int, p: int, s: int) -> int:
    """⌊(n + 2p − k)/s⌋ + 1 (0 or less: the kernel does not fit)."""
    return (n + 2 * p - k) // s + 1


@dataclass(frozen=True)
class OutputSize:
    formula: int  # ⌊(n + 2p − k)/s⌋ + 1
    torch_side: int | None  # the side of what conv2d returned (None: it refused)
    starts: list[int]  # each window's first row (= first column) in padded coordinates
    error: str | None


def output_size(n: int, k: int, p: int, s: int) -> OutputSize:
    """The formula and torch's answer for an n×n input, k×k kernel, padding p, stride s."""
    formula = output_formula(n, k, p, s)
    try:
        out = F.conv2d(torch.zeros(1, 1, n, n), torch.zeros(1, 1, k, k), stride=s, padding=p)
    except RuntimeError as e:  # the kernel is larger than the padded input
        return OutputSize(formula, None, [], str(e).splitlines()[0])
    side = out.shape[-1]
    return OutputSize(formula, side, [i * s for i in range(side)], None)


@dataclass(frozen=True)
class ReceptiveField:
    field: Tensor  # [side, side]: |∂ out[centre] / ∂ x| of two 3×3 convs (all-ones kernels)
    field_5x5: Tensor  # [side, side]: the same for one 5×5 conv
    side_seen: int  # rows (= columns) where the field is non-zero: 5
    weights_two_3x3: int  # 18, counted from the modules
    weights_one_5x5: int  # 25


def receptive_field(side: int = 9) -> ReceptiveField:
    """Which input pixels one output pixel depends on, by autograd: the gradient of the
    centre output with respect to the input. All-ones kernels make the field count the
    paths from each input pixel (1 2 3 2 1 on each axis)."""
    two = nn.Sequential(nn.Conv2d(1, 1, 3, bias=False), nn.Conv2d(1, 1, 3, bias=False))
    one = nn.Conv2d(1, 1, 5, bias=False)
    fields = []
    for net in (two, one):
        with torch.no_grad():
            for m in net.modules():
                if isinstance(m, nn.Conv2d):
                    m.weight.fill_(1.0)
        x = torch.zeros(1, 1, side, side, requires_grad=True)
        y = net(x)  # [1, 1, side − 4, side − 4]
        c = y.shape[-1] // 2
        y[0, 0, c, c].backward()
        fields.append(x.grad[0, 0].abs())
    nz = torch.nonzero(fields[0].sum(dim=0)).flatten()
    return ReceptiveField(
        fields[0],
        fields[1],
        int(nz[-1] - nz[0] + 1),
        sum(p.numel() for p in two.parameters()),
        sum(p.numel() for p in one.parameters()),
    )


@dataclass(frozen=True)
class OneByOne:
    x: Tensor  # [C_in, H, W]
    conv_out: Tensor  # [C_out, H, W]
    linear_out: Tensor  # [C_out, H, W]
    max_abs_diff: float
    conv_params: int
    linear_params: int


def one_by_one(c_in: int = 3, c_out: int = 2, side: int = 4, seed: int = 0) -> OneByOne:
    """A 1×1 conv and an nn.Linear sharing its weights, applied to every pixel."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(c_in, side, side, generator=g)
    conv = nn.Conv2d(c_in, c_out, 1)
    lin = nn.Linear(c_in, c_out)
    with torch.no_grad():
        conv.weight.copy_(torch.randn(c_out, c_in, 1, 1, generator=g))
        conv.bias.copy_(torch.randn(c_out, generator=g))
        lin.weight.copy_(conv.weight[:, :, 0, 0])
        lin.bias.copy_(conv.bias)
        a = conv(x[None])[0]  # [C_out, H, W]
        pixels = x.permute(1, 2, 0)  # [H, W, C_in]: one channel vector per pixel
        b = lin(pixels).permute(2, 0, 1)  # [H, W, C_out] -> [C_out, H, W]
    return OneByOne(
        x,
        a,
        b,
        float((a - b).abs().max()),
        sum(p.numel() for p in conv.parameters()),
        sum(p.numel() for p in lin.parameters()),
    )
