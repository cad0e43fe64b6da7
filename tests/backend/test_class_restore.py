"""A class through a server restart (issue 12): the shared session's autosave keeps its join
code; after the restart the code is a class "away" (students' pages wait on it, it is not a
wrong code and is not given out again) until its teacher resumes the autosave with the
driver token, which brings the class back under the same code."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from backend.labs import load_all
from tests.wsutil import open_lab, recv_until, send, step

load_all()
LAB = "linear-regression"


def _latest(c: TestClient, sid: str, step_: int) -> dict:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        r = c.get("/api/runs/latest", params={"session": sid})
        if r.status_code == 200 and r.json()["step"] == step_:
            return r.json()
        time.sleep(0.05)
    raise AssertionError(f"no autosave at step {step_}")


def _join(c: TestClient, code: str) -> dict:
    with c.websocket_connect("/ws") as ws:
        send(ws, {"type": "join", "code": code})
        return recv_until(ws, lambda m: m["type"] in ("ready", "error"))[0]


def _a_shared_class(settings: Settings) -> tuple[str, str, str]:
    """Before the restart: a teacher at step 3 shares; its autosave. (code, session, token)"""
    with TestClient(create_app(settings)) as c, c.websocket_connect("/ws") as ws:
        ready = open_lab(ws, LAB)
        step(ws, 3)
        send(ws, {"type": "share"})
        code = recv_until(ws, lambda m: m["type"] == "shared")[0]["code"]
        _latest(c, ready["session"], 3)
        return code, ready["session"], ready["token"]


def test_a_restored_class_comes_back_under_its_code(tmp_path):
    settings = Settings(data_dir=tmp_path, autosave_s=180)
    code, sid, token = _a_shared_class(settings)
    with TestClient(create_app(settings)) as c:
        # Forty students' pages ask again and again: the class is away, never `busy`.
        for _ in range(40):
            err = _join(c, code)
            assert err["type"] == "error" and err["key"] == "err.class_away", err
            assert err["values"] == {"lab": LAB}
        # Reopening the link lands on the lab page, which waits for the class.
        r = c.get(f"/join/{code}", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].endswith(f"join={code}"), r.text
        run = _latest(c, sid, 3)["id"]
        # A resume without the teacher's token is a copy: the class stays away.
        with c.websocket_connect("/ws") as ws:
            send(ws, {"type": "open", "run": run, "mode": "resume", "token": "not-the-token"})
            assert recv_until(ws, lambda m: m["type"] == "ready")[0]["role"] == "driver"
            assert _join(c, code)["key"] == "err.class_away"
        # The teacher's page resumes with its token: the class is back under its code.
        with c.websocket_connect("/ws") as teacher:
            send(teacher, {"type": "open", "run": run, "mode": "resume", "token": token})
            ready, rest = recv_until(teacher, lambda m: m["type"] == "shared")
            assert ready["code"] == code
            student = _join(c, code)
            assert student["type"] == "ready" and student["role"] == "viewer", student
            assert student["step"] == 3
            # A new class never gets a code that is away or back.
            assert code not in c.app.state.sessions.classes_away


def test_a_new_share_never_takes_an_away_code(tmp_path):
    settings = Settings(data_dir=tmp_path, autosave_s=180)
    code, _, _ = _a_shared_class(settings)
    with TestClient(create_app(settings)) as c:
        manager = c.app.state.sessions
        assert manager.classes_away == {code: LAB}
        # The code generator is handed every code in use or away.
        import backend.manager as m

        seen = []
        real = m.new_code
        m.new_code = lambda taken: seen.append(set(taken)) or real(taken)
        try:
            with c.websocket_connect("/ws") as ws:
                open_lab(ws, LAB)
                send(ws, {"type": "share"})
                assert recv_until(ws, lambda m_: m_["type"] == "shared")[0]["code"] != code
        finally:
            m.new_code = real
        assert code in seen[0]
