"""Saved runs over HTTP: list, summary, JSON export, import, rename, delete, the latest
save or autosave of a live session, and the export of a live session (docs/protocol.md,
"Saved runs and autosave over HTTP").

Saving a live session and reopening a saved one go through the websocket; these routes are
the catalog of what is stored. The store's calls block (the database, torch.load), so routes
are plain `def` (FastAPI runs them in its thread pool) or hand the work to a thread. A
database that does not answer (PostgreSQL down) is a 503 with the store's message, on every
route here, through the router's route class.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
import threading
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, HTTPException, Query, Request, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel, Field, ValidationError

from backend.deps import SessionsDep, SettingsDep, StoreDep
from backend.labs import REGISTRY
from backend.protocol import valid_session_id
from backend.routes.problems import problem
from backend.run_export import RunFile, export_json, import_json, parse_json
from backend.saved_run import LAB_ID, MAX_NAME_CHARS, RunTooLarge, SavedRun, hash_token
from backend.saving import snapshot_run
from backend.store import RunStore, StoreUnavailable


class _StoreRoute(APIRoute):
    """StoreUnavailable from a route (its store call, or one in a thread it awaited) -> 503
    with the store's message, and Retry-After: the server is fine, its database is not."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except StoreUnavailable as exc:
                raise HTTPException(503, str(exc), headers={"Retry-After": "30"}) from None

        return route


router = APIRouter(
    prefix="/api/runs", tags=["runs"], route_class=_StoreRoute, responses=problem(503)
)

# One import at a time: each holds the file, its parsed JSON and the decoded run in memory.
_IMPORT_LOCK = threading.Lock()


class RunSummary(BaseModel):
    id: str
    lab: str
    name: str
    seed: int
    step: int = Field(description="the step the run was saved at")
    created: float = Field(description="unix time")
    scalar_steps: int = Field(description="steps whose scalars are kept (every step)")
    frames: int = Field(description="tensor frames in the saved (thinned) timeline")
    frames_bytes: int
    weights_bytes: int


class ImportedRun(RunSummary):
    token: str = Field(description="deletes this run: send it as X-Shaomai-Token")


class SessionRun(RunSummary):
    autosave: bool = Field(description="the session's autosave (else saved by hand)")


class Rename(BaseModel):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)


SessionIds = Annotated[list[str], Query(min_length=1, max_length=20)]
TokenHeader = Annotated[str | None, Header(max_length=200)]


