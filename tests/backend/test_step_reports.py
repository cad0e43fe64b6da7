"""A playing session reports its steps to the event loop in batches, and loses none.

The worker hands steps' scalars to the loop at most every REPORT_EVERY_S, or with a frame,
rather than waking it for each step; the timeline must still hold every step, in order,
with the same values the lab computed.
"""

from __future__ import annotations

import asyncio

from backend import session_worker
from backend.config import Settings
from backend.labs import REGISTRY, load_all
from backend.sessions import Session

STEPS = 150


class CountingSession(Session):
    reports = 0

    def _report(self, epoch, rows, frame=None):
        CountingSession.reports += 1
        super()._report(epoch, rows, frame)


def test_every_step_is_recorded_with_fewer_wakeups_than_steps(monkeypatch):
    # The time-based report is moved out of reach and frames come once a second, so what
    # is counted does not depend on how fast this (shared) machine steps: the worker then
    # wakes the loop only with a frame.
    monkeypatch.setattr(session_worker, "REPORT_EVERY_S", 1e9)
    load_all()
    lab_cls = REGISTRY["gpt"]

    async def scenario() -> tuple[list[int], list[dict], int]:
        params = lab_cls.Params(steps=STEPS)
        session = CountingSession(lab_cls, params, 0, Settings(frame_fps=1), "127.0.0.1")
        await session.start()
        CountingSession.reports = 0
        await session.play(None)
        async with asyncio.timeout(120):
            await session._player
        steps, values = session.timeline.scalars_after(0)
        await session.close()
        return steps, values, session.step

    steps, values, last = asyncio.run(scenario())
    assert steps == list(range(1, STEPS + 1)) and last == STEPS
    assert all("loss" in v and "grad_norm.blocks.0" in v for v in values)
    # Steps ride along with frames (once a second) and the end of each 1 s play chunk,
    # never one wake-up a step.
    assert CountingSession.reports < STEPS / 2, CountingSession.reports
