"""Runs that vanish (issue 12): a live session is autosaved every SHAOMAI_AUTOSAVE_S seconds
(and when it is shared, and when the server stops) into one autosave slot per session, so
after a restart the page finds it with /api/runs/latest?session=ID and reopens it."""

from __future__ import annotations

import asyncio
import time

from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from backend.labs import load_all
from backend.manager import SessionManager
from backend.store import RunStore
from tests.wsutil import open_lab, recv_until, send, step

load_all()
LAB = "linear-regression"


def _wired(c: TestClient) -> SessionManager:
    """The app's manager, which the app gave its store (without it nothing autosaves)."""
    manager = c.app.state.sessions
    assert manager.store is c.app.state.store
    return manager


def _latest(c: TestClient, *sids: str):
    return c.get("/api/runs/latest", params=[("session", s) for s in sids])


def _wait_latest(c: TestClient, sid: str, step_: int, seconds: float = 20.0) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        r = _latest(c, sid)
        if r.status_code == 200 and r.json()["step"] == step_:
            return r.json()
        time.sleep(0.05)
    raise AssertionError(f"no autosave at step {step_}: {r.status_code} {r.text}")


def test_default_is_every_three_minutes_and_the_env_sets_it(monkeypatch):
    assert Settings().autosave_s == 180.0
    monkeypatch.setenv("SHAOMAI_AUTOSAVE_S", "0")
    assert Settings().autosave_s == 0.0


def test_share_autosaves_and_a_restart_finds_and_restores_it(tmp_path):
    settings = Settings(data_dir=tmp_path, autosave_s=180)
    with TestClient(create_app(settings)) as c:
        _wired(c)
        with c.websocket_connect("/ws") as ws:
            ready = open_lab(ws, LAB, {"lr": 0.05})
            sid = ready["session"]
            step(ws, 3)
            assert _latest(c, sid).status_code == 204  # nothing saved yet
            send(ws, {"type": "share"})
            recv_until(ws, lambda m: m["type"] == "shared")
            found = _wait_latest(c, sid, 3)
            assert found["autosave"] is True and found["lab"] == LAB
            # An autosave is not in the public list (a class's forty slots would bury it).
            assert all(r["id"] != found["id"] for r in c.get("/api/runs").json())
    # The server restarts: same data dir, no sessions.
    with TestClient(create_app(settings)) as c:
        found = _latest(c, sid).json()
        assert found["step"] >= 3 and found["autosave"]
        with c.websocket_connect(f"/ws?session={sid}") as ws:
            err, _ = recv_until(ws, lambda m: m["type"] == "error")
            assert err["key"] == "err.no_session"  # what the page hears first
            send(ws, {"type": "open", "run": found["id"], "mode": "resume"})
            again, _ = recv_until(ws, lambda m: m["type"] == "ready")
            assert again["session"] == sid and again["step"] == found["step"]
            assert again["params"]["lr"] == 0.05 and not again["read_only"]


def test_one_slot_a_session_replaced_and_unchanged_sessions_are_not_saved_again(tmp_path):
    async def scenario():
        store = RunStore(tmp_path / "runs.db")
        manager = SessionManager(Settings(autosave_s=180), store)
        try:
            s = await manager.create(LAB, {}, 0, "10.0.0.1")
            assert await manager.autosave(s) is None  # step 0, nothing kept: nothing to save
            await s.step_n(2)
            first = await manager.autosave(s)
            assert first and await manager.autosave(s) is None  # it did not move
            await s.step_n(3)
            second = await manager.autosave(s)
            rows = store.of_session(s.id)
            assert [r["id"] for r in rows] == [second] and rows[0]["step"] == 5
            assert store.get(first) is None  # replaced, not piled up
            # A save by hand stands beside the slot; the newest of both is the latest.
            from backend.saving import save_session

            mine = await save_session(store, s, "before the lr change")
            assert {r["id"] for r in store.of_session(s.id)} == {second, mine}
            assert [r["id"] for r in store.list()] == [mine]
            await s.step_n(1)
            third = await manager.autosave(s)
            assert {r["id"] for r in store.of_session(s.id)} == {third, mine}
            # A replay is never autosaved.
            s.read_only = True
            assert await manager.autosave(s, force=True) is None
        finally:
            await manager.stop()
            store.close()

    asyncio.run(scenario())


def test_the_periodic_autosave_and_the_stop_save_every_session_that_moved(tmp_path):
    async def scenario():
        store = RunStore(tmp_path / "runs.db")
        manager = SessionManager(Settings(autosave_s=0.2, reap_interval_s=60), store)
        manager.start()
        try:
            a = await manager.create(LAB, {}, 0, "10.0.0.1")
            b = await manager.create(LAB, {}, 0, "10.0.0.2")
            await a.step_n(4)
            deadline = time.monotonic() + 20
            while not store.of_session(a.id) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert store.of_session(a.id)[0]["step"] == 4
            assert store.of_session(b.id) == []  # b never moved
            await b.step_n(2)
            await a.step_n(1)
        finally:
            await manager.stop()  # a graceful stop saves what moved since
        assert store.of_session(a.id)[0]["step"] == 5
        assert store.of_session(b.id)[0]["step"] == 2
        store.close()

    asyncio.run(scenario())


def test_autosave_off(tmp_path):
    with TestClient(create_app(Settings(data_dir=tmp_path, autosave_s=0))) as c:
        manager = _wired(c)
        with c.websocket_connect("/ws") as ws:
            sid = open_lab(ws, LAB)["session"]
            step(ws, 2)
            send(ws, {"type": "share"})
            recv_until(ws, lambda m: m["type"] == "shared")
            time.sleep(0.3)
        assert manager._autosaver is None
    assert _latest_after(tmp_path, sid) == 204


def _latest_after(tmp_path, sid: str) -> int:
    with TestClient(create_app(Settings(data_dir=tmp_path, autosave_s=0))) as c:
        return _latest(c, sid).status_code


def test_latest_takes_several_sessions_and_checks_the_ids(tmp_path):
    with TestClient(create_app(Settings(data_dir=tmp_path))) as c:
        _wired(c)
        with c.websocket_connect("/ws") as a, c.websocket_connect("/ws") as b:
            sa = open_lab(a, LAB)["session"]
            sb = open_lab(b, LAB)["session"]
            step(a, 2)
            send(a, {"type": "save", "name": "a"})
            recv_until(a, lambda m: m["type"] == "saved")
            step(b, 3)
            send(b, {"type": "save", "name": "b"})
            recv_until(b, lambda m: m["type"] == "saved")
        newest = _latest(c, sa, sb).json()
        assert newest["name"] == "b" and newest["autosave"] is False
        assert _latest(c, sa).json()["name"] == "a"
        assert _latest(c, "short").status_code == 204  # not a session id: nothing saved
        assert c.get("/api/runs/latest").status_code == 422
        assert _latest(c, "x" * 30).status_code == 204


def test_latest_of_sessions_with_nothing_saved_is_204_no_body(tmp_path):
    """Nothing saved is an answer, not a missing resource: a page asking after a lost session
    (back/forward between labs) must not log a 404 in the learner's console."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as c:
        r = _latest(c, "A" * 22)
        assert r.status_code == 204 and r.content == b""
