"""A published frame written to a connection from the publishing callback, when nothing waits.

A connection's sender task (backend/connection.py) sends what waits in its Outbox. With a
class watching, nothing waits most of the time, and waking 1,000 sender tasks to send one
frame each cost more of the event loop than the frame itself. `SendNow` does what the
sender does with a lone frame (the scalars rows before it, then its cut) and writes it
framed once (backend/ws_direct.py) without waking the sender. It declines, and the frame
goes to the Outbox as before, whenever order or pacing could differ: anything queued, the
sender in the middle of a send, a frame-rate cap not yet due, a socket pushing back.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterator

from backend import metrics, subscriptions
from backend.ws_direct import framed

HISTORY_BATCH = 5000  # scalar steps per message when catching up


def scalar_texts(session, box, before: float = math.inf) -> Iterator[str]:
    """The `scalars` texts of the rows after box.cursor and before step `before`; each
    moves box.cursor past its rows."""
    if session is None:
        return
    tl = session.timeline
    while tl.last_scalar_step > box.cursor:
        steps, values = tl.scalars_after(box.cursor)
        n = bisect.bisect_left(steps, before, hi=min(len(steps), HISTORY_BATCH))
        if not n:
            return
        steps, values = steps[:n], values[:n]
        box.cursor = steps[-1]
        yield session.scalars_texts.text(steps, values, session.epoch)


class SendNow:
    """`box.send_now` of a connection: send a frame or a text at once, or say no."""

    def __init__(self, conn, write: Callable[[bytes], bool]) -> None:
        self.conn = conn
        self.write = write  # the `shaomai.write_framed` extension of the connection

    def _free(self, box) -> bool:
        """Nothing waits and the sender holds nothing: what is written now keeps the order."""
        return not box.items and box.idle and not box.overflowed

    def text(self, text: str) -> bool:
        """A control text (a reply, a status), then the scalars so far, as the sender does."""
        conn = self.conn
        box = conn.box
        if not self._free(box):
            return False
        cursor = box.cursor
        texts = [text, *scalar_texts(conn.session, box)]
        message = framed(text) if len(texts) == 1 else b"".join(map(framed, texts))
        if not self.write(message):
            box.cursor = cursor
            return False
        conn._scalars_sent_t = time.monotonic()
        for t in texts:
            metrics.sent_text(len(t))
            box.sent_bytes += len(t)
        return True

    def frame(self, data: bytes) -> bool:
        conn = self.conn
        box, s = conn.box, conn.session
        if s is None or not self._free(box):
            return False
        now = time.monotonic()
        if box.max_fps and now < box.last_frame_t + 1.0 / box.max_fps:
            return False
        # As the sender: a frame that is its step's row goes after the rows before it only.
        row = subscriptions.row_step(data, s) if box.scalars_either else None
        cursor, seen = box.cursor, getattr(box, "meta_seen", None)
        texts = list(scalar_texts(s, box, math.inf if row is None else row))
        out = subscriptions.cut(data, box, s)
        message = framed(out) if not texts else b"".join([*map(framed, texts), framed(out)])
        if not self.write(message):  # nothing was written: as if never tried
            box.cursor, box.meta_seen = cursor, seen
            return False
        conn._scalars_sent_t = box.last_frame_t = now
        for text in texts:
            metrics.sent_text(len(text))
            box.sent_bytes += len(text)
        if row is not None and box.cursor < row:  # every row before it sent: it is the row
            box.cursor = row
        metrics.sent_frame(len(out), direct=True)
        box.sent_bytes += len(out)
        if conn._rows_waiting(s):  # rows after the frame's step: the sender's timer sends them
            box.wake.set()
        return True
