"""The `positions` lab's task: repeat the token `lag` places back, at any length.

x = <s> s1 s2 ... s_{T-1} (random symbols), and the label at position t is x[t - lag]: a
relative-offset task whose rule is the same at every position, so a model trained on
length L can be asked about length 4L. Graded positions: t > lag (the label is a symbol,
never <s>). The label is not the next input, so removing the causal mask leaks nothing: a
model without positions still cannot tell which earlier token sat `lag` places back.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

BOS = "<s>"
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class LagTask:
    lag: int = 2  # how many places back the answer sits (2: not just "the previous token")
    n_symbols: int = 10  # chance is 1 / n_symbols

    def __post_init__(self) -> None:
        if self.lag < 1:
            raise ValueError(f"lag must be at least 1, got {self.lag}")
        if not 2 <= self.n_symbols <= len(_ALPHABET):
            raise ValueError(f"n_symbols must be in 2..{len(_ALPHABET)}, got {self.n_symbols}")

    @property
    def vocab(self) -> list[str]:
        return [*_ALPHABET[: self.n_symbols], BOS]

    @property
    def vocab_size(self) -> int:
        return self.n_symbols + 1

    @property
    def chance(self) -> float:
        return 1.0 / self.n_symbols

    def sample(
        self, batch: int, length: int, generator: torch.Generator | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        """x, y [B, length] long and the graded mask [B, length] bool."""
        if length <= self.lag + 1:
            raise ValueError(f"length {length} leaves nothing to grade at lag {self.lag}")
        x = torch.randint(0, self.n_symbols, (batch, length), generator=generator)
        x[:, 0] = self.n_symbols  # <s>
        y = torch.zeros_like(x)
        y[:, self.lag :] = x[:, : -self.lag]  # y[t] = x[t - lag]
        mask = torch.zeros_like(x, dtype=torch.bool)
        mask[:, self.lag + 1 :] = True  # from the first position whose label is a symbol
        return x, y, mask

    def decode(self, ids: list[int]) -> list[str]:
        return [self.vocab[i] for i in ids]
