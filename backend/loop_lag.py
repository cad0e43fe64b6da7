"""How late the event loop runs what is due: the signal that a class's fan-out must yield.

A ticker due every TICK_S notes how late it ran, and a class's fan-out how long it took
to reach every viewer. A loop busy with thousands of joins at once (a lecture hall's join
storm) runs either hundreds of milliseconds late; a loop that only fans frames out to 1,000
viewers, tens. While one comes later than LATE_S, and for HOLD_S after, the loop counts
as lagging (backend/bus.py then sends the class fewer frames, so that handshakes and the
teacher's controls get the loop).
"""

from __future__ import annotations

import asyncio
import time
import weakref

TICK_S = 0.05
LATE_S = 0.15  # over a frame period at 10 frames/s, past a 1,000-viewer fan-out's ~30 ms
HOLD_S = 1.0


class LoopLag:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lagging_until = float("-inf")
        self._schedule(time.monotonic())

    def _schedule(self, now: float) -> None:
        self.loop.call_later(TICK_S, self._tick, now + TICK_S)

    def _tick(self, due: float) -> None:
        now = time.monotonic()
        self.took(now - due, now)
        self._schedule(now)

    def took(self, seconds: float, now: float) -> None:
        """Something due at once took `seconds` to get done (a tick, a fan-out served over
        several turns: turns short enough for the ticker can still fill the loop)."""
        if seconds > LATE_S:
            self.lagging_until = now + HOLD_S

    def lagging(self) -> bool:
        return time.monotonic() < self.lagging_until


_monitors: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopLag] = (
    weakref.WeakKeyDictionary()
)


def monitor() -> LoopLag:
    """The running loop's monitor, started at the first call (one per loop)."""
    loop = asyncio.get_running_loop()
    lag = _monitors.get(loop)
    if lag is None:
        lag = _monitors[loop] = LoopLag(loop)
    return lag
