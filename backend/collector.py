"""Python's garbage collector in a lecture hall: no full collection walks every viewer.

Each joined viewer holds about 145 objects the cyclic collector tracks (its coroutines from
uvicorn's task down to our connection, its outbox, the websocket protocol). A full
collection walks every tracked object outside the permanent generation, and the collector
runs one whenever the objects that reached the oldest generation grew by a quarter, so
3,000 viewers joining one class made 11 full collections during the join storm, of up to
250 ms each, with the event loop stopped meanwhile: the teacher's commands waited behind
them (docs/lecture.md, "The storm's pauses, found").

So while the server holds a class (at least FREEZE_AT connections), what survives a full
collection is frozen (`gc.freeze`): it is alive, and the next full collection walks only
what came after it. The price: something frozen that becomes cyclic garbage later (a viewer
who leaves leaves ~33 objects in cycles; a session closed meanwhile) is not freed until a
thaw. Once as many connections and sessions have gone as half the connections at the last
freeze (at least MIN_THAW), everything is thawed, collected once and frozen again (like the
start-up objects, backend/warm_torch.py): one full collection per half a hall that left,
not eleven while it joins. The collector is the process's, so is this policy: one per
process (`start` replaces the one before).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("shaomai.sessions")

FREEZE_AT = 20  # connections: a learner alone never freezes anything
THAW_SHARE = 0.5  # of the connections at the last freeze ...
MIN_THAW = 10  # ... or this many, whichever is more, gone since the last thaw
CHECK_S = 5.0


class Collector:
    """Freezes a full collection's survivors while `connections()` ≥ `freeze_at`; `check()`
    thaws and collects once enough were `released()` since."""

    def __init__(self, connections: Callable[[], int], freeze_at: int = FREEZE_AT):
        self.connections = connections
        self.freeze_at = freeze_at
        self.frozen_at: int | None = None  # connections at the last freeze; None: none
        self.gone = 0  # connections and sessions that ended since the first freeze
        self._task: asyncio.Task | None = None

    def _after_collection(self, phase: str, info: dict[str, Any]) -> None:
        # Runs on whichever thread allocated when the collection started (a lab's training,
        # the loop); gc.freeze only splices the generations' lists onto the permanent one.
        if phase != "stop" or info.get("generation") != 2:
            return
        n = self.connections()
        if n >= self.freeze_at:
            gc.freeze()
            if self.frozen_at is None:  # what left before the first freeze is not frozen
                self.gone = 0
            self.frozen_at = max(self.frozen_at or 0, n)

    def released(self) -> None:
        self.gone += 1

    def due(self) -> bool:
        if self.frozen_at is None:
            return False
        return self.gone >= max(MIN_THAW, self.frozen_at * THAW_SHARE)

    def check(self) -> None:
        """Thaw, collect and freeze again once enough of the hall has gone."""
        if not self.due():
            return
        t0 = time.perf_counter()
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()  # the start-up objects and whoever stays: alive, out of sight again
        n = self.connections()
        self.frozen_at = n if n >= self.freeze_at else None
        self.gone = 0
        ms = (time.perf_counter() - t0) * 1000
        log.info("collector thawed at %d connections: %d unreachable, %.0f ms", n, found, ms)

    async def _check_forever(self) -> None:
        while True:
            await asyncio.sleep(CHECK_S)
            self.check()


_current: Collector | None = None


def start(connections: Callable[[], int]) -> Collector:
    """The process's policy, for a server whose live connections `connections()` counts; its
    checks run on the running loop."""
    global _current
    stop()
    _current = Collector(connections)
    gc.callbacks.append(_current._after_collection)
    _current._task = asyncio.get_running_loop().create_task(_current._check_forever())
    return _current


def stop(which: Collector | None = None) -> None:
    """Stop the process's policy (only if it is `which`, when given)."""
    global _current
    if _current is None or (which is not None and which is not _current):
        return
    if _current._after_collection in gc.callbacks:
        gc.callbacks.remove(_current._after_collection)
    if _current._task is not None:
        _current._task.cancel()
    _current = None


def released() -> None:
    """A connection or a session ended: what it leaves may be frozen garbage."""
    if _current is not None:
        _current.released()
