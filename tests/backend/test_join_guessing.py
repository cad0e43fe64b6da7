"""Join codes behind one address (issue 41): a prankster's wrong codes slow a class down but
never lock it out, and a guesser still gets at most `join_attempts_per_min` answers a minute.

The limits' clock is the test's own (`shared.clock`), so every count below is exact and no
assertion depends on how fast this machine is: time moves only when the test moves it.
The same scenario runs against Redis in tests/hosted/test_join_guessing_redis.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from backend.admission import SessionError
from backend.config import Settings
from backend.labs import load_all
from backend.manager import SessionManager

load_all()
LAB = "linear-regression"
LIMIT = 6  # answers to new codes a minute per address: one turn every 10 s
WAIT_S = 5.0  # a lookup without a turn is turned away after this long


class Clock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def wrong_codes(n: int, right: str) -> list[str]:
    """`n` distinct well-formed codes, none of them the class's."""
    alphabet = "ABCDEFGHJKMNPQRSTWXYZ"
    codes = [f"{a}{b}ZZZZ" for a in alphabet for b in alphabet]
    return [c for c in codes if c != right][:n]


async def settle(tasks, done_count: int | None = None) -> None:
    """Let the waiting lookups poll a few times (real time passes; the limits' clock not)."""
    for _ in range(400 if done_count is not None else 0):
        await asyncio.sleep(0.05)
        if sum(t.done() for t in tasks) >= done_count:
            break
    await asyncio.sleep(0.8)  # a few more polls (POLL_S 0.25): nothing else may be answered


def outcome(task) -> str:
    if not task.done():
        return "waiting"
    exc = task.exception()
    if exc is None:
        return "joined"
    assert isinstance(exc, SessionError), exc
    return exc.code  # not_found / busy


async def guessing_scenario(sessions: SessionManager, clock: Clock) -> None:
    """The policy, on whichever store `sessions` uses (its clock is `clock`)."""
    teacher = await sessions.create(LAB, {}, 0, "10.9.0.1")
    code = await sessions.share(teacher)
    room = "10.0.0.1"

    def lookup(code: str, ip: str, browser: str | None = None):
        return sessions.resolve_code(code, ip, browser)

    def at_once(code: str, ip: str, browser: str | None = None):
        """A lookup that needs no turn: answered with the clock standing still (the 30 s is
        a deadline against a hang, not a speed check)."""
        return asyncio.wait_for(lookup(code, ip, browser), 30)

    # A guesser at the room's address asks 40 codes at once: LIMIT are answered, the rest wait.
    guesses = [asyncio.create_task(lookup(c, room)) for c in wrong_codes(40, code)]
    await settle(guesses, done_count=LIMIT)
    states = [outcome(t) for t in guesses]
    assert states.count("not_found") == LIMIT and states.count("waiting") == 40 - LIMIT

    # Another school is not slowed at all.
    assert (await at_once(code, "10.0.0.2")).session == teacher.id
    # The class's code from the room waits like a wrong one (an answer that came sooner
    # would tell a guesser the code is right), and no time means no answer.
    students = [asyncio.create_task(lookup(code, room)) for _ in range(4)]
    probe = asyncio.create_task(lookup("PPPPPP", room))  # one more guess, asked with them
    clock.now += 3.0  # 0.3 of a turn
    await settle(students)
    assert [outcome(t) for t in [*students, probe]] == ["waiting"] * 5
    assert [outcome(t) for t in guesses].count("not_found") == LIMIT

    # A turn (10 s) and every wait over (5 s): the class's code, asked by the most waiters,
    # goes first and is right, so its turn comes back; the others are turned away alike.
    clock.now += 7.0
    await settle([*guesses, *students, probe], done_count=45)
    assert [outcome(t) for t in students] == ["joined"] * 4
    assert all(t.result().session == teacher.id for t in students)
    others = [outcome(t) for t in [*guesses, probe]]
    wrong = others.count("not_found")
    # The bound: LIMIT at once, LIMIT a minute after: 6 + 6 * 10 / 60 = 7 answers in 10 s.
    assert LIMIT <= wrong <= LIMIT + 1, others
    assert others.count("busy") == 41 - wrong
    errors = [t.exception() for t in [*guesses, probe]]
    refusals = {(e.code, e.key, str(e), e.field, e.values) for e in errors if e.code == "busy"}
    assert len(refusals) == 1, refusals  # every refusal the same, whatever its code

    # The room was told the code: the next student joins at once, with no turn left.
    assert (await at_once(code.lower(), room)).session == teacher.id
    # A wrong code the room was told is told again at once, and costs nothing.
    for _ in range(3):
        with pytest.raises(SessionError) as exc:
            await at_once(wrong_codes(1, code)[0], room)
        assert exc.value.code == "not_found"

    # The teacher's own network was told the code when it shared: no turn is ever needed there.
    assert await sessions.shared.known("10.9.0.1", code) is True

    stats = await sessions.shared.join_stats(room)
    assert stats["wrong"] == wrong and stats["refused"] == 41 - wrong
    assert stats["waited"] >= 4 and stats["longest_wait_s"] >= 5.0


async def browser_scenario(sessions: SessionManager, clock: Clock) -> None:
    """A prankster in one browser uses its own turns (a third of the address's), and leaves
    the address's to the class."""
    teacher = await sessions.create(LAB, {}, 0, "10.9.0.1")
    code = await sessions.share(teacher)
    room = "10.0.0.3"
    prankster = "p" * 22
    tries = [
        asyncio.create_task(sessions.resolve_code(c, room, prankster)) for c in wrong_codes(5, code)
    ]
    await settle(tries, done_count=LIMIT // 3)
    assert [outcome(t) for t in tries].count("not_found") == LIMIT // 3
    # The class, from fresh browsers at the same address: at once (the clock stands still).
    for student in ("s" * 22, None, "t" * 22):
        found = await asyncio.wait_for(sessions.resolve_code(code, room, student), 30)
        assert found.session == teacher.id
    # Guessing from the same address with a browser id each: the address's turns still bound it.
    fresh = [
        asyncio.create_task(sessions.resolve_code(c, room, f"{i:022d}"))
        for i, c in enumerate(wrong_codes(20, code)[5:])
    ]
    await settle(fresh, done_count=LIMIT - LIMIT // 3)
    assert [outcome(t) for t in fresh].count("not_found") == LIMIT - LIMIT // 3
    clock.now += WAIT_S + 1  # no new turn in 6 s (one comes every 10 s): all turned away
    await settle([*tries, *fresh], done_count=len(tries) + len(fresh))
    assert [outcome(t) for t in [*tries, *fresh]].count("not_found") == LIMIT


def _manager(**settings) -> tuple[SessionManager, Clock]:
    base = {"join_attempts_per_min": LIMIT, "join_wait_s": WAIT_S, "autosave_s": 0}
    base["class_process"] = False  # the lab stays in this process: only codes matter here
    sessions = SessionManager(Settings(**(base | settings)))
    clock = Clock()
    sessions.shared.clock = clock
    return sessions, clock


@pytest.mark.parametrize("scenario", [guessing_scenario, browser_scenario])
def test_join_turns_in_one_process(scenario):
    async def run():
        sessions, clock = _manager()
        try:
            await scenario(sessions, clock)
        finally:
            await sessions.stop()

    # In a thread of its own: a browser test's sync Playwright may hold this thread's loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, run()).result()
