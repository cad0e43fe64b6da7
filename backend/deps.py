"""Typed dependencies: resources built in the lifespan, reached through app.state."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

from backend.config import Settings
from backend.manager import SessionManager
from backend.store import RunStore


def _sessions(conn: HTTPConnection) -> SessionManager:
    return conn.app.state.sessions


def _settings(conn: HTTPConnection) -> Settings:
    return conn.app.state.settings


def _store(conn: HTTPConnection) -> RunStore:
    return conn.app.state.store


SessionsDep = Annotated[SessionManager, Depends(_sessions)]
SettingsDep = Annotated[Settings, Depends(_settings)]
StoreDep = Annotated[RunStore, Depends(_store)]
