"""The session id in the websocket URL: `/ws?session=ID` joins on connect, `open` creates ID."""

import secrets

import pytest

from tests.wsutil import recv, recv_until, send, step

LAB = "linear-regression"


def new_id() -> str:
    return secrets.token_urlsafe(16)  # what the page makes: 16 random bytes, 22 characters


def open_new(ws, sid: str) -> dict:
    """`open` on `/ws?session=SID` (SID free): not_found at connect, then `ready`."""
    first = recv(ws)
    assert first["type"] == "error" and first["code"] == "not_found", first
    assert first["field"] == "session" and first["key"] == "err.no_session"
    send(ws, {"type": "open", "lab": LAB})
    ready, _ = recv_until(ws, lambda m: m["type"] in ("ready", "error"))
    assert ready["type"] == "ready", ready
    recv_until(ws, lambda m: m["type"] == "frame")
    return ready


def test_open_under_the_pages_id_then_join_by_url(client):
    sid = new_id()
    with client.websocket_connect(f"/ws?session={sid}") as ws:
        ready = open_new(ws, sid)
        assert ready["session"] == sid and ready["role"] == "driver" and ready["token"]
        step(ws, 3)
        with client.websocket_connect(f"/ws?session={sid}") as viewer:  # no join message
            joined = recv(viewer)
            assert joined["type"] == "ready" and joined["role"] == "viewer"
            assert "token" not in joined and joined["step"] == 3
            hist, _ = recv_until(viewer, lambda m: m["type"] == "history")
            assert hist["steps"] == [0, 1, 2, 3]
            send(viewer, {"type": "control", "action": "step"})
            err, _ = recv_until(viewer, lambda m: m["type"] == "error")
            assert err["code"] == "forbidden"
    # The driver's reload (or a rejoin after a drop): the token in the URL too.
    with client.websocket_connect(f"/ws?session={sid}&token={ready['token']}") as ws:
        again = recv(ws)
        assert again["type"] == "ready" and again["role"] == "driver" and again["step"] == 3
        assert again["token"] == ready["token"]
        rows = step(ws, 1)
        assert rows[-1]["step"] == 4
    with client.websocket_connect(f"/ws?session={sid}&token=wrong") as ws:
        err = recv(ws)
        assert err["code"] == "forbidden" and err["key"] == "err.token"


def test_an_id_in_use_is_refused(client):
    sid = new_id()
    with client.websocket_connect(f"/ws?session={sid}") as a:
        open_new(a, sid)
        with client.websocket_connect(f"/ws?session={sid}") as b:
            assert recv(b)["role"] == "viewer"  # the URL joined it
            send(b, {"type": "open", "lab": LAB})
            err, _ = recv_until(b, lambda m: m["type"] == "error")
            assert err["code"] == "conflict" and err["field"] == "session"
            assert err["key"] == "err.session_in_use"


def test_two_pages_racing_for_one_new_id(client):
    sid = new_id()
    with (
        client.websocket_connect(f"/ws?session={sid}") as a,
        client.websocket_connect(f"/ws?session={sid}") as b,
    ):
        assert recv(a)["code"] == recv(b)["code"] == "not_found"
        send(a, {"type": "open", "lab": LAB})
        send(b, {"type": "open", "lab": LAB})
        answers = [recv_until(ws, lambda m: m["type"] in ("ready", "error"))[0] for ws in (a, b)]
        kinds = sorted(m["type"] if m["type"] == "ready" else m["code"] for m in answers)
        assert kinds == ["conflict", "ready"]


@pytest.mark.parametrize(
    "sid",
    [
        "short",
        "a" * 21,
        "a" * 65,
        "a" * 21 + "+",
        "a" * 21 + "/",
        "a" * 21 + "=",
        "a" * 21 + "%C3%A9",  # é
        "a" * 21 + "%00",
    ],
)
def test_a_bad_id_is_refused_and_the_in_band_messages_still_work(client, sid):
    with client.websocket_connect(f"/ws?session={sid}") as ws:
        err = recv(ws)
        assert err["code"] == "bad_message" and err["field"] == "session", err
        assert err["key"] == "err.session_id"
        send(ws, {"type": "open", "lab": LAB})
        ready, _ = recv_until(ws, lambda m: m["type"] == "ready")
        assert ready["session"] != sid and len(ready["session"]) == 22


def test_unknown_id_on_join_is_not_found(client):
    with client.websocket_connect(f"/ws?session={new_id()}&token=abc") as ws:
        err = recv(ws)
        assert err["code"] == "not_found" and err["field"] == "session"
        send(ws, {"type": "control", "action": "step"})  # still no session
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["key"] == "err.open_first"


def test_a_saved_run_opens_under_the_pages_id(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": LAB})
        recv_until(ws, lambda m: m["type"] == "frame")
        step(ws, 2)
        send(ws, {"type": "save", "name": "url"})
        saved, _ = recv_until(ws, lambda m: m["type"] == "saved")
    sid = new_id()
    with client.websocket_connect(f"/ws?session={sid}") as ws:
        assert recv(ws)["code"] == "not_found"
        send(ws, {"type": "open", "run": saved["run"]})
        ready, _ = recv_until(ws, lambda m: m["type"] == "ready")
        assert ready["session"] == sid and ready["read_only"] and ready["step"] == 2


def test_server_made_ids_are_128_bits(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": LAB})
        ready = recv(ws)
        assert len(ready["session"]) == 22  # 16 random bytes, url-safe base64
