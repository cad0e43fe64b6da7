"""Frames written straight to viewers' sockets (backend/send_now.py, backend/ws_direct.py).

A class watching the same session on a real uvicorn (in this process, so its counters can be
read): a viewer of the whole frame, a phone subscribed to one head, and a viewer that never
subscribed. The teacher presses `step`; each published frame that nothing waited for goes
out from the publishing callback, framed once. What each viewer receives must be exactly
what the sender tasks send with the direct path off: the same frame bytes in the same order,
every step's scalars once, never a frame before the rows of the steps before it, and the
texts (rows, statuses) in the same order among the frames.
"""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

from backend import metrics, wire
from backend.config import Settings
from backend.ws_direct import frame_bytes, framed
from tests.backend.test_polls import next_of, run_async, send
from tests.conftest import serve_in_thread

STEPS = 8
VIEWERS = {
    "whole": {"type": "subscribe", "tensors": "*", "scalars": "either"},
    "phone": {"type": "subscribe", "tensors": "*", "layer": 0, "head": 0, "scalars": "either"},
    "plain": None,  # an old client: every step as a row, whole frames
}


async def _class(port: int) -> dict[str, list]:
    url = f"ws://127.0.0.1:{port}/ws"
    teacher = await websockets.connect(url, max_size=None)
    await send(teacher, {"type": "open", "lab": "gpt", "params": {}, "seed": 0})
    sid = (await next_of(teacher, lambda m: m["type"] == "ready", "ready"))["session"]
    got: dict[str, list] = {}
    viewers = {}
    for name, sub in VIEWERS.items():
        ws = viewers[name] = await websockets.connect(f"{url}?session={sid}", max_size=None)
        await next_of(ws, lambda m: m["type"] == "ready", "ready")
        if sub:
            await send(ws, sub)
            # the subscription's first frame (the latest, cut anew) marks it applied
            while not isinstance(await asyncio.wait_for(ws.recv(), 30), bytes):
                pass
        got[name] = []
    for _ in range(STEPS):  # pressed one by one: each step publishes its frame
        await send(teacher, {"type": "control", "action": "step", "count": 1})
        await next_of(teacher, lambda m: m["type"] == "status" and m["state"] == "paused", "end")

    async def read(name: str, ws) -> None:
        while True:
            raw = await asyncio.wait_for(ws.recv(), 30)
            got[name].append(raw)
            if isinstance(raw, bytes) and wire.frame_step(raw) == STEPS:
                return

    await asyncio.gather(*(read(n, ws) for n, ws in viewers.items()))
    for ws in [teacher, *viewers.values()]:
        await ws.close()
    return got


def _watch(tmp_path, direct: bool) -> tuple[dict[str, list], int]:
    settings = Settings(data_dir=tmp_path / str(direct), direct_writes=direct)
    out: dict = {}
    with serve_in_thread(settings) as (_app, port):
        before = metrics.totals()["frames_direct"]

        async def go():
            out.update(await _class(port))

        run_async(go())
        return out, metrics.totals()["frames_direct"] - before


def _after_joins(messages: list) -> list:
    """From the first frame of a pressed step on: frames as their step, texts as
    (type, state, step) (a status's connection count changes while viewers join)."""
    out = []
    for raw in messages:
        if isinstance(raw, bytes):
            out.append(("frame", wire.frame_step(raw)))
        else:
            m = json.loads(raw)
            out.append((m["type"], m.get("state"), m.get("step"), m.get("steps")))
    first = next(i for i, m in enumerate(out) if m == ("frame", 1))
    return out[first:]


def _steps_in_order(messages: list) -> list[int]:
    """The steps each message brings, in arrival order (rows and rowed frames)."""
    out = []
    for raw in messages:
        if isinstance(raw, str):
            m = json.loads(raw)
            if m["type"] == "scalars":
                out.append(m["step"])
            elif m["type"] == "history":
                out += m["steps"]
        else:
            header, _ = wire.decode(raw)
            out.append(("frame", header["step"]))
    return out


def test_viewers_get_the_same_bytes_written_straight_as_through_their_senders(tmp_path):
    direct, n_direct = _watch(tmp_path, True)
    queued, n_queued = _watch(tmp_path, False)
    assert n_queued == 0
    # Each viewer's frames of the steps pressed went out directly (the join's are queued).
    assert n_direct >= len(VIEWERS) * STEPS
    for name in VIEWERS:
        frames = [m for m in direct[name] if isinstance(m, bytes)]
        assert frames == [m for m in queued[name] if isinstance(m, bytes)], name
        assert [wire.frame_step(f) for f in frames][-STEPS:] == list(range(1, STEPS + 1))
        # Texts too (rows, and each step's statuses: a reply or a status written at once
        # when nothing waits), in the same order among the frames.
        assert _after_joins(direct[name]) == _after_joins(queued[name]), name
    # The phone's frames are its head's cut, not the whole frame.
    assert len(direct["phone"][-1]) < len(direct["whole"][-1])
    # The old client: a step's row always before that step's frame.
    seen = _steps_in_order(direct["plain"])
    for step in range(1, STEPS + 1):
        assert seen.index(step) < seen.index(("frame", step)), seen


