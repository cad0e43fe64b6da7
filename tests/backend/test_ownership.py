"""Promise 5: only the owner drives.

Session ids and driver tokens come from `secrets` and are long; tokens are compared in
constant time; a token is never sent to a viewer and never logged; every message that drives
a session is `forbidden` to a viewer, and a viewer's `seek` reaches nobody else.
"""

from __future__ import annotations

import ast
import asyncio
import hmac
import json
import logging
import re
import secrets
import struct
from pathlib import Path

import pytest
import websockets

from backend.saved_run import hash_token
from tests.conftest import start_server, stop_server
from tests.wsutil import open_lab, recv, recv_until, send, step  # every wait has a deadline

ROOT = Path(__file__).resolve().parents[2]
URLSAFE = re.compile(r"^[A-Za-z0-9_-]+$")
SECRET_NAME = re.compile(r"(^|_)token(_hash)?$", re.IGNORECASE)  # not `tokens`, `tokenizer`


def _raw(ws) -> tuple[str, dict]:
    """Next message as (what came over the wire as text, parsed); frames: their JSON header."""
    m = ws.receive()
    if m.get("text") is not None:
        return m["text"], json.loads(m["text"])
    data = m.get("bytes")
    assert data is not None, f"connection closed: {m}"
    (n,) = struct.unpack_from("<I", data)
    header = json.loads(data[4 : 4 + n])
    return data.decode("latin-1"), {"type": "frame", **header}


def _drain_until_view(ws, marker: int) -> list[tuple[str, dict]]:
    """Everything up to the driver's `view` with hover == marker (sent last)."""
    seen = []
    for _ in range(10_000):
        raw, msg = _raw(ws)
        seen.append((raw, msg))
        if msg["type"] == "view" and msg["state"].get("hover") == marker:
            return seen
    raise AssertionError("the marker view never came")


# -- unguessable ------------------------------------------------------------------------------
def test_ids_and_tokens_come_from_secrets_and_are_long(client, monkeypatch):
    made: list[str] = []
    real = secrets.token_urlsafe

    def recording(n=None):
        out = real(n)
        made.append(out)
        return out

    monkeypatch.setattr(secrets, "token_urlsafe", recording)
    readies = []
    for _ in range(12):
        with client.websocket_connect("/ws") as ws:
            readies.append(open_lab(ws, "linear-regression"))
    ids = [r["session"] for r in readies]
    tokens = [r["token"] for r in readies]
    assert set(ids) <= set(made) and set(tokens) <= set(made)  # made by `secrets`
    assert len(set(ids)) == len(set(tokens)) == 12
    for sid, tok in zip(ids, tokens, strict=True):
        assert URLSAFE.match(sid) and URLSAFE.match(tok)
        assert len(sid) >= 16  # >= 96 bits: ids are shown in URLs, never trusted alone
        assert len(tok) >= 32  # >= 192 bits: the token is what drives


def test_backend_has_no_other_random_source_for_identifiers():
    """`random` and `uuid` are predictable or leak; identifiers come from `secrets` alone."""
    found = []
    for path in (ROOT / "backend").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n in ("random", "uuid")]
    assert found == []


# -- constant-time comparison -----------------------------------------------------------------
def _token_comparisons(tree: ast.AST) -> list[int]:
    """Lines comparing something named like a token with == or != (timing leaks)."""
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(
            isinstance(op, ast.Eq | ast.NotEq) for op in node.ops
        ):
            names = {
                n.attr if isinstance(n, ast.Attribute) else n.id
                for part in (node.left, *node.comparators)
                for n in ast.walk(part)
                if isinstance(n, ast.Attribute | ast.Name)
            }
            if any(SECRET_NAME.search(name) for name in names):
                bad.append(node.lineno)
    return bad


