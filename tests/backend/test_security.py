import pytest
from starlette.websockets import WebSocketDisconnect

from tests.wsutil import open_lab


def test_http_responses_carry_the_security_headers(client):
    for path in ("/lab.html", "/api/health", "/js/shell.js"):
        r = client.get(path)
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-eval" not in csp
        assert "frame-ancestors 'self'" in csp
        assert r.headers["x-content-type-options"] == "nosniff"


def test_no_inline_script_in_pages(client):
    for page in ("/index.html", "/lab.html"):
        html = client.get(page).text
        assert "<script>" not in html and "onclick=" not in html and "onsubmit=" not in html
        assert "http://" not in html.replace("http://www.w3.org", "")  # no CDN


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "file://"])
def test_cross_site_websocket_is_refused(client, origin):
    with pytest.raises(WebSocketDisconnect):
        with client.websocket_connect("/ws", headers={"origin": origin}) as ws:
            ws.receive_text()


@pytest.mark.parametrize(
    "origin", ["http://testserver", "http://localhost:8000", "http://127.0.0.1:9"]
)
def test_own_and_local_origins_are_allowed(client, origin):
    with client.websocket_connect("/ws", headers={"origin": origin}) as ws:
        open_lab(ws, "linear-regression")


def test_configured_origins_and_frame_ancestors(tmp_path):
    from fastapi.testclient import TestClient

    from backend.app import create_app
    from backend.config import Settings

    settings = Settings(
        data_dir=tmp_path,
        allowed_origins=["https://school.example"],
        frame_ancestors="'self' https://blog.example",
    )
    with TestClient(create_app(settings)) as c:
        assert (
            "frame-ancestors 'self' https://blog.example"
            in c.get("/lab.html").headers["content-security-policy"]
        )
        with c.websocket_connect("/ws", headers={"origin": "https://school.example"}) as ws:
            open_lab(ws, "linear-regression")
        with pytest.raises(WebSocketDisconnect):
            with c.websocket_connect("/ws", headers={"origin": "https://other.example"}) as ws:
                ws.receive_text()
