"""Position encodings as pure functions: the sinusoidal table, its rotation R(k), and RoPE.

Layouts. The sinusoidal table is *interleaved* as in "Attention Is All You Need":
PE[p, 2i] = sin(p·ω_i), PE[p, 2i+1] = cos(p·ω_i), with ω_i = base^(-2i/d). RoPE defaults to
the *rotate_half* layout of GPT-NeoX / Llama / Qwen, which pairs dimension j with j + d/2;
the original RoFormer pairs (2i, 2i+1) ("interleaved"). ALiBi (Press et al.) adds no
vector at all: each head's scores get −slope·|i − j|, a straight-line penalty on distance. The two are the same rotation up to
a fixed permutation of the q/k features (`interleaved_to_half`), which is why checkpoints
convert between them by permuting weights, and why mixing layouts breaks a model.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor

RopeLayout = Literal["half", "rotate_half", "interleaved"]  # "half" = "rotate_half"


def frequencies(d: int, base: float = 10000.0, dtype: torch.dtype = torch.float32) -> Tensor:
    """Angular frequencies ω_i = base^(-2i/d) for i < d/2, fastest first."""
    if d % 2:
        raise ValueError(f"dimension must be even, got {d}")
    return base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d).to(dtype)  # [d/2]


def sinusoidal_table(
    n_ctx: int, d: int, base: float = 10000.0, dtype: torch.dtype = torch.float32
) -> Tensor:
    """The fixed sinusoidal encoding, one row per position: [n_ctx, d], interleaved sin/cos."""
    angles = torch.arange(n_ctx, dtype=torch.float64)[:, None] * frequencies(d, base, torch.float64)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1)  # [n_ctx, d/2, 2]
    return pe.reshape(n_ctx, d).to(dtype)  # [n_ctx, d]


def sinusoidal_rotation(
    k: float, d: int, base: float = 10000.0, dtype: torch.dtype = torch.float32
) -> Tensor:
    """R(k), block-diagonal [d, d], with PE(p + k) = R(k) · PE(p) for every p.

    Each (sin, cos) pair is a clock hand turning at ω_i; shifting by k turns it by k·ω_i:
    sin(a + b) = sin a cos b + cos a sin b, cos(a + b) = cos a cos b − sin a sin b.
    R depends on k only, which is why a linear layer can learn "look k positions back".
    """
    w = k * frequencies(d, base, torch.float64)  # [d/2]
    c, s = w.cos(), w.sin()
    blocks = torch.stack([torch.stack([c, s], -1), torch.stack([-s, c], -1)], -2)  # [d/2, 2, 2]
    return torch.block_diag(*blocks).to(dtype)  # [d, d]


def rotate_half(x: Tensor) -> Tensor:
    """(x1, x2) -> (−x2, x1) on the two halves of the last dimension."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def rope_cos_sin(
    positions: Tensor, d: int, theta: float = 10000.0, layout: RopeLayout = "half"
) -> tuple[Tensor, Tensor]:
    """cos and sin of m·θ_i for each position m, laid out to multiply q or k: [T, d] each."""
    angles = positions.to(torch.float64)[:, None] * frequencies(d, theta, torch.float64)  # [T, d/2]
    if layout in ("half", "rotate_half"):
        angles = torch.cat([angles, angles], dim=-1)  # [T, d]: dims j and j + d/2 share ω_j
    else:
        angles = angles.repeat_interleave(2, dim=-1)  # [T, d]: dims 2i and 2i+1 share ω_i
    return angles.cos(), angles.sin()


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor, layout: RopeLayout = "half") -> Tensor:
    """Rotate x [..., T, d] by precomputed cos/sin [T, d] (see `rope_cos_sin`)."""
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    if layout in ("half", "rotate_half"):
        return x * cos + rotate_half(x) * sin
    pairs = x.unflatten(-1, (-1, 2))  # [..., T, d/2, 2]
    swapped = torch.stack([-pairs[..., 1], pairs[..., 0]], dim=-1).flatten(-2)  # [..., T, d]
    return x * cos + swapped * sin


def rope_rotate(
    x: Tensor, positions: Tensor, theta: float = 10000.0, layout: RopeLayout = "half"
) -> Tensor:
    """Rotate each feature pair of x [..., T, d] by m·θ_i, m the position of the row.

    For q at m and k at n the score (R_m q)·(R_n k) = q·R_(n−m) k depends on m − n only.
    """
    cos, sin = rope_cos_sin(positions, x.shape[-1], theta, layout)
    return apply_rope(x, cos, sin, layout)


def interleaved_to_half(d: int) -> Tensor:
    """Permutation P with rope_rotate(x[..., P], half) == rope_rotate(x, interleaved)[..., P].

    Interleaved pair i is (2i, 2i+1); rotate_half pair i is (i, i + d/2): gather evens first,
    then odds.
    """
    return torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])


def scaled_embedding(d_model: int) -> float:
    """Factor on token embeddings added to a sinusoidal table (Vaswani et al.: ×√d_model).

    The table's entries have RMS 1/√2 whatever d_model is; embeddings initialised with std
    1/√d_model have RMS 1/√d_model, so without the factor the positions drown the tokens.
    """
    return math.sqrt(d_model)


def alibi_slopes(n_heads: int) -> Tensor:
    """ALiBi's per-head slopes: the geometric sequence 2^(−8/n), 2^(−16/n), ... for n a
    power of two; otherwise the paper's fill-in: the slopes for the power of two below n,
    then every other slope of the next power of two. [n_heads]"""

    def pow2(n: int) -> list[float]:
        start = 2.0 ** (-8.0 / n)
        return [start ** (i + 1) for i in range(n)]

    below = 2 ** math.floor(math.log2(n_heads))
    slopes = pow2(below) + pow2(2 * below)[0::2][: n_heads - below]
    return torch.tensor(slopes)


def alibi_bias(slopes: Tensor, t_new: int, t_past: int, device=None) -> Tensor:
    """[H, t_new, t_past + t_new]: −slope·|i − j| for query i (at t_past + i) and key j."""
    q_pos = torch.arange(t_past, t_past + t_new, device=device)[:, None]
    k_pos = torch.arange(t_past + t_new, device=device)[None, :]
    dist = (q_pos - k_pos).abs().to(slopes.dtype)  # [T, S]
    return -slopes.to(device)[:, None, None] * dist  # [H, T, S]
