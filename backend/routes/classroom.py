"""Joining a class: /join/CODE (the link students open) and its QR code."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from backend.admission import SessionError
from backend.classroom import normalize_code, qr_svg
from backend.deps import SessionsDep, SettingsDep
from backend.routes.problems import problem

router = APIRouter(tags=["classroom"])


def _lookup(code: str, request: Request, sessions) -> str:
    ip = request.client.host if request.client else "?"
    try:
        return sessions.by_code(code, ip).lab_cls.id
    except SessionError as exc:
        status = 429 if exc.code == "busy" else 404
        raise HTTPException(status, str(exc)) from None


@router.get("/join/{code}", include_in_schema=False)
def join_page(code: str, request: Request, sessions: SessionsDep) -> RedirectResponse:
    """The link in the QR code: opens the lab page as a viewer of the teacher's session."""
    lab = _lookup(code, request, sessions)
    return RedirectResponse(f"/lab.html?lab={lab}&join={normalize_code(code)}", status_code=303)


@router.get(
    "/api/join/{code}/qr.svg",
    # 404: no class has this code; 429: too many join attempts from this address.
    responses={200: {"content": {"image/svg+xml": {}}}, **problem(404, 429)},
)
def join_qr(code: str, request: Request, sessions: SessionsDep, settings: SettingsDep) -> Response:
    """A QR code of the join link, made on the server (no external service)."""
    _lookup(code, request, sessions)
    base = (
        settings.public_url.rstrip("/")
        if settings.public_url
        else str(request.base_url).rstrip("/")
    )
    return Response(qr_svg(f"{base}/join/{normalize_code(code)}"), media_type="image/svg+xml")
