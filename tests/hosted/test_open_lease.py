"""A new session's leases in Redis (issue 18, docs/benchmarks.md readers): `opened` writes
only that session's owner key and its address's count, at once, instead of a whole
heartbeat per open; the next heartbeat still takes the count back when it is gone."""

from __future__ import annotations

import redis

from backend.shared_redis import RedisState
from backend.shared_state import Published
from tests.hosted import servers


def test_opened_leases_the_session_and_its_address_and_the_heartbeat_clears_them():
    servers.require()
    rd = servers.Redis()

    async def scenario():
        a, b = RedisState(rd.url, "a", 30, 60), RedisState(rd.url, "b", 30, 60)
        plain = redis.Redis.from_url(rd.url)
        try:
            await a.publish(Published({}, {}, []))  # both replicas are live
            await b.publish(Published({}, {}, []))
            await a.opened("s" * 22, "10.0.0.7", 2)
            await a.opened("t" * 22, None, 0)  # a class's fork: no address count
            assert plain.get("shaomai:owner:" + "s" * 22) == b"a"
            assert plain.get("shaomai:owner:" + "t" * 22) == b"a"
            assert 0 < plain.ttl("shaomai:owner:" + "s" * 22) <= 6
            assert await b.others_own("10.0.0.7") == 2  # seen from the other replica
            assert await a.others_own("10.0.0.7") == 0
            await a.publish(Published({}, {}, []))  # its sessions closed before the beat
            assert await b.others_own("10.0.0.7") == 0
        finally:
            plain.close()
            await a.stop()
            await b.stop()

    try:
        servers.run_apart(scenario())
    finally:
        rd.stop()
