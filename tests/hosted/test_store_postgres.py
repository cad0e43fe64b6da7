"""Saved runs in a real PostgreSQL (issue 18): what two replicas see, a big run, an outage.

The store tests of tests/backend (test_store.py, test_runs_api.py) already run every store
call against PostgreSQL too; these are what only a shared database server has: two RunStore
objects on one database (two replicas) see each other's saves at once, a run saved through
one app reopens (listed, replayed, resumed) through the other, and a server that goes away
mid-session: saving answers an error the page shows, the session keeps training, the HTTP
routes answer 503, an autosave is logged, and once the server is back the next save works.
The cluster is started by tests/hosted/postgres.py (skipped where PostgreSQL is missing).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import random

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, update

import backend.app
from backend.config import Settings
from backend.labs import load_all
from backend.manager import SessionManager
from backend.store import RunStore, StoreError, StoreUnavailable
from backend.store_schema import store_schema
from tests.backend.saved_runs import TOKEN, make_run, same_run
from tests.hosted import postgres, servers
from tests.wsutil import open_lab, recv_until, send, step

load_all()
LAB = "linear-regression"


@pytest.fixture
def pg():
    return postgres.shared()


@pytest.fixture
def url(pg):
    return pg.url()


@pytest.fixture
def outage(pg):
    """The shared server, started again after the test whatever happened."""
    yield pg
    if not pg.running():
        pg.start()


def test_two_replicas_see_each_others_saves_at_once(url):
    a, b = RunStore(url), RunStore(url)  # two replicas, one database
    try:
        sid = "session-id-of-a-page-0123456789"
        from backend.saved_run import hash_token

        run = dataclasses.replace(make_run(), session_hash=hash_token(sid), class_code="K7QX")
        run_id = a.save(run)
        assert [s["id"] for s in b.list()] == [run_id]
        assert same_run(b.get(run_id), run) and b.get(run_id).class_code == "K7QX"
        assert [r["id"] for r in b.of_session(sid)] == [run_id]
        assert b.classes(since=0) == {"K7QX": LAB}
        # Autosave slots are one a session whichever replica writes them.
        auto = dataclasses.replace(run, autosave=True, class_code="")
        first = b.save(auto)
        second = a.save(auto)
        assert {r["id"] for r in b.of_session(sid)} == {run_id, second}
        assert a.get(first) is None and b.list() == a.list()
        # B renames and deletes what A saved; A sees it at once.
        assert b.rename(run_id, TOKEN, "renamed on B")
        assert a.summary(run_id)["name"] == "renamed on B"
        assert not a.delete(run_id, "wrong token") and b.delete(run_id, TOKEN)
        assert a.get(run_id) is None and a.summary(run_id) is None
        assert a.list() == [] and [r["id"] for r in a.of_session(sid)] == [second]
    finally:
        a.close()
        b.close()


def test_a_big_run_with_frames_round_trips(url):
    rng = random.Random(7)
    run = make_run()
    frames = [(s, rng.randbytes(512 * 1024)) for s in range(48)]  # 24 MiB of frames
    big = dataclasses.replace(run, frames=frames, weights=rng.randbytes(3 * 2**20))
    store = RunStore(url)
    try:
        got = store.get(store.save(big))
        assert got.frames == frames and got.weights == big.weights
        summary = store.list()[0]
        assert summary["frames"] == 48 and summary["frames_bytes"] == 48 * 512 * 1024
    finally:
        store.close()


def test_a_name_postgresql_cannot_hold_is_refused_naming_the_field(url):
    store = RunStore(url)
    try:
        with pytest.raises(ValueError, match="name:"):
            store.save(dataclasses.replace(make_run(), name="a\0b"))
        run_id = store.save(make_run())
        with pytest.raises(ValueError, match="name:"):
            store.rename(run_id, TOKEN, "a\0b")
    finally:
        store.close()


def test_a_newer_schema_is_refused_and_the_tables_are_made_once(url):
    RunStore(url).close()
    RunStore(url).close()  # a second replica finds them made
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(update(store_schema).values(version=99))
    engine.dispose()
    with pytest.raises(StoreError, match="newer Shaomai Lab"):
        RunStore(url)


def test_an_outage_fails_saving_clearly_and_the_next_save_after_it_works(outage, caplog):
    url = outage.url()
    store = RunStore(url)
    try:
        kept = store.save(make_run())
        caplog.set_level(logging.WARNING, "shaomai.store")
        outage.stop()
        for call in (
            lambda: store.save(make_run()),
            store.list,
            lambda: store.get(kept),
            lambda: store.of_session("x" * 22),
            lambda: store.delete(kept, TOKEN),
        ):
            with pytest.raises(StoreUnavailable, match="does not answer"):
                call()
        logged = caplog.text
        assert "shaomai:***@127.0.0.1" in logged and outage.password not in logged
        outage.start()
        again = store.save(make_run())  # pool_pre_ping: the dead connections are replaced
        assert {s["id"] for s in store.list()} == {kept, again}
    finally:
        store.close()


def test_a_replica_started_while_the_database_is_down_serves_once_it_answers(outage, caplog):
    url = outage.url()
    outage.stop()
    store = RunStore(url)  # starts anyway: sessions need no database
    try:
        with pytest.raises(StoreUnavailable):
            store.save(make_run())
        outage.start()
        run_id = store.save(make_run())
        assert store.get(run_id).name == "my run"
    finally:
        store.close()
    assert outage.password not in caplog.text


def test_an_autosave_during_an_outage_is_logged_and_the_session_lives(outage, caplog):
    async def scenario(url):
        store = RunStore(url)
        manager = SessionManager(Settings(autosave_s=180), store)
        try:
            s = await manager.create(LAB, {}, 0, "10.0.0.1")
            await s.step_n(2)
            outage.stop()
            assert await manager.autosave(s) is None
            await s.step_n(2)  # still training
            assert s.step == 4
            outage.start()
            assert await manager.autosave(s)
            assert store.of_session(s.id)[0]["step"] == 4
        finally:
            await manager.stop()
            store.close()

    servers.run_apart(scenario(outage.url()))
    assert "autosave failed" in caplog.text


class _StoreAt:
    """backend.app's store, pointed at `url` whichever constructor app.py calls."""

    def __init__(self, url: str):
        self.url = url

    def __call__(self, *_args, **_kwargs) -> RunStore:
        return RunStore(self.url)

    def from_settings(self, _settings) -> RunStore:
        return RunStore(self.url)


