"""What one join costs the server, bounded so that a class of thousands can join at once.

3,000 viewers joining one session stalled the event loop for over 20 s (issue 19), for two
reasons that this module removes:
- every join (and leave) published a `status` with the new connection count to every
  viewer: n joins made n²/2 messages (4.5 million for 3,000), each a send per viewer. The
  count is now announced at most once per COUNT_EVERY_S per session: the first change at
  once, the changes after it together when the interval is up (always the latest count).
- every `ready` rebuilt its lab's params JSON schema (pydantic builds it afresh on each
  call, ~5–10 ms for `gpt`): 3,000 joiners paid it one after another. It is built once.

And one that spreads what is left: the joins whose handshakes finished together all ran in
the same turn of the event loop (≈ 200 at once at the start of a 3,000-viewer storm, about
a millisecond each), and a teacher's command waited behind all of them. At most
JOINS_PER_TURN connections start a turn now (`admit`); the others wait for the next one.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from typing import Any

COUNT_EVERY_S = 0.5  # a connection count is not urgent; a state change carries it at once
JOINS_PER_TURN = 25

_schemas: dict[type, dict[str, Any]] = {}


def params_schema(params_cls: type) -> dict[str, Any]:
    """A lab's params schema, built once per class (callers must not mutate it)."""
    schema = _schemas.get(params_cls)
    if schema is None:
        schema = _schemas[params_cls] = params_cls.model_json_schema()
    return schema


class CountAnnouncer:
    """Publishes one session's `status` when its connection count changed, rate-limited."""

    def __init__(self, session: Any) -> None:
        self.session = weakref.ref(session)
        self.last = float("-inf")  # when a count was last published
        self.timer: asyncio.TimerHandle | None = None
        self.published = 0

    def changed(self) -> None:
        if self.timer is not None:
            return  # one is due; it will carry the latest count
        wait = self.last + COUNT_EVERY_S - time.monotonic()
        if wait <= 0:
            self._publish()
        else:
            self.timer = asyncio.get_running_loop().call_later(wait, self._publish)

    def _publish(self) -> None:
        self.timer = None
        self.last = time.monotonic()
        s = self.session()
        if s is not None:
            s.bus.publish_text(s.status())
            self.published += 1


_announcers: weakref.WeakKeyDictionary[Any, CountAnnouncer] = weakref.WeakKeyDictionary()


def announcer(session: Any) -> CountAnnouncer:
    a = _announcers.get(session)
    if a is None:
        a = _announcers[session] = CountAnnouncer(session)
    return a


def connections_changed(session: Any) -> None:
    """A connection joined or left `session`: everyone sees the new count, soon."""
    announcer(session).changed()


class Turnstile:
    """Lets at most `per_turn` callers of `admit` through per turn of the event loop, the
    rest in order in the turns after."""

    def __init__(self, per_turn: int = JOINS_PER_TURN) -> None:
        self.per_turn = per_turn
        self.passed = 0  # through in this turn
        self.waiting: deque[asyncio.Future] = deque()
        self.turn_due = False
        self.loop: asyncio.AbstractEventLoop | None = None

    async def admit(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self.loop:  # a new loop (a test's app): the old one's turns are over
            self.loop, self.passed, self.waiting, self.turn_due = loop, 0, deque(), False
        if self.passed < self.per_turn and not self.waiting:
            self.passed += 1
            self._next_turn_soon()
            return
        fut = loop.create_future()
        self.waiting.append(fut)
        self._next_turn_soon()
        await fut

    def _next_turn_soon(self) -> None:
        if not self.turn_due:
            self.turn_due = True
            asyncio.get_running_loop().call_soon(self._next_turn)

    def _next_turn(self) -> None:
        self.turn_due = False
        self.passed = 0
        while self.waiting and self.passed < self.per_turn:
            fut = self.waiting.popleft()
            if not fut.done():  # a caller that went away meanwhile takes no place
                fut.set_result(None)
                self.passed += 1
        if self.waiting or self.passed:
            self._next_turn_soon()


_turnstile = Turnstile()


async def admit() -> None:
    """Wait for this connection's turn to join (at once unless many are joining)."""
    await _turnstile.admit()
