"""Joining a class: /join (a page with a code field), /join/CODE (the link students open)
and its QR code.

The join pages are plain HTML made here, in the reader's language (`?lang=`, else the
browser's Accept-Language; zh or en), so a phone that types a code gets a page and a
sentence, never `{"detail": ...}`; the QR route keeps its JSON problems (docs/protocol.md).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from html import escape
from pathlib import Path as FilePath
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel

from backend.admission import SessionError
from backend.classroom import ALPHABET, CODE_LENGTH, normalize_code, qr_svg
from backend.deps import SessionsDep, SettingsDep
from backend.routes.problems import problem
from backend.security import browser_id, keep_browser_id
from backend.shared_state import SharedUnavailable

router = APIRouter(tags=["classroom"])
I18N = FilePath(__file__).resolve().parents[2] / "frontend" / "i18n"
CODE_SHAPE = re.compile(f"[{ALPHABET}]{{{CODE_LENGTH}}}")


@lru_cache
def _strings(lang: str) -> dict[str, str]:
    return json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))


def reader_lang(request: Request, lang: str | None) -> str:
    """zh or en: `?lang=` when given, else the first of them in Accept-Language by q."""
    if lang in ("zh", "en"):
        return lang
    best, best_q = "en", -1.0
    for part in request.headers.get("accept-language", "").split(",")[:20]:
        tag, _, q = part.strip().partition(";q=")
        tag = tag.strip().lower()[:2]
        try:
            weight = float(q) if q else 1.0
        except ValueError:
            continue
        if tag in ("zh", "en") and weight > best_q:
            best, best_q = tag, weight
    return best


def _ip(request: Request) -> str:
    return request.client.host if request.client else "?"


def _status(exc: SessionError) -> int:
    """404 no such class; 429 too many wrong codes (waited, no turn); 503 the shared store is
    down."""
    if exc.code != "busy":
        return 404
    return 503 if exc.key == "err.shared_down" else 429


async def _lookup(code: str, request: Request, sessions) -> str:
    try:
        return (await sessions.resolve_code(code, _ip(request), browser_id(request))).lab
    except SessionError as exc:
        raise HTTPException(_status(exc), str(exc)) from None


class ClassFound(BaseModel):
    session: str  # connect to /ws?session=ID: the proxy routes it to the replica running it
    lab: str


class ClassProblem(BaseModel):
    """A protocol `error` (docs/protocol.md) with FastAPI's `detail`: the page says it in
    its own language from `key` and `values`."""

    detail: str
    code: str
    field: str | None = None
    key: str | None = None
    values: dict | None = None


@router.get(
    "/api/join/{code}",
    response_model=ClassFound,
    responses={
        404: {"model": ClassProblem},
        429: {"model": ClassProblem},
        503: {"model": ClassProblem},
    },
)
async def join_lookup(
    code: Annotated[str, Path(max_length=64)], request: Request, sessions: SessionsDep
):
    """The class a join code names, from any replica: its session id and lab. Wrong codes
    count against the address and the browser (docs/security.md): past their turns a lookup
    waits, then 429; 503 while the shared store is down."""
    try:
        ref = await sessions.resolve_code(code, _ip(request), browser_id(request))
    except SessionError as exc:
        err = exc.as_error()
        body = ClassProblem(detail=err.message, **err.model_dump(exclude={"type", "message"}))
        out = JSONResponse(body.model_dump(), status_code=_status(exc))
    else:
        out = JSONResponse(ClassFound(session=ref.session, lab=ref.lab).model_dump())
    return keep_browser_id(request, out)


class JoinStats(BaseModel):
    """Join lookups from the asker's own address in the last minute (docs/security.md)."""

    wrong: int  # wrong codes answered
    waited: int  # lookups that waited for a turn
    refused: int  # lookups turned away after waiting
    longest_wait_s: float


@router.get("/api/join-stats", responses={503: {"model": ClassProblem}})
async def join_stats(request: Request, sessions: SessionsDep):
    """For the teacher's class panel: are joins from this network (the room, when teacher and
    class share it) being slowed by wrong codes? Counts only, of the asker's own address."""
    try:
        return JoinStats(**await sessions.shared.join_stats(_ip(request)))
    except SharedUnavailable:
        body = ClassProblem(detail="the shared store is down", code="busy", key="err.shared_down")
        return JSONResponse(body.model_dump(), status_code=503)


_STYLE = """
main.join { max-width: 28rem; margin: 2rem auto; padding: 0 1rem; }
.join h1 { font-size: 1.8rem; margin: 0 0 0.5rem; }
.join .problem { background: #fde7e5; color: #b3261e; border-radius: 8px; padding: 0.7rem 0.9rem;
  font-weight: 600; }
.join-form { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: stretch; }
.join-form label { flex-basis: 100%; color: #5b6473; }
.join-form input { flex: 1 1 9rem; min-width: 0; min-height: 48px; font-size: 1.6rem;
  letter-spacing: 0.2em; text-transform: uppercase; font-family: ui-monospace, monospace;
  padding: 0.2rem 0.6rem; border: 1px solid #dcd8cf; border-radius: 8px; }
.join-form button { min-height: 48px; font-size: 1.2rem; }
.join .other { margin-top: 1.5rem; display: flex; gap: 1.5rem; flex-wrap: wrap; }
.join .other a { min-height: 44px; display: inline-flex; align-items: center; }
"""


