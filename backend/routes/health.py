from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel

from backend import __version__
from backend.deps import SessionsDep

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: str
    version: str
    replica: str  # SHAOMAI_REPLICA, else host:port: which replica answered
    sessions: int  # live sessions on this replica


@router.get("/api/health")
def health(sessions: SessionsDep) -> Health:
    return Health(
        status="ok", version=__version__, replica=sessions.replica, sessions=len(sessions.sessions)
    )


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}}},
    include_in_schema=False,
)
def metrics(sessions: SessionsDep) -> Response:
    """Prometheus metrics of this replica (backend/metrics.py)."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    if sessions.metrics_registry is None:
        from backend.metrics import registry_for

        sessions.metrics_registry = registry_for(sessions)
    return Response(generate_latest(sessions.metrics_registry), media_type=CONTENT_TYPE_LATEST)