def _app(url: str, tmp_path, name: str, monkeypatch):
    monkeypatch.setattr(backend.app, "RunStore", _StoreAt(url))
    settings = Settings(data_dir=tmp_path / name, database_url=url, autosave_s=0)
    return backend.app.create_app(settings)


def test_a_run_saved_on_replica_a_is_listed_replayed_and_resumed_on_b(url, tmp_path, monkeypatch):
    app_a, app_b = (_app(url, tmp_path, n, monkeypatch) for n in ("a", "b"))
    with TestClient(app_a) as a, TestClient(app_b) as b:
        with a.websocket_connect("/ws") as ws:
            open_lab(ws, LAB, {"lr": 0.05})
            step(ws, 4)
            send(ws, {"type": "save", "name": "saved on A"})
            saved, _ = recv_until(ws, lambda m: m["type"] in ("saved", "error"))
            assert saved["type"] == "saved", saved
        run_id = saved["run"]
        assert [r["name"] for r in b.get("/api/runs").json()] == ["saved on A"]
        for mode in ("replay", "resume"):
            with b.websocket_connect("/ws") as ws:
                send(ws, {"type": "open", "run": run_id, "mode": mode})
                ready, _ = recv_until(ws, lambda m: m["type"] in ("ready", "error"))
                assert ready["type"] == "ready", ready
                assert ready["step"] == 4 and ready["params"]["lr"] == 0.05
                assert ready["read_only"] is (mode == "replay")
                if mode == "resume":
                    step(ws, 2)  # it trains on from where A saved it


def test_saving_during_an_outage_is_an_error_the_page_shows(outage, tmp_path, monkeypatch):
    url = outage.url()
    with TestClient(_app(url, tmp_path, "a", monkeypatch)) as c:
        with c.websocket_connect("/ws") as ws:
            open_lab(ws, LAB, {})
            step(ws, 2)
            outage.stop()
            send(ws, {"type": "save", "name": "during the outage"})
            err, _ = recv_until(ws, lambda m: m["type"] in ("saved", "error"))
            assert err["type"] == "error" and err["code"] == "busy", err
            assert err["key"] == "err.store_unavailable" and "does not answer" in err["message"]
            r = c.get("/api/runs")
            assert r.status_code == 503 and "does not answer" in r.json()["detail"]
            assert r.headers["retry-after"] == "30"
            step(ws, 2)  # the session keeps running
            outage.start()
            send(ws, {"type": "save", "name": "after the outage"})
            saved, _ = recv_until(ws, lambda m: m["type"] in ("saved", "error"))
            assert saved["type"] == "saved", saved
        assert [r["name"] for r in c.get("/api/runs").json()] == ["after the outage"]


def test_the_cli_checks_a_postgresql_store_without_showing_its_password(url):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "SHAOMAI_DATABASE_URL": url}
    cmd = [sys.executable, "-m", "backend.store", "check"]
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "passed" in done.stderr and url.split(":")[2].split("@")[0] not in done.stderr
    cmd = [sys.executable, "-m", "backend.store", "backup", "/tmp/x.db"]
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "pg_dump" in done.stderr
