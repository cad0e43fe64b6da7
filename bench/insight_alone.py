"""The server's share of a lab's time to insight (bench/insight.py): the same run, no page.

On this bench Chromium and the server share the machine's cores (two here), while a
learner's browser runs on their own device; a page that draws a lot takes the cores the
lab trains on. So beside each Chromium figure the bench times the server alone: a
websocket client that draws nothing opens the lab as the page does (its defaults, seed 0),
presses play at the catalog's speed as soon as the first frame arrives, and times open →
the step at which the page saw the effect. The same seed trains the same numbers, so the
effect comes at that step here too; only the seconds differ.
"""

from __future__ import annotations

import json
import time

from websockets.sync.client import connect

from backend import wire


def seconds_to_step(
    ws_url: str, origin: str, lab_id: str, step: int, speed: int, limit: float
) -> float | None:
    """Seconds from sending `open` to the first message at or past `step` (a frame or a
    scalars row); None if not there within `limit` seconds or the run ended first."""
    with connect(ws_url, max_size=None, origin=origin, open_timeout=30) as ws:
        try:
            return _until(ws, lab_id, step, speed, limit)
        finally:  # a session left playing would train on, unwatched, beside the next lab
            ws.send(json.dumps({"type": "control", "action": "pause"}))


def _until(ws, lab_id: str, step: int, speed: int, limit: float) -> float | None:
    t0 = time.perf_counter()
    ws.send(json.dumps({"type": "open", "lab": lab_id, "params": {}, "seed": 0}))
    playing = False
    while (left := limit - (time.perf_counter() - t0)) > 0:
        try:
            msg = ws.recv(timeout=left)
        except TimeoutError:
            return None
        if isinstance(msg, bytes):
            at = wire.frame_step(msg)
            if not playing:  # the page's play button is live once a frame is drawn
                ws.send(json.dumps({"type": "control", "action": "play", "speed": speed}))
                playing = True
        else:
            m = json.loads(msg)
            kind = m.get("type")
            if kind == "status" and m["state"] in ("done", "diverged", "error"):
                return None
            steps = [m["step"]] if kind == "scalars" else m["steps"] if kind == "history" else []
            at = max(steps, default=0)
        if playing and at >= step:
            return time.perf_counter() - t0
    return None
