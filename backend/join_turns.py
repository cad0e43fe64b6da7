"""Turns at join codes: how many codes an address (and a browser) may have answered, and who
goes first when it has used them up (docs/security.md, promise 4).

Every answer to a code the address has not been told before spends a turn: a token from the
address's bucket (`join_attempts_per_min`, refilled at that rate) and from the browser's
(a third of it), both in the shared state so every replica agrees. A right answer gives its
turn back, so only wrong codes are counted. With no turn left a lookup WAITS, and the wait
does not depend on whether its code is right: an answer that came sooner for a right code
would tell a guesser which code is right at any rate it liked. Waiting lookups at an address
go in order of how many of them ask the same code (a class asks one code together; a
prankster's guesses are each asked once), then of arrival; one that waits `join_wait_s`
without a turn is turned away (`busy`), right code or wrong alike.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from backend.admission import SessionError

POLL_S = 0.25  # a waiting lookup looks for its turn this often (a turn comes every 2 s)
MAX_WAITING = 1000  # lookups waiting at one address (replica); more are turned away at once


def slowed() -> SessionError:
    msg = "too many join attempts from this address: codes are answered slowly; try again soon"
    return SessionError("busy", msg, key="err.join_attempts")


@dataclass(eq=False)
class _Waiter:
    code: str
    since: float
    ready: bool = False  # its browser's own turn is taken (or it sent no browser)


@dataclass
class Turn:
    """Tokens taken for one answer (given back when the code is right) and the wait, s."""

    keys: list[tuple[str, int]]
    wait: float = 0.0


@dataclass
class _Queue:
    waiters: list[_Waiter] = field(default_factory=list)
    top: str | None = None  # the code that goes next, None: to compute again


class JoinTurns:
    def __init__(self, shared, wait_s: float):
        self.shared = shared
        self.wait_s = wait_s
        self.queues: dict[str, _Queue] = {}  # address -> lookups waiting there
        self.asking: set[tuple[str, str]] = set()  # (address, code) being looked up now

    def keys(self, ip: str, browser: str | None) -> tuple[list, list]:
        limit = self.shared.join_limit
        own = [(f"b:{browser}", max(1, limit // 3))] if browser else []
        return own, [(f"ip:{ip}", limit)]

    def _next_code(self, q: _Queue) -> str | None:
        if q.top is None:
            ready = [w for w in q.waiters if w.ready]
            counts = Counter(w.code for w in ready)
            best = min(ready, key=lambda w: (-counts[w.code], w.since), default=None)
            q.top = best.code if best else None
        return q.top

    async def take(self, ip: str, code: str, browser: str | None) -> Turn | None:
        """Wait for a turn to answer `code` to `ip`. None: the address was told the answer
        meanwhile (another lookup of the same code had its turn; ask `shared.known`)."""
        own, address = self.keys(ip, browser)
        clock = self.shared.clock
        start = clock()
        q = self.queues.setdefault(ip, _Queue())
        if len(q.waiters) >= MAX_WAITING:
            await self.shared.note(ip, "refused")
            raise slowed()
        me = _Waiter(code, start, ready=not own)
        q.waiters.append(me)
        q.top = None
        first = True
        try:
            while True:
                if not me.ready and await self.shared.take_turn(own):
                    me.ready, q.top = True, None
                if me.ready and self._next_code(q) == code and (ip, code) not in self.asking:
                    if not first and await self.shared.known(ip, code) is not None:
                        if own:
                            await self.shared.give_back(own)
                        await self.shared.note(ip, "waited", clock() - start)
                        return None
                    if await self.shared.take_turn(address):
                        self.asking.add((ip, code))
                        wait = clock() - start
                        if not first:
                            await self.shared.note(ip, "waited", wait)
                        return Turn(own + address, wait)
                # Over its time, unless its code's answer is on its way (then it is told).
                if clock() - start >= self.wait_s and (ip, code) not in self.asking:
                    if me.ready and own:
                        await self.shared.give_back(own)
                    await self.shared.note(ip, "refused", clock() - start)
                    raise slowed()
                first = False
                await asyncio.sleep(POLL_S)
        finally:
            q.waiters.remove(me)
            q.top = None
            if not q.waiters:
                self.queues.pop(ip, None)

    def done(self, ip: str, code: str) -> None:
        """The answer to `code` is told (and remembered): its other waiters may go."""
        self.asking.discard((ip, code))
        q = self.queues.get(ip)
        if q is not None:
            q.top = None
