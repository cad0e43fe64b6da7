from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from backend import __version__
from backend.deps import SessionsDep

router = APIRouter(prefix="/api", tags=["health"])


class Health(BaseModel):
    status: str
    version: str
    sessions: int


@router.get("/health")
def health(sessions: SessionsDep) -> Health:
    return Health(status="ok", version=__version__, sessions=len(sessions.sessions))
