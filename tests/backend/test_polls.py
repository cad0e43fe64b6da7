"""Class polls on a real uvicorn with real websocket clients (backend/polls.py, docs/polls.md).

The teacher opens a lab and asks; students join the session as viewers and vote. Counts are
the server's (one per student, however many votes a student sends); a numeric prediction's
truth is the session's own scalar at that step.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading

import pytest
import websockets

DEADLINE_S = 30.0


def run_async(coro) -> None:
    """asyncio.run in a thread of its own (browser tests keep a loop in the main thread)."""
    box: dict = {}

    def target():
        try:
            asyncio.run(coro)
        except BaseException as exc:  # re-raised in the test's thread
            box["exc"] = exc

    th = threading.Thread(target=target)
    th.start()
    th.join()
    if "exc" in box:
        raise box["exc"]


def ws_url(live_server: str, **query: str) -> str:
    base = live_server.replace("http://", "ws://") + "/ws"
    return base + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


async def next_of(ws, pred, what: str) -> dict:
    """The next text message for which pred is true (binary frames skipped)."""

    async def find():
        while True:
            raw = await ws.recv()
            if isinstance(raw, str) and pred(m := json.loads(raw)):
                return m

    try:
        return await asyncio.wait_for(find(), DEADLINE_S)
    except TimeoutError:
        raise AssertionError(f"waited {DEADLINE_S:.0f} s for {what}") from None


def state_where(ws, pred, what="a poll_state"):
    return next_of(ws, lambda m: m["type"] == "poll_state" and pred(m), what)


def error_of(ws):
    return next_of(ws, lambda m: m["type"] == "error", "an error")


async def send(ws, msg: dict) -> None:
    await ws.send(json.dumps(msg))


async def teacher(live_server: str, lab: str = "linear-regression", params: dict | None = None):
    ws = await websockets.connect(ws_url(live_server), max_size=None)
    await send(ws, {"type": "open", "lab": lab, "params": params or {}, "seed": 0})
    ready = await next_of(ws, lambda m: m["type"] in ("ready", "error"), "ready")
    assert ready["type"] == "ready", ready
    return ws, ready["session"]


async def student(live_server: str, session: str):
    # A student here only votes and never reads the run's frames: with websockets' default
    # queue of 16 they would fill it, reading would pause and `close()` would wait its
    # 10-s close timeout for a close frame it no longer reads (as the library intends).
    ws = await websockets.connect(
        ws_url(live_server, session=session), max_size=None, max_queue=None
    )
    ready = await next_of(ws, lambda m: m["type"] in ("ready", "error"), "ready")
    assert ready["type"] == "ready" and ready["role"] == "viewer", ready
    return ws


def voter_id() -> str:
    return secrets.token_urlsafe(16)


ASK = {"type": "poll", "question": "Which way will w move?", "choices": ["up", "down", "stay"]}


def test_votes_are_counted_once_per_student_and_can_change(live_server):
    async def scenario():
        t, sid = await teacher(live_server)
        kids = [await student(live_server, sid) for _ in range(4)]
        await send(t, ASK)
        first = await state_where(t, lambda m: True)
        assert first["counts"] == [0, 0, 0] and first["open"] and first["choices"] == ASK["choices"]
        for k in kids:  # every student sees the question
            assert (await state_where(k, lambda m: True))["question"] == ASK["question"]
        ids = [voter_id() for _ in kids]
        await send(kids[0], {"type": "vote", "choice": 0, "voter": ids[0], "poll": first["id"]})
        for _ in range(50):  # a flood from one student, some under made-up voter ids
            await send(kids[1], {"type": "vote", "choice": 1, "voter": voter_id()})
        await send(kids[2], {"type": "vote", "choice": 0, "voter": ids[2]})
        await send(kids[2], {"type": "vote", "choice": 2, "voter": ids[2]})  # changed mind
        await send(kids[3], {"type": "vote", "choice": 1, "voter": ids[3]})
        final = await state_where(t, lambda m: m["counts"] == [1, 2, 1], "counts [1, 2, 1]")
        assert final["voters"] == 4
        # A student who reconnects (same voter id, a new socket) still has one vote.
        await kids[3].close()
        again = await student(live_server, sid)
        late = await state_where(again, lambda m: True, "the poll, on joining")
        assert late["counts"] == [1, 2, 1] and late["open"]
        await send(again, {"type": "vote", "choice": 0, "voter": ids[3]})
        await state_where(t, lambda m: m["counts"] == [2, 1, 1] and m["voters"] == 4)
        # Closing reveals the answer the teacher marks; later votes are refused.
        await send(t, {"type": "poll_close", "answer": 2})
        closed = await state_where(kids[0], lambda m: not m["open"], "the closed poll")
        assert closed["answer"] == 2 and closed["counts"] == [2, 1, 1]
        await send(kids[0], {"type": "vote", "choice": 1, "voter": ids[0]})
        err = await error_of(kids[0])
        assert err["code"] == "conflict" and err["key"] == "poll.err_closed"
        for ws in (t, again, *kids[:3]):
            await ws.close()

    run_async(scenario())


def test_viewers_cannot_ask_and_bad_votes_are_refused(live_server):
    async def scenario():
        t, sid = await teacher(live_server)
        kid = await student(live_server, sid)
        await send(kid, {"type": "vote", "choice": 0})
        err = await error_of(kid)
        assert err["code"] == "conflict" and err["key"] == "poll.err_none"
        await send(kid, ASK)
        err = await error_of(kid)
        assert err["code"] == "forbidden" and err["values"] == {"action": "poll"}
        await send(kid, {"type": "poll_close"})
        assert (await error_of(kid))["code"] == "forbidden"
        await send(t, ASK)
        opened = await state_where(kid, lambda m: m["open"])
        await send(kid, {"type": "vote", "choice": 3})
        err = await error_of(kid)
        assert (err["code"], err["field"]) == ("bad_message", "choice")
        await send(kid, {"type": "vote", "value": 0.5})
        assert (await error_of(kid))["key"] == "poll.err_kind"
        await send(kid, {"type": "vote", "choice": 0, "poll": "not-this-one"})
        assert (await error_of(kid))["key"] == "poll.err_stale"
        bad = [
            {"type": "vote"},
            {"type": "vote", "choice": 0, "value": 1.0},
            {"type": "vote", "choice": 0, "voter": "short"},
        ]
        for msg in bad:
            await send(kid, msg)
            assert (await error_of(kid))["code"] == "bad_message", msg
        for msg in (
            {"type": "poll", "question": "?", "choices": ["only one"]},
            {"type": "poll", "question": "?", "choices": [f"c{i}" for i in range(7)]},
            {"type": "poll", "question": "x" * 201, "choices": ["a", "b"]},
            {"type": "poll", "question": "?", "choices": ["a", "b"], "answer": 2},
            {"type": "poll", "question": "?"},
        ):
            await send(t, msg)
            assert (await error_of(t))["code"] == "bad_message", msg
        await send(t, {"type": "poll", "question": "?", "numeric": {"metric": "nope", "step": 9}})
        err = await error_of(t)
        assert (err["field"], err["key"]) == ("numeric.metric", "poll.err_metric")
        # Nothing lost: the open poll still takes a vote.
        await send(kid, {"type": "vote", "choice": 1, "poll": opened["id"]})
        await state_where(t, lambda m: m["counts"] == [0, 1, 0])
        await t.close()
        await kid.close()

    run_async(scenario())


def test_a_numeric_prediction_gets_the_runs_real_value(live_server):
    async def scenario():
        t, sid = await teacher(live_server)
        kids = [await student(live_server, sid) for _ in range(3)]
        # A run the teacher stepped and reset first (a reset pauses: the poll must still watch).
        await send(t, {"type": "control", "action": "step", "count": 2})
        await next_of(t, lambda m: m["type"] == "status" and m["step"] == 2, "step 2")
        await send(t, {"type": "control", "action": "reset"})
        await next_of(t, lambda m: m["type"] == "status" and m["step"] == 0, "the reset")
        q = {"metric": "loss", "step": 6}
        await send(t, {"type": "poll", "question": "Loss at step 6?", "numeric": q})
        await state_where(t, lambda m: m["open"] and m["metric"] == "loss" and m["step"] == 6)
        for kid, guess in zip(kids, (0.1, 0.25, 2.0), strict=True):
            await send(kid, {"type": "vote", "value": guess, "voter": voter_id()})
        hist = await state_where(t, lambda m: m["voters"] == 3, "three guesses")
        assert sum(hist["counts"]) == 3 and len(hist["edges"]) == len(hist["counts"]) + 1
        assert hist["edges"][0] <= 0.1 and hist["edges"][-1] >= 2.0 and "truth" not in hist
        await send(t, {"type": "control", "action": "step", "count": 10})
        scalars = {}

        def seen(m):  # the teacher's own scalars, to compare the truth with
            if m["type"] == "scalars":
                scalars[m["step"]] = m["values"]
            elif m["type"] == "history":
                for i, s in enumerate(m["steps"]):
                    scalars[s] = {k: v[i] for k, v in m["values"].items()}
            return m["type"] == "poll_state" and "truth" in m

        done = await next_of(t, seen, "the truth")
        assert not done["open"] and done["voters"] == 3
        if 6 not in scalars:
            await next_of(t, lambda m: seen(m) or 6 in scalars, "step 6's scalars")
        assert done["truth"] == pytest.approx(scalars[6]["loss"])
        assert done["edges"][0] <= done["truth"] <= done["edges"][-1]
        # Asking about a step the run has passed is refused (reset first).
        await send(t, {"type": "poll", "question": "?", "numeric": q})
        assert (await error_of(t))["key"] == "poll.err_past"
        for ws in (t, *kids):
            await ws.close()

    run_async(scenario())


def test_two_hundred_students_are_all_counted(live_server):
    """A lecture hall: 200 viewers vote at once; the counts hold every one (no timing)."""

    async def scenario():
        t, sid = await teacher(live_server)
        kids = await asyncio.gather(*(student(live_server, sid) for _ in range(200)))
        await send(t, ASK)
        await asyncio.gather(*(state_where(k, lambda m: m["open"]) for k in kids))
        await asyncio.gather(
            *(
                send(k, {"type": "vote", "choice": i % 3, "voter": voter_id()})
                for i, k in enumerate(kids)
            )
        )
        done = await state_where(t, lambda m: m["voters"] == 200, "200 voters")
        assert done["counts"] == [67, 67, 66]
        # Every student's screen reaches the same counts, from a few coalesced messages.
        await asyncio.gather(*(state_where(k, lambda m: m["voters"] == 200) for k in kids))
        await asyncio.gather(*(k.close() for k in kids))
        await t.close()

    run_async(scenario())