def test_no_token_is_compared_with_equals():
    assert _token_comparisons(ast.parse("ok = msg.token == s.token")) == [1]
    assert _token_comparisons(ast.parse("ok = msg.token is not None")) == []
    found = {}
    for path in (ROOT / "backend").rglob("*.py"):
        if "labs" in path.parts:  # labs handle text tokens, never driver tokens
            continue
        lines = _token_comparisons(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[str(path.relative_to(ROOT))] = lines
    assert found == {}, f"compare tokens with secrets.compare_digest: {found}"


def test_tokens_are_checked_with_compare_digest(client, monkeypatch):
    calls = []
    real_secrets, real_hmac = secrets.compare_digest, hmac.compare_digest

    def spy(real):
        def compare(a, b):
            calls.append((a, b))
            return real(a, b)

        return compare

    monkeypatch.setattr(secrets, "compare_digest", spy(real_secrets))
    monkeypatch.setattr(hmac, "compare_digest", spy(real_hmac))
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "linear-regression")
        send(ws, {"type": "save"})
        saved, _ = recv_until(ws, lambda m: m["type"] == "saved")
    token = ready["token"]
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "join", "session": ready["session"], "token": token})
        assert recv(ws)["role"] == "driver"
    assert any(token.encode() in (a, b) or token in (a, b) for a, b in calls)
    calls.clear()
    r = client.delete(f"/api/runs/{saved['run']}", headers={"X-Shaomai-Token": token})
    assert r.status_code == 204
    assert any(hash_token(token) in (a, b) for a, b in calls)  # the store compares hashes


# -- never echoed, never logged ---------------------------------------------------------------
def test_the_token_never_reaches_a_viewer(client):
    with client.websocket_connect("/ws") as driver:
        ready = open_lab(driver, "linear-regression")
        token = ready["token"]
        send(driver, {"type": "share"})
        shared, _ = recv_until(driver, lambda m: m["type"] == "shared")
        step(driver, 2)
        with (
            client.websocket_connect("/ws") as by_id,
            client.websocket_connect("/ws") as by_code,
        ):
            send(by_id, {"type": "join", "session": ready["session"]})
            send(by_code, {"type": "join", "code": shared["code"]})
            # A driver's rejoin (with the token) while viewers watch: it goes to that one only.
            with client.websocket_connect("/ws") as again:
                send(again, {"type": "join", "session": ready["session"], "token": token})
                assert recv(again)["token"] == token
            step(driver, 3)
            send(driver, {"type": "set", "params": {"lr": 0.05}})  # live
            send(driver, {"type": "set", "params": {"features": "zscore"}})  # a reset
            send(driver, {"type": "save", "name": "class demo"})
            send(driver, {"type": "share"})
            send(driver, {"type": "control", "action": "step", "count": 2})
            send(driver, {"type": "view", "state": {"hover": 7}})
            for viewer in (by_id, by_code):
                seen = _drain_until_view(viewer, 7)
                kinds = {m["type"] for _, m in seen}
                assert {"ready", "history", "frame", "status", "params"} <= kinds
                for raw, msg in seen:
                    assert token not in raw and hash_token(token) not in raw, msg["type"]
                    assert "token" not in msg


def test_the_token_is_never_logged(client, caplog):
    caplog.set_level(logging.DEBUG)
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "linear-regression")
        step(ws, 2)
        send(ws, {"type": "save"})
        saved, _ = recv_until(ws, lambda m: m["type"] == "saved")
        send(ws, {"type": "share"})
        recv_until(ws, lambda m: m["type"] == "shared")
    token = ready["token"]
    with client.websocket_connect("/ws") as ws:
        wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # 1 token in 64 ends in x
        send(ws, {"type": "join", "session": ready["session"], "token": wrong})
        assert recv_until(ws, lambda m: m["type"] == "error")[0]["code"] == "forbidden"
        send(ws, {"type": "join", "session": ready["session"], "token": token})
        recv_until(ws, lambda m: m["type"] == "ready")
        step(ws, 1)
    assert client.delete(
        f"/api/runs/{saved['run']}", headers={"X-Shaomai-Token": "no"}
    ).is_client_error
    r = client.delete(f"/api/runs/{saved['run']}", headers={"X-Shaomai-Token": token})
    assert r.status_code == 204
    assert len(caplog.records) >= 3  # the conversation was logged at all
    for record in caplog.records:
        text = record.getMessage() + repr(record.args) + (record.exc_text or "")
        assert token not in text and token[:-1] not in text, record.getMessage()


