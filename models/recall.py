"""The delayed-recall task of the `memory` lab, and the small net that reads it.

A sequence is N + 2 steps: at t = 0 one of `n_symbols` symbols with a "remember this" flag,
then N distractors drawn from the very same symbols (no flag), then the cue "?". The answer,
graded at the cue only, is the flagged symbol: chance is 1 / n_symbols. Distractors that
look like the answer are what makes the delay hard for a plain RNN: every step writes into
its whole state, while a gated cell can shut its input gate and hold its forget gate near 1.

Input features (one-hot rows, d_in = n_symbols + 2): the symbol, the flag, the cue.
`RecallNet(cfg)`: `rnn` (models.recurrent.Recurrent) then `out`, a linear read-out of the
state at the cue step. Hook points: those of `rnn` (`rnn.hook_hidden`, the gates).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from models.recurrent import Activation, Kind, Recurrent, RecurrentConfig

SYMBOLS = "ABCDEFGH"
CUE = "?"


@dataclass(frozen=True)
class RecallConfig:
    kind: Kind = "lstm"
    n_symbols: int = 4
    d_hidden: int = 16
    activation: Activation = "tanh"  # the plain RNN's
    keep_bias: float = 3.0  # gated cells start out keeping: σ(3) ≈ 0.95 a step

    @property
    def d_in(self) -> int:
        return self.n_symbols + 2  # symbol one-hot, flag, cue

    def recurrent(self) -> RecurrentConfig:
        return RecurrentConfig(
            self.kind, self.d_in, self.d_hidden, self.activation, keep_bias=self.keep_bias
        )

    def param_count(self) -> int:
        return self.recurrent().param_count() + self.d_hidden * self.n_symbols + self.n_symbols


def sample(
    n_symbols: int, delay: int, batch: int, gen: torch.Generator
) -> tuple[Tensor, Tensor, Tensor]:
    """(x [B, N+2, d_in], y [B], tokens [B, N+2]): tokens are symbol ids, n_symbols at the cue."""
    y = torch.randint(n_symbols, (batch,), generator=gen)
    mid = torch.randint(n_symbols, (batch, delay), generator=gen)
    cue = torch.full((batch, 1), n_symbols)
    tokens = torch.cat([y[:, None], mid, cue], dim=1)  # [B, T]
    x = F.one_hot(tokens, n_symbols + 2).float()  # [B, T, d_in]; the cue is feature n_symbols
    x[:, 0, n_symbols + 1] = 1.0  # the flag: remember this one
    return x, y, tokens


def token_strings(tokens: Tensor) -> list[str]:
    n = int(tokens.max())  # the cue's id is n_symbols, the largest
    return [CUE if int(t) == n else SYMBOLS[int(t)] for t in tokens]


class RecallNet(nn.Module):
    def __init__(self, cfg: RecallConfig):
        super().__init__()
        if not 2 <= cfg.n_symbols <= len(SYMBOLS):
            raise ValueError(f"n_symbols must be 2..{len(SYMBOLS)}, got {cfg.n_symbols}")
        self.cfg = cfg
        self.rnn = Recurrent(cfg.recurrent())
        self.out = nn.Linear(cfg.d_hidden, cfg.n_symbols)

    def forward(self, x: Tensor) -> Tensor:
        """Logits [B, n_symbols] at the cue (the last step)."""
        states, _ = self.rnn(x)  # [B, T, H]
        return self.out(states[:, -1])


def loss_and_acc(model: RecallNet, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor, float]:
    logits = model(x)
    return F.cross_entropy(logits, y), logits, float((logits.argmax(-1) == y).float().mean())


def kept_fraction(forget: Tensor) -> Tensor:
    """Π_t f_t over the steps after the write (t ≥ 1): per unit, the share of what the LSTM's
    cell held at t = 0 that is still there at the cue, had nothing been added. [.., T, H] -> [.., H]."""
    return forget[..., 1:, :].prod(dim=-2)
