"""The trainer's batch and loss for a lab that learns a masked sequence task: every arm
reads the same `self.task.sample(...)` batch and is graded on the masked positions only."""

from __future__ import annotations

import torch
from torch import Tensor

from backend.trainer import Arm
from models.data.tasks import masked_loss


class MaskedTask:
    """List it before TrainingLab. `sample` may be overridden (e.g. a train length)."""

    def sample(self, gen: torch.Generator) -> tuple[Tensor, ...]:
        return self.task.sample(self.params.batch, gen)

    def batch(self, gen: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        x, y, mask = self.sample(gen)[:3]  # x [B, T], y [B, T], mask [B, T]
        return x.to(self.device), y.to(self.device), mask.to(self.device)

    def loss(self, arm: Arm, batch) -> tuple[Tensor, Tensor]:
        """The masked cross-entropy, and the logits for `arm_scalars`."""
        x, y, mask = batch
        logits = arm.model(x)
        return masked_loss(logits, y, mask), logits
