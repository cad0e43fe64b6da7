"""A playing session lets a command in after the current step, not after its whole chunk.

The lab's step waits for the test's permission, one step at a time, so the check needs no
clock: a `set` sent during step 1 must be applied before the lab is allowed a second step.
If the worker kept running its chunk, the `set` would wait behind a step that never
comes, and the deadline would fail the test.
"""

from __future__ import annotations

import asyncio
import threading

import torch

from backend.config import Settings
from backend.labs.base import Frame, Lab, LabParams, param
from backend.sessions import Session


class GateParams(LabParams):
    rate: float = param(1.0, zh="速率", en="Rate", ge=0.0, le=10.0, live=True)


class GatedLab(Lab):
    id = "test-gated"
    chapter = 99
    title = {"zh": "受控的实验", "en": "A gated lab"}
    description = {"zh": "只用于测试", "en": "For tests only"}
    Params = GateParams
    tensors = ()
    permits = threading.Semaphore(0)  # one release = one step
    waiting = threading.Event()  # set when a step waits for its permit

    def __init__(self, params: GateParams, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.t = 0
        self.seen_rates: list[float] = []

    def step(self, capture: bool) -> Frame:
        self.waiting.set()
        assert self.permits.acquire(timeout=30), "the test never allowed this step"
        self.waiting.clear()
        self.t += 1
        self.seen_rates.append(self.params.rate)
        return Frame(scalars={"loss": 1.0 / self.t})

    def snapshot(self) -> Frame:
        return Frame(scalars={"loss": 1.0})

    def update_live(self, params: GateParams) -> None:
        self.params = params


def test_a_command_sent_while_playing_runs_after_the_current_step():
    async def scenario() -> list[float]:
        session = Session(GatedLab, GateParams(), 0, Settings(), "127.0.0.1")
        await session.start()
        await session.play(None)
        async with asyncio.timeout(30):
            await asyncio.to_thread(GatedLab.waiting.wait)  # the worker is in step 1
            command = asyncio.create_task(session.set_params({"rate": 2.0}))  # live field
            while session._submitted == session._started:  # the command waits its turn
                await asyncio.sleep(0.01)
            GatedLab.permits.release()  # step 1 ends; the command must run before step 2
            while session.lab.params.rate != 2.0:  # no permit for step 2 yet: only a yield
                await asyncio.sleep(0.01)
            GatedLab.permits.release(1000)  # from here on, steps run freely
            await command
            await session.pause()
        rates = list(session.lab.seen_rates)
        await session.close()
        return rates

    GatedLab.permits = threading.Semaphore(0)
    rates = asyncio.run(scenario())
    assert rates[:2] == [1.0, 2.0] and set(rates[1:]) == {2.0}
