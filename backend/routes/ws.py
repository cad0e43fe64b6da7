from __future__ import annotations

import logging

from fastapi import APIRouter, WebSocket

from backend.connection import Connection
from backend.deps import SessionsDep, SettingsDep, StoreDep
from backend.security import origin_allowed

log = logging.getLogger("shaomai.ws")

router = APIRouter()


@router.websocket("/ws")
async def websocket_endpoint(
    websocket: WebSocket, sessions: SessionsDep, settings: SettingsDep, store: StoreDep
):
    """Protocol version 1 (docs/protocol.md): JSON text in, JSON text and binary frames out."""
    origin = websocket.headers.get("origin")
    if not origin_allowed(origin, websocket.headers.get("host"), settings):
        log.warning("websocket from origin %r refused", origin)
        await websocket.close(code=1008)  # before accept: the upgrade gets HTTP 403
        return
    await websocket.accept()
    await Connection(websocket, sessions, settings, store).run()
