"""The live-stream table (CURRICULUM.md ch. 1): predict a stream's peak viewers.

Columns: total users, reservations, hour of day, push (0 none / 1 app / 2 SMS) -> peak.
"""

from __future__ import annotations

import torch

FEATURES = ("users", "reservations", "hour", "push")
ROWS = (
    (30000, 1800, 14, 1, 4100),
    (40000, 2000, 16, 1, 4300),
    (50000, 3200, 20, 2, 9000),
    (60000, 2500, 12, 0, 2800),
    (70000, 3000, 15, 0, 3600),
    (80000, 4200, 18, 1, 9100),
    (100000, 6000, 20, 2, 15800),
    (120000, 7500, 21, 2, 19200),
    (150000, 9000, 19, 2, 22500),
    (200000, 15000, 22, 2, 38000),
)
NEW_STREAM = (180000, 12000, 20, 2)  # the curriculum's unseen stream, predicted at the end


def load(dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """(x [10, 4], y [10]) as raw numbers."""
    t = torch.tensor(ROWS, dtype=dtype)
    return t[:, :4], t[:, 4]


def zscore_stats(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and unbiased std per column (torch.std's default), as the book does."""
    return x.mean(0), x.std(0)
