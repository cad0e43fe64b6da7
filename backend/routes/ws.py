from __future__ import annotations

from fastapi import APIRouter, WebSocket

from backend.connection import Connection
from backend.deps import SessionsDep, SettingsDep

router = APIRouter()


@router.websocket("/ws")
async def websocket_endpoint(websocket: WebSocket, sessions: SessionsDep, settings: SettingsDep):
    """Protocol version 1 (docs/protocol.md): JSON text in, JSON text and binary frames out."""
    await websocket.accept()
    await Connection(websocket, sessions, settings).run()
