"""`RedisState`: the shared state of a hosted deployment, in Redis (redis-py's asyncio client).

Keys (all under `shaomai:`):
- `code:CODE`        JSON {session, lab, replica}; a lease its owner renews (shared_state)
- `owner:SESSION`    the replica that runs the session; a lease too
- `replicas`         sorted set: replica -> the time its lease ends
- `own:IP`           hash: replica -> sessions that address opened there (forks aside)
- `fail:IP`, `open:IP`  sorted sets of event times: wrong join codes / new sessions a minute

Only small state goes through Redis: tensor frames stay on the replica that owns the
session (pub/sub has no backpressure, and nginx routes every viewer to the owner).
When Redis cannot be reached, calls raise `SharedUnavailable` at once (one try, a 1 s
timeout): a join answers `busy`; opening a session falls back to this replica's own limits.
The client reconnects by itself when Redis is back, and the next heartbeat refills it.
"""

from __future__ import annotations

import json
import logging
import secrets
import time

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from backend.shared_state import (
    LEASE_S,
    ClassRef,
    LocalState,
    Published,
    SharedUnavailable,
)

log = logging.getLogger("shaomai.shared")
P = "shaomai:"
WINDOW_S = 60.0  # the per-minute limits' window


def _masked(url: str) -> str:
    """The URL without its password, for logs."""
    head, at, tail = url.rpartition("@")
    if not at:
        return url
    scheme, _, creds = head.partition("://")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{tail}"


