"""`RedisState`: the shared state of a hosted deployment, in Redis (redis-py's asyncio client).

Keys (all under `shaomai:`):
- `code:CODE`        JSON {session, lab, replica}; a lease its owner renews (shared_state)
- `owner:SESSION`    the replica that runs the session; a lease too
- `replicas`         sorted set: replica -> the time its lease ends
- `own:IP`           hash: replica -> sessions that address opened there (forks aside)
- `open:IP`           sorted set of event times: new sessions a minute
- `turns:KEY`         hash {tokens, t}: a token bucket of join-code answers (KEY: `ip:…`,
                      `b:…` a browser); `ans:IP:CODE` what that address was told ("1" / "0");
                      `joins:IP` sorted set of its join lookups, for the teacher's figure

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
    KNOWN_RIGHT_S,
    KNOWN_WRONG_S,
    LEASE_S,
    STATS_S,
    ClassRef,
    LocalState,
    Published,
    SharedUnavailable,
    _stats,
)

log = logging.getLogger("shaomai.shared")
P = "shaomai:"
WINDOW_S = 60.0  # the per-minute limits' window

# Buckets.take / give_back (shared_state) in one atomic step. KEYS: the buckets; ARGV[1]:
# now, ARGV[2]: -1 take (from all or none), +1 give back; ARGV[3..]: each key's capacity.
TURN_LUA = """
local now, delta = tonumber(ARGV[1]), tonumber(ARGV[2])
local levels = {}
for i, key in ipairs(KEYS) do
  local cap = tonumber(ARGV[i + 2])
  local v = redis.call('HMGET', key, 'tokens', 't')
  local tokens, t = tonumber(v[1]) or cap, tonumber(v[2]) or now
  tokens = math.min(cap, tokens + math.max(0, now - t) * cap / 60)
  if delta < 0 and tokens < 1 then return 0 end
  levels[i] = math.min(cap, tokens + delta)
end
for i, key in ipairs(KEYS) do
  redis.call('HSET', key, 'tokens', tostring(levels[i]), 't', tostring(now))
  redis.call('EXPIRE', key, 120)
end
return 1
"""


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
        self.clock = time.time  # shared by replicas: wall time (a test may drive its own)
        self._turn = self.r.register_script(TURN_LUA)
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
    async def _add_event(self, key: str, now: float) -> tuple[str, int]:
        member = f"{now:.6f}:{secrets.token_hex(4)}"
        pipe = self.r.pipeline(transaction=True)
        pipe.zremrangebyscore(key, "-inf", now - WINDOW_S)
        pipe.zadd(key, {member: now})
        pipe.zcard(key)
        pipe.expire(key, int(WINDOW_S) + 1)
        return member, (await self._run(pipe.execute()))[2]

    # -- join codes: turns, remembered answers, the teacher's figure (manager.resolve_code) --
    async def _turns(self, keys: list[tuple[str, int]], delta: int) -> bool:
        names = [f"{P}turns:{k}" for k, _ in keys]
        args = [repr(float(self.clock())), delta, *(cap for _, cap in keys)]
        return bool(await self._run(self._turn(keys=names, args=args)))

    async def take_turn(self, keys: list[tuple[str, int]]) -> bool:
        return await self._turns(keys, -1)

    async def give_back(self, keys: list[tuple[str, int]]) -> None:
        await self._turns(keys, 1)

    async def known(self, ip: str, code: str) -> bool | None:
        raw = await self._run(self.r.get(f"{P}ans:{ip}:{code}"))
        return None if raw is None else raw == b"1"

    async def remember(self, ip: str, code: str, right: bool) -> None:
        keep = KNOWN_RIGHT_S if right else KNOWN_WRONG_S
        await self._run(self.r.set(f"{P}ans:{ip}:{code}", "1" if right else "0", ex=int(keep)))

    async def note(self, ip: str, kind: str, wait: float = 0.0) -> None:
        now = self.clock()
        key = f"{P}joins:{ip}"
        pipe = self.r.pipeline(transaction=True)
        pipe.zremrangebyscore(key, "-inf", now - STATS_S)
        pipe.zadd(key, {f"{kind}:{wait:.1f}:{secrets.token_hex(4)}": now})
        pipe.expire(key, int(STATS_S) + 1)
        await self._run(pipe.execute())

    async def join_stats(self, ip: str) -> dict:
        now = self.clock()
        raw = await self._run(self.r.zrangebyscore(f"{P}joins:{ip}", now - STATS_S, "+inf"))
        events = []
        for member in raw:
            kind, wait, _ = member.decode().split(":")
            events.append((now, kind, float(wait)))
        return _stats(events)

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
