"""Learning-rate schedules a training lab mixes in (backend/trainer.py re-exports them)."""

from __future__ import annotations


class StepsAndWarmup:
    """For a training lab whose Params have `steps` (then it is done) and `warmup` (updates
    over which the learning rate ramps up linearly; 0: none). List it before TrainingLab."""

    def max_steps(self) -> int:
        return self.params.steps

    def schedule(self, t: int) -> float:
        warm = self.params.warmup
        return min(1.0, (t + 1) / warm) if warm else 1.0
