"""A session process (forked from the fork server, which used torch) survives its first
matrix products on two threads at once, as a lab's arms side by side run them: without
`first_products` on its own thread first, about one child in 30 to 200 died of SIGSEGV
(docs/architecture.md, "Sessions and threads")."""

from __future__ import annotations

import threading

import pytest
import torch

from backend import session_process

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


@pytest.mark.slow
def test_a_session_process_survives_two_threads_first_products():
    session_process.warm_up()  # the fork server, warmed as the server's
    codes = []
    for _ in range(CHILDREN):
        child = session_process._CTX.Process(target=_two_threads_first_products)
        child.start()
        child.join(60)
        codes.append(child.exitcode)
    assert codes == [0] * CHILDREN, {c: codes.count(c) for c in set(codes)}
