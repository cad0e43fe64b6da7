"""The `readers` role of bench/clients.py: n readers of an article open a lab at once.

On `go` every reader opens its own session through the proxy (a new id in the URL, as a
page does), takes one step and waits for its frame: the embedded lab is on screen. It
records seconds from `go` to that frame, or the error's code (`busy` is an answer, a
timeout or a dropped connection is not). The sessions stay open until `stop`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench import wsproto as w


async def _one(url: str, lab: str, t0: float) -> tuple[Any, float | str]:
    try:
        ws, ready = await w.open_routed(url, lab)
    except RuntimeError as refused:  # the server's own error message
        text = str(refused)
        return None, "busy" if "'busy'" in text else "refused"
    except Exception as e:  # noqa: BLE001 (any failure of the socket is counted by kind)
        return None, type(e).__name__
    try:
        await w.send(ws, {"type": "control", "action": "step", "count": 1})
        await w.until(ws, lambda m, f: f and m.get("step", 0) >= 1, w.OPEN_TIMEOUT)
    except Exception as e:  # noqa: BLE001
        return ws, type(e).__name__
    return ws, time.monotonic() - t0


async def readers(spec: dict[str, Any], lines) -> dict[str, Any]:
    from bench.clients import say

    say({"ready": True})
    await lines.next()  # go
    t0 = time.monotonic()
    done = await asyncio.gather(*(_one(spec["url"], spec["lab"], t0) for _ in range(spec["n"])))
    say({"opened": True})
    await lines.next()  # stop
    await asyncio.gather(*(ws.close() for ws, _ in done if ws is not None), return_exceptions=True)
    return {
        "seconds": [r for _, r in done if isinstance(r, float)],
        "errors": [r for _, r in done if isinstance(r, str)],
    }
