"""A real saved run for the store tests: a linear-regression lab trained a few steps."""

from __future__ import annotations

import math
import time

import torch

from backend import wire
from backend.labs import REGISTRY, load_all
from backend.saved_run import SavedRun, hash_token, pack_weights

LAB = "linear-regression"
TOKEN = "driver-token-for-tests"


def make_run(steps: int = 6, seed: int = 0, name: str = "my run", nan_at: int | None = 3):
    """Train `steps` steps; every step's scalars, a frame every other step, the weights.

    `nan_at` puts a NaN loss and an infinite scalar at that step (a diverged run's history).
    """
    load_all()
    cls = REGISTRY[LAB]
    params = cls.Params()
    torch.manual_seed(seed)
    lab = cls(params, seed, torch.device("cpu"))
    scalars, frames = [], []
    first = lab.snapshot()
    frames.append((0, wire.encode(first, {"run": 0})))
    for step in range(1, steps + 1):
        frame = lab.step(capture=step % 2 == 0)
        frame.step = step
        values = dict(frame.scalars)
        if step == nan_at:
            values.update(loss=math.nan, grad_norm=math.inf, gap=-math.inf)
        scalars.append((step, values))
        if step % 2 == 0:
            frames.append((step, wire.encode(frame, {"run": 0})))
    return SavedRun(
        id="",
        lab=LAB,
        name=name,
        params=params.model_dump(mode="json"),
        seed=seed,
        step=steps,
        created=time.time(),
        scalars=scalars,
        frames=frames,
        weights=pack_weights(lab.state_dict()),
        token_hash=hash_token(TOKEN),
    )


def same_scalars(a, b) -> bool:
    """Equal, with NaN equal to NaN (a NaN is never == itself)."""
    if [s for s, _ in a] != [s for s, _ in b]:
        return False
    for (_, x), (_, y) in zip(a, b, strict=True):
        if x.keys() != y.keys():
            return False
        for k in x:
            if not (x[k] == y[k] or (math.isnan(x[k]) and math.isnan(y[k]))):
                return False
    return True


def same_run(a: SavedRun, b: SavedRun) -> bool:
    """Equal in everything the run holds (not its id or owner)."""
    keys = ("lab", "name", "params", "seed", "step", "created", "frames", "weights")
    return all(getattr(a, k) == getattr(b, k) for k in keys) and same_scalars(a.scalars, b.scalars)
