"""A class that follows the teacher: join codes, view state, fork, connection counts."""

import re

from backend.classroom import ALPHABET
from tests.wsutil import open_lab, recv, recv_until, scalar_rows, send, step


def share(ws) -> str:
    send(ws, {"type": "share"})
    shared, _ = recv_until(ws, lambda m: m["type"] == "shared")
    assert shared["url"] == f"/join/{shared['code']}"
    return shared["code"]


def test_join_code_has_no_look_alikes():
    assert not set("0O1IlL") & set(ALPHABET)


def test_student_joins_by_code_follows_view_and_cannot_drive(client):
    with client.websocket_connect("/ws") as teacher:
        open_lab(teacher, "linear-regression")
        code = share(teacher)
        assert re.fullmatch(f"[{ALPHABET}]{{6}}", code)
        assert share(teacher) == code  # one code per session
        step(teacher, 3)
        # linear-regression has the generic view keys only (test_view_keys: a lab's own)
        send(teacher, {"type": "view", "state": {"blank": False, "hover": 2, "present": True}})
        with client.websocket_connect("/ws") as student:
            send(student, {"type": "join", "code": code.lower()})  # typed by hand
            ready = recv(student)
            assert ready["role"] == "viewer" and "token" not in ready and ready["step"] == 3
            view, seen = recv_until(student, lambda m: m["type"] == "view")
            assert view["state"] == {"blank": False, "hover": 2, "present": True}
            assert not [m for m in seen if m["type"] == "shared"]  # the code view is the teacher's
            count, _ = recv_until(
                teacher, lambda m: m["type"] == "status" and m["connections"] == 2
            )
            send(teacher, {"type": "view", "state": {"hover": 4, "scrub": 1}})
            view, _ = recv_until(student, lambda m: m["type"] == "view")
            assert view["state"] == {"hover": 4, "scrub": 1}
            send(student, {"type": "control", "action": "step"})
            err, _ = recv_until(student, lambda m: m["type"] == "error")
            assert err["code"] == "forbidden"
            send(student, {"type": "view", "state": {"hover": 0}})
            err, _ = recv_until(student, lambda m: m["type"] == "error")
            assert err["code"] == "forbidden"


def test_wrong_codes_are_refused_and_rate_limited(client):
    sessions = client.app.state.sessions
    sessions.shared.clock = lambda: 1000.0  # no turn comes back during the test
    sessions.join_turns.wait_s = 0  # and a lookup without one is not kept waiting
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "join", "code": "ZZZZZZ"})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "not_found" and err["field"] == "code"
        for i in range(40):  # distinct codes: one asked again is answered again, free
            send(ws, {"type": "join", "code": f"ZZZ{i:03d}".replace("0", "A").replace("1", "B")})
        codes = set()
        for _ in range(40):
            err, _ = recv_until(ws, lambda m: m["type"] == "error")
            codes.add(err["code"])
        assert "busy" in codes  # a guesser is stopped


def test_fork_copies_weights_step_and_history_and_leaves_the_teacher_alone(client):
    with client.websocket_connect("/ws") as teacher:
        ready = open_lab(teacher, "linear-regression")
        msgs = step(teacher, 4)
        teacher_w = [m for m in msgs if m["type"] == "frame"][-1]["header"]["scalars"]["w_x"]
        with client.websocket_connect("/ws") as student:
            send(student, {"type": "join", "session": ready["session"]})
            recv_until(student, lambda m: m["type"] == "frame")
            send(student, {"type": "fork"})
            forked, _ = recv_until(student, lambda m: m["type"] == "ready")
            assert forked["role"] == "driver" and forked["token"] and forked["step"] == 4
            assert forked["session"] != ready["session"]
            hist, _ = recv_until(student, lambda m: m["type"] == "history")
            assert hist["steps"] == [0, 1, 2, 3, 4]  # the curve goes on, no gap
            frame, _ = recv_until(student, lambda m: m["type"] == "frame")
            assert frame["header"]["scalars"]["w_x"] == teacher_w  # the weights came along
            send(student, {"type": "set", "params": {"lr": 0.3}})
            recv_until(student, lambda m: m["type"] == "params")
            rows = scalar_rows(step(student, 5))
            assert max(rows) == 9
        # The teacher's session did not move and kept its params.
        before = recv_until(teacher, lambda m: m["type"] == "status" and m["connections"] == 1)[0]
        assert before["step"] == 4
        send(teacher, {"type": "control", "action": "step"})
        status, seen = recv_until(teacher, lambda m: m["type"] == "status" and m["step"] >= 5)
        assert status["step"] == 5
        assert all(m.get("params", {}).get("lr", 0.1) == 0.1 for m in seen)


def test_join_link_and_qr(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression")
        code = share(ws)
        r = client.get(f"/join/{code}", follow_redirects=False)
        assert r.status_code == 303
        assert r.headers["location"] == f"/lab.html?lab=linear-regression&join={code}"
        qr = client.get(f"/api/join/{code}/qr.svg")
        assert qr.status_code == 200 and qr.headers["content-type"] == "image/svg+xml"
        assert qr.text.lstrip().startswith("<?xml") or "<svg" in qr.text
    assert client.get("/join/ZZZZZZ", follow_redirects=False).status_code == 404


def test_save_then_reopen_as_replay_and_resume(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "linear-regression", {"lr": 0.05})
        step(ws, 6)
        send(ws, {"type": "save", "name": "my first fit"})
        saved, _ = recv_until(ws, lambda m: m["type"] == "saved")
    runs = client.get("/api/runs").json()
    summary = next(r for r in runs if r["id"] == saved["run"])
    assert (
        summary["name"] == "my first fit"
        and summary["step"] == 6
        and summary["lab"] == "linear-regression"
    )

    with client.websocket_connect("/ws") as ws:  # replay: read-only, history and frames intact
        send(ws, {"type": "open", "run": saved["run"]})
        again, _ = recv_until(ws, lambda m: m["type"] == "ready")
        assert again["read_only"] and again["step"] == 6 and again["params"]["lr"] == 0.05
        hist, _ = recv_until(ws, lambda m: m["type"] == "history")
        assert hist["steps"] == list(range(7))
        send(ws, {"type": "seek", "step": 3})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame" and m["step"] == 3)
        assert f["header"]["run"] == 0
        send(ws, {"type": "control", "action": "step"})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "forbidden"

    with client.websocket_connect("/ws") as ws:  # resume: training goes on from step 6
        send(ws, {"type": "open", "run": saved["run"], "mode": "resume"})
        again, _ = recv_until(ws, lambda m: m["type"] == "ready")
        assert not again["read_only"]
        rows = scalar_rows(step(ws, 2))
        assert max(rows) == 8 and rows[8]["loss"] < rows[6]["loss"]

    headers = {"X-Shaomai-Token": "wrong"}
    assert client.delete(f"/api/runs/{saved['run']}", headers=headers).status_code == 403
    headers = {"X-Shaomai-Token": ready["token"]}
    assert client.delete(f"/api/runs/{saved['run']}", headers=headers).status_code == 204
