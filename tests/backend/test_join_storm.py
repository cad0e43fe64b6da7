"""A join storm costs the server O(n), not O(n²) (issue 19; backend/joining.py).

3,000 viewers joining at once once stalled the event loop for over 20 s: each join sent every
viewer a `status` with the new count, and each `ready` rebuilt the lab's params schema. The
count is now announced at most once an interval (the first change at once, the rest together,
always the latest count), and the schema is built once per lab.
"""

from __future__ import annotations

import asyncio

from backend import joining
from backend.labs import load_all
from tests.wsutil import joined_viewers, open_lab, recv_until


class FakeBus:
    def __init__(self) -> None:
        self.published: list[dict] = []

    def publish_text(self, message: dict) -> None:
        self.published.append(message)


class FakeSession:
    def __init__(self) -> None:
        self.bus = FakeBus()
        self.count = 0

    def status(self) -> dict:
        return {"type": "status", "connections": self.count}


def test_a_thousand_joins_at_once_make_two_count_broadcasts_carrying_the_last_count():
    async def storm() -> FakeSession:
        s = FakeSession()
        for _ in range(1000):  # all within one turn of the loop, as a storm's joins arrive
            s.count += 1
            joining.connections_changed(s)
        assert len(s.bus.published) == 1  # the first change goes out at once
        for _ in range(200):  # the trailing one is due within COUNT_EVERY_S
            if len(s.bus.published) == 2:
                break
            await asyncio.sleep(joining.COUNT_EVERY_S / 10)
        await asyncio.sleep(joining.COUNT_EVERY_S * 1.5)  # and nothing after it
        return s

    s = asyncio.run(storm())
    assert [m["connections"] for m in s.bus.published] == [1, 1000]


def test_the_params_schema_is_built_once_per_lab():
    params = load_all()["gpt"].Params
    first = joining.params_schema(params)
    assert first == params.model_json_schema()
    assert joining.params_schema(params) is first


def test_viewers_joining_together_see_their_count_with_fewer_messages_than_joins(client):
    """A real app: 30 viewers join; the driver ends on the right count, and got fewer
    `status` messages than joins (each join once published one to everyone)."""
    n = 30
    with client.websocket_connect("/ws") as driver:
        ready = open_lab(driver, "linear-regression")
        with joined_viewers(client, ready["session"], n):
            last, seen = recv_until(
                driver, lambda m: m["type"] == "status" and m["connections"] == n + 1
            )
            statuses = [m for m in [*seen, last] if m.get("type") == "status"]
            assert len(statuses) < n


def test_joins_that_arrive_together_go_through_a_few_a_turn_of_the_loop_in_order():
    """A teacher's command waits behind at most `per_turn` joins, not behind a storm's."""

    async def storm() -> list[tuple[int, int]]:
        gate = joining.Turnstile(per_turn=3)
        turn = 0
        through: list[tuple[int, int]] = []  # (joiner, the loop's turn it went through in)

        async def ticker() -> None:
            nonlocal turn
            while True:
                turn += 1
                await asyncio.sleep(0)

        async def join(i: int) -> None:
            await gate.admit()
            through.append((i, turn))

        tick = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        joins = [asyncio.create_task(join(i)) for i in range(3)]
        gone = asyncio.create_task(join(-1))  # one that leaves while it waits ...
        joins += [asyncio.create_task(join(i)) for i in range(3, 10)]
        await asyncio.sleep(0)
        gone.cancel()  # ... takes no place
        await asyncio.gather(*joins)
        tick.cancel()
        return through

    through = asyncio.run(storm())
    assert [i for i, _ in through] == list(range(10))  # in arrival order
    per_turn = {}
    for _, t in through:
        per_turn[t] = per_turn.get(t, 0) + 1
    assert max(per_turn.values()) == 3 and len(per_turn) == 4  # 3 + 3 + 3 + 1


def test_a_lone_join_goes_through_at_once():
    async def one() -> bool:
        gate = joining.Turnstile(per_turn=3)
        task = asyncio.create_task(gate.admit())
        await asyncio.sleep(0)
        return task.done()

    assert asyncio.run(one())


def test_a_new_event_loop_finds_the_gate_open():
    """A loop that ended mid-turn with its joins counted (a test's app, a restart) holds
    no place in the next one."""
    gate = joining.Turnstile(per_turn=2)
    gate.loop, gate.passed, gate.turn_due = object(), 2, True  # as such a loop leaves it

    async def one() -> bool:
        task = asyncio.create_task(gate.admit())
        await asyncio.sleep(0)
        return task.done()

    assert asyncio.run(one())
