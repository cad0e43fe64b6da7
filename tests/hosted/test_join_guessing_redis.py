"""Join turns in Redis (issue 41): the scenarios of tests/backend/test_join_guessing.py on a
real redis-server, and two replicas drawing on one address's turns."""

from __future__ import annotations

import asyncio

import pytest

from backend.config import Settings
from backend.manager import SessionManager
from tests.backend.test_join_guessing import (
    LIMIT,
    WAIT_S,
    Clock,
    browser_scenario,
    guessing_scenario,
    outcome,
    settle,
    wrong_codes,
)
from tests.hosted import servers


def _manager(url: str, replica: str, clock: Clock) -> SessionManager:
    settings = Settings(
        redis_url=url,
        replica=replica,
        join_attempts_per_min=LIMIT,
        join_wait_s=WAIT_S,
        autosave_s=0,
        class_process=False,
    )
    sessions = SessionManager(settings)
    sessions.shared.clock = clock
    return sessions


@pytest.mark.parametrize("scenario", [guessing_scenario, browser_scenario])
def test_join_turns_in_redis(scenario):
    servers.require()
    rd = servers.Redis()

    async def run():
        clock = Clock()
        sessions = _manager(rd.url, "a", clock)
        try:
            await scenario(sessions, clock)
        finally:
            await sessions.stop()

    try:
        servers.run_apart(run())
    finally:
        rd.stop()


def test_two_replicas_share_one_address_turns():
    """A guesser spreading its codes over two replicas gets the address's turns once."""
    servers.require()
    rd = servers.Redis()

    async def run():
        clock = Clock()
        a, b = _manager(rd.url, "a", clock), _manager(rd.url, "b", clock)
        try:
            codes = wrong_codes(4 * LIMIT, "")
            tries = [
                asyncio.create_task((a if i % 2 else b).resolve_code(c, "10.0.0.5"))
                for i, c in enumerate(codes)
            ]
            await settle(tries, done_count=LIMIT)
            assert [outcome(t) for t in tries].count("not_found") == LIMIT
            clock.now += WAIT_S + 1  # no turn comes in 6 s: the rest are turned away
            await settle(tries, done_count=len(tries))
            assert [outcome(t) for t in tries].count("not_found") == LIMIT
            stats = await b.shared.join_stats("10.0.0.5")  # either replica tells the teacher
            assert stats["wrong"] == LIMIT and stats["refused"] == 3 * LIMIT
        finally:
            await a.stop()
            await b.stop()

    try:
        servers.run_apart(run())
    finally:
        rd.stop()