def join_html(lang: str, code: str = "", problem_text: str = "") -> str:
    """The page with the code field (and the sentence saying what went wrong, if anything)."""
    s = _strings(lang)
    other = "en" if lang == "zh" else "zh"
    switch = "English" if lang == "zh" else "中文"
    here = f"/join?lang={other}" + (f"&code={quote(code)}" if code else "")
    problem_html = (
        f'<p class="problem" role="alert">{escape(problem_text)}</p>' if problem_text else ""
    )
    return f"""<!doctype html>
<html lang="{"zh-CN" if lang == "zh" else "en"}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{escape(s["joinpage.title"])} · {escape(s["app_name"])}</title>
  <link rel="icon" href="/favicon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="/css/app.css">
  <style>{_STYLE}</style>
</head>
<body class="join-page">
  <header class="top"><a class="home" href="/?lang={lang}">{escape(s["app_name"])}</a></header>
  <main class="join">
    <h1>{escape(s["joinpage.title"])}</h1>
    {problem_html}
    <p>{escape(s["joinpage.prompt"])}</p>
    <form class="join-form" action="/join" method="get">
      <label for="join-code">{escape(s["joinpage.label"])}</label>
      <input id="join-code" name="code" value="{escape(code)}" required maxlength="12"
        autocomplete="off" autocapitalize="characters" spellcheck="false" inputmode="text"
        placeholder="K7M2QX" autofocus>
      <input type="hidden" name="lang" value="{lang}">
      <button type="submit" class="primary">{escape(s["joinpage.submit"])}</button>
    </form>
    <p class="other"><a href="/?lang={lang}">{escape(s["joinpage.all_labs"])}</a>
      <a href="{escape(here)}" lang="{other}">{switch}</a></p>
  </main>
</body>
</html>
"""


def _page(lang: str, status: int, code: str = "", problem_text: str = "") -> HTMLResponse:
    return HTMLResponse(join_html(lang, code, problem_text), status_code=status)


async def _join(code: str, request: Request, sessions, lang: str | None) -> Response:
    """Redirect to the class, or the page again with a sentence (404 / 429 / 422)."""
    reader = reader_lang(request, lang)
    s = _strings(reader)
    typed = code.strip()[:12]
    norm = normalize_code(typed)
    # Not a code at all: the page says so, with no lookup and no failed attempt counted.
    if len(norm) != CODE_LENGTH:
        return _page(reader, 422, typed, s["joinpage.bad_code"].replace("{code}", typed))
    if not CODE_SHAPE.fullmatch(norm):  # a letter no code has (O, I, 0, 1...)
        return _page(reader, 404, norm, s["joinpage.not_found"].replace("{code}", norm))
    try:
        lab = (await sessions.resolve_code(norm, _ip(request), browser_id(request))).lab
    except SessionError as exc:
        if exc.key == "err.class_away":  # back after its teacher's restore: the page waits
            lab = exc.values["lab"]
        elif exc.code == "busy":
            return keep_browser_id(request, _page(reader, 429, norm, s["joinpage.busy"]))
        else:
            text = s["joinpage.not_found"].replace("{code}", norm)
            return keep_browser_id(request, _page(reader, 404, norm, text))
    suffix = f"&lang={lang}" if lang in ("zh", "en") else ""
    return RedirectResponse(f"/lab.html?lab={lab}&join={norm}{suffix}", status_code=303)


LangQuery = Annotated[str | None, Query(max_length=8)]


@router.get("/join", include_in_schema=False)
@router.get("/join/", include_in_schema=False)
async def join_form(
    request: Request,
    sessions: SessionsDep,
    code: Annotated[str | None, Query(max_length=64)] = None,
    lang: LangQuery = None,
) -> Response:
    """The page to type a code on (the join card says "open the link and type the code")."""
    if code is None or not code.strip():  # the browser gets its id before its first code
        return keep_browser_id(request, _page(reader_lang(request, lang), 200))
    return await _join(code, request, sessions, lang)


@router.get("/join/{code}", include_in_schema=False)
async def join_page(
    code: str, request: Request, sessions: SessionsDep, lang: LangQuery = None
) -> Response:
    """The link in the QR code: opens the lab page as a viewer of the teacher's session; a
    wrong or ended code answers the join page with a sentence in the reader's language."""
    return await _join(code, request, sessions, lang)


@router.get(
    "/api/join/{code}/qr.svg",
    # 404: no class has this code; 429: too many join attempts from this address.
    responses={200: {"content": {"image/svg+xml": {}}}, **problem(404, 429)},
)
async def join_qr(
    code: str, request: Request, sessions: SessionsDep, settings: SettingsDep
) -> Response:
    """A QR code of the join link, made on the server (no external service)."""
    await _lookup(code, request, sessions)
    base = (
        settings.public_url.rstrip("/")
        if settings.public_url
        else str(request.base_url).rstrip("/")
    )
    return Response(qr_svg(f"{base}/join/{normalize_code(code)}"), media_type="image/svg+xml")
