"""Trained outcomes, checked the way another machine would see them.

A test that asserts what training reaches (an accuracy, a loss, which arm wins, the step by
which something happens) reads one trajectory of float kernels. Another CPU rounds matrix
products differently and the trajectory drifts; a different thread count changes the
reduction order the same way, so it is the cheapest stand-in for another machine. Such a
test runs its recipe for seeds 0, 1 and 2 and with 1 and 2 torch threads and asserts the
outcome on every run (or asserts only the part that is robust).

    @trained_outcome
    def test_pre_norm_solves_copy(seed):
        assert train(seed)["seq_acc"] > 0.95

    results = across_runs(lambda seed: train(seed)["seq_acc"])   # {(seed, threads): value}
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import pytest
import torch

SEEDS = (0, 1, 2)
THREADS = (1, 2)
RUNS = [(s, t) for s in SEEDS for t in THREADS]

T = TypeVar("T")


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op threads set to n inside the block, restored after it."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def across_runs(fn: Callable[[int], T], seeds=SEEDS, threads=THREADS) -> dict[tuple[int, int], T]:
    """fn(seed) for every seed and thread count: {(seed, threads): result}."""
    out: dict[tuple[int, int], T] = {}
    for t in threads:
        with torch_threads(t):
            for s in seeds:
                out[(s, t)] = fn(s)
    return out


@pytest.fixture
def _threads(request) -> Iterator[int]:
    with torch_threads(request.param):
        yield request.param


def trained_outcome(test):
    """Parametrize a test over seeds 0–2 × 1 and 2 torch threads; the test takes `seed`
    (and may take `_threads`, the thread count in force). Marked slow: six trainings."""
    test = pytest.mark.parametrize("_threads", THREADS, indirect=True, ids=lambda t: f"t{t}")(test)
    test = pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed{s}")(test)
    test = pytest.mark.usefixtures("_threads")(test)
    return pytest.mark.slow(test)
