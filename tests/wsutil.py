"""Helpers for whole websocket conversations with the in-process app (TestClient).

Every wait has a deadline (DEADLINE_S unless told): a server that goes quiet fails the test
at once with what was awaited, instead of hanging it until pytest-timeout's 300 s.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio

from backend import wire

# Far above any honest answer on a loaded 2-core machine, far below pytest-timeout.
DEADLINE_S = 30.0


class NoAnswer(AssertionError):
    """The server sent nothing within the deadline."""


def send(ws, msg: dict[str, Any]) -> None:
    ws.send_text(json.dumps(msg))


def receive_within(ws, seconds: float = DEADLINE_S, awaiting: str = "a message") -> dict[str, Any]:
    """The next raw ASGI message of a TestClient websocket, or NoAnswer after `seconds`."""

    async def receive():
        with anyio.fail_after(max(0.01, seconds)):
            return await ws._send_rx.receive()  # what ws.receive() awaits, with no deadline

    try:
        return ws.portal.call(receive)
    except TimeoutError:
        raise NoAnswer(f"waited {seconds:.0f} s for {awaiting}; the server sent nothing") from None


def recv(ws, seconds: float = DEADLINE_S, awaiting: str = "a message") -> dict[str, Any]:
    """Next message: JSON dict, or {"type": "frame", "header": ..., "tensors": {...}} for binary."""
    m = receive_within(ws, seconds, awaiting)
    if m.get("text") is not None:
        return json.loads(m["text"])
    if m.get("bytes") is not None:
        header, tensors = wire.decode(m["bytes"])
        return {"type": "frame", "header": header, "tensors": tensors, "step": header["step"]}
    raise AssertionError(f"connection closed while awaiting {awaiting}: {m}")


def _describe(pred: Callable) -> str:
    """A predicate's source (a lambda's line), to name what a failed wait was for."""
    try:
        return " ".join(inspect.getsource(pred).split())[:160]
    except (OSError, TypeError):
        return repr(pred)


def _recent(seen: list[dict[str, Any]]) -> str:
    return f"{len(seen)} other messages, the last: {[m['type'] for m in seen[-12:]]}"


def recv_until(
    ws,
    pred: Callable[[dict[str, Any]], bool],
    limit: int = 10_000,
    seconds: float = DEADLINE_S,
    awaiting: str | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Receive until pred(msg) is true; returns (that message, everything received before it).

    `seconds` bounds the whole wait; `awaiting` names it in the failure (default: pred's source).
    """
    what = awaiting or _describe(pred)
    end, seen = time.monotonic() + seconds, []
    for _ in range(limit):
        try:
            msg = recv(ws, end - time.monotonic(), what)
        except NoAnswer:
            raise NoAnswer(f"waited {seconds:.0f} s for {what}; got {_recent(seen)}") from None
        if pred(msg):
            return msg, seen
        seen.append(msg)
    raise AssertionError(f"never received {what}; got {_recent(seen)}")


def open_lab(ws, lab: str, params: dict | None = None, seed: int = 0) -> dict[str, Any]:
    """Open a session; returns `ready` after the step-0 frame has arrived."""
    send(ws, {"type": "open", "lab": lab, "params": params or {}, "seed": seed})
    ready, _ = recv_until(
        ws, lambda m: m["type"] in ("ready", "error"), awaiting=f"`ready` for lab {lab!r}"
    )
    assert ready["type"] == "ready", ready
    recv_until(ws, lambda m: m["type"] == "frame", awaiting=f"the step-0 frame of {lab!r}")
    return ready


def step(ws, count: int = 1, seconds: float = DEADLINE_S) -> list[dict[str, Any]]:
    """Step and collect every message up to the `status` that closes the command.

    The last step of a `step` command always sends a frame, then a status: so the closing
    status is the first one that follows a frame (earlier statuses are about connections).
    """
    send(ws, {"type": "control", "action": "step", "count": count})
    what = f"the status closing `step` count={count}"
    end, seen = time.monotonic() + seconds, []
    framed = False
    while True:
        try:
            msg = recv(ws, end - time.monotonic(), what)
        except NoAnswer:
            raise NoAnswer(f"waited {seconds:.0f} s for {what}; got {_recent(seen)}") from None
        seen.append(msg)
        if msg["type"] == "error":
            raise AssertionError(f"step refused: {msg}")
        framed = framed or msg["type"] == "frame"
        if framed and msg["type"] == "status" and msg["state"] != "playing":
            return seen


def frames(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["type"] == "frame"]


def scalar_rows(messages: list[dict[str, Any]]) -> dict[int, dict[str, float]]:
    """{step: values} from every scalars/history message."""
    out: dict[int, dict[str, float]] = {}
    for m in messages:
        if m["type"] == "scalars":
            out[m["step"]] = m["values"]
        elif m["type"] == "history":
            for i, s in enumerate(m["steps"]):
                out[s] = {k: v[i] for k, v in m["values"].items() if v[i] is not None}
    return out


@contextmanager
def joined_viewers(client, session: str, n: int) -> Iterator[list]:
    """n viewers of a TestClient app joined to `session`, each past its `ready`; closed
    when the block ends."""
    viewers = [client.websocket_connect("/ws") for _ in range(n)]
    entered = []
    try:
        for v in viewers:
            v.__enter__()
            entered.append(v)
            v.send_json({"type": "join", "session": session})
        for v in viewers:
            recv_until(v, lambda m: m["type"] == "ready")
        yield viewers
    finally:
        for v in entered:
            v.__exit__(None, None, None)
