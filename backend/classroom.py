"""Classroom helpers: short join codes, attempt limits per address, QR codes."""

from __future__ import annotations

import io
import secrets
import time
from collections import deque

import segno

# No look-alikes: no 0/O, 1/I/L, and no U/V pair confusion on a projector.
ALPHABET = "ABCDEFGHJKMNPQRSTWXYZ23456789"
CODE_LENGTH = 6


def new_code(taken: set[str] | dict) -> str:
    while True:
        code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
        if code not in taken:
            return code


def normalize_code(code: str) -> str:
    """Students type codes by hand: ignore case, spaces and dashes."""
    return code.upper().replace(" ", "").replace("-", "")


class AttemptLimiter:
    """At most `limit` events per `window_s` seconds per key (an IP address)."""

    def __init__(self, limit: int, window_s: float = 60.0):
        self.limit = limit
        self.window = window_s
        self.events: dict[str, deque[float]] = {}

    def allow(self, key: str) -> bool:
        now = time.monotonic()
        q = self.events.setdefault(key, deque())
        while q and now - q[0] > self.window:
            q.popleft()
        if len(q) >= self.limit:
            return False
        q.append(now)
        return True

    def prune(self) -> None:
        now = time.monotonic()
        for key in [k for k, q in self.events.items() if not q or now - q[-1] > self.window]:
            del self.events[key]


def qr_svg(text: str) -> bytes:
    """An SVG QR code, made on the server (no external service)."""
    out = io.BytesIO()
    segno.make(text, error="m").save(out, kind="svg", scale=8, border=2, dark="#000", light="#fff")
    return out.getvalue()
