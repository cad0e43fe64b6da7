"""An arm of a training lab: what to build (ArmSpec) and the arm at run time (Arm).

The trainer (backend/trainer.py) makes one Arm per ArmSpec a lab declares and steps them
in lockstep; an Arm holds its model, optimizer, generator and the last step's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from backend.labs.base import TensorOut
from backend.optim import OptimConfig
from models.stages import Stages


@dataclass(frozen=True)
class ArmSpec:
    """One arm of a training lab: what to build and how to train it."""

    label: str  # short id shown in legends, e.g. "MHA", "Adam"
    build: Callable[[], nn.Module]  # called under torch.manual_seed(seed)
    optim: OptimConfig
    seed: int
    title: dict[str, str] | None = None  # {"zh": ..., "en": ...}


@dataclass(eq=False)
class Arm:
    """An arm at run time: its model, optimizer, own generator and last step's numbers."""

    index: int
    spec: ArmSpec
    model: nn.Module
    optimizer: torch.optim.Optimizer
    generator: torch.Generator  # the arm's own randomness (seeded from spec.seed)
    stages: Stages  # (label, params) per gradient stage, found once (models.stages)
    params: list[nn.Parameter]  # every parameter, listed once (no module walk per step)
    prefix: str = ""  # "" with one arm, "arm.<i>." with several
    diverged: bool = False
    last_loss: float = math.nan  # the batch's loss of the last update (before arm_scalars)
    scalars: dict[str, float] = field(default_factory=dict)  # the last step's (unprefixed)
    grad_norms: list[float] = field(default_factory=list)  # the last backward's, per stage
    # The last update's size (measured only with `stream_update_size`): max |Δw| and ‖Δw‖.
    update_max: float = math.nan
    update_norm: float = math.nan
    # An evaluation in parts still running (TrainingLab.evaluate_in_parts), or None.
    evaluating: Generator[None, None, dict[str, float]] | None = None
    # One finished at once by TrainingLab.finish_parts: its numbers go with the next step.
    evaluated: dict[str, float] = field(default_factory=dict)
    train_s: float = 0.0  # seconds its last update took (arms side by side: longest first)

    @property
    def stage_labels(self) -> list[str]:
        return [label for label, _ in self.stages]

    def grad_norm_tensor(self, dtype: str = "f32") -> TensorOut | None:
        """The last backward's stage norms as the `grad_norm` bars (None before any)."""
        if not self.grad_norms:
            return None
        return TensorOut("grad_norm", self.grad_norms, dtype, self.stage_labels)


def update_size(arm: Arm, before: list[Tensor]) -> dict[str, float]:
    """The update just taken: its largest |Δw| and its norm ‖Δw‖ (one fused read)."""
    if not before:
        return {}
    with torch.no_grad():
        delta = torch._foreach_sub(arm.params, before)
        peaks = torch._foreach_norm(delta, math.inf)
        norms = torch._foreach_norm(delta, 2)
        vals = torch.stack([*peaks, *norms]).tolist()
    n = len(before)
    arm.update_max = max(vals[:n])
    arm.update_norm = math.sqrt(sum(v * v for v in vals[n:]))
    return {"update_max": arm.update_max, "update_norm": arm.update_norm}
