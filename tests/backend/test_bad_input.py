"""Bad input gets a clear error; the connection stays open and the session is unharmed."""

import json

import pytest

from backend.config import Settings
from tests.wsutil import open_lab, recv_until, send, step


def expect_error(ws, code):
    err, _ = recv_until(ws, lambda m: m["type"] == "error")
    assert err["code"] == code, err
    return err


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("{not json", "bad_message"),
        ("[1, 2]", "bad_message"),
        ('{"type": "dance"}', "bad_message"),
        ('{"no_type": 1}', "bad_message"),
        ('{"type": "control", "action": "fly"}', "bad_message"),
        ('{"type": "control", "action": "step", "count": "many"}', "bad_message"),
        ('{"type": "control", "action": "step", "count": -3}', "bad_message"),
        ('{"type": "seek", "step": 1e400}', "bad_message"),
        ('{"type": "control", "action": "play", "extra": 1}', "bad_message"),
        ("[" * 5000 + "]" * 5000, "bad_message"),
    ],
)
def test_malformed_messages_are_answered_and_the_session_survives(client, raw, code):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression")
        ws.send_text(raw)
        expect_error(ws, code)
        assert step(ws, 1)[-1]["step"] == 1  # still alive and driving


def test_oversized_and_binary_messages(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression")
        ws.send_text(json.dumps({"type": "infer", "input": {"x": "a" * 300_000}}))
        err = expect_error(ws, "too_large")
        assert "262144" in err["message"]
        assert err["key"] == "err.message_size" and err["values"]["cap"] == 262144
        ws.send_text(json.dumps({"type": "infer", "input": {"x": "好" * 90_000}}))  # 270 KB
        expect_error(ws, "too_large")
        ws.send_bytes(b"\x00\x01")
        assert expect_error(ws, "bad_message")["key"] == "err.binary"
        assert step(ws, 1)[-1]["step"] == 1


def test_messages_before_open(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "control", "action": "step"})
        err = expect_error(ws, "bad_message")
        assert "before" in err["message"] and err["key"] == "err.open_first"
        send(ws, {"type": "join", "session": "nope"})
        err = expect_error(ws, "not_found")
        assert err["field"] == "session" and err["key"] == "err.no_session"


def test_unknown_lab(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "no-such-lab"})
        err = expect_error(ws, "not_found")
        assert err["field"] == "lab" and err["key"] == "err.no_lab"
        assert err["values"] == {"lab": "no-such-lab"}
        open_lab(ws, "linear-regression")  # the same connection can still open one


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"lr": 5.0}, "lr"),
        ({"lr": -1}, "lr"),
        ({"lr": "fast"}, "lr"),
        ({"dataset": "mnist"}, "dataset"),
        ({"unknown": 1}, "unknown"),
        ({"points": [[1, 2]] * 51}, "points"),
        ({"points": [[1, 2000]]}, "points"),
    ],
)
def test_invalid_params_name_the_field(client, params, field):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "linear-regression", "params": params})
        err = expect_error(ws, "invalid_params")
        assert err["field"] == field or err["field"].startswith(field), err
        ready = open_lab(ws, "linear-regression")
        send(ws, {"type": "set", "params": params})
        err = expect_error(ws, "invalid_params")
        assert err["field"].startswith(field)
        step(ws, 1)  # the session kept its old params and still runs
        assert ready["params"]["lr"] == 0.1


def test_session_cap_is_busy(tmp_path):
    from fastapi.testclient import TestClient

    from backend.app import create_app

    with TestClient(create_app(Settings(max_sessions=1, data_dir=tmp_path))) as c:
        with c.websocket_connect("/ws") as a, c.websocket_connect("/ws") as b:
            open_lab(a, "linear-regression")
            send(b, {"type": "open", "lab": "linear-regression"})
            expect_error(b, "busy")


def test_message_flood_is_throttled(tmp_path):
    from fastapi.testclient import TestClient

    from backend.app import create_app

    with TestClient(create_app(Settings(messages_per_s=5, data_dir=tmp_path))) as c:
        with c.websocket_connect("/ws") as ws:
            open_lab(ws, "linear-regression")
            for _ in range(30):
                send(ws, {"type": "subscribe", "tensors": "*"})
            expect_error(ws, "busy")
