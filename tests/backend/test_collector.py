"""The collector's policy for a lecture hall (backend/collector.py): while a class is
connected a full collection's survivors are frozen, so the next one walks only what came
after; once half the hall has gone, what was frozen is collected again."""

from __future__ import annotations

import gc
import weakref

import pytest

from backend import collector


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def hall():
    """A Collector on the process's collector, a settable connection count; the freezes it
    made are undone afterwards."""
    frozen_before = gc.get_freeze_count()
    count = {"n": 0}
    c = collector.Collector(lambda: count["n"], freeze_at=20)
    gc.callbacks.append(c._after_collection)
    try:
        yield c, count
    finally:
        gc.callbacks.remove(c._after_collection)
        if not frozen_before:
            gc.unfreeze()


@pytest.mark.parametrize("connections, frozen", [(500, True), (3, False)])
def test_a_full_collection_freezes_its_survivors_with_a_class_not_for_a_learner_alone(
    hall, connections, frozen
):
    c, count = hall
    count["n"] = connections
    before = gc.get_freeze_count()
    alive = [Node() for _ in range(1000)]
    gc.collect()
    if frozen:
        assert gc.get_freeze_count() >= before + len(alive) and c.frozen_at == 500
    else:
        assert gc.get_freeze_count() == before and c.frozen_at is None and not c.due()


def test_what_was_frozen_is_collected_once_half_the_hall_has_gone(hall):
    c, count = hall
    for _ in range(60):  # a class that left before anything was frozen: nothing to thaw
        c.released()
    count["n"] = 100
    viewer = Node()
    gone = weakref.ref(viewer)
    gc.collect()  # frozen alive
    del viewer  # the viewer leaves: its cycle is garbage, out of the collector's sight
    gc.collect()
    assert gone() is not None
    for _ in range(49):
        c.released()
    count["n"] = 51
    c.check()  # 49 of the 100 gone: not yet
    assert gone() is not None
    c.released()
    count["n"] = 50
    c.check()
    assert gone() is None
    assert c.frozen_at == 50 and c.gone == 0  # a class still there: frozen again
