"""A connection's message allowance: a token bucket of `rate` messages a second, bursts of 2 s."""

from __future__ import annotations

import time


class MessageRate:
    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.allowance = 2 * rate
        self._last = time.monotonic()
        self._last_busy = -1.0

    def take(self) -> bool:
        """One message's token, if there is one."""
        now = time.monotonic()
        self.allowance = min(2 * self.rate, self.allowance + (now - self._last) * self.rate)
        self._last = now
        if self.allowance < 1:
            return False
        self.allowance -= 1
        return True

    def refill_s(self) -> float:
        """Seconds until the next token."""
        return (1 - self.allowance) / self.rate

    def say_busy(self) -> bool:
        """Whether to answer a refused message now: one reply a second, not one a message."""
        now = time.monotonic()
        if now - self._last_busy < 1.0:
            return False
        self._last_busy = now
        return True
