"""Work in parts: a lab's evaluation or text sample that would hold one step for many steps'
time, done one part after each of the next steps on a frozen copy of the model.

A step that stops for 400 ms holds back the frame every viewer waits for (a class's
"latest frame" ages past what follows a teacher); spread over the next steps, the
same work costs each of them a part, and because it runs on a copy taken when it was asked,
its result is still the model's at that step.

A piece of work in parts is a generator: each `next()` does one part; it yields between
parts and returns its result after the last (`advance` gives it back).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Generator
from typing import Any, TypeVar

from torch import nn

T = TypeVar("T")
Parts = Generator[None, None, T]

# Work costing up to AT_ONCE_STEPS training steps is done at once (a pause that short
# does not hold a class's frames long). Longer work is cut into parts of at most about a
# third of a step, so a step with a part still fits a play pace the steps alone keep with a
# third to spare; at most MAX_PARTS, so the result does not lag far behind its step.
AT_ONCE_STEPS = 2.0
MAX_PART_STEPS = 1 / 3
MAX_PARTS = 16
# A forward pass over the same tokens, as a share of a training step (forward + backward).
FORWARD_SHARE = 1 / 3

_PENDING: Any = object()  # advance's "not done yet"


def parts_for(cost_in_steps: float) -> int:
    """How many parts a piece of work costing this many training steps is cut into."""
    if cost_in_steps <= AT_ONCE_STEPS:
        return 1
    return min(MAX_PARTS, math.ceil(cost_in_steps / MAX_PART_STEPS))


def frozen_copy(model: nn.Module) -> nn.Module:
    """The model as it is now, apart from the one that trains on (eval mode, no grads)."""
    copied = copy.deepcopy(model).eval()
    copied.requires_grad_(False)
    return copied


def advance(work: Parts[T]) -> T | Any:
    """Do one part of `work`: its result when that was the last part, else `PENDING`."""
    try:
        next(work)
    except StopIteration as done:
        return done.value
    return _PENDING


def pending(result: object) -> bool:
    return result is _PENDING


def whole(work: Parts[T]) -> T:
    """Every part at once (a session's last step, a snapshot, one part)."""
    while pending(result := advance(work)):
        pass
    return result
