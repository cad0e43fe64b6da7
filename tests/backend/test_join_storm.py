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
