"""The saved-runs store as a typed dependency (built in the app's lifespan: app.state.store)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

from backend.store import RunStore


def _store(conn: HTTPConnection) -> RunStore:
    return conn.app.state.store


StoreDep = Annotated[RunStore, Depends(_store)]
