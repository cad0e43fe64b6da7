"""A class behind one address (issue 12): a school NAT puts every student on one IP.

Only WRONG codes count against an address (guessing); a class of hundreds joins with the
right code within a minute. Students' forks of a shared session count against the class,
not against the address's own-session caps.
"""

from __future__ import annotations

import asyncio

import pytest
from fastapi.testclient import TestClient

from backend.admission import SessionError
from backend.app import create_app
from backend.config import Settings
from backend.labs import load_all
from backend.manager import SessionManager
from tests.wsutil import open_lab, recv_until, send

load_all()
LAB = "linear-regression"


def _share(ws) -> str:
    send(ws, {"type": "share"})
    return recv_until(ws, lambda m: m["type"] == "shared")[0]["code"]


def test_a_class_of_300_behind_one_address_joins_within_a_minute(tmp_path):
    with TestClient(create_app(Settings(data_dir=tmp_path, autosave_s=0))) as c:
        with c.websocket_connect("/ws") as teacher:
            open_lab(teacher, LAB)
            code = _share(teacher)
            statuses = [
                c.get(f"/join/{code}", follow_redirects=False).status_code for _ in range(300)
            ]
            assert statuses == [303] * 300  # today: the 31st student was refused 429
            with c.websocket_connect("/ws") as student:  # and one more on the websocket
                send(student, {"type": "join", "code": code.lower()})
                ready, _ = recv_until(student, lambda m: m["type"] == "ready")
                assert ready["role"] == "viewer"


def _wrong(n: int, right: str) -> list[str]:
    return [c for c in (f"{a}{b}ZZZZ" for a in "ABCDEFGH" for b in "ABCDEFGH") if c != right][:n]


def _script(c: TestClient, url: str) -> int:
    """A script that keeps no cookie: counted per address only, never as one browser."""
    c.cookies.clear()
    return c.get(url, follow_redirects=False).status_code


def test_wrong_codes_are_stopped_at_31_even_after_a_whole_class_joined(tmp_path):
    with TestClient(create_app(Settings(data_dir=tmp_path, autosave_s=0))) as c:
        clock = [1000.0]
        c.app.state.sessions.shared.clock = lambda: clock[0]  # time moves when the test says
        c.app.state.sessions.join_turns.wait_s = 0  # a lookup without a turn: busy at once
        with c.websocket_connect("/ws") as teacher:
            open_lab(teacher, LAB)
            code = _share(teacher)
            assert all(
                c.get(f"/join/{code}", follow_redirects=False).status_code == 303 for _ in range(50)
            )
            statuses = [_script(c, f"/join/{w}") for w in _wrong(31, code)]
            assert statuses == [404] * 30 + [429]  # the 31st wrong code: busy
            # The room was told the class's code: its late students still join at once.
            assert c.get(f"/join/{code}", follow_redirects=False).status_code == 303
            c.app.state.sessions.shared.answers.clear()  # as an hour later: asked afresh
            # With no turn left a right code is refused like a wrong one (a guesser learns
            # nothing from which codes are answered)...
            assert c.get(f"/join/{code}", follow_redirects=False).status_code == 429
            with c.websocket_connect("/ws") as guesser:
                send(guesser, {"type": "join", "code": code})
                err, _ = recv_until(guesser, lambda m: m["type"] == "error")
                assert err["code"] == "busy" and err["key"] == "err.join_attempts"
            # ... until the next turn (2 s at 30 a minute): the class's code is answered, gives
            # its turn back, and the address knows it: the rest of the class joins at once.
            clock[0] += 2.0
            statuses = [
                c.get(f"/join/{code}", follow_redirects=False).status_code for _ in range(40)
            ]
            assert statuses == [303] * 40


def test_wrong_codes_count_per_address():
    async def scenario():
        sessions = SessionManager(Settings(join_attempts_per_min=2, autosave_s=0, join_wait_s=0))
        sessions.shared.clock = lambda: 1000.0  # no turn comes back during the test
        for wrong in ("ZZZZZZ", "YYYYYY"):
            with pytest.raises(SessionError) as exc:
                await sessions.by_code(wrong, "10.0.0.1")
            assert exc.value.code == "not_found"
        with pytest.raises(SessionError) as exc:
            await sessions.by_code("XXXXXX", "10.0.0.1")
        assert exc.value.code == "busy"
        with pytest.raises(SessionError) as exc:  # another school is not stopped
            await sessions.by_code("XXXXXX", "10.0.0.2")
        assert exc.value.code == "not_found"

    asyncio.run(scenario())


def test_a_class_that_all_forks_is_counted_apart_from_the_address():
    """Teacher and students on one address: the students' forks of the shared session are
    the class's (max_forks_per_class), not the address's 40 own sessions or 60 a minute."""

    async def scenario():
        settings = Settings(
            max_sessions_per_ip=2, sessions_per_ip_per_min=2, max_forks_per_class=6, autosave_s=0
        )
        sessions = SessionManager(settings)
        ip = "10.1.1.1"
        try:
            teacher = await sessions.create(LAB, {}, 0, ip)
            code = await sessions.share(teacher)
            forks = [await sessions.fork(teacher, ip) for _ in range(6)]  # today: busy at 2
            assert len({f.id for f in forks}) == 6
            with pytest.raises(SessionError) as exc:  # the class's own cap
                await sessions.fork(teacher, ip)
            assert exc.value.code == "busy" and exc.value.key == "err.class_forks"
            # The address's own sessions are still capped as before (teacher + 1 more).
            own = await sessions.create(LAB, {}, 0, ip)
            with pytest.raises(SessionError) as exc:
                await sessions.create(LAB, {}, 0, ip)
            assert exc.value.key == "err.address_sessions"
            with pytest.raises(SessionError) as exc:  # a fork of an unshared run is one too
                await sessions.fork(own, ip)
            assert exc.value.key == "err.address_sessions"
            # A student's fork of their own fork still counts against the class.
            await sessions.close(forks[0])
            again = await sessions.fork(forks[1], ip)
            assert again.forked_class == code
        finally:
            await sessions.stop()

    asyncio.run(scenario())


def test_class_forks_per_minute_are_capped_per_class():
    async def scenario():
        settings = Settings(class_forks_per_min=3, autosave_s=0)
        sessions = SessionManager(settings)
        try:
            a = await sessions.create(LAB, {}, 0, "10.2.0.1")
            b = await sessions.create(LAB, {}, 0, "10.2.0.1")
            await sessions.share(a)
            await sessions.share(b)
            for _ in range(3):
                await sessions.fork(a, "10.2.0.1")
            with pytest.raises(SessionError) as exc:
                await sessions.fork(a, "10.2.0.1")
            assert exc.value.key == "err.class_forks_rate"
            await sessions.fork(b, "10.2.0.1")  # another class is not stopped
        finally:
            await sessions.stop()

    asyncio.run(scenario())
