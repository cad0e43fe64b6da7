"""Saved runs over HTTP: list, summary, JSON export, import, delete (docs/deploy.md).

Saving a live session and reopening a saved one go through the websocket; these routes are
the catalog of what is stored. The store's calls block (SQLite, torch.load), so routes are
plain `def` (FastAPI runs them in its thread pool) or hand the work to a thread.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
import threading
from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Query, Request, Response
from pydantic import BaseModel, Field, ValidationError

from backend.deps import SettingsDep, StoreDep
from backend.labs import REGISTRY
from backend.routes.problems import problem
from backend.run_export import RunFile, export_json, import_json, parse_json
from backend.store import LAB_ID, RunStore, RunTooLarge, hash_token

router = APIRouter(prefix="/api/runs", tags=["runs"])

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


@router.get("")
def list_runs(
    store: StoreDep,
    lab: Annotated[str | None, Query(max_length=64, pattern=LAB_ID.pattern)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    offset: Annotated[int, Query(ge=0, le=2**62)] = 0,  # SQLite integers are 64-bit
) -> list[RunSummary]:
    """Saved runs, newest first (optionally of one lab)."""
    return [RunSummary(**s) for s in store.list(lab=lab, limit=limit, offset=offset)]


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
    body = json.dumps(export_json(run), separators=(",", ":"), allow_nan=False)
    filename = f"shaomai-{run.lab}-{run.id}.json"  # lab and id are [A-Za-z0-9_-]
    return Response(
        body,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


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


@router.delete("/{run_id}", status_code=204, responses=problem(403, 404))
def delete_run(
    run_id: str,
    store: StoreDep,
    x_shaomai_token: Annotated[str | None, Header(max_length=200)] = None,
) -> None:
    """Delete a run; needs the driver token of the session that saved it (X-Shaomai-Token)."""
    if store.summary(run_id) is None:
        raise HTTPException(404, f"no saved run {run_id!r}")
    if not x_shaomai_token or not store.delete(run_id, x_shaomai_token):
        raise HTTPException(403, "only the driver who saved this run may delete it")
