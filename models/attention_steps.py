"""One attention computation, stage by stage, on small matrices the learner can edit.

X → Q, K, V → QKᵀ → ÷√d_k → mask → softmax → ×V, each stage kept so a view can show it.
Presets reproduce the worked examples of the curriculum:

- `scores`: one query against three keys whose scaled scores are [2, 0, −1]; softmax gives
  [0.844, 0.114, 0.042] and with v0=[1,0], v1=[0,2], v2=[2,1] the output is [0.928, 0.270].
- `causal`: 今天 天气 真 好 with the scores S of the curriculum and a causal mask.
- `context`: the 2-D 苹果 example. Two phrases packed in one sequence (甜 苹果 | 苹果 手机);
  a block mask keeps the phrases apart and lets each 苹果 look only at its neighbour, so its
  weight there is exactly 1 and x + output is 苹果 + 甜 = [0.9, 0.1] or 苹果 + 手机 = [0.1, 0.9]
  (甜 and 手机 look only at themselves).

Besides the stages: why scores are divided by √d (`scale_probe`), why tying W_K = W_Q makes
the scores symmetric, and the multi-head reshapes with which of them copy memory
(`head_chain`). Everything is computed by torch; nothing here is a stored answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor

STAGES = ("x", "qkv", "scores", "scaled", "masked", "weights", "out")  # 7 stages, in order
MAX_TOKENS = 8  # the editable matrices stay readable as tables of numbers
MAX_DIM = 8
MAX_ABS = 10.0  # bound on every editable entry


@dataclass(frozen=True)
class Preset:
    """The learner-facing inputs of one computation. `allowed` is used when mask == "custom"."""

    tokens: tuple[str, ...]
    x: tuple[tuple[float, ...], ...]  # [T, d_model]
    w_q: tuple[tuple[float, ...], ...]  # [d_model, d_k]
    w_k: tuple[tuple[float, ...], ...]  # [d_model, d_k]
    w_v: tuple[tuple[float, ...], ...]  # [d_model, d_v]
    mask: str = "none"  # none | causal | custom
    allowed: tuple[tuple[bool, ...], ...] | None = None  # [T, T], True = may attend


def _eye(n: int, scale: float = 1.0) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(scale if i == j else 0.0 for j in range(n)) for i in range(n))


# The causal example's scores, as the curriculum prints them (already divided by √d_k).
CAUSAL_S = (
    (0.8, 0.5, 0.2, 0.1),
    (0.6, 0.9, 0.4, 0.3),
    (0.3, 0.7, 1.0, 0.5),
    (0.2, 0.4, 0.6, 0.8),
)
APPLE, SWEET, PHONE = (0.5, 0.5), (0.4, -0.4), (-0.4, 0.4)

PRESETS: dict[str, Preset] = {
    # One-hot X makes Q, K, V the rows of the weights. d_k = 4, so ÷√4 halves the raw
    # scores: q0·k = [4, 0, −2] → [2, 0, −1].
    "scores": Preset(
        tokens=("t0", "t1", "t2"),
        x=_eye(3),
        w_q=((1.0, 1.0, 1.0, 1.0), (0.0, 1.0, 0.0, 1.0), (1.0, 0.0, -1.0, 0.0)),
        w_k=((1.0, 1.0, 1.0, 1.0), (1.0, -1.0, 1.0, -1.0), (-0.5, -0.5, -0.5, -0.5)),
        w_v=((1.0, 0.0), (0.0, 2.0), (2.0, 1.0)),
    ),
    # One-hot X, W_Q = S and W_K = 2I: raw scores 2S, ÷√4 → S exactly.
    "causal": Preset(
        tokens=("今天", "天气", "真", "好"),
        x=_eye(4),
        w_q=CAUSAL_S,
        w_k=_eye(4, 2.0),
        w_v=((1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.5, -0.5)),
        mask="causal",
    ),
    "context": Preset(
        tokens=("甜", "苹果", "苹果", "手机"),
        x=(SWEET, APPLE, APPLE, PHONE),
        w_q=_eye(2),
        w_k=_eye(2),
        w_v=_eye(2),  # V = X: what a word passes on is its own vector
        mask="custom",
        allowed=(  # 苹果 looks only at its neighbour; 甜 and 手机 only at themselves
            (True, False, False, False),
            (True, False, False, False),
            (False, False, False, True),
            (False, False, False, True),
        ),
    ),
}


def causal_allowed(t: int) -> Tensor:
    """[T, T] bool, True on and below the diagonal: query i may see keys 0..i."""
    return torch.ones(t, t, dtype=torch.bool).tril()


def allowed_for(kind: str, t: int, custom: Tensor | None = None) -> Tensor:
    if kind == "none":
        return torch.ones(t, t, dtype=torch.bool)
    if kind == "causal":
        return causal_allowed(t)
    if kind == "custom" and custom is not None:
        return custom.bool()
    raise ValueError(f"unknown mask {kind!r} (custom needs its matrix)")


@dataclass
class Stages:
    """Every intermediate of one computation. Shapes: T tokens, d_k query/key width."""

    x: Tensor  # [T, d_model]
    q: Tensor  # [T, d_k]
    k: Tensor  # [T, d_k]
    v: Tensor  # [T, d_v]
    scores: Tensor  # [T, T] raw q·k
    scaled: Tensor  # [T, T] ÷ √d_k
    allowed: Tensor  # [T, T] bool
    masked: Tensor  # [T, T] −inf where not allowed
    weights: Tensor  # [T, T] softmax rows, each sums to 1
    out: Tensor  # [T, d_v]
    residual: Tensor | None = None  # [T, d_model] x + out, when d_v == d_model
    extras: dict[str, float] = field(default_factory=dict)


def run(
    x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, allowed: Tensor, tie_qk: bool = False
) -> Stages:
    """The explicit computation, every stage kept. tie_qk uses W_Q for the keys too."""
    if tie_qk:
        w_k = w_q
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # [T, d_k], [T, d_k], [T, d_v]
    scores = q @ k.T  # [T, T]
    scaled = scores / math.sqrt(q.shape[-1])
    masked = scaled.masked_fill(~allowed, float("-inf"))
    weights = masked.softmax(dim=-1)  # [T, T]
    out = weights @ v  # [T, d_v]
    residual = x + out if out.shape == x.shape else None
    extras = {
        "d_k": float(q.shape[-1]),
        "sqrt_d_k": math.sqrt(q.shape[-1]),
        "symmetry_error": float((scores - scores.T).abs().max()),
        # The fused kernel on the same q, k, v and mask: the stages are the real thing.
        "sdpa_error": float(
            (F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=allowed)[0] - out)
            .abs()
            .max()
        ),
    }
    return Stages(x, q, k, v, scores, scaled, allowed, masked, weights, out, residual, extras)


def preset_tensors(name: str) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """x, w_q, w_k, w_v, allowed of a preset, float32."""
    p = PRESETS[name]
    custom = torch.tensor(p.allowed) if p.allowed is not None else None
    t = len(p.tokens)
    mats = (torch.tensor(m, dtype=torch.float32) for m in (p.x, p.w_q, p.w_k, p.w_v))
    return (*mats, allowed_for(p.mask, t, custom))


# -- why ÷√d -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    d: int
    var_raw: float  # variance of q·k over random unit-variance q, k: ≈ d
    var_scaled: float  # of q·k / √d: ≈ 1
    entropy_raw: float  # mean softmax entropy (nats) over n_keys raw scores: collapses
    entropy_scaled: float  # the same with scaled scores: stays near its maximum
    entropy_max: float  # ln(n_keys), a uniform softmax


def scale_probe(
    d: int, n_queries: int = 256, n_keys: int = 16, generator: torch.Generator | None = None
) -> Probe:
    """Sample q, k ~ N(0, I_d) and measure scores with and without ÷√d."""
    q = torch.randn(n_queries, 1, d, generator=generator)  # [N, 1, d]
    k = torch.randn(n_queries, n_keys, d, generator=generator)  # [N, M, d]
    raw = (q * k).sum(-1)  # [N, M]
    scaled = raw / math.sqrt(d)

    def entropy(s: Tensor) -> float:
        logp = s.log_softmax(-1)
        return float(-(logp.exp() * logp).sum(-1).mean())

    return Probe(
        d,
        float(raw.var()),
        float(scaled.var()),
        entropy(raw),
        entropy(scaled),
        math.log(n_keys),
    )


PROBE_DS = tuple(2**i for i in range(1, 11))  # 2, 4, ..., 1024


def probe_sweep(seed: int = 0) -> list[Probe]:
    g = torch.Generator().manual_seed(seed)
    return [scale_probe(d, generator=g) for d in PROBE_DS]


# -- multi-head reshapes ---------------------------------------------------------------------


@dataclass(frozen=True)
class ChainStep:
    code: str  # the torch expression
    shape: tuple[int, ...]
    same_memory: bool | None  # data_ptr equal to the tensor it came from (None: new result)
    contiguous: bool


@dataclass(frozen=True)
class Chain:
    steps: list[ChainStep]
    view_error: str  # what torch says when .view is called on the transposed tensor
    sdpa_error: float  # max |explicit − F.scaled_dot_product_attention|


def head_chain(batch: int = 2, t: int = 5, d: int = 8, n_heads: int = 4, seed: int = 0) -> Chain:
    """Split d into heads and back, recording shapes and whether memory was copied."""
    if d % n_heads:
        raise ValueError(f"d {d} is not divisible by {n_heads} heads")
    dh = d // n_heads
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, t, d, generator=g)  # [B, T, d]
    k_in = torch.randn(batch, t, d, generator=g)
    v_in = torch.randn(batch, t, d, generator=g)
    steps = [ChainStep("x", tuple(x.shape), None, x.is_contiguous())]

    def rec(code: str, y: Tensor, src: Tensor | None) -> Tensor:
        same = None if src is None else y.data_ptr() == src.data_ptr()
        steps.append(ChainStep(code, tuple(y.shape), same, y.is_contiguous()))
        return y

    split = rec(f"x.view({batch}, {t}, {n_heads}, {dh})", x.view(batch, t, n_heads, dh), x)
    q = rec(".transpose(1, 2)", split.transpose(1, 2), split)  # [B, H, T, dh]
    k = k_in.view(batch, t, n_heads, dh).transpose(1, 2)
    v = v_in.view(batch, t, n_heads, dh).transpose(1, 2)
    scores = rec("q @ k.transpose(-2, -1) / √d_head", q @ k.transpose(-2, -1) / math.sqrt(dh), None)
    z = rec("softmax(scores) @ v", scores.softmax(-1) @ v, None)  # [B, H, T, dh]
    back = rec(".transpose(1, 2)", z.transpose(1, 2), z)  # [B, T, H, dh], strided
    try:
        back.view(batch, t, d)
        view_error = ""
    except RuntimeError as err:
        view_error = str(err).split("\n")[0]
    packed = rec(".contiguous()", back.contiguous(), back)  # the one copy
    rec(f".view({batch}, {t}, {d})", packed.view(batch, t, d), packed)  # [B, T, d]
    ref = F.scaled_dot_product_attention(q, k, v)
    return Chain(steps, view_error, float((ref - z).abs().max()))
