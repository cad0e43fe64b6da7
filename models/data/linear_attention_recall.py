"""The linear-attention lab's data: a recall task where a key can be rebound, and a
hand-built memory that shows what the delta rule's overwrite buys.

Recall with rebinding: a sequence of `n_pairs` pair tokens "key=value" then one query
token "key?"; the answer is the value written LAST under that key. In half the sequences
the queried key was written twice with two different values ("rebound"): a memory that
only adds (plain linear attention) holds both, one that overwrites (delta rule) the last.

The overwrite demo writes `n_keys` random unit keys with one-hot values into a
d_key × n_values matrix, then writes `n_rewrites` of them again with new values, and reads
every key back: with plain accumulation S = Σ k vᵀ a rewritten key reads old + new (the
stale value as strong as the new one); the delta rule with β = 1 replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from models.transformer.linear_attention import delta_recurrent, linear_recurrent

KEYS = "abcdefgh"


@dataclass(frozen=True)
class RebindRecall:
    n_keys: int = 6  # distinct keys
    n_values: int = 8  # distinct values (digits)
    n_pairs: int = 8  # pair tokens before the query

    @property
    def vocab(self) -> list[str]:
        """Pair tokens "a=3", then query tokens "a?", then answers "3"."""
        K, V = KEYS[: self.n_keys], range(self.n_values)
        return [f"{k}={v}" for k in K for v in V] + [f"{k}?" for k in K] + [str(v) for v in V]

    @property
    def vocab_size(self) -> int:
        return self.n_keys * self.n_values + self.n_keys + self.n_values

    @property
    def x_len(self) -> int:
        return self.n_pairs + 1

    def sample(self, batch: int, g: torch.Generator) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(x [B, T], y [B, T], mask [B, T], rebound [B] bool); only the query is graded."""
        K, V, n = self.n_keys, self.n_values, self.n_pairs
        q = torch.randint(K, (batch,), generator=g)
        keys = (q[:, None] + 1 + torch.randint(K - 1, (batch, n), generator=g)) % K  # not q
        vals = torch.randint(V, (batch, n), generator=g)
        rebound = torch.rand(batch, generator=g) < 0.5
        pos = torch.rand(batch, n, generator=g).argsort(1)[:, :2].sort(1).values  # p1 < p2
        rows = torch.arange(batch)
        p1, p2 = pos[:, 0], pos[:, 1]
        keys[rows, p1] = q
        keys[rows[rebound], p2[rebound]] = q[rebound]
        other = (vals[rows, p1] + 1 + torch.randint(V - 1, (batch,), generator=g)) % V
        vals[rows[rebound], p2[rebound]] = other[rebound]  # a different value the 2nd time
        last = torch.where(rebound, p2, p1)
        answer = vals[rows, last]
        x = torch.cat([keys * V + vals, (K * V + q)[:, None]], 1)  # [B, n + 1]
        y = torch.zeros_like(x)
        y[:, -1] = K * V + K + answer
        mask = torch.zeros_like(x, dtype=torch.bool)
        mask[:, -1] = True
        return x, y, mask, rebound

    def stale(self, x: Tensor) -> Tensor:
        """For each rebound row of x [B, T], the answer token of the value written FIRST
        under the queried key (what a memory that only adds still holds); -1 elsewhere."""
        K, V = self.n_keys, self.n_values
        q = x[:, -1] - K * V  # [B]
        pairs = x[:, :-1]
        hit = pairs // V == q[:, None]  # [B, n]
        first = hit.int().argmax(1)
        stale = pairs[torch.arange(len(x)), first] % V + K * V + K
        return torch.where(hit.sum(1) >= 2, stale, torch.full_like(stale, -1))


def overwrite_demo(
    n_keys: int, d_key: int, n_rewrites: int, n_values: int, seed: int
) -> dict[str, Tensor]:
    """Write n_keys (key, value) pairs, then n_rewrites of the keys again with new values,
    into a plain (Σ k vᵀ) and a delta-rule (β = 1) memory; read every key back.

    Returns reads {"plain", "delta"} [n_keys, n_values], the latest and the first values
    [n_keys], and `rewritten` [n_keys] bool. Both memories are the model's own forms
    (`linear_recurrent` unnormalised with identity features, `delta_recurrent`)."""
    g = torch.Generator().manual_seed(seed)
    keys = F.normalize(torch.randn(n_keys, d_key, generator=g), dim=-1)
    first = torch.randint(n_values, (n_keys,), generator=g)
    which = torch.randperm(n_keys, generator=g)[:n_rewrites]
    latest = first.clone()
    latest[which] = (
        first[which] + 1 + torch.randint(n_values - 1, (n_rewrites,), generator=g)
    ) % n_values
    rewritten = torch.zeros(n_keys, dtype=torch.bool)
    rewritten[which] = True
    k = torch.cat([keys, keys[which]])[None, None]  # [1, 1, T, d_key]: writes in order
    v = F.one_hot(torch.cat([first, latest[which]]), n_values).float()[None, None]  # [1, 1, T, V]
    _, (S_plain, _) = linear_recurrent(k, k, v, normalize=False)
    _, (S_delta,) = delta_recurrent(k, k, v, torch.ones(k.shape[:3]))
    return {
        "plain": keys @ S_plain[0, 0],  # [n_keys, n_values]
        "delta": keys @ S_delta[0, 0],
        "latest": latest,
        "first": first,
        "rewritten": rewritten,
    }


def recall_accuracy(demo: dict[str, Tensor], rule: str) -> tuple[float, float]:
    """(rewritten keys, kept keys): the fraction whose strongest read is the latest value."""
    right = demo[rule].argmax(-1) == demo["latest"]
    rw = demo["rewritten"]
    kept = right[~rw].float().mean() if (~rw).any() else torch.tensor(float("nan"))
    again = right[rw].float().mean() if rw.any() else torch.tensor(float("nan"))
    return float(again), float(kept)
