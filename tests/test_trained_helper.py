"""The seeds × threads helper runs each combination with its thread count in force and
restores the suite's one thread afterwards."""

import torch

from tests.trained import RUNS, across_runs, trained_outcome


@trained_outcome
def test_each_run_has_its_thread_count(seed, _threads):
    assert seed in (0, 1, 2)
    assert torch.get_num_threads() == _threads


def test_across_runs_covers_every_combination_and_restores_threads():
    assert torch.get_num_threads() == 1  # the suite's setting (conftest)
    got = across_runs(lambda s: (s, torch.get_num_threads()))
    assert got == {(s, t): (s, t) for s, t in RUNS}
    assert torch.get_num_threads() == 1
