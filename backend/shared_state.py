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


class FailedAttempts(AttemptLimiter):
    """AttemptLimiter whose events are failures: `full` asks without counting one."""

    def full(self, key: str) -> bool:
        q = self.events.get(key)
        now = time.monotonic()
        while q and now - q[0] > self.window:
            q.popleft()
        return bool(q) and len(q) >= self.limit


class LocalState:
    """One process: codes in a dict, limits in memory (today's behaviour)."""

    shared = False

    def __init__(self, replica: str, join_attempts_per_min: int, opens_per_min: int):
        self.replica = replica
        self.codes: dict[str, ClassRef] = {}
        self.joins = FailedAttempts(join_attempts_per_min)
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

    async def joins_full(self, ip: str) -> bool:
        return self.joins.full(ip)

    async def failed_join(self, ip: str) -> None:
        self.joins.allow(ip)

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
        self.joins.prune()
        self.opens.prune()


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
