"""RedisState against a real redis-server: the limits two replicas share (issue 18)."""

from __future__ import annotations

from backend.shared_redis import RedisState
from backend.shared_state import ClassRef, Published, SharedUnavailable
from tests.hosted import servers


def _pair(url: str, opens_per_min: int = 60) -> tuple[RedisState, RedisState]:
    return (RedisState(url, "a", 30, opens_per_min), RedisState(url, "b", 30, opens_per_min))


def test_sessions_per_address_and_new_sessions_a_minute_count_on_every_replica():
    servers.require()
    rd = servers.Redis()

    async def scenario():
        a, b = _pair(rd.url, opens_per_min=3)
        try:
            await a.publish(Published({}, {"10.0.0.7": 3}, ["s1", "s2", "s3"]))
            await b.publish(Published({}, {}, []))
            assert await b.others_own("10.0.0.7") == 3  # a's sessions, seen from b
            assert await a.others_own("10.0.0.7") == 0  # not its own twice
            assert await b.replicas() == ["a", "b"]
            await a.publish(Published({}, {}, []))  # a's sessions closed
            assert await b.others_own("10.0.0.7") == 0
            assert [await r.allow_open("10.0.0.8") for r in (a, b, a)] == [True] * 3
            assert await b.allow_open("10.0.0.8") is False  # the 4th in a minute, anywhere
            assert await a.allow_open("10.0.0.9") is True  # another address is not stopped
        finally:
            await a.stop()
            await b.stop()

    try:
        servers.run_apart(scenario())
    finally:
        rd.stop()


def test_a_code_is_given_out_once_and_redis_down_is_unavailable_not_a_hang():
    servers.require()
    rd = servers.Redis()

    async def scenario():
        a, b = _pair(rd.url)
        try:
            ref = ClassRef("s" * 22, "gpt", "a")
            assert await a.claim_code("K7M2QX", ref) is True
            assert await b.claim_code("K7M2QX", ClassRef("t" * 22, "gpt", "b")) is False
            assert await b.lookup("K7M2QX") == ref
            rd.stop()
            for call in (b.lookup("K7M2QX"), b.take_turn([("ip:10.0.0.1", 30)])):
                try:
                    await call
                except SharedUnavailable:
                    continue
                raise AssertionError("a call with Redis down did not say so")
            assert await b.allow_open("10.0.0.1") is True  # falls back to its own limit
        finally:
            await a.stop()
            await b.stop()

    try:
        servers.run_apart(scenario())
    finally:
        rd.stop()
