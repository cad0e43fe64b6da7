"""Which steps of a playing session send a picture (backend/pacing.py), on a simulated clock:
frames at the frame rate, and flat out at most PICTURE_SHARE of the time in pictures."""

from __future__ import annotations

import pytest

from backend.pacing import PICTURE_SHARE, Pacer


def _play(speed: float, step_s: float, picture_s: float, seconds: float = 3.0) -> tuple[int, int]:
    """(steps, frames) of `seconds` of play: each step `step_s`, plus `picture_s` with a frame."""
    pacer, now, steps, frames = Pacer(30.0), 0.0, 0, 0
    while now < seconds:
        now += max(0.0, pacer.wait_s(now))
        framed = pacer.start(now, 1.0 / speed)
        took = step_s + (picture_s if framed else 0.0)
        pacer.done(now, now + took, framed)
        if framed:
            pacer.pictured(picture_s)
            frames += 1
        steps += 1
        now += took
    return steps, frames


def test_flat_out_a_costly_picture_takes_at_most_its_share_of_the_time():
    # An encoder-decoder's step: 20 ms, its picture (greedy translation, every map) 30 ms.
    steps, frames = _play(speed=100, step_s=0.02, picture_s=0.03)
    assert frames * 0.03 <= PICTURE_SHARE * 3.0 + 2 * 0.03  # ≤ a fifth of the time drawing
    assert frames >= 0.8 * PICTURE_SHARE * 3.0 / 0.03  # ... and still drawing that much
    assert steps >= 0.9 * (1 - PICTURE_SHARE) * 3.0 / 0.02  # so training keeps ~80% speed


def test_a_cheap_picture_or_a_set_pace_keeps_every_frame():
    # A cheap picture flat out: the frame rate's schedule (30 a second at most) decides.
    _, frames = _play(speed=100, step_s=0.02, picture_s=0.001)
    assert frames == pytest.approx(3.0 * 25, rel=0.25)  # a frame every other 20 ms step
    # At a set pace (10 steps a second, idle between them) every step's picture is free.
    steps, frames = _play(speed=10, step_s=0.02, picture_s=0.03)
    assert frames >= steps - 1  # (the very first step comes before any schedule)


def _starts(speed: float, late_s: float, step_s, seconds: float = 3.0) -> list[float]:
    """When each step started: the thread wakes `late_s` after it was due; step i takes
    step_s(i)."""
    pacer, now, starts = Pacer(30.0), 0.0, []
    while now < seconds:
        wait = pacer.wait_s(now)
        if wait > 0:
            now += wait + late_s
        pacer.start(now, 1.0 / speed)
        starts.append(now)
        took = step_s(len(starts))
        pacer.done(now, now + took, False)
        now += took
    return starts


def test_steps_late_by_less_than_a_period_keep_the_speed_asked():
    # A thread that wakes 10 ms late each time (a busy event loop holds the GIL), and a long
    # step (an evaluation, 150 ms) every tenth: 10 steps a second still come out as 10.
    starts = _starts(10, 0.010, lambda i: 0.15 if i % 10 == 0 else 0.02)
    assert len(starts) >= 30
    assert min(b - a for a, b in zip(starts, starts[1:], strict=False)) >= 0.02  # no burst


def test_a_stall_starts_the_schedule_over_instead_of_a_burst_of_steps():
    # A 2 s stall (a chunk that ended, a pause): the steps after it are a period apart again.
    starts = _starts(10, 0.0, lambda i: 2.0 if i == 5 else 0.02, seconds=4.0)
    after = [t for t in starts if t > 2.3]
    gaps = [b - a for a, b in zip(after, after[1:], strict=False)]
    assert gaps and min(gaps) == pytest.approx(0.1)
