"""Helpers for whole websocket conversations with the in-process app (TestClient)."""

from __future__ import annotations

import json
from typing import Any

from backend import wire


def send(ws, msg: dict[str, Any]) -> None:
    ws.send_text(json.dumps(msg))


def recv(ws) -> dict[str, Any]:
    """Next message: JSON dict, or {"type": "frame", "header": ..., "tensors": {...}} for binary."""
    m = ws.receive()
    if m.get("text") is not None:
        return json.loads(m["text"])
    if m.get("bytes") is not None:
        header, tensors = wire.decode(m["bytes"])
        return {"type": "frame", "header": header, "tensors": tensors, "step": header["step"]}
    raise AssertionError(f"connection closed: {m}")


def recv_until(ws, pred, limit: int = 10_000) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Receive until pred(msg) is true; returns (that message, everything received before it)."""
    seen = []
    for _ in range(limit):
        msg = recv(ws)
        if pred(msg):
            return msg, seen
        seen.append(msg)
    raise AssertionError(f"never received the expected message; got {[m['type'] for m in seen]}")


def open_lab(ws, lab: str, params: dict | None = None, seed: int = 0) -> dict[str, Any]:
    """Open a session; returns `ready` after the step-0 frame has arrived."""
    send(ws, {"type": "open", "lab": lab, "params": params or {}, "seed": seed})
    ready, _ = recv_until(ws, lambda m: m["type"] in ("ready", "error"))
    assert ready["type"] == "ready", ready
    recv_until(ws, lambda m: m["type"] == "frame")
    return ready


def step(ws, count: int = 1) -> list[dict[str, Any]]:
    """Step and collect every message up to the `status` that closes the command.

    The last step of a `step` command always sends a frame, then a status: so the closing
    status is the first one that follows a frame (earlier statuses are about connections).
    """
    send(ws, {"type": "control", "action": "step", "count": count})
    seen: list[dict[str, Any]] = []
    framed = False
    while True:
        msg = recv(ws)
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
