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
from typing import TYPE_CHECKING, Any

from backend import loop_lag, metrics

if TYPE_CHECKING:
    from backend.send_now import SendNow


class Overflow(Exception):
    """A connection let too many control messages pile up; it is closed."""


class Outbox:
    """One connection's pending output, in order: control texts and frames in one queue."""

    MAX_TEXTS = 512
    MAX_FRAMES = 8
    STALE_S = 0.25

    def __init__(self) -> None:
        self.items: deque[tuple[str, float, str | bytes]] = deque()  # (kind, time, data)
        self.n_texts = 0
        self.n_frames = 0
        self.cursor = -1  # last scalar step delivered
        self.wake = asyncio.Event()
        self.tensors: set[str] | None = None  # None: every tensor
        self.max_fps: float | None = None
        self.slice = None  # backend/subscriptions.Slice: layer, head, quality (None: all)
        self.scalars_row = False  # the client keeps scalars rows: a cut may leave them out
        self.scalars_either = False  # ...and takes a frame's header scalars as its row
        self.sent_bytes = 0  # bytes its sender wrote (the class bandwidth figure)
        self.overflowed = False
        # No published frame until the connection's first `subscribe` (`/ws?...&wait=
        # subscribe`: a phone's page, whose frames would be whole until then).
        self.frames_held = False
        self.idle = False  # its sender waits for a wake-up, holding nothing to send
        self.last_frame_t = 0.0  # when its last frame went out (max_fps)
        # Frames and texts sent at once when nothing waits (backend/send_now.py), or None.
        self.send_now: SendNow | None = None

    def put_text(self, text: str) -> None:
        if self.send_now is not None and self.send_now.text(text):
            return
        if self.n_texts >= self.MAX_TEXTS:
            self.overflowed = True
        self.items.append(("t", 0.0, text))
        self.n_texts += 1
        self.wake.set()

    def put_frame(self, data: bytes) -> None:
        self.items.append(("f", time.monotonic(), data))
        self.n_frames += 1
        if self.n_frames > self.MAX_FRAMES:  # the newest replaces the oldest
            for i, item in enumerate(self.items):
                if item[0] == "f":
                    del self.items[i]
                    self.n_frames -= 1
                    break
        self.wake.set()

    def pop(self, latest_only: bool = False) -> tuple[str, str | bytes] | None:
        """The next item to send; a frame is skipped when stale and a newer one is queued."""
        now = time.monotonic()
        while self.items:
            kind, t, data = self.items.popleft()
            if kind == "t":
                self.n_texts -= 1
                return kind, data
            self.n_frames -= 1
            if self.n_frames > 0 and (latest_only or now - t > self.STALE_S):
                continue
            return kind, data
        return None

    def push_back(self, kind: str, data: str | bytes) -> None:
        self.items.appendleft((kind, time.monotonic(), data))
        if kind == "f":
            self.n_frames += 1
        else:
            self.n_texts += 1

    def poke(self) -> None:
        self.wake.set()

    def rewind(self) -> None:
        """After a reset: forget the old run's pending frames and start scalars again."""
        self.items = deque(item for item in self.items if item[0] == "t")
        self.n_frames = 0
        self.cursor = -1
        self.wake.set()


class FrameBus:
    # While the loop lags (backend/loop_lag.py: thousands joining at once), a run's frames
    # go to the class at most every THIN_S; one skipped waits as the latest and goes when due.
    THIN_S = 0.5
    # Boxes served in one turn of the loop: a message to 3,000 sockets in one callback held
    # the loop ~100 ms, and a teacher's command waited behind it (a command takes two turns
    # or more: 500 a turn left the storm's round trips at p95 ≈ 100 ms, 150 at ≈ 40).
    # Messages go out in the order published: one waits until those before it reached
    # every box.
    CHUNK = 150

    def __init__(self) -> None:
        self.outboxes: set[Outbox] = set()
        self.last_fanout = float("-inf")
        self.waiting: bytes | None = None  # the latest run frame held back while lagging
        self.timer: asyncio.TimerHandle | None = None
        self.queue: deque[list[Any]] = deque()  # [boxes, next index, deliver, data, since]
        self.turn: asyncio.Handle | object | None = None

    def subscribe(self, box: Outbox) -> None:
        self.outboxes.add(box)

    def unsubscribe(self, box: Outbox) -> None:
        self.outboxes.discard(box)

    def publish_text(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, separators=(",", ":"))  # encoded once for everyone
        self._spread(Outbox.put_text, text)

    def publish_frame(self, data: bytes, thin: bool = False) -> None:
        """Every viewer's box gets the frame; a run's frame (`thin`) may be held back while
        the loop lags; an inference's never is (after any held one, in order)."""
        if thin and len(self.outboxes) > 1:
            wait = self.last_fanout + self.THIN_S - time.monotonic()
            if wait > 0 and loop_lag.monitor().lagging():
                if self.waiting is not None:
                    metrics.thinned()
                self.waiting = data
                if self.timer is None:
                    self.timer = asyncio.get_running_loop().call_later(wait, self._due)
                return
        if self.waiting is not None and not thin:
            self._fan_out(self.waiting)
        self._fan_out(data)

    def _due(self) -> None:
        self.timer = None
        if self.waiting is not None:
            self._fan_out(self.waiting)

    def _fan_out(self, data: bytes) -> None:
        self.waiting = None
        self.last_fanout = time.monotonic()
        self._spread(_deliver_frame, data)

    def poke(self) -> None:
        self._spread(_poke, None)

    def rewind(self) -> None:
        self.waiting = None  # the old run's
        self._spread(_rewind, None)

    def _spread(self, deliver, data) -> None:
        """deliver(box, data) for every box, at most CHUNK a turn, after what is queued."""
        boxes = list(self.outboxes)
        if not self.queue and len(boxes) <= self.CHUNK:  # a class of usual size: at once
            for box in boxes:
                deliver(box, data)
            return
        self.queue.append([boxes, 0, deliver, data, time.monotonic()])
        if self.turn is None:  # else a turn is due: it serves this after those before
            self._serve()

    def _serve(self) -> None:
        self.turn = _SERVING  # what a delivery publishes meanwhile waits in the queue
        budget = self.CHUNK
        while self.queue and budget > 0:
            job = self.queue[0]
            boxes, i, deliver, data, since = job
            end = min(len(boxes), i + budget)
            job[1] = end
            for box in boxes[i:end]:
                deliver(box, data)
            budget -= end - i
            if end == len(boxes):
                self.queue.popleft()
                now = time.monotonic()
                loop_lag.monitor().took(now - since, now)
        self.turn = asyncio.get_running_loop().call_soon(self._serve) if self.queue else None

    def __len__(self) -> int:
        return len(self.outboxes)


_SERVING = object()  # FrameBus.turn while it serves boxes


def _deliver_frame(box: Outbox, data: bytes) -> None:
    if box.frames_held:
        return
    if box.send_now is None or not box.send_now.frame(data):
        box.put_frame(data)


def _poke(box: Outbox, _: None) -> None:
    box.poke()


def _rewind(box: Outbox, _: None) -> None:
    box.rewind()
