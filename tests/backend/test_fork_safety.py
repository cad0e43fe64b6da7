"""A session process survives its first matrix products on two threads at once, as a lab's
arms side by side run them (session_process.child_start). Its parent, the fork server, has
used torch; a child forked from a parent that ran a matrix product, with no product of its
own on one thread first, died of SIGSEGV about once in 30 (docs/architecture.md, "Sessions
and threads"). Here such a parent (spawned, single-threaded) forks 200 children."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading

import pytest
import torch

from backend import session_process
from backend.warm_torch import first_products

CHILDREN = 200


def _two_threads_first_products() -> None:
    session_process.child_start()
    models = [torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.Linear(256, 64)) for _ in "ab"]
    x = torch.randn(256, 64)
    together = threading.Barrier(2)

    def train(model: torch.nn.Module) -> None:
        together.wait()
        model(x).square().mean().backward()

    threads = [threading.Thread(target=train, args=(m,)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _parent(results) -> None:
    """A parent that used torch (as the fork server does), forking children one by one."""
    torch.set_num_threads(1)
    first_products()
    codes = []
    for _ in range(CHILDREN):
        pid = os.fork()
        if pid == 0:
            code = 1  # a Python error is a failure too, not only a signal
            try:
                _two_threads_first_products()
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        codes.append(os.waitstatus_to_exitcode(status))
    results.put(codes)


@pytest.mark.slow
def test_a_forked_session_process_survives_two_threads_first_products():
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    parent = ctx.Process(target=_parent, args=(results,))
    parent.start()
    codes = results.get(timeout=600)
    parent.join(60)
    assert codes == [0] * CHILDREN, {c: codes.count(c) for c in set(codes)}