class RedisState:
    shared = True

    def __init__(self, url: str, replica: str, join_attempts_per_min: int, opens_per_min: int):
        self.replica = replica
        self.url = url
        self.join_limit = join_attempts_per_min
        self.open_limit = opens_per_min
        self.r = aioredis.Redis.from_url(
            url,
            socket_timeout=1.0,
            socket_connect_timeout=1.0,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=5,
        )
        self.fallback = LocalState(replica, join_attempts_per_min, opens_per_min)
        self.down_since: float | None = None
        self._published_ips: set[str] = set()

    async def start(self) -> None:
        try:
            await self.r.ping()
            log.info("shared state in Redis at %s (replica %s)", _masked(self.url), self.replica)
        except RedisError as exc:  # a replica starts even while Redis is down
            self._down(exc)

    async def stop(self) -> None:
        await self.r.aclose()

    def _down(self, exc: Exception) -> SharedUnavailable:
        if self.down_since is None:
            self.down_since = time.monotonic()
            log.warning("Redis at %s unreachable: %s", _masked(self.url), exc)
        return SharedUnavailable(f"Redis unreachable: {exc}")

    def _up(self) -> None:
        if self.down_since is not None:
            log.info("Redis back after %.1f s", time.monotonic() - self.down_since)
            self.down_since = None

    async def _run(self, coro):
        try:
            out = await coro
        except (RedisError, OSError) as exc:
            raise self._down(exc) from None
        self._up()
        return out

    # -- join codes ------------------------------------------------------------------------
    async def claim_code(self, code: str, ref: ClassRef) -> bool:
        data = json.dumps(ref.__dict__)
        return bool(await self._run(self.r.set(f"{P}code:{code}", data, nx=True, ex=LEASE_S)))

    async def lookup(self, code: str) -> ClassRef | None:
        raw = await self._run(self.r.get(f"{P}code:{code}"))
        return None if raw is None else ClassRef(**json.loads(raw))

    async def drop_code(self, code: str, session: str) -> None:
        ref = await self.lookup(code)
        if ref is not None and ref.session == session:
            await self._run(self.r.delete(f"{P}code:{code}"))

    async def owner(self, session: str) -> str | None:
        raw = await self._run(self.r.get(f"{P}owner:{session}"))
        return None if raw is None else raw.decode()

    # -- limits ----------------------------------------------------------------------------
    async def _events(self, key: str, now: float) -> int:
        pipe = self.r.pipeline(transaction=True)
        pipe.zremrangebyscore(key, "-inf", now - WINDOW_S)
        pipe.zcard(key)
        return (await self._run(pipe.execute()))[1]

    async def _add_event(self, key: str, now: float) -> tuple[str, int]:
        member = f"{now:.6f}:{secrets.token_hex(4)}"
        pipe = self.r.pipeline(transaction=True)
        pipe.zremrangebyscore(key, "-inf", now - WINDOW_S)
        pipe.zadd(key, {member: now})
        pipe.zcard(key)
        pipe.expire(key, int(WINDOW_S) + 1)
        return member, (await self._run(pipe.execute()))[2]

    async def joins_full(self, ip: str) -> bool:
        return await self._events(f"{P}fail:{ip}", time.time()) >= self.join_limit

    async def failed_join(self, ip: str) -> None:
        await self._add_event(f"{P}fail:{ip}", time.time())

    async def allow_open(self, ip: str) -> bool:
        key = f"{P}open:{ip}"
        try:
            member, n = await self._add_event(key, time.time())
        except SharedUnavailable:
            return await self.fallback.allow_open(ip)
        if n > self.open_limit:
            await self._run(self.r.zrem(key, member))  # a refused open is not one
            return False
        return True

    async def others_own(self, ip: str) -> int:
        pipe = self.r.pipeline(transaction=False)  # one round trip: this runs every open
        pipe.hgetall(f"{P}own:{ip}")
        pipe.zrangebyscore(f"{P}replicas", time.time(), "+inf")
        try:
            counts, replicas = await self._run(pipe.execute())
        except SharedUnavailable:
            return 0  # this replica's own count still holds
        live = {r.decode() for r in replicas}
        return sum(
            int(n) for r, n in counts.items() if r.decode() != self.replica and r.decode() in live
        )

    # -- leases ----------------------------------------------------------------------------
    async def publish(self, view: Published) -> None:
        """Renew this replica's leases: itself, its join codes, its sessions' owner keys,
        its sessions per address (an address that has none here any more is removed)."""
        now = time.time()
        pipe = self.r.pipeline(transaction=False)
        pipe.zadd(f"{P}replicas", {self.replica: now + LEASE_S})
        pipe.zremrangebyscore(f"{P}replicas", "-inf", now)
        for code, ref in view.codes.items():
            pipe.set(f"{P}code:{code}", json.dumps(ref.__dict__), ex=LEASE_S)
        for session in view.sessions:
            pipe.set(f"{P}owner:{session}", self.replica, ex=LEASE_S)
        for ip, n in view.own_per_ip.items():
            pipe.hset(f"{P}own:{ip}", self.replica, n)
            pipe.expire(f"{P}own:{ip}", int(WINDOW_S))
        for ip in self._published_ips - view.own_per_ip.keys():
            pipe.hdel(f"{P}own:{ip}", self.replica)
        await self._run(pipe.execute())
        self._published_ips = set(view.own_per_ip)

    async def opened(self, session: str, ip: str | None, n: int) -> None:
        """One new session's leases now, not at the next heartbeat: its owner key and its
        address's count (`ip` None: a class's fork, counted per class). O(1): a full
        `publish` per open renewed every session's key, O(sessions) an open, and was 43% of
        a replica's CPU while 1,000 readers opened at once (docs/benchmarks.md, readers)."""
        pipe = self.r.pipeline(transaction=False)
        pipe.set(f"{P}owner:{session}", self.replica, ex=LEASE_S)
        if ip is not None:
            pipe.hset(f"{P}own:{ip}", self.replica, n)
            pipe.expire(f"{P}own:{ip}", int(WINDOW_S))
            self._published_ips.add(ip)  # the next publish drops it once its sessions end
        await self._run(pipe.execute())

    async def replicas(self) -> list[str]:
        live = await self._run(self.r.zrangebyscore(f"{P}replicas", time.time(), "+inf"))
        return sorted(r.decode() for r in live)

    def prune(self) -> None:
        self.fallback.prune()
