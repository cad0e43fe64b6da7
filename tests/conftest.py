"""Shared fixtures: the app in-process (TestClient), a real uvicorn, a real Chromium."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
import uvicorn
from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from backend.ws_direct import DirectWritesProtocol
from tests.trained import _threads  # noqa: F401  (the fixture behind @trained_outcome)

# One torch thread, as in a lab session: tiny models on a shared 2-core machine run several
# times faster than with two threads fighting other processes.
torch.set_num_threads(1)

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_configure(config):
    # make test-fast leaves these out (tests/hosted is left out by its path)
    config.addinivalue_line(
        "markers", "hosted: needs the hosted servers (PostgreSQL, Redis, nginx: make hosted)"
    )


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
def client(settings) -> Iterator[TestClient]:
    """The whole app in-process; websocket conversations via client.websocket_connect."""
    with TestClient(create_app(settings)) as c:
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    env: dict[str, str] | None = None,
    data_dir: Path | None = None,
    port: int | None = None,
    log_name: str | None = None,
):
    """A real uvicorn in a subprocess; returns (process, base_url, log path).

    `port`: a fixed one (a restart must come back where the page reconnects)."""
    port = port or free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = ARTIFACTS / (log_name or f"server-{port}.log")
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    if data_dir is None:  # never the repository's ./data
        data_dir = Path(tempfile.mkdtemp(prefix="shaomai-test-"))
    full_env["SHAOMAI_DATA_DIR"] = str(data_dir)
    out = log.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "backend", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=full_env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    out.close()  # the child holds its own descriptor
    url = f"http://127.0.0.1:{port}"
    # A generous deadline, not a speed check: the start-up torch warm-up took over 30 s on
    # a 2-core machine shared by several test processes.
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(f"{url}/api/health", timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("server did not start") from None
            time.sleep(0.1)
    return proc, url, log


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@contextmanager
def serve_in_thread(settings: Settings, send_buffer: int | None = None):
    """uvicorn with the app's websocket protocol in a thread of this process, so the app's
    objects can be inspected; yields (app, port). `send_buffer`: its sockets' SO_SNDBUF."""
    app = create_app(settings)
    sock = socket.socket()
    if send_buffer:  # accepted sockets inherit it
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", ws=DirectWritesProtocol, ws_per_message_deflate=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        time.sleep(0.02)
    assert server.started
    try:
        yield app, port
    finally:
        server.should_exit = True
        thread.join(15)


@pytest.fixture(scope="session")
def live_server(tmp_path_factory) -> Iterator[str]:
    """A real uvicorn serving the app for the whole test session; yields its base URL."""
    # The whole suite is one visitor from 127.0.0.1 opening hundreds of pages, each leaving a
    # session for a rejoin: the per-address caps (40 alive, 60 a minute) are a real class's,
    # not a test run's, and would refuse pages midway (tests/backend/test_limits.py checks them).
    env = {
        "SHAOMAI_MAX_SESSIONS": "1000",
        "SHAOMAI_MAX_SESSIONS_PER_IP": "1000",
        "SHAOMAI_SESSIONS_PER_IP_PER_MIN": "10000",
        "SHAOMAI_IDLE_GRACE_S": "120",
    }
    proc, url, log = start_server(env, data_dir=tmp_path_factory.mktemp("data"))
    yield url
    stop_server(proc)
    text = log.read_text()
    assert "Traceback" not in text, f"server log has a traceback:\n{text[-4000:]}"


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class ConsoleErrors(list):
    """Console errors and uncaught exceptions of a page; a test fails if any remain."""


@pytest.fixture
def page(browser):
    """A fresh Chromium page (1400×1000); fails the test on any console error."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    pg = context.new_page()
    errors = ConsoleErrors()
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    pg.console_errors = errors
    yield pg
    context.close()
    assert not errors, f"browser console errors: {errors}"


def screenshot(pg, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=True)
    return path
