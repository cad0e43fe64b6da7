"""FrameBus: a session publishes encoded bytes once; each connection has a tiny outbox.

The outbox keeps control messages in order (bounded), a tiny queue of tensor frames (the
bytes are shared by every outbox; when it is full the newest replaces the oldest, and the
sender skips frames older than STALE_S, so a slow client gets the latest picture, never a
backlog), and a scalar cursor: the sender pulls every
scalar since the cursor from the session's timeline, so scalars are never dropped and a
slow client's backlog costs no memory. This is the one seam between a session and the
connections watching it (a multi-replica deployment can put a network hop here).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from typing import Any


class Overflow(Exception):
    """A connection let too many control messages pile up; it is closed."""


class Outbox:
    MAX_TEXTS = 512
    MAX_FRAMES = 8
    STALE_S = 0.25

    def __init__(self) -> None:
        self.texts: deque[str] = deque()
        self.frames: deque[tuple[float, bytes]] = deque(maxlen=self.MAX_FRAMES)
        self.cursor = -1  # last scalar step delivered
        self.wake = asyncio.Event()
        self.tensors: set[str] | None = None  # None: every tensor
        self.max_fps: float | None = None
        self.overflowed = False

    def put_text(self, text: str) -> None:
        if len(self.texts) >= self.MAX_TEXTS:
            self.overflowed = True
        self.texts.append(text)
        self.wake.set()

    def put_frame(self, data: bytes) -> None:
        self.frames.append((time.monotonic(), data))
        self.wake.set()

    def next_frame(self, latest_only: bool = False) -> bytes | None:
        """The next frame to send: skips stale ones (all but the newest if latest_only)."""
        now = time.monotonic()
        while len(self.frames) > 1 and (latest_only or now - self.frames[0][0] > self.STALE_S):
            self.frames.popleft()
        return self.frames.popleft()[1] if self.frames else None

    def poke(self) -> None:
        self.wake.set()

    def rewind(self) -> None:
        """After a reset: forget the old run's pending frame and start scalars again."""
        self.frames.clear()
        self.cursor = -1
        self.wake.set()


class FrameBus:
    def __init__(self) -> None:
        self.outboxes: set[Outbox] = set()

    def subscribe(self, box: Outbox) -> None:
        self.outboxes.add(box)

    def unsubscribe(self, box: Outbox) -> None:
        self.outboxes.discard(box)

    def publish_text(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, separators=(",", ":"))  # encoded once for everyone
        for box in self.outboxes:
            box.put_text(text)

    def publish_frame(self, data: bytes) -> None:
        for box in self.outboxes:
            box.put_frame(data)

    def poke(self) -> None:
        for box in self.outboxes:
            box.poke()

    def rewind(self) -> None:
        for box in self.outboxes:
            box.rewind()

    def __len__(self) -> int:
        return len(self.outboxes)
