"""HTTP security headers and the websocket Origin check (docs/security.md)."""

from __future__ import annotations

from urllib.parse import urlsplit

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