@pytest.mark.parametrize("size", [0, 125, 126, 65535, 65536, 200_000])
def test_a_frame_made_once_is_what_a_websocket_parser_reads(size):
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    reader = StreamReader()
    reader.feed_data(frame_bytes(payload, text=False))
    parser = Frame.parse(reader.read_exact, mask=False)
    try:
        next(parser)
        raise AssertionError("the parser wanted more bytes than the frame has")
    except StopIteration as done:
        frame = done.value
    assert frame.opcode is Opcode.BINARY and frame.fin and frame.data == payload


def test_one_message_is_framed_once_for_every_viewer():
    text = json.dumps({"type": "scalars", "step": 3})
    assert framed(text) is framed(text)
    assert framed(text)[0] == 0x81 and framed(text)[2:] == text.encode()


def test_a_socket_pushing_back_gets_no_frame_until_it_drains(tmp_path):
    # The transport says "pause" (its buffer is over the high-water mark) while the class
    # plays: nothing more is written to that socket, the newest frame waits in the Outbox,
    # and the sender sends it once the transport says "resume". No buffer grows meanwhile.
    with serve_in_thread(Settings(data_dir=tmp_path)) as (app, port):

        async def go():
            url = f"ws://127.0.0.1:{port}/ws"
            teacher = await websockets.connect(url, max_size=None)
            await send(teacher, {"type": "open", "lab": "gpt", "params": {}, "seed": 0})
            sid = (await next_of(teacher, lambda m: m["type"] == "ready", "ready"))["session"]
            viewer = await websockets.connect(f"{url}?session={sid}", max_size=None)
            await send(viewer, VIEWERS["whole"])
            await send(teacher, {"type": "control", "action": "play", "speed": 20})
            while True:  # past the `playing` status: frames only from here
                raw = await asyncio.wait_for(viewer.recv(), 30)
                if isinstance(raw, bytes) and wire.frame_step(raw) >= 3:
                    break
            conn = next(c for c in app.state.sessions.connections if c.role == "viewer")
            proto, box, s = conn.box.send_now.write.__self__, conn.box, conn.session

            async def on_loop(fn):
                return fn()

            def run(fn):  # on the server's loop, between its callbacks
                fut = asyncio.run_coroutine_threadsafe(on_loop(fn), s._loop)
                return fut.result(30)

            sent, at = run(lambda: (proto.pause_writing(), (box.sent_bytes, s.step))[1])
            while run(lambda: s.step) < at + 10:  # ten more steps played
                await asyncio.wait_for(teacher.recv(), 30)
            assert run(lambda: (box.sent_bytes, box.n_frames >= 1)) == (sent, True)
            run(proto.resume_writing)
            while True:  # the newest frame, sent by the sender
                raw = await asyncio.wait_for(viewer.recv(), 30)
                if isinstance(raw, bytes) and wire.frame_step(raw) >= at + 10:
                    break
            await send(teacher, {"type": "control", "action": "pause"})
            for ws in (teacher, viewer):
                await ws.close()

        run_async(go())


def test_a_text_waits_behind_a_frame_held_by_the_viewers_rate(tmp_path):
    # A viewer at most one frame every 2 s: the step's frame waits in its Outbox for its
    # turn, and the teacher's `view` that follows must not overtake it.
    with serve_in_thread(Settings(data_dir=tmp_path)) as (_app, port):

        async def go():
            url = f"ws://127.0.0.1:{port}/ws"
            teacher = await websockets.connect(url, max_size=None)
            await send(teacher, {"type": "open", "lab": "gpt", "params": {}, "seed": 0})
            sid = (await next_of(teacher, lambda m: m["type"] == "ready", "ready"))["session"]
            viewer = await websockets.connect(f"{url}?session={sid}", max_size=None)
            await send(viewer, {**VIEWERS["whole"], "max_fps": 0.5})
            while not isinstance(await asyncio.wait_for(viewer.recv(), 30), bytes):
                pass  # the subscription's frame: the next may go 2 s after it
            await send(teacher, {"type": "control", "action": "step", "count": 1})
            await send(teacher, {"type": "view", "state": {"hover": 5}})
            seen = []
            while not seen or seen[-1] != ("view", 5):
                raw = await asyncio.wait_for(viewer.recv(), 30)
                if isinstance(raw, bytes):
                    seen.append(("frame", wire.frame_step(raw)))
                elif (m := json.loads(raw))["type"] == "view":
                    seen.append(("view", m["state"].get("hover")))
            assert seen == [("frame", 1), ("view", 5)]
            for ws in (teacher, viewer):
                await ws.close()

        run_async(go())
