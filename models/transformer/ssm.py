"""A diagonal state-space model, `mixer="ssm"`: a linear recurrence per channel that can be
computed as a recurrence, a convolution or a parallel scan, with the same result.

Each of the d_inner channels keeps d_state numbers h and runs (S4D-real / Mamba without
input-dependent parameters: time-invariant, so a convolution exists)

    h_t = Ā ⊙ h_{t-1} + B̄ x_t,   y_t = C·h_t + D x_t,   Ā = exp(Δ A), B̄ = Δ B, A < 0

- recurrence: the loop above, one token at a time (what a decode step does);
- convolution: unrolled, y_t = Σ_l K_l x_{t-l} + D x_t with the kernel K_l = C·(Ā^l ⊙ B̄):
  the whole sequence at once, as a causal depthwise convolution;
- scan: h_t = a_t h_{t-1} + b_t composes associatively, (a1, b1) then (a2, b2) is
  (a1·a2, a2·b1 + b2), so log2(T) doubling steps give every h_t (Hillis–Steele).

The mixer around it (H3 / Mamba style): x -> in_proj -> (u, gate); y = SSM(u) ⊙ silu(gate)
-> out. Shapes: u [B, T, D], h [B, D, N] (D = d_inner channels, N = d_state).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.hooks import HookPoint
from models.transformer.config import TransformerConfig


def discretize(A_log: Tensor, log_dt: Tensor, B: Tensor) -> tuple[Tensor, Tensor]:
    """(Ā, B̄), each [D, N]: Ā = exp(Δ·A) in (0, 1) with A = −exp(A_log), B̄ = Δ·B."""
    dt = log_dt.exp()[:, None]  # [D, 1]
    return torch.exp(-dt * A_log.exp()), dt * B


def ssm_recurrence(
    u: Tensor, a: Tensor, b: Tensor, C: Tensor, D: Tensor, h: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """u [B, T, D]; a, b, C [D, N]; D [D]; h [B, D, N] -> (y [B, T, D], last h)."""
    if h is None:
        h = u.new_zeros(u.shape[0], *a.shape)
    ys = []
    for t in range(u.shape[1]):
        h = a * h + b * u[:, t, :, None]  # [B, D, N]
        ys.append((h * C).sum(-1) + D * u[:, t])
    return torch.stack(ys, dim=1), h


def ssm_kernel(a: Tensor, b: Tensor, C: Tensor, T: int) -> Tensor:
    """K [D, T]: K_l = Σ_n C_n a_n^l b_n, the response at lag l to one unit of input."""
    lags = torch.arange(T, device=a.device, dtype=a.dtype)
    powers = a[:, :, None] ** lags  # [D, N, T]
    return (C[:, :, None] * powers * b[:, :, None]).sum(1)  # [D, T]


def ssm_convolution(u: Tensor, a: Tensor, b: Tensor, C: Tensor, D: Tensor) -> Tensor:
    """The unrolled recurrence as one causal depthwise convolution (from a zero state)."""
    _, T, Dn = u.shape
    K = ssm_kernel(a, b, C, T)  # [D, T]
    x = F.pad(u.transpose(1, 2), (T - 1, 0))  # [B, D, 2T - 1]: left padding = causal
    y = F.conv1d(x, K.flip(-1)[:, None, :], groups=Dn)  # [B, D, T]; conv1d correlates
    return y.transpose(1, 2) + D * u  # [B, T, D]


def ssm_scan(
    u: Tensor, a: Tensor, b: Tensor, C: Tensor, D: Tensor, h: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Every h_t by the associative scan: log2(T) steps, each combining element t with the
    one `offset` before it; then y_t = C·h_t + D u_t."""
    T = u.shape[1]
    A = a.expand(u.shape[0], T, *a.shape).clone()  # [B, T, D, N]: a_t (the same every t)
    Bx = b * u[..., None]  # [B, T, D, N]: b_t
    if h is not None:
        Bx[:, 0] = Bx[:, 0] + a * h  # the state before the first row enters as a_0 h
    offset = 1
    while offset < T:  # after this pass, element t has composed t - 2·offset + 1 .. t
        Bx = torch.cat([Bx[:, :offset], A[:, offset:] * Bx[:, :-offset] + Bx[:, offset:]], 1)
        A = torch.cat([A[:, :offset], A[:, offset:] * A[:, :-offset]], 1)
        offset *= 2
    y = (Bx * C).sum(-1) + D * u  # [B, T, D]
    return y, Bx[:, -1]


class SSMMixer(nn.Module):
    """`mixer="ssm"`: in_proj to (u, gate), the diagonal SSM over u, gated, out. Trains with
    the convolution; with a cache (a `StateCache`) continues from h by the scan."""

    def __init__(self, cfg: TransformerConfig, layer: int):
        super().__init__()
        self.layer = layer
        d, Dn, N = cfg.d_model, cfg.d_inner, cfg.d_state
        self.in_proj = nn.Linear(d, 2 * Dn, bias=cfg.bias)
        # S4D-real: A_n = −(n + 1), timescales Δ log-spaced over 0.05 .. 0.5 per channel so
        # some channels remember a few tokens and some a whole sequence.
        self.A_log = nn.Parameter(torch.log(torch.arange(1, N + 1).float()).repeat(Dn, 1))
        self.log_dt = nn.Parameter(torch.linspace(math.log(0.05), math.log(0.5), Dn))
        self.B = nn.Parameter(torch.randn(Dn, N) / math.sqrt(N))
        self.C = nn.Parameter(torch.randn(Dn, N) / math.sqrt(N))
        self.D = nn.Parameter(torch.ones(Dn))
        self.out = nn.Linear(Dn, d, bias=cfg.bias)
        self.hook_u = HookPoint()
        self.hook_z = HookPoint()

    def parts(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        a, b = discretize(self.A_log, self.log_dt, self.B)
        return a, b, self.C, self.D

    @torch.no_grad()
    def forms(self, x: Tensor) -> dict[str, Tensor]:
        """The SSM's output on x [B, T, d_model] (the mixer's input), before the gate, each
        way: {"recurrence", "convolution", "scan"} -> [B, T, d_inner]."""
        u = self.in_proj(x).chunk(2, dim=-1)[0]  # [B, T, D]
        parts = self.parts()
        return {
            "recurrence": ssm_recurrence(u, *parts)[0],
            "convolution": ssm_convolution(u, *parts),
            "scan": ssm_scan(u, *parts)[0],
        }

    def forward(
        self,
        x: Tensor,
        t_past: int = 0,
        cache=None,
        shared: dict | None = None,
        key_mask: Tensor | None = None,
    ) -> Tensor:
        if key_mask is not None:
            raise ValueError("a recurrent mixer reads every earlier token: no key_mask")
        u, gate = self.in_proj(x).chunk(2, dim=-1)  # 2 × [B, T, D]
        u = self.hook_u(u)
        if cache is None:
            y = ssm_convolution(u, *self.parts())
        else:
            state = cache.entries[self.layer]
            y, h = ssm_scan(u, *self.parts(), None if state is None else state[0])
            cache.entries[self.layer] = (h,)
        return self.out(self.hook_z(y * F.silu(gate)))  # [B, T, d_model]
