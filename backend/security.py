"""HTTP security headers, the websocket Origin check and the join page's browser id
(docs/security.md)."""

from __future__ import annotations

import re
import secrets
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.config import Settings

LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}


def content_security_policy(settings: Settings) -> str:
    # Only our own scripts: no inline script, no eval, no CDN. Plotly sets inline styles.
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            f"frame-ancestors {settings.frame_ancestors}",
        ]
    )


class SecurityHeaders:
    """Adds CSP, nosniff and a referrer policy to every HTTP response."""

    def __init__(self, app: ASGIApp, settings: Settings):
        self.app = app
        self.headers = [
            (b"content-security-policy", content_security_policy(settings).encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + self.headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def origin_allowed(origin: str | None, host: str | None, settings: Settings) -> bool:
    """May a page from `origin` open a websocket here?

    No Origin header: not a browser (a script, a test client) — allowed. A browser page is
    allowed from the app's own origin, from localhost, and from SHAOMAI_ALLOWED_ORIGINS.
    """
    if origin is None:
        return True
    if origin in settings.allowed_origins or "*" in settings.allowed_origins:
        return True
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    if parts.netloc == host:
        return True
    return parts.hostname in LOCAL_HOSTS


# -- the browser's own join turns (backend/join_turns.py) ---------------------------------
BROWSER_COOKIE = "shaomai_b"
_BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{16,32}")


def browser_id(request: Request) -> str | None:
    """The join page's browser id (a cookie this server set), None when there is none yet or
    it is not one of ours. Not a secret and not a proof: it lets one browser's wrong codes
    wait for its own turns, so a prankster in a browser leaves the address's to the class;
    a client that drops it is still counted per address."""
    value = request.cookies.get(BROWSER_COOKIE, "")
    return value if _BROWSER_ID.fullmatch(value) else None


def keep_browser_id(request: Request, response: Response) -> Response:
    """Give a browser that has none its id (a year; only this site's pages send it back)."""
    if browser_id(request) is None:
        response.set_cookie(
            BROWSER_COOKIE,
            secrets.token_urlsafe(16),
            max_age=365 * 24 * 3600,
            httponly=True,
            samesite="lax",
            secure=request.url.scheme == "https",
        )
    return response