async def _drive_a_real_server(ws_url: str) -> str:
    async with websockets.connect(ws_url) as ws:
        await ws.send(json.dumps({"type": "open", "lab": "linear-regression"}))
        ready = await _next_of(ws, "ready")
        await ws.send(json.dumps({"type": "control", "action": "step", "count": 2}))
        await _next_of(ws, "status")
    async with websockets.connect(ws_url) as ws:  # a rejoin sends the token in
        join = {"type": "join", "session": ready["session"], "token": ready["token"]}
        await ws.send(json.dumps(join))
        await _next_of(ws, "ready")
    return ready["token"]


async def _next_of(ws, kind: str) -> dict:
    async with asyncio.timeout(20):
        while True:
            msg = await ws.recv()
            if isinstance(msg, str) and json.loads(msg)["type"] == kind:
                return json.loads(msg)


def test_the_real_servers_debug_log_never_holds_the_token(tmp_path):
    """uvicorn and websockets log too, at debug level most of all: none of it is the token."""
    proc, url, log = start_server({"SHAOMAI_LOG_LEVEL": "debug"}, data_dir=tmp_path)
    try:
        token = asyncio.run(_drive_a_real_server(url.replace("http", "ws") + "/ws"))
    finally:
        stop_server(proc)
    text = log.read_text()
    assert "session" in text and "DEBUG" in text  # it did log, at debug level
    assert token not in text


# -- viewers cannot drive ---------------------------------------------------------------------
DRIVING = [
    {"type": "control", "action": "play"},
    {"type": "control", "action": "pause"},
    {"type": "control", "action": "step", "count": 5},
    {"type": "control", "action": "reset"},
    {"type": "set", "params": {"lr": 0.2}},
    {"type": "infer", "input": {}},
    {"type": "share"},
    {"type": "view", "state": {"head": 1}},
    {"type": "save", "name": "mine now"},
]


@pytest.mark.parametrize("msg", DRIVING, ids=lambda m: m.get("action") or m["type"])
def test_a_viewer_cannot_drive(client, msg):
    with client.websocket_connect("/ws") as driver:
        ready = open_lab(driver, "linear-regression")
        step(driver, 2)
        with client.websocket_connect("/ws") as viewer:
            send(viewer, {"type": "join", "session": ready["session"]})
            assert recv(viewer)["role"] == "viewer"
            send(viewer, msg)
            err, seen = recv_until(viewer, lambda m: m["type"] == "error")
            assert err["code"] == "forbidden", err
            assert not [m for m in seen if m["type"] in ("shared", "saved", "params")]
            # The session is as the driver left it: same run, step and params.
            last = step(driver, 1)[-1]
            assert (last["run"], last["step"], last["state"]) == (0, 3, "paused")
            send(driver, {"type": "view", "state": {"hover": 1}})
            _, seen = recv_until(driver, lambda m: m["type"] == "view")
            assert not [m for m in seen if m["type"] in ("params", "view", "shared")]
    assert client.get("/api/runs").json() == []  # a viewer's `save` stored nothing


def test_a_viewers_seek_goes_to_that_viewer_only(client):
    with client.websocket_connect("/ws") as driver:
        ready = open_lab(driver, "linear-regression")
        step(driver, 4)
        with client.websocket_connect("/ws") as viewer:
            send(viewer, {"type": "join", "session": ready["session"]})
            recv_until(viewer, lambda m: m["type"] == "frame" and m["step"] == 4)
            send(viewer, {"type": "seek", "step": 1})
            f, _ = recv_until(viewer, lambda m: m["type"] == "frame" and m["header"].get("replay"))
            assert f["step"] == 1
            send(driver, {"type": "view", "state": {"hover": 2}})
            _, seen = recv_until(driver, lambda m: m["type"] == "view")
            assert not [m for m in seen if m["type"] == "frame" and m["header"].get("replay")]
