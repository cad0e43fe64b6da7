"""A session's history: every step's scalars, and encoded frames under a memory budget.

Scalars are kept whole so curves never have gaps. Frames (already encoded bytes) are kept
newest-first under `budget_bytes`: the most recent half of the budget holds every frame;
when the budget is exceeded, every other frame of the older part is dropped, so old history
thins out geometrically but never disappears (the first frame is always kept).
"""

from __future__ import annotations

import bisect
from typing import Any


class Timeline:
    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.scalar_steps: list[int] = []
        self.scalar_values: list[dict[str, float]] = []
        self.frame_steps: list[int] = []
        self.frames: list[bytes] = []
        self.frame_bytes = 0

    # -- scalars --------------------------------------------------------------------------
    def add_scalars(self, step: int, values: dict[str, float]) -> None:
        if self.scalar_steps and step <= self.scalar_steps[-1]:
            # A re-sent step (e.g. snapshot after set) replaces, never duplicates.
            i = bisect.bisect_left(self.scalar_steps, step)
            del self.scalar_steps[i:], self.scalar_values[i:]
        self.scalar_steps.append(step)
        self.scalar_values.append(values)

    def scalars_after(self, step: int) -> tuple[list[int], list[dict[str, float]]]:
        i = bisect.bisect_right(self.scalar_steps, step)
        return self.scalar_steps[i:], self.scalar_values[i:]

    def scalar_rows(self, max_rows: int) -> list[tuple[int, dict[str, float]]]:
        """Every step's scalars, thinned evenly to at most `max_rows` (the last step kept)."""
        n = len(self.scalar_steps)
        stride = max(1, -(-n // max_rows))
        picked = range(n - 1, -1, -stride)[::-1]
        return [(self.scalar_steps[i], self.scalar_values[i]) for i in picked]

    @property
    def last_scalar_step(self) -> int:
        return self.scalar_steps[-1] if self.scalar_steps else -1

    # -- frames ---------------------------------------------------------------------------
    def add_frame(self, step: int, data: bytes) -> None:
        if self.frame_steps and step <= self.frame_steps[-1]:
            i = bisect.bisect_left(self.frame_steps, step)
            self.frame_bytes -= sum(len(b) for b in self.frames[i:])
            del self.frame_steps[i:], self.frames[i:]
        self.frame_steps.append(step)
        self.frames.append(data)
        self.frame_bytes += len(data)
        if self.frame_bytes > self.budget:
            self._thin()

    def _thin(self) -> None:
        # Keep the newest frames that fit in half the budget whole; thin everything older.
        recent, size = len(self.frames), 0
        while recent > 1 and size + len(self.frames[recent - 1]) <= self.budget // 2:
            recent -= 1
            size += len(self.frames[recent])
        keep = [i for i in range(recent) if i % 2 == 0] + list(range(recent, len(self.frames)))
        if len(keep) == len(self.frames):  # a single frame larger than the budget
            keep = keep[-1:]
        self.frame_steps = [self.frame_steps[i] for i in keep]
        self.frames = [self.frames[i] for i in keep]
        self.frame_bytes = sum(len(b) for b in self.frames)

    def frame_at(self, step: int) -> bytes | None:
        """The recorded frame at or before `step` (the earliest one if none is before)."""
        if not self.frames:
            return None
        i = bisect.bisect_right(self.frame_steps, step) - 1
        return self.frames[max(i, 0)]

    def info(self) -> dict[str, Any]:
        return {
            "frames": len(self.frames),
            "first": self.frame_steps[0] if self.frame_steps else None,
            "last": self.frame_steps[-1] if self.frame_steps else None,
            "bytes": self.frame_bytes,
        }

    def clear(self) -> None:
        self.__init__(self.budget)
