"""`python -m bench.clients ROLE SPEC_JSON`: real websocket clients in their own process.

The parent (bench/procs.py) talks to this process by lines: it prints one JSON line when it
is ready, then obeys `go`, `mark` and `stop` lines on stdin, and prints its result as the
last JSON line. Every wait is bounded. Roles:

- play:      per round, a fresh session plays N steps; seconds from `play` to `done`.
- latency:   one session; `step` one at a time; seconds until that step's frame arrives.
- viewers:   n viewers join a session (or one driver opens and plays it); per client, every
             frame's step, server time (`t`, SHAOMAI_FRAME_CLOCK) and time of receipt.
- drivers:   n sessions play at once; each one's step at `mark` and at `stop`.
- raw:       n clients of the bare endpoint (bench/rawserver.py); messages and bytes a second.
- echo:      round trips of a small message through the bare endpoint (the loopback floor).
- readers:   n readers each open their own session at once and wait for its first step (bench/reader_client.py).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from bench import reader_client
from bench import wsproto as w

LINE_TIMEOUT = 600.0  # the parent always answers long before this


class Lines:
    """The parent's commands, read from stdin without blocking the event loop."""

    def __init__(self) -> None:
        self.reader = asyncio.StreamReader()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        protocol = asyncio.StreamReaderProtocol(self.reader)
        await loop.connect_read_pipe(lambda: protocol, sys.stdin)

    async def next(self) -> str:
        line = await asyncio.wait_for(self.reader.readline(), LINE_TIMEOUT)
        if not line:
            return "stop"  # the parent went away
        return line.decode().strip()


