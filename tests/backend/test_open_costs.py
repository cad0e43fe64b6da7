"""What a reader's open costs, cut (docs/benchmarks.md, readers): the fast paths keep the
behaviour they replaced.

- `backend.worker.manual_seed` seeds only the CPU generator where there is no accelerator:
  the same weights as `torch.manual_seed`, and no state of one session reaches another's.
- The manager counts each address's own sessions as they come and go instead of walking
  every session at each open: the count must follow closes, failed opens and forks.
- Builds pass a gate of their own (`backend.worker.BUILDS`), in arrival order.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from backend.admission import SessionError
from backend.config import Settings
from backend.labs import load_all
from backend.manager import SessionManager
from backend.worker import manual_seed

load_all()
LAB = "linear-regression"


def _run(coro) -> None:
    """asyncio.run on a thread of its own: another test's event loop may be running here."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coro).result()


def test_manual_seed_gives_what_torch_manual_seed_gives():
    torch.manual_seed(7)
    want = torch.randn(16)
    torch.rand(3)  # the generator moved on
    manual_seed(7)
    assert torch.equal(torch.randn(16), want)
    manual_seed(8)
    assert not torch.equal(torch.randn(16), want)


def test_two_sessions_with_one_seed_build_the_same_model_and_others_do_not():
    async def scenario():
        sessions = SessionManager(Settings(autosave_s=0))
        try:
            a = await sessions.create("mlp-playground", {}, 3, "10.9.0.1")
            torch.rand(100)  # whatever ran between two opens
            b = await sessions.create("mlp-playground", {}, 3, "10.9.0.2")
            c = await sessions.create("mlp-playground", {}, 4, "10.9.0.3")
            wa, wb, wc = (list(s.lab.model.parameters()) for s in (a, b, c))
            # bitwise: the same seed gives the same draws, the same init arithmetic on them
            assert all(torch.equal(x, y) for x, y in zip(wa, wb, strict=True))
            assert not all(torch.equal(x, y) for x, y in zip(wa, wc, strict=True))
        finally:
            await sessions.stop()

    _run(scenario())


def _walk(sessions: SessionManager) -> dict[str, int]:
    """The count the old code made: every session walked, a class's forks aside."""
    out: dict[str, int] = {}
    for s in sessions.sessions.values():
        if getattr(s, "forked_class", None) is None:
            out[s.owner_ip] = out.get(s.owner_ip, 0) + 1
    return out


def test_own_sessions_per_address_follow_opens_closes_failures_and_forks():
    async def scenario():
        settings = Settings(max_sessions_per_ip=3, sessions_per_ip_per_min=100, autosave_s=0)
        sessions = SessionManager(settings)
        ip, other = "10.9.1.1", "10.9.1.2"
        try:
            made = [await sessions.create(LAB, {}, 0, ip) for _ in range(3)]
            await sessions.create(LAB, {}, 0, other)
            assert sessions._own_per_ip() == _walk(sessions) == {ip: 3, other: 1}
            with pytest.raises(SessionError) as exc:  # the address's cap still holds
                await sessions.create(LAB, {}, 0, ip)
            assert exc.value.key == "err.address_sessions"
            await sessions.close(made[0])
            await sessions.close(made[0])  # closed twice: counted once
            assert sessions._own_per_ip() == _walk(sessions) == {ip: 2, other: 1}
            again = await sessions.create(LAB, {}, 0, ip)  # the freed place is free
            await sessions.share(again)
            fork = await sessions.fork(again, ip)  # the class's, not the address's
            assert sessions._own_per_ip() == _walk(sessions) == {ip: 3, other: 1}
            with pytest.raises(SessionError):  # a build that fails leaves no count behind
                await sessions.create(LAB, {"no_such_param": 1}, 0, other)
            for s in [*made[1:], again, fork]:
                await sessions.close(s)
            assert sessions._own_per_ip() == _walk(sessions) == {other: 1}
        finally:
            await sessions.stop()

    _run(scenario())


def test_a_build_waits_its_turn_at_the_build_gate_and_runs_when_a_slot_frees():
    """Builds pass backend.worker.BUILDS: with every slot held, a new session's build
    queues there (not run at once beside the others) and is built once a slot frees."""
    from backend.worker import BUILDS

    async def scenario():
        sessions = SessionManager(Settings(autosave_s=0))
        for _ in range(BUILDS.slots):  # every slot taken, as by builds already running
            BUILDS.__enter__()
        held = BUILDS.slots
        try:
            opening = asyncio.create_task(sessions.create(LAB, {}, 0, "10.9.2.1"))
            while not opening.done() and not BUILDS._waiting:
                await asyncio.sleep(0.01)
            assert not opening.done() and len(BUILDS._waiting) == 1  # queued at the gate
            BUILDS.__exit__(None, None, None)  # one slot frees: the build takes it
            held -= 1
            s = await opening
            assert s.lab is not None and s.timeline.frame_at(0) is not None
        finally:
            for _ in range(held):
                BUILDS.__exit__(None, None, None)
            await sessions.stop()

    _run(scenario())
