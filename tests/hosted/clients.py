"""What the hosted tests drive a topology with: a real websocket client, a page's session
open and reconnect, and the topology itself (redis-server, PostgreSQL, two replicas, nginx)."""

from __future__ import annotations

import contextlib
import json
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

from websockets.sync.client import connect

from backend import wire
from tests.hosted import postgres, servers

LAB = "linear-regression"
DEADLINE_S = 30.0
DRIVER = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"


class Ws:
    """A real websocket client (the `websockets` package) speaking protocol v1."""

    def __init__(self, base: str, session: str | None = None, token: str | None = None):
        q = f"?session={session}" if session else ""
        q += f"&token={token}" if token else ""
        url = base.replace("http://", "ws://") + "/ws" + q
        self._cm = connect(url, open_timeout=DEADLINE_S, max_size=None, ping_interval=None)
        self.ws = self._cm.__enter__()

    def send(self, msg: dict[str, Any]) -> None:
        self.ws.send(json.dumps(msg))

    def recv(self, seconds: float = DEADLINE_S) -> dict[str, Any]:
        data = self.ws.recv(timeout=seconds)
        if isinstance(data, str):
            return json.loads(data)
        header, _ = wire.decode(data)
        return {"type": "frame", "step": header["step"]}

    def until(self, pred: Callable[[dict], bool], seconds: float = DEADLINE_S) -> dict:
        end = time.monotonic() + seconds
        seen = []
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"never got it; got {[m['type'] for m in seen[-10:]]}")
            msg = self.recv(left)
            if pred(msg):
                return msg
            seen.append(msg)

    def close(self) -> None:
        self._cm.__exit__(None, None, None)


def reconnect(base: str, session: str, token: str) -> Ws:
    """A page's reconnect with its backoff: right after a replica dies nginx may answer 502
    once or twice before it marks the dead one failed and goes to the survivor."""
    from websockets.exceptions import InvalidStatus

    deadline = time.monotonic() + DEADLINE_S
    while True:
        try:
            return Ws(base, session, token)
        except InvalidStatus:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def new_id() -> str:
    return secrets.token_urlsafe(16)  # as a page makes one


def open_session(base: str, lab: str = LAB) -> tuple[Ws, dict]:
    """A page's new session through `base`: its id in the URL, then `open`."""
    sid = new_id()
    ws = Ws(base, sid)
    ws.until(lambda m: m["type"] == "error" and m["code"] == "not_found")  # the id is free
    ws.send({"type": "open", "lab": lab, "params": {}, "seed": 0})
    ready = ws.until(lambda m: m["type"] in ("ready", "error"))
    assert ready["type"] == "ready" and ready["session"] == sid, ready
    return ws, ready


def step(ws: Ws, count: int) -> int:
    ws.send({"type": "control", "action": "step", "count": count})
    status = ws.until(lambda m: m["type"] == "status" and m["state"] == "paused" and m["step"])
    return status["step"]


def get(url: str, headers: dict | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=DEADLINE_S) as r:
            body = r.read()
            status = r.status
    except urllib.error.HTTPError as exc:
        body, status = exc.read(), exc.code
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode()


def owner_of(topology: dict[str, Any], session: str):
    """The replica that runs `session`: the one whose Redis lease names it. The lease is
    written in the background as the session opens, so `ready` may come first: wait for it."""
    import redis

    db = redis.Redis.from_url(topology["redis"].url)
    deadline = time.monotonic() + 10.0
    while (name := db.get(f"shaomai:owner:{session}")) is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return next(r for r in topology["replicas"] if r.name.encode() == name)


@contextlib.contextmanager
def topology(**env: str) -> Iterator[dict[str, Any]]:
    """Redis, the shared PostgreSQL cluster, replicas r1 and r2 (with `env`) and nginx in
    front; on the way out, a traceback in a replica's log fails the module."""
    servers.require()
    pg = postgres.shared()
    db_url = pg.url()  # one database that every replica saves runs into
    replicas = []
    try:
        with servers.behind_nginx(db_url, **env) as (rd, replicas, nginx):
            yield {"redis": rd, "pg": pg, "replicas": replicas, "nginx": nginx}
    finally:
        for r in replicas:
            text = r.log.read_text()  # (a killed replica's first log ends without one)
            assert "Traceback" not in text, f"{r.name} log has a traceback:\n{text[-4000:]}"