def say(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


# -- play: the overhead scenario --------------------------------------------------------
async def play(spec: dict[str, Any], lines: Lines) -> dict[str, Any]:
    say({"ready": True})
    rounds = []
    while await lines.next() == "go":
        ws = await w.dial(spec["url"])
        try:
            ready = await w.open_lab(ws, spec["lab"], spec["params"])
            frames = nbytes = 0
            t0 = time.perf_counter()
            await w.send(ws, {"type": "control", "action": "play"})
            deadline = time.monotonic() + spec["timeout"]
            while True:
                _, msg, raw = await w.recv(ws, max(0.1, deadline - time.monotonic()))
                if raw is not None:
                    frames += 1
                    nbytes += len(raw)
                elif msg["type"] == "status" and msg["state"] in ("done", "diverged", "error"):
                    break
            elapsed = time.perf_counter() - t0
            rounds.append(
                {
                    "steps": msg["step"] - ready["step"],
                    "state": msg["state"],
                    "seconds": elapsed,
                    "frames": frames,
                    "bytes": nbytes,
                }
            )
        finally:
            await ws.close()
        say({"round": rounds[-1]})
    return {"rounds": rounds}


# -- latency: step, then that step's frame ----------------------------------------------
async def latency(spec: dict[str, Any], lines: Lines) -> dict[str, Any]:
    ws = await w.dial(spec["url"])
    ready = await w.open_lab(ws, spec["lab"], spec["params"])
    say({"ready": True, "session": ready["session"]})
    await lines.next()  # go
    step = ready["step"]
    out = []
    for _ in range(spec["n"]):
        step += 1
        t_send = time.time()
        t0 = time.perf_counter()
        await w.send(ws, {"type": "control", "action": "step", "count": 1})
        want = step
        t_recv, hdr = await w.until(
            ws, lambda m, f, s=want: f and m["step"] == s and not m.get("replay"), 60
        )
        seconds = time.perf_counter() - t0
        # The command's closing status, so the next step starts from a quiet connection.
        await w.until(ws, w.is_state("paused", "done"), 60)
        out.append(
            {
                "step": want,
                "seconds": seconds,
                "to_encoded": hdr["t"] - t_send if "t" in hdr else None,
                "delivery": t_recv - hdr["t"] if "t" in hdr else None,
                # The gpt lab evaluates on its held-out set every 50 steps, and once when the
                # training batch says solved (+val_loss).
                "evaluated": "val_loss" in hdr.get("scalars", {}),
            }
        )
        await asyncio.sleep(spec["gap_s"])
    await ws.close()
    return {"steps": out}


# -- viewers: fan-out ---------------------------------------------------------------------
async def viewers(spec: dict[str, Any], lines: Lines) -> dict[str, Any]:
    """n viewers join spec["session"]; or, with spec["lab"], one driver opens a session,
    plays it at spec["speed"] steps/s on `go` and pauses on `stop`."""
    driving = "lab" in spec
    n = 1 if driving else spec["n"]
    if spec.get("routed"):  # behind a proxy: the session id travels in the URL
        if driving:
            ws, ready = await w.open_routed(spec["url"], spec["lab"], spec["params"])
            conns, session = [ws], ready["session"]
        else:
            session = spec["session"]
            joined = await asyncio.gather(*(w.join_routed(spec["url"], session) for _ in range(n)))
            conns = [ws for ws, _ in joined]
    else:
        conns = await asyncio.gather(*(w.dial(spec["url"]) for _ in range(n)))
        if driving:
            session = (await w.open_lab(conns[0], spec["lab"], spec["params"]))["session"]
        else:
            session = spec["session"]
            await asyncio.gather(*(w.join(ws, session) for ws in conns))
    records: list[list[tuple[int, float, float]]] = [[] for _ in range(n)]
    texts = [0] * n
    window = {"open": False}

    async def listen(i: int, ws) -> None:
        rec = records[i]
        try:
            async for raw in ws:
                if isinstance(raw, bytes):
                    t = time.time()
                    if window["open"]:
                        h = w.header(raw)
                        rec.append((h["step"], h.get("t", float("nan")), t))
                elif window["open"]:
                    texts[i] += 1
        except Exception:  # a closed socket ends this viewer's listening
            return

    tasks = [asyncio.create_task(listen(i, ws)) for i, ws in enumerate(conns)]
    say({"ready": True, "session": session})
    await lines.next()  # go
    window["open"] = True
    window["t0"] = time.time()
    if driving:
        await w.send(conns[0], {"type": "control", "action": "play", "speed": spec["speed"]})
    await lines.next()  # stop
    window["open"] = False
    t_end = time.time()
    if driving:
        await w.send(conns[0], {"type": "control", "action": "pause"})
    for t in tasks:
        t.cancel()
    await asyncio.gather(*(ws.close() for ws in conns), return_exceptions=True)
    return {"t0": window["t0"], "t_end": t_end, "frames": records, "texts": texts}


# -- echo: the loopback floor ---------------------------------------------------------------
async def echo(spec: dict[str, Any], lines: Lines) -> dict[str, Any]:
    """Round trips of a small text through the bare endpoint, one at a time."""
    ws = await w.dial(spec["url"])
    say({"ready": True})
    await lines.next()  # go
    out = []
    for i in range(spec["n"]):
        t0 = time.perf_counter()
        await ws.send(f'{{"ping":{i}}}')
        await asyncio.wait_for(ws.recv(), 30)
        out.append(time.perf_counter() - t0)
        await asyncio.sleep(spec["gap_s"])
    await ws.close()
    return {"seconds": out}


# -- drivers: many sessions at once -------------------------------------------------------
async def drivers(spec: dict[str, Any], lines: Lines) -> dict[str, Any]:
    n = spec["n"]
    conns = []
    for _ in range(n):  # one at a time: the server builds each lab on its own worker
        if spec.get("routed"):
            ws, _ = await w.open_routed(spec["url"], spec["lab"], spec["params"])
        else:
            ws = await w.dial(spec["url"])
            await w.open_lab(ws, spec["lab"], spec["params"])
        conns.append(ws)
    latest = [(0, time.time())] * n
    frames = [0] * n

    async def listen(i: int, ws) -> None:
        try:
            async for raw in ws:
                if isinstance(raw, bytes):
                    frames[i] += 1
                    continue
                msg = json.loads(raw)
                step = msg.get("steps", [None])[-1] if msg["type"] == "history" else msg.get("step")
                if msg["type"] in ("scalars", "history") and step is not None:
                    latest[i] = (step, time.time())
        except Exception:
            return

    tasks = [asyncio.create_task(listen(i, ws)) for i, ws in enumerate(conns)]
    say({"ready": True})
    marks = []
    while (cmd := await lines.next()) != "stop":
        if cmd == "go":
            await asyncio.gather(
                *(w.send(ws, {"type": "control", "action": "play"}) for ws in conns)
            )
        elif cmd == "mark":
            marks.append(list(latest))
            say({"marked": len(marks)})
    await asyncio.gather(*(w.send(ws, {"type": "control", "action": "pause"}) for ws in conns))
    for t in tasks:
        t.cancel()
    await asyncio.gather(*(ws.close() for ws in conns), return_exceptions=True)
    return {"marks": marks, "frames": frames}


# -- raw: the bare endpoint ---------------------------------------------------------------
async def raw(spec: dict[str, Any], lines: Lines) -> dict[str, Any]:
    n = spec["n"]
    conns = await asyncio.gather(*(w.dial(spec["url"]) for _ in range(n)))
    counts = [[0, 0] for _ in range(n)]
    window = {"open": False}

    async def listen(i: int, ws) -> None:
        c = counts[i]
        try:
            async for msg in ws:
                if window["open"]:
                    c[0] += 1
                    c[1] += len(msg)
        except Exception:
            return

    tasks = [asyncio.create_task(listen(i, ws)) for i, ws in enumerate(conns)]
    say({"ready": True})
    await lines.next()  # go
    await asyncio.gather(*(ws.send("go") for ws in conns))
    await asyncio.sleep(0.5)  # let every stream get going before counting
    window["open"] = True
    t0 = time.perf_counter()
    await lines.next()  # stop
    window["open"] = False
    seconds = time.perf_counter() - t0
    for t in tasks:
        t.cancel()
    await asyncio.gather(*(ws.close() for ws in conns), return_exceptions=True)
    return {"seconds": seconds, "counts": counts}


ROLES = {
    "play": play,
    "latency": latency,
    "viewers": viewers,
    "drivers": drivers,
    "raw": raw,
    "echo": echo,
    "readers": reader_client.readers,  # an article's readers open a lab at once (hosted)
}


async def main(role: str, spec: dict[str, Any]) -> None:
    lines = Lines()
    await lines.start()
    say({"result": await ROLES[role](spec, lines)})


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], json.loads(sys.argv[2])))
