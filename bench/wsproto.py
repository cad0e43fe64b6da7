"""Protocol v1 from the client side, for the bench's websocket clients (no torch here)."""

from __future__ import annotations

import asyncio
import json
import secrets
import struct
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

OPEN_TIMEOUT = 60.0  # a session's first frame (the lab is built and evaluated first)


def header(buf: bytes) -> dict[str, Any]:
    """The JSON header of a binary frame (the payload is not decoded)."""
    (n,) = struct.unpack_from("<I", buf, 0)
    return json.loads(buf[4 : 4 + n])


async def dial(url: str) -> ClientConnection:
    # No compression: the server turns it off too (DESIGN.md, "Performance notes").
    return await connect(
        url, compression=None, max_size=None, open_timeout=30, close_timeout=1, ping_interval=None
    )


async def send(ws: ClientConnection, msg: dict[str, Any]) -> None:
    await ws.send(json.dumps(msg))


async def recv(ws: ClientConnection, timeout: float) -> tuple[float, dict[str, Any], bytes | None]:
    """(receipt time, message, raw bytes for a frame); a frame's message is its header."""
    raw = await asyncio.wait_for(ws.recv(), timeout)
    t = time.time()
    if isinstance(raw, bytes):
        return t, header(raw), raw
    return t, json.loads(raw), None


async def until(ws: ClientConnection, pred, timeout: float) -> tuple[float, dict[str, Any]]:
    """Receive until pred(msg, is_frame); an `error` message raises."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the expected message did not come")
        t, msg, raw = await recv(ws, left)
        is_frame = raw is not None
        if not is_frame and msg.get("type") == "error":
            raise RuntimeError(f"server error: {msg}")
        if pred(msg, is_frame):
            return t, msg


async def open_lab(ws: ClientConnection, lab: str, params: dict | None = None) -> dict[str, Any]:
    """Open a session and wait for its step-0 frame; returns `ready`."""
    await send(ws, {"type": "open", "lab": lab, "params": params or {}, "seed": 0})
    _, ready = await until(ws, lambda m, f: not f and m["type"] == "ready", OPEN_TIMEOUT)
    await until(ws, lambda m, f: f, OPEN_TIMEOUT)
    return ready


def new_session_id() -> str:
    return secrets.token_urlsafe(16)  # as a page makes one


async def open_routed(url: str, lab: str, params: dict | None = None):
    """As a page opens a session behind a proxy: a new id in the URL (`/ws?session=ID`, so
    nginx routes it to the replica that will run it), then `open`; returns (ws, ready)."""
    ws = await dial(f"{url}?session={new_session_id()}")
    await until_error_or(ws, "not_found")  # the id is free
    return ws, await open_lab(ws, lab, params)


async def join_routed(url: str, session: str):
    """A viewer of `session` through a proxy: the id in the URL joins it on connect."""
    ws = await dial(f"{url}?session={session}")
    _, ready = await until(ws, lambda m, f: not f and m["type"] == "ready", OPEN_TIMEOUT)
    return ws, ready


async def until_error_or(ws: ClientConnection, code: str) -> None:
    """The `error` with this code (expected, e.g. a fresh id's not_found)."""
    deadline = time.monotonic() + OPEN_TIMEOUT
    while True:
        _, msg, raw = await recv(ws, max(0.1, deadline - time.monotonic()))
        if raw is None and msg["type"] == "error":
            if msg["code"] == code:
                return
            raise RuntimeError(f"server refused: {msg}")


async def join(ws: ClientConnection, session: str) -> dict[str, Any]:
    await send(ws, {"type": "join", "session": session})
    _, ready = await until(ws, lambda m, f: not f and m["type"] == "ready", OPEN_TIMEOUT)
    return ready


def is_state(*states: str):
    return lambda m, f: not f and m.get("type") == "status" and m.get("state") in states
