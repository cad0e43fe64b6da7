"""The fuzz scenario's websocket client: dial, open a session, read everything it is sent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import websockets

LAB = "linear-regression"
TIMEOUT_S = 60.0


class Reader:
    """Reads a connection continuously (so the fuzzer is never a slow client itself)."""

    def __init__(self, ws):
        self.ws = ws
        self.errors: dict[str, int] = {}
        self.answered: set[int] = set()
        self.events: dict[int, asyncio.Event] = {}
        self.step = 0  # the session's latest step, from scalars, history and status
        self.statuses: list[dict[str, Any]] = []
        self.closed: str | None = None
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            async for raw in self.ws:
                if isinstance(raw, bytes):
                    continue
                msg = json.loads(raw)
                if msg["type"] == "status":
                    self.statuses.append(msg)
                if msg["type"] in ("status", "scalars"):
                    self.step = msg["step"]
                elif msg["type"] == "history" and msg["steps"]:
                    self.step = msg["steps"][-1]
                if msg["type"] != "error":
                    continue
                self.errors[msg["code"]] = self.errors.get(msg["code"], 0) + 1
                text = msg["message"]
                if "'probe-" in text:
                    n = int(text.split("'probe-", 1)[1].split("'", 1)[0])
                    self.answered.add(n)
                    self.events.setdefault(n, asyncio.Event()).set()
        except websockets.ConnectionClosed as exc:
            self.closed = repr(exc)

    async def probe(self, n: int) -> bool:
        event = self.events.setdefault(n, asyncio.Event())
        await self.ws.send(json.dumps({"type": f"probe-{n}"}))
        try:
            await asyncio.wait_for(event.wait(), TIMEOUT_S)
        except TimeoutError:
            return False
        return True


async def dial(url: str):
    return await websockets.connect(url, max_size=None, compression=None, ping_interval=None)


async def open_session(ws, params: dict | None = None) -> dict[str, Any]:
    await ws.send(json.dumps({"type": "open", "lab": LAB, "params": params or {}}))
    async with asyncio.timeout(TIMEOUT_S):
        while True:
            raw = await ws.recv()
            if isinstance(raw, str) and json.loads(raw)["type"] == "ready":
                return json.loads(raw)
