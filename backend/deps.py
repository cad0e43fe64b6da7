"""Typed dependencies: resources built in the lifespan, reached through app.state.

`async def`: FastAPI runs a plain `def` dependency in its thread pool, three thread hops
for every websocket and request just to read app.state (4% of a replica's CPU while 1,000
readers opened labs at once, docs/benchmarks.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

from backend.config import Settings
from backend.manager import SessionManager
from backend.store import RunStore


async def _sessions(conn: HTTPConnection) -> SessionManager:
    return conn.app.state.sessions


async def _settings(conn: HTTPConnection) -> Settings:
    return conn.app.state.settings


async def _store(conn: HTTPConnection) -> RunStore:
    return conn.app.state.store


SessionsDep = Annotated[SessionManager, Depends(_sessions)]
SettingsDep = Annotated[Settings, Depends(_settings)]
StoreDep = Annotated[RunStore, Depends(_store)]
