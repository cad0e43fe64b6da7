"""The play speed paces play, not a pressed `step`.

After playing at 0.01 steps/s (the next step a hundred seconds away), pausing and pressing
`step` must run that step at once: the 30 s deadline below is a liveness bound that a
paced step (100 s) cannot meet, not a speed measurement.
"""

from __future__ import annotations

import asyncio

from backend.config import Settings
from backend.labs import REGISTRY, load_all
from backend.sessions import Session


def test_a_pressed_step_does_not_wait_for_the_play_speed():
    load_all()
    lab_cls = REGISTRY["linear-regression"]

    async def scenario() -> int:
        session = Session(lab_cls, lab_cls.Params(), 0, Settings(), "127.0.0.1")
        await session.start()
        await session.play(0.01)
        async with asyncio.timeout(30):
            while session.step < 1:
                await asyncio.sleep(0.01)
            await session.pause()
            await session.step_n(1)
        step = session.step
        await session.close()
        return step

    assert asyncio.run(scenario()) == 2