def _download(run: SavedRun, run_id: str) -> Response:
    body = json.dumps(export_json(run), separators=(",", ":"), allow_nan=False)
    filename = f"shaomai-{run.lab}-{run_id}.json"  # lab and id are [A-Za-z0-9_-]
    return Response(
        body,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


@router.get("")
def list_runs(
    store: StoreDep,
    lab: Annotated[str | None, Query(max_length=64, pattern=LAB_ID.pattern)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    offset: Annotated[int, Query(ge=0, le=2**62)] = 0,  # SQLite integers are 64-bit
) -> list[RunSummary]:
    """Saved runs, newest first (optionally of one lab)."""
    return [RunSummary(**s) for s in store.list(lab=lab, limit=limit, offset=offset)]


@router.get(
    "/latest",
    response_model=SessionRun,
    responses={204: {"description": "nothing saved from these sessions"}},
)
def latest_of_sessions(session: SessionIds, store: StoreDep) -> SessionRun | Response:
    """The newest run saved from any of these live sessions, by hand or by autosave: what a
    page offers to restore after a server restart (it keeps its sessions' ids). Only who
    knows a session's id can find its runs. None saved is an answer, not a missing resource:
    204 with no body (a 404 would be logged in the learner's console on every page that asks
    after a lost session, e.g. on back/forward between labs)."""
    ids = [sid for sid in dict.fromkeys(session) if valid_session_id(sid)]  # others: no runs
    rows = [row for sid in ids for row in store.of_session(sid, limit=1)]
    if not rows:
        return Response(status_code=204)
    return SessionRun(**max(rows, key=lambda r: r["created"]))


@router.get("/live/{session_id}/export.json", response_model=RunFile, responses=problem(404))
async def export_live(session_id: str, sessions: SessionsDep) -> Response:
    """A live session as a run file, as a download, without saving it: whoever can view
    the session (knows its id) may export it, as they may fork it."""
    s = sessions.sessions.get(session_id)
    if s is None:
        raise HTTPException(404, "no such session (it may have expired)")
    return _download(await snapshot_run(s), f"step{s.step}")


@router.get("/{run_id}", responses=problem(404))
def get_run(run_id: str, store: StoreDep) -> RunSummary:
    summary = store.summary(run_id)
    if summary is None:
        raise HTTPException(404, f"no saved run {run_id!r}")
    return RunSummary(**summary)


@router.get("/{run_id}/export.json", response_model=RunFile, responses=problem(404))
def export_run(run_id: str, store: StoreDep) -> Response:
    """The run as one JSON file (params, seed, scalars, frames, weights), as a download."""
    run = store.get(run_id)
    if run is None:
        raise HTTPException(404, f"no saved run {run_id!r}")
    return _download(run, run.id)


@router.post(
    "/import",
    status_code=201,
    responses=problem(413, 422),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RunFile"}}},
        }
    },
)
async def import_run(request: Request, store: StoreDep, settings: SettingsDep) -> ImportedRun:
    """Store a run exported by any Shaomai Lab; the answer carries a token that deletes it."""
    cap = int(settings.max_import_mb * 2**20)
    too_big = HTTPException(413, f"body: over the {cap / 2**20:.0f} MB cap for an import")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise too_big
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise too_big
    token = secrets.token_urlsafe(24)
    summary = await asyncio.to_thread(_import, bytes(body), store, token)
    return ImportedRun(**summary, token=token)


def _import(body: bytes, store: RunStore, token: str) -> dict:
    with _IMPORT_LOCK:
        try:
            run = import_json(parse_json(body), store.max_run_bytes)
        except RunTooLarge as exc:
            raise HTTPException(413, str(exc)) from None
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        lab_cls = REGISTRY.get(run.lab)
        if lab_cls is None:
            raise HTTPException(422, f"lab: this server has no lab {run.lab!r}")
        try:
            lab_cls.Params.model_validate(run.params)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            where = ".".join(["params", *(str(p) for p in err["loc"])])
            raise HTTPException(422, f"{where}: {err['msg']}") from None
        run_id = store.save(dataclasses.replace(run, token_hash=hash_token(token)))
    return store.summary(run_id)


@router.patch("/{run_id}", responses=problem(400, 403, 404))  # 400: a body not JSON
def rename_run(
    run_id: str,
    store: StoreDep,
    body: Annotated[Rename, Body()],
    x_shaomai_token: TokenHeader = None,
) -> RunSummary:
    """Rename a run; needs the driver token of the session that saved it (X-Shaomai-Token).
    A renamed autosave is kept as a run saved by hand."""
    if store.summary(run_id) is None:
        raise HTTPException(404, f"no saved run {run_id!r}")
    name = body.name.strip()
    if not name:
        raise HTTPException(422, "name: a name has at least one character besides spaces")
    try:
        renamed = bool(x_shaomai_token) and store.rename(run_id, x_shaomai_token, name)
    except ValueError as exc:  # a name the store cannot hold (a NUL)
        raise HTTPException(422, str(exc)) from None
    if not renamed:
        raise HTTPException(403, "only the driver who saved this run may rename it")
    return RunSummary(**store.summary(run_id))


@router.delete("/{run_id}", status_code=204, responses=problem(403, 404))
def delete_run(
    run_id: str,
    store: StoreDep,
    x_shaomai_token: TokenHeader = None,
) -> None:
    """Delete a run; needs the driver token of the session that saved it (X-Shaomai-Token)."""
    if store.summary(run_id) is None:
        raise HTTPException(404, f"no saved run {run_id!r}")
    if not x_shaomai_token or not store.delete(run_id, x_shaomai_token):
        raise HTTPException(403, "only the driver who saved this run may delete it")
