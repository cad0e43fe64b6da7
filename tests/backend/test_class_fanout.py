"""A class's fan-out leaves the loop to others: at most CHUNK boxes a turn, in order, and
while the loop lags (thousands joining at once) fewer run frames, never a stale last one
(backend/loop_lag.py, backend/bus.py)."""

from __future__ import annotations

import asyncio
import time

from backend import loop_lag, metrics
from backend.bus import FrameBus, Outbox


def _items(box: Outbox) -> list[str | bytes]:
    return [data for _, _, data in box.items]


def _frames(box: Outbox) -> list[bytes]:
    return [data for kind, _, data in box.items if kind == "f"]


async def _lagged_loop() -> loop_lag.LoopLag:
    """The running loop's monitor after the loop was really held for 0.3 s."""
    lag = loop_lag.monitor()
    await asyncio.sleep(0)
    time.sleep(2 * loop_lag.LATE_S)  # a callback that holds the loop, as a storm's joins do
    await asyncio.sleep(loop_lag.TICK_S * 2)  # the ticker runs, late
    return lag


def _class(n: int) -> tuple[FrameBus, list[Outbox]]:
    bus = FrameBus()
    boxes = [Outbox() for _ in range(n)]
    for b in boxes:
        bus.subscribe(b)
    return bus, boxes


def test_a_held_loop_is_seen_lagging_and_recovers():
    async def run():
        lag = await _lagged_loop()
        assert lag.lagging()
        await asyncio.sleep(loop_lag.HOLD_S + 3 * loop_lag.TICK_S)
        return lag.lagging()

    assert asyncio.run(run()) is False


def test_while_lagging_the_class_gets_the_first_frame_and_then_the_latest_when_due():
    async def run():
        await _lagged_loop()
        bus, boxes = _class(3)
        before = metrics.totals()["frames_thinned"]
        for i in range(5):
            bus.publish_frame(b"run%d" % i, thin=True)
        held = [_frames(b) for b in boxes]
        await asyncio.sleep(FrameBus.THIN_S * 1.5)
        return held, [_frames(b) for b in boxes], metrics.totals()["frames_thinned"] - before

    held, after, thinned = asyncio.run(run())
    assert held == [[b"run0"]] * 3  # the rest wait: only the latest of them is kept
    assert after == [[b"run0", b"run4"]] * 3  # ...and goes when due: nobody is left stale
    assert thinned == 3  # run1..run3: no viewer got them


async def _one_held(first: bytes, then: bytes) -> tuple[FrameBus, list[Outbox]]:
    """A class of two on a lagging loop: `first` went out, `then` is held."""
    await _lagged_loop()
    bus, boxes = _class(2)
    bus.publish_frame(first, thin=True)
    bus.publish_frame(then, thin=True)
    return bus, boxes


def test_an_inference_frame_is_never_held_and_goes_after_a_held_run_frame():
    async def run():
        bus, boxes = await _one_held(b"run0", b"run1")
        bus.publish_frame(b"answer", thin=False)
        return [_frames(b) for b in boxes]

    assert asyncio.run(run()) == [[b"run0", b"run1", b"answer"]] * 2


def test_a_quick_loop_and_a_lone_viewer_get_every_frame():
    async def run():
        lag = await _lagged_loop()
        lone, (box,) = _class(1)
        for i in range(4):
            lone.publish_frame(b"run%d" % i, thin=True)  # one viewer: no fan-out to spare
        lag.lagging_until = float("-inf")  # the loop keeps up again
        bus, boxes = _class(2)
        for i in range(4):
            bus.publish_frame(b"run%d" % i, thin=True)
        return _frames(box), [_frames(b) for b in boxes]

    lone, both = asyncio.run(run())
    every = [b"run0", b"run1", b"run2", b"run3"]
    assert lone == every and both == [every, every]


def test_a_reset_drops_the_held_frame_of_the_old_run():
    async def run():
        bus, boxes = await _one_held(b"old0", b"old1")
        bus.rewind()
        await asyncio.sleep(FrameBus.THIN_S * 1.5)
        return [_frames(b) for b in boxes]

    assert asyncio.run(run()) == [[], []]


def test_a_large_class_is_served_a_chunk_a_turn_and_each_box_in_publish_order(monkeypatch):
    monkeypatch.setattr(FrameBus, "CHUNK", 2)

    async def run():
        bus, boxes = _class(5)
        bus.publish_frame(b"A")
        bus.publish_text({"type": "status", "n": 1})
        bus.publish_frame(b"B")
        first_turn = [_items(b) for b in boxes]
        for _ in range(20):
            await asyncio.sleep(0)
        return first_turn, [_items(b) for b in boxes]

    first_turn, after = asyncio.run(run())
    assert sorted(map(len, first_turn)) == [0, 0, 0, 1, 1]  # two boxes in the first turn
    assert after == [[b"A", '{"type":"status","n":1}', b"B"]] * 5


def test_a_reset_reaches_each_box_after_the_frames_published_before_it(monkeypatch):
    monkeypatch.setattr(FrameBus, "CHUNK", 2)

    async def run():
        bus, boxes = _class(5)
        bus.publish_frame(b"old")
        bus.rewind()
        bus.publish_frame(b"new")
        for _ in range(20):
            await asyncio.sleep(0)
        return [_frames(b) for b in boxes]

    assert asyncio.run(run()) == [[b"new"]] * 5


def test_what_a_delivery_publishes_goes_to_every_box_once_after_the_message(monkeypatch):
    monkeypatch.setattr(FrameBus, "CHUNK", 2)

    class Announcing(Outbox):  # its frame makes the session publish (say, a closed socket)
        def put_frame(self, data: bytes) -> None:
            super().put_frame(data)
            bus.publish_text({"type": "status"})

    bus = FrameBus()

    async def run():
        boxes = [Announcing(), *(Outbox() for _ in range(4))]
        for b in boxes:
            bus.subscribe(b)
        bus.publish_frame(b"A")
        for _ in range(20):
            await asyncio.sleep(0)
        return [_items(b) for b in boxes]

    assert asyncio.run(run()) == [[b"A", '{"type":"status"}']] * 5


def test_a_fan_out_that_takes_long_over_short_turns_counts_as_lag(monkeypatch):
    """Each turn under LATE_S (the ticker sees no lag), the class served over 6 of them."""
    monkeypatch.setattr(FrameBus, "CHUNK", 1)

    async def run():
        lag = loop_lag.monitor()
        lag.lagging_until = float("-inf")
        loop = asyncio.get_running_loop()
        turns = 6

        def busy() -> None:  # other work beside each turn of the fan-out (handshakes)
            nonlocal turns
            time.sleep(loop_lag.LATE_S / 3)
            turns -= 1
            if turns:
                loop.call_soon(busy)

        loop.call_soon(busy)
        bus, boxes = _class(6)
        bus.publish_frame(b"A")
        while turns:
            await asyncio.sleep(0)
        await asyncio.sleep(0)
        return lag.lagging(), [_frames(b) for b in boxes]

    lagging, got = asyncio.run(run())
    assert got == [[b"A"]] * 6 and lagging
