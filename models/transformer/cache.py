"""The KV cache: what each layer keeps of every position seen, so a decode step runs one row.

One entry per layer, a tuple of tensors whose second-to-last dimension is time:
- MHA / GQA / MQA: (k, v), each [B, n_kv_heads, T, d_head] — GQA stores only its KV heads;
- MLA: (c, k_rope), [B, T, d_c] and [B, T, d_rope] — the latent and the shared RoPE key;
- CLA: a layer that does not own K/V has no entry (None): it reads its owner's.
`nbytes` is the bytes really held, which the tests hold equal to the config's
`kv_bytes_per_token()` × tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor


@dataclass
class KVCache:
    entries: list[tuple[Tensor, ...] | None] = field(default_factory=list)

    @classmethod
    def empty(cls, n_layers: int) -> KVCache:
        return cls([None] * n_layers)

    def layer_rows(self, layer: int) -> int:
        entry = self.entries[layer]
        return 0 if entry is None else entry[0].shape[-2]

    @property
    def rows(self) -> int:
        """Positions cached (layer 0 always owns its K/V; every owner holds as many)."""
        return self.layer_rows(0) if self.entries else 0

    @property
    def nbytes(self) -> int:
        """Bytes held over every layer and tensor."""
        return sum(t.nbytes for entry in self.entries if entry is not None for t in entry)

    @property
    def keys(self) -> list[Tensor | None]:
        """Each layer's first tensor (MHA: keys [B, H_kv, T, d_head]; MLA: the latent)."""
        return [None if e is None else e[0] for e in self.entries]

    @property
    def values(self) -> list[Tensor | None]:
        return [None if e is None else e[1] for e in self.entries]

    def append(self, layer: int, *new: Tensor) -> tuple[Tensor, ...]:
        """Add this step's rows (time at dim -2); return everything cached for the layer."""
        old = self.entries[layer]
        if old is not None:
            new = tuple(torch.cat([a, b], dim=-2) for a, b in zip(old, new, strict=True))
        self.entries[layer] = new
        return new


@dataclass
class StateCache:
    """A recurrent mixer's memory (mixer linear, delta or ssm): per layer a fixed-size state
    (linear: S [B, H, d_head, d_head] and z [B, H, d_head]; delta: S; ssm: h [B, d_inner,
    d_state]), replaced each step, never grown. `rows` counts the positions seen (the next
    token's position); `nbytes` stays the config's `state_bytes_per_sequence()` × batch at
    any length."""

    entries: list[tuple[Tensor, ...] | None] = field(default_factory=list)
    seen: int = 0

    @classmethod
    def empty(cls, n_layers: int) -> StateCache:
        return cls([None] * n_layers)

    @property
    def rows(self) -> int:
        return self.seen

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for entry in self.entries if entry is not None for t in entry)

    def advance(self, n: int) -> None:
        """The model ran n more positions through every layer."""
        self.seen += n
