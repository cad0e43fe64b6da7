"""Recurrent layers written out by hand, so every gate is a tensor a lab can show.

`Recurrent(cfg)` runs one layer over a batch of sequences, step by step:

- "rnn": h_t = act(x_t·W_xh + h_{t-1}·W_hh + b), act tanh, ReLU or sigmoid. One bias: torch's
  nn.RNN has two (bias_ih + bias_hh), which only ever appear summed.
- "gru": torch's nn.GRU equations, gates in torch's order (r, z, n):
  r = σ(x·W_r + b_xr + h·U_r + b_hr), z = σ(x·W_z + b_xz + h·U_z + b_hz),
  n = tanh(x·W_n + b_xn + r ⊙ (h·U_n + b_hn)), h' = (1 − z) ⊙ n + z ⊙ h.
  z is the "update" gate in torch's convention: z = 1 keeps the old state.
- "lstm": torch's nn.LSTM equations, gates in torch's order (i, f, g, o):
  c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c'), with i, f, o sigmoids and g a tanh.

Weights are in the x·W convention (W_xh [d_in, G·H], W_hh [H, G·H]; G = 1, 3, 4 gates), so
torch's module copies over as `W_xh = weight_ih_l0.T` (see tests/models/test_recurrent.py).
Init is torch's: every parameter U(−1/√H, 1/√H); then W_hh is multiplied by `whh_scale`,
so a lab can make the state explode (scale > 1) or die out (scale < 1), and `keep_bias` is
added to the bias of the gate that keeps the state (LSTM's forget gate f, GRU's update gate
z; the plain RNN has none): the usual trick (Gers et al. 2000, Jozefowicz et al. 2015) so a
gated cell starts out remembering, σ(3) ≈ 0.95 a step instead of σ(0) = 0.5.

`forward(x [B, T, d_in], state=None, keep_steps=False) -> (outputs [B, T, H], final)`:
`final` is h [B, H] (rnn, gru) or (h, c) (lstm); `state` is the same shape (zeros if None).
With `keep_steps=True` the per-step states h_1 .. h_T, the very tensors the graph goes
through (each feeds the next step and the outputs), are kept in `self.steps` (a list of
[B, H]); call `h.retain_grad()` on them before `backward()` and `h.grad` is dL/dh_t, the
gradient that backprop through time carries to step t.

Hook points [B, T, H]: `hook_hidden` (every kind); LSTM `hook_input_gate`,
`hook_forget_gate`, `hook_output_gate`, `hook_cell`; GRU `hook_update_gate` (z),
`hook_reset_gate` (r). Gates are stacked over time only while a capture asks for them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn

from models.hooks import HookPoint, is_capturing

Kind = Literal["rnn", "gru", "lstm"]
Activation = Literal["tanh", "relu", "sigmoid"]

GATES = {"rnn": 1, "gru": 3, "lstm": 4}
ACTIVATIONS = {"tanh": torch.tanh, "relu": torch.relu, "sigmoid": torch.sigmoid}


@dataclass(frozen=True)
class RecurrentConfig:
    kind: Kind = "rnn"
    d_in: int = 8
    d_hidden: int = 16
    activation: Activation = "tanh"  # the plain RNN's nonlinearity; GRU and LSTM ignore it
    whh_scale: float = 1.0  # multiplies the initial W_hh
    bias: bool = True
    keep_bias: float = 0.0  # added to the initial bias of f (lstm) or z (gru); needs bias

    @property
    def gates(self) -> int:
        return GATES[self.kind]

    def param_count(self) -> int:
        """W_xh and W_hh, plus one bias (rnn) or two (gru, lstm: torch's b_ih and b_hh)."""
        g, h = self.gates, self.d_hidden
        weights = g * h * (self.d_in + h)
        if not self.bias:
            return weights
        return weights + (h if self.kind == "rnn" else 2 * g * h)


class Recurrent(nn.Module):
    def __init__(self, cfg: RecurrentConfig):
        super().__init__()
        if cfg.kind not in GATES:
            raise ValueError(f"unknown recurrent kind {cfg.kind!r}")
        if cfg.activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {cfg.activation!r}")
        self.cfg = cfg
        g, h = cfg.gates, cfg.d_hidden
        self.W_xh = nn.Parameter(torch.empty(cfg.d_in, g * h))
        self.W_hh = nn.Parameter(torch.empty(h, g * h))
        if cfg.bias and cfg.kind == "rnn":
            self.b = nn.Parameter(torch.empty(h))
        elif cfg.bias:
            self.b_xh = nn.Parameter(torch.empty(g * h))
            self.b_hh = nn.Parameter(torch.empty(g * h))
        self.reset_parameters()
        self.hook_hidden = HookPoint()
        if cfg.kind == "lstm":
            self.hook_input_gate = HookPoint()
            self.hook_forget_gate = HookPoint()
            self.hook_output_gate = HookPoint()
            self.hook_cell = HookPoint()
        elif cfg.kind == "gru":
            self.hook_update_gate = HookPoint()
            self.hook_reset_gate = HookPoint()
        self.steps: list[Tensor] = []

    def reset_parameters(self) -> None:
        k = 1.0 / math.sqrt(self.cfg.d_hidden)
        with torch.no_grad():
            for p in self.parameters():
                p.uniform_(-k, k)
            self.W_hh.mul_(self.cfg.whh_scale)
            if self.cfg.bias and self.cfg.kind != "rnn":
                h = self.cfg.d_hidden  # f is LSTM's 2nd chunk (i, f, g, o), z GRU's (r, z, n)
                self.b_xh[h : 2 * h] += self.cfg.keep_bias

    def forward(
        self,
        x: Tensor,
        state: Tensor | tuple[Tensor, Tensor] | None = None,
        keep_steps: bool = False,
    ) -> tuple[Tensor, Tensor | tuple[Tensor, Tensor]]:
        cfg = self.cfg
        B, T, _ = x.shape
        H = cfg.d_hidden
        # The input's share of every gate, for all steps at once: only h·W_hh is sequential.
        xw = x @ self.W_xh  # [B, T, G*H]
        if cfg.bias:
            xw = xw + (self.b if cfg.kind == "rnn" else self.b_xh)
        b_hh = self.b_hh if cfg.bias and cfg.kind != "rnn" else None
        zeros = x.new_zeros(B, H)
        if cfg.kind == "lstm":
            h, c = state if state is not None else (zeros, zeros)
        else:
            h, c = (state if state is not None else zeros), None
        hs: list[Tensor] = []
        gates: dict[str, list[Tensor]] = {}
        want = self._wanted_gates()
        for t in range(T):
            hw = h @ self.W_hh  # [B, G*H]
            if b_hh is not None:
                hw = hw + b_hh
            if cfg.kind == "rnn":
                h = ACTIVATIONS[cfg.activation](xw[:, t] + hw)
            elif cfg.kind == "gru":
                xr, xz, xn = xw[:, t].chunk(3, dim=-1)
                hr, hz, hn = hw.chunk(3, dim=-1)
                r = torch.sigmoid(xr + hr)
                z = torch.sigmoid(xz + hz)
                n = torch.tanh(xn + r * hn)
                h = (1 - z) * n + z * h
                step = {"hook_reset_gate": r, "hook_update_gate": z}
            else:
                i, f, g, o = (xw[:, t] + hw).chunk(4, dim=-1)
                i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
                c = f * c + i * g
                h = o * torch.tanh(c)
                step = {
                    "hook_input_gate": i,
                    "hook_forget_gate": f,
                    "hook_output_gate": o,
                    "hook_cell": c,
                }
            for name in want:
                gates.setdefault(name, []).append(step[name])
            hs.append(h)
        self.steps = hs if keep_steps else []
        outputs = self.hook_hidden(
            torch.stack(hs, dim=1) if T else x.new_zeros(B, 0, H)
        )  # [B, T, H]
        for name in want:
            getattr(self, name)(
                torch.stack(gates[name], dim=1) if T else x.new_zeros(B, 0, H)
            )  # [B, T, H]
        return outputs, ((h, c) if cfg.kind == "lstm" else h)

    def _wanted_gates(self) -> list[str]:
        names = {
            "lstm": ("hook_input_gate", "hook_forget_gate", "hook_output_gate", "hook_cell"),
            "gru": ("hook_update_gate", "hook_reset_gate"),
            "rnn": (),
        }[self.cfg.kind]
        return [n for n in names if is_capturing(getattr(self, n))]
