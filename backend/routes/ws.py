from __future__ import annotations

import logging
import re

from fastapi import APIRouter, WebSocket

from backend import joining
from backend.connection import Connection
from backend.security import origin_allowed

log = logging.getLogger("shaomai.ws")

router = APIRouter()
_TOKEN = re.compile(r"([?&]token=)[^&\s\"]*")


class RedactToken(logging.Filter):
    """uvicorn logs every websocket upgrade with its query string: the driver's `token`
    (in the URL since ids travel there) is masked before the record is written."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any("token=" in str(a) for a in record.args):
            record.args = tuple(
                _TOKEN.sub(r"\1***", a) if isinstance(a, str) else a for a in record.args
            )
        return True


logging.getLogger("uvicorn.error").addFilter(RedactToken())  # where uvicorn logs upgrades


async def websocket_endpoint(websocket: WebSocket) -> None:
    """Protocol version 1 (docs/protocol.md): JSON text in, JSON text and binary frames out.

    `?session=ID` (with `&token=TOKEN` for the driver) joins that session on connect, and
    an `open` on a connection whose ID is free creates the session under it. The id is in
    the upgrade URL so a proxy in front of several replicas can route on it. `&wait=
    subscribe`: no frame before this connection's first `subscribe` (a phone's page)."""
    state = websocket.app.state
    settings = state.settings
    origin = websocket.headers.get("origin")
    if not origin_allowed(origin, websocket.headers.get("host"), settings):
        log.warning("websocket from origin %r refused", origin)
        await websocket.close(code=1008)  # before accept: the upgrade gets HTTP 403
        return
    await joining.admit()  # a few joins a turn of the loop, however many arrive at once
    await websocket.accept()
    q = websocket.query_params
    conn = Connection(
        websocket,
        state.sessions,
        settings,
        state.store,
        q.get("session"),
        q.get("token"),
        wait_subscribe=q.get("wait") == "subscribe",
    )
    await conn.run()


# A plain Starlette route, not FastAPI's: its dependency machinery keeps two exit stacks and
# their frames (≈ 3 KB) alive for the whole life of every open connection.
router.add_websocket_route("/ws", websocket_endpoint)
