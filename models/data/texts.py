"""The app's own texts, the size cap on pasted text, and random windows for LM training.

The corpora are short original stories written for this app (a little shaomai that learns
to speak by guessing the next word), in Chinese and English; no third-party text ships.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import Tensor

CORPORA = Path(__file__).parent / "corpora"
TEXTS = {"zh": "zh_dumpling.txt", "en": "en_dumpling.txt"}
MAX_PASTED_BYTES = 200_000  # ~65k Chinese characters: a BPE trains on it in about a second


def load_text(name: str) -> str:
    """A bundled text by name: "zh" or "en"."""
    if name not in TEXTS:
        raise ValueError(f"unknown text {name!r}; choose from {sorted(TEXTS)}")
    return (CORPORA / TEXTS[name]).read_text(encoding="utf-8")


def check_pasted_size(text: str, max_bytes: int = MAX_PASTED_BYTES) -> str:
    """Refuse pasted text over max_bytes (UTF-8); return it unchanged."""
    if len(text) > max_bytes or len(text.encode("utf-8")) > max_bytes:  # chars ≤ bytes
        size = len(text.encode("utf-8"))
        raise ValueError(f"pasted text is {size:,} bytes; the limit is {max_bytes:,}")
    return text


def check_pasted(text: str, max_bytes: int = MAX_PASTED_BYTES) -> str:
    """Refuse pasted text over max_bytes (UTF-8) or with nothing to learn; return it unchanged."""
    check_pasted_size(text, max_bytes)
    if len(set(text)) < 2:
        raise ValueError("pasted text needs at least two distinct characters")
    return text


def input_and_labels(ids: list[int]) -> tuple[list[int], list[int]]:
    """A sequence trains as input ids[:-1] and labels ids[1:]: [11,27,42,2] -> [11,27,42], [27,42,2]."""
    return ids[:-1], ids[1:]


def split(ids: Tensor, val_fraction: float = 0.1) -> tuple[Tensor, Tensor]:
    """Train on the head of the text and validate on its tail (no shuffling: windows overlap)."""
    n_val = int(len(ids) * val_fraction)
    return ids[: len(ids) - n_val], ids[len(ids) - n_val :]


def lm_batch(
    ids: Tensor, batch: int, n_ctx: int, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """Random windows of n_ctx + 1 tokens from a 1-D id tensor: x, y [batch, n_ctx], y = x shifted."""
    if len(ids) < n_ctx + 1:
        raise ValueError(f"text of {len(ids)} tokens is shorter than a window of {n_ctx + 1}")
    starts = torch.randint(0, len(ids) - n_ctx, (batch,), generator=generator)  # [B]
    windows = ids[starts[:, None] + torch.arange(n_ctx + 1)]  # [B, n_ctx + 1]
    return windows[:, :-1], windows[:, 1:]
