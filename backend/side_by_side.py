"""A lab's arms trained at once on two cores: the session's thread and a helper each take
the next arm not yet trained until none is left, so a slow arm (the MoE one) does not hold
the others back. Each arm's numbers are the ones training it alone gives: an arm's step
reads only its own model, optimizer and the step's shared batch, with one torch thread, on
whichever thread runs it (tests/backend/test_side_by_side.py checks bitwise equality).

A backward pass on the CPU runs mostly without the GIL, so two arms' steps overlap; the
lone `ffn-moe` session's four arms: docs/benchmarks.md."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from backend.worker import arm_pool, spare_core

T = TypeVar("T")


def side_by_side(items: Sequence[T], work: Callable[[T], None]) -> bool:
    """On a spare core (backend/worker.py `spare_core`), run work(item) for every item, this
    thread and one helper taking turns in order; True when all are done (the first error
    either thread met is raised). False, having run nothing, when no core is spare."""
    with spare_core() as spare:
        if spare:
            _on_two_threads(items, work)
    return spare


def _on_two_threads(items: Sequence[T], work: Callable[[T], None]) -> None:
    pending = iter(items)
    done = object()
    lock = threading.Lock()
    failed: list[BaseException] = []

    def drain() -> None:
        while not failed:
            with lock:
                item = next(pending, done)
            if item is done:
                return
            try:
                work(item)
            except BaseException as exc:  # the other thread stops taking items too
                failed.append(exc)
                raise

    helper = arm_pool().submit(drain)
    try:
        drain()
    finally:
        helper.exception()  # wait for the helper's arm: the step is whole when this returns
    if failed:
        raise failed[0]
