"""A picture drawn beside the next step's backward pass is the picture of its own step.

The gpt lab hands its frames' pictures to a helper thread that draws them while the next
step's backward pass runs (Lab.pictures_later). The same run with every picture drawn in
line must give the very same frames, byte for byte apart from the send time: a picture
drawn after the next update, or with a frame's meta taken from a later step, differs.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from backend import wire
from backend.config import Settings
from backend.labs import REGISTRY, load_all
from backend.labs import gpt as gpt_lab
from backend.sessions import Session

STEPS = 12  # step_n(≤ 50) sends every step's picture: 10 drawn beside, 2 in line


def _run(later: bool, threads: list[str]) -> dict[int, bytes]:
    load_all()
    lab_cls = REGISTRY["gpt"]

    async def scenario() -> dict[int, bytes]:
        session = Session(lab_cls, lab_cls.Params(), 0, Settings(), "127.0.0.1")
        await session.start()
        await session.step_n(STEPS)
        frames = {s: session.timeline.frame_at(s) for s in range(1, STEPS + 1)}
        await session.close()
        return frames

    real = gpt_lab.example_picture

    def spy(model, source):
        threads.append(threading.current_thread().name)
        return real(model, source)

    saved = lab_cls.pictures_later
    lab_cls.pictures_later = later
    gpt_lab.example_picture = spy
    try:
        return asyncio.run(scenario())
    finally:
        lab_cls.pictures_later = saved
        gpt_lab.example_picture = real


def _comparable(data: bytes) -> tuple[dict, dict]:
    header, tensors = wire.decode(data)
    header.pop("t", None)  # when it was encoded
    return header, {name: arr.tobytes() for name, arr in tensors.items()}


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[dict[int, bytes], list[str]]]:
    out = {}
    for mode, later in (("beside", True), ("in line", False)):
        threads: list[str] = []
        out[mode] = (_run(later, threads), threads)
    return out


def test_pictures_are_drawn_beside_the_backward_pass(runs):
    _, threads = runs["beside"]
    snapshot, first, *steps, last = threads  # step 0's picture is the session's start
    # The first step has no measured step time to say the run goes flat out: drawn in line.
    assert all(name.startswith("picture") for name in steps), threads
    assert not last.startswith("picture")  # the run's last picture is never left waiting
    assert not any(name.startswith("picture") for name in runs["in line"][1])


def test_every_step_has_its_own_picture_either_way(runs):
    beside, inline = runs["beside"][0], runs["in line"][0]
    for step in range(1, STEPS + 1):
        assert beside[step] is not None and inline[step] is not None, step
        header, tensors = _comparable(beside[step])
        assert header["step"] == step
        assert (header, tensors) == _comparable(inline[step]), f"step {step} differs"


def test_a_paused_run_shows_the_picture_of_its_last_step():
    """Pausing leaves no picture waiting for a backward pass that will not come. (At
    10,000 frames a second every step sends its picture, so the pause always lands on a
    step whose picture was left for the next backward pass.)"""
    load_all()
    lab_cls = REGISTRY["gpt"]

    async def scenario() -> tuple[int, bytes | None]:
        settings = Settings(frame_fps=10_000)
        session = Session(lab_cls, lab_cls.Params(steps=5000), 0, settings, "127.0.0.1")
        await session.start()
        await session.play(None)
        async with asyncio.timeout(60):
            while session.step < 40:
                await asyncio.sleep(0.01)
        await session.pause()
        step, data = session.step, session.timeline.frame_at(session.step)
        await session.close()
        return step, data

    step, data = asyncio.run(scenario())
    assert data is not None and wire.frame_step(data) == step


def test_at_a_set_pace_pictures_are_drawn_at_once():
    """Played slower than it can step, the next backward pass is a pace away: a picture
    left for it would reach the class that much late, so it is drawn in line."""
    load_all()
    lab_cls = REGISTRY["gpt"]
    threads: list[str] = []
    real = gpt_lab.example_picture

    def spy(model, source):
        threads.append(threading.current_thread().name)
        return real(model, source)

    async def scenario() -> None:
        session = Session(lab_cls, lab_cls.Params(steps=5000), 0, Settings(), "127.0.0.1")
        await session.start()
        # 4 steps/s, 250 ms apart: a gpt step takes ~11 ms (~40 ms, spikes past 100 ms, on
        # a 2-core box shared by several test processes), so it always waits for the pace.
        await session.play(4.0)
        async with asyncio.timeout(60):
            while session.step < 8:
                await asyncio.sleep(0.01)
        await session.pause()
        await session.close()

    gpt_lab.example_picture = spy
    try:
        asyncio.run(scenario())
    finally:
        gpt_lab.example_picture = real
    assert len(threads) > 4 and not any(name.startswith("picture") for name in threads)


# -- several arms: each arm's picture beside another arm's backward pass ---------------------
ARMS_STEPS = 8


def _run_arms(later: bool, drawn: list[tuple[int, str]]) -> dict[int, bytes]:
    """attention-variants (five arms): every arm's picture, and which thread drew it."""
    load_all()
    lab_cls = REGISTRY["attention-variants"]

    async def scenario() -> dict[int, bytes]:
        session = Session(lab_cls, lab_cls.Params(), 0, Settings(), "127.0.0.1")
        await session.start()
        await session.step_n(ARMS_STEPS)
        frames = {s: session.timeline.frame_at(s) for s in range(1, ARMS_STEPS + 1)}
        await session.close()
        return frames

    real = lab_cls.picture

    def spy(self, arm):
        drawn.append((arm.index, threading.current_thread().name))
        return real(self, arm)

    saved = lab_cls.pictures_later
    lab_cls.pictures_later, lab_cls.picture = later, spy
    try:
        return asyncio.run(scenario())
    finally:
        lab_cls.pictures_later, lab_cls.picture = saved, real


@pytest.fixture(scope="module")
def arm_runs() -> dict[str, tuple[dict[int, bytes], list[tuple[int, str]]]]:
    out = {}
    for mode, later in (("beside", True), ("in line", False)):
        drawn: list[tuple[int, str]] = []
        out[mode] = (_run_arms(later, drawn), drawn)
    return out


def test_several_arms_pictures_are_spread_over_the_backward_passes(arm_runs):
    frames, drawn = arm_runs["beside"]
    n = 5
    assert len(drawn) == n * (ARMS_STEPS + 1)  # the start's picture and every step's
    # The start's picture and the last step's are drawn in line; every arm's picture of
    # steps 2 .. N-1 on the helper thread, arm by arm (step 1's may be either: whether the
    # run goes flat out is measured).
    assert not any(name.startswith("picture") for _, name in drawn[:n])
    between = drawn[2 * n : -n]
    assert [i for i, _ in between] == list(range(n)) * (ARMS_STEPS - 2)
    assert all(name.startswith("picture") for _, name in between), drawn
    assert not any(name.startswith("picture") for _, name in drawn[-n:])
    assert not any(name.startswith("picture") for _, name in arm_runs["in line"][1])


def test_several_arms_frames_are_the_same_byte_for_byte(arm_runs):
    beside, inline = arm_runs["beside"][0], arm_runs["in line"][0]
    for step in range(1, ARMS_STEPS + 1):
        assert beside[step] is not None and inline[step] is not None, step
        header, tensors = _comparable(beside[step])
        assert header["step"] == step and len(header["meta"]["arms"]) == 5
        assert (header, tensors) == _comparable(inline[step]), f"step {step} differs"
