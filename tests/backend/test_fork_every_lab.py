"""A fork continues on exactly the same batches, for every training lab in the registry.

Run N steps, fork the way a session does (a deep copy of `state_dict`, a new lab from the
same params and seed under torch.manual_seed, `load_state_dict`), then step the original and
the fork M more each: every step's scalars must be identical. A lab whose batch generator,
shuffle order or any other state that steps read is left out of its state_dict fails here.
"""

from __future__ import annotations

import copy
import math

import pytest
import torch

from backend.labs import REGISTRY, load_all

N, M = 7, 6  # steps before the fork, steps after it
CPU = torch.device("cpu")
SEED = 3

load_all()
TRAINING = sorted(lab_id for lab_id, cls in REGISTRY.items() if cls.trains)
CASES = TRAINING


def _new(lab_id: str):
    cls = REGISTRY[lab_id]
    torch.manual_seed(SEED)  # as the session's worker does before building a lab
    return cls(cls.Params(), SEED, CPU)


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    if a.keys() != b.keys():
        return False
    return all(a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])) for k in a)


def _steps(lab, n: int) -> list[dict[str, float]]:
    out = []
    for i in range(n):
        frame = lab.step(i % 3 == 2)  # now and then a captured step, as a session has
        if frame.finish is not None:
            frame.finish()
        out.append(dict(frame.scalars))
    return out


def test_the_registry_has_the_ported_training_labs():
    from backend.trainer import TrainingLab

    ported = {"digits", "gpt", "linear-regression", "live-stream", "logistic", "mlp-playground"}
    ported |= {"optimizers", "svm", "temperature", "relu-kink", "positional-encoding"}
    assert ported <= set(TRAINING)
    assert all(issubclass(REGISTRY[lab_id], TrainingLab) for lab_id in ported)


@pytest.mark.parametrize("lab_id", CASES)
def test_a_fork_steps_exactly_as_the_original(lab_id):
    original = _new(lab_id)
    original.snapshot()
    _steps(original, N)
    state = copy.deepcopy(original.state_dict())  # Session._copy_state
    fork = _new(lab_id)
    fork.load_state_dict(state)
    fork.snapshot()  # a forked session shows its first picture before stepping
    ahead = _steps(original, M)
    behind = _steps(fork, M)
    for i, (a, b) in enumerate(zip(ahead, behind, strict=True)):
        assert _same(a, b), (lab_id, N + i + 1, a, b)


def test_mlp_playground_forks_mid_epoch_on_the_same_shuffle():
    """Batches of 10 over ~250 training points: a fork at step 7 is mid-epoch, and one at
    step 30 past the first reshuffle; both must continue on the original's batches."""
    for n in (7, 30):
        original = _new("mlp-playground")
        _steps(original, n)
        fork = _new("mlp-playground")
        fork.load_state_dict(copy.deepcopy(original.state_dict()))
        assert fork.cursor == original.cursor and torch.equal(fork.order, original.order)
        for a, b in zip(_steps(original, 30), _steps(fork, 30), strict=True):
            assert _same(a, b), n
