"""What every replica must agree on: join codes, per-address limits, live replicas.

The embedded default (`LocalState`) keeps it in this process, exactly as one server always
did. A hosted deployment (`SHAOMAI_REDIS_URL`, docs/deploy.md) keeps it in Redis
(`RedisState`, in backend/shared_redis.py), so any replica answers a join code and a class
or a guesser behind one address meets the same limits on every replica.

Codes and ownership are *leases*: the replica that owns a session republishes them on every
heartbeat with a short expiry. A replica killed with SIGKILL stops renewing, and within
`LEASE_S` its join codes answer `not_found` instead of pointing at a dead process; a Redis
restarted empty is refilled by the next heartbeat.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from backend.classroom import AttemptLimiter

HEARTBEAT_S = 2  # seconds between the renewals of a replica's leases
LEASE_S = 3 * HEARTBEAT_S  # seconds: a lease not renewed for this long is gone


@dataclass(frozen=True)
class ClassRef:
    """Where a join code leads: the shared session's id and lab, and its replica."""

    session: str
    lab: str
    replica: str


@dataclass(frozen=True)
class Published:
    """One heartbeat's view of this replica: its shared sessions and its sessions per address."""

    codes: dict[str, ClassRef]  # join code -> class
    own_per_ip: dict[str, int]  # address -> sessions opened from it here (forks aside)
    sessions: list[str]  # ids of the sessions this replica runs


class SharedUnavailable(RuntimeError):
    """The shared store (Redis) cannot be reached; the caller answers `busy`."""


KNOWN_RIGHT_S = 3600.0  # an address that was told a class's code is told again at once
KNOWN_WRONG_S = 60.0  # ... and a wrong one: the same code again costs nothing new
STATS_S = 60.0  # the teacher's figure: join lookups of the last minute


class Buckets:
    """Token buckets of join-code answers (docs/security.md, promise 4): a key (an address,
    a browser) holds at most `capacity` and gains `capacity` a minute; a wrong answer spends
    one, a right one is given back. `take` takes from every key or from none."""

    def __init__(self, clock):
        self.clock = clock
        self.levels: dict[str, tuple[float, float]] = {}  # key -> (tokens, when)

    def _level(self, key: str, capacity: int, now: float) -> float:
        tokens, when = self.levels.get(key, (capacity, now))
        return min(capacity, tokens + (now - when) * capacity / 60.0)

    def take(self, keys: list[tuple[str, int]]) -> bool:
        now = self.clock()
        levels = [self._level(k, cap, now) for k, cap in keys]
        if any(level < 1 for level in levels):
            return False
        for (key, _), level in zip(keys, levels, strict=True):
            self.levels[key] = (level - 1, now)
        return True

    def give_back(self, keys: list[tuple[str, int]]) -> None:
        now = self.clock()
        for key, cap in keys:
            self.levels[key] = (min(cap, self._level(key, cap, now) + 1), now)

    def prune(self) -> None:
        now = self.clock()
        for key in [k for k, (_, when) in self.levels.items() if now - when > 60.0]:
            del self.levels[key]  # a minute untouched: full again, as if never seen


class LocalState:
    """One process: codes in a dict, limits in memory (today's behaviour)."""

    shared = False

    def __init__(self, replica: str, join_attempts_per_min: int, opens_per_min: int):
        self.replica = replica
        self.codes: dict[str, ClassRef] = {}
        self.join_limit = join_attempts_per_min  # answers to new join codes a minute
        self.clock = time.monotonic  # the join limits' clock (a test may drive its own)
        self.buckets = Buckets(lambda: self.clock())
        self.answers: dict[tuple[str, str], tuple[bool, float]] = {}  # (ip, code) -> right, until
        self.events: dict[str, deque[tuple[float, str, float]]] = {}  # ip -> (when, kind, wait)
        self.opens = AttemptLimiter(opens_per_min)

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def claim_code(self, code: str, ref: ClassRef) -> bool:
        """Take `code` for this class unless someone holds it; True when taken."""
        if code in self.codes:
            return False
        self.codes[code] = ref
        return True

    async def lookup(self, code: str) -> ClassRef | None:
        return self.codes.get(code)

    async def drop_code(self, code: str, session: str) -> None:
        if code in self.codes and self.codes[code].session == session:
            del self.codes[code]

    async def owner(self, session: str) -> str | None:
        """The replica running `session`, if another replica must know (one process: none)."""
        return None

    # -- join codes: turns, remembered answers, the teacher's figure (manager.resolve_code) --
    async def take_turn(self, keys: list[tuple[str, int]]) -> bool:
        return self.buckets.take(keys)

    async def give_back(self, keys: list[tuple[str, int]]) -> None:
        self.buckets.give_back(keys)

    async def known(self, ip: str, code: str) -> bool | None:
        """What this address was told of `code` lately (True: a class), None: nothing."""
        right, until = self.answers.get((ip, code), (None, 0.0))
        return right if until > self.clock() else None

    async def remember(self, ip: str, code: str, right: bool) -> None:
        keep = KNOWN_RIGHT_S if right else KNOWN_WRONG_S
        self.answers[(ip, code)] = (right, self.clock() + keep)

    async def note(self, ip: str, kind: str, wait: float = 0.0) -> None:
        """One join lookup from `ip` for the teacher's figure: wrong, waited or turned away."""
        self.events.setdefault(ip, deque()).append((self.clock(), kind, wait))

    async def join_stats(self, ip: str) -> dict:
        since = self.clock() - STATS_S
        recent = [e for e in self.events.get(ip, ()) if e[0] > since]
        return _stats(recent)

    async def allow_open(self, ip: str) -> bool:
        return self.opens.allow(ip)

    async def others_own(self, ip: str) -> int:
        """Sessions this address opened on the other replicas (none here)."""
        return 0

    async def publish(self, view: Published) -> None:
        """A heartbeat: nothing to renew in one process."""

    async def opened(self, session: str, ip: str | None, n: int) -> None:
        """A new session's leases: nothing to tell in one process."""

    async def replicas(self) -> list[str]:
        return [self.replica]

    def prune(self) -> None:
        now = self.clock()
        self.buckets.prune()
        self.opens.prune()
        for key in [k for k, (_, until) in self.answers.items() if until <= now]:
            del self.answers[key]
        for ip, q in list(self.events.items()):
            while q and now - q[0][0] > STATS_S:
                q.popleft()
            if not q:
                del self.events[ip]


def _stats(events) -> dict:
    """The teacher's figure from (when, kind, wait) events: wrong codes, lookups that waited
    for their turn and were answered (and the longest such wait, s), lookups turned away."""
    waits = [w for _, kind, w in events if kind == "waited"]
    return {
        "wrong": sum(1 for _, kind, _ in events if kind == "wrong"),
        "waited": sum(1 for _, kind, _ in events if kind == "waited"),
        "refused": sum(1 for _, kind, _ in events if kind == "refused"),
        "longest_wait_s": round(max(waits, default=0.0), 1),
    }


def shared_state(settings, replica: str):
    """In this process (the embedded default), or in Redis when SHAOMAI_REDIS_URL is set
    (imported only then: the embedded app never loads the client)."""
    limits = (settings.join_attempts_per_min, settings.sessions_per_ip_per_min)
    if not settings.redis_url:
        return LocalState(replica, *limits)
    from backend.shared_redis import RedisState

    return RedisState(settings.redis_url, replica, *limits)


def route_key(session_id: str) -> str:
    """The part of a session id the proxy routes on (deploy/nginx.conf): a fork's id starts
    with its source's key, so it lives, and is reached, on the same replica."""
    return session_id.split(".", 1)[0]
