"""Every message the server sends is one of backend/protocol.py's models, byte for byte."""

from __future__ import annotations

import json
import re
import secrets
from typing import get_args

from backend import protocol, wire
from tests.conftest import ROOT
from tests.wsutil import receive_within, send

LAB = "linear-regression"


class Recorder:
    """A websocket that keeps every raw message it receives."""

    def __init__(self, ws):
        self.ws = ws
        self.texts: list[str] = []
        self.frames: list[bytes] = []

    def until(self, pred) -> dict:
        while True:
            raw = receive_within(self.ws)
            if raw.get("bytes") is not None:
                self.frames.append(raw["bytes"])
                continue
            self.texts.append(raw["text"])
            msg = json.loads(raw["text"])
            if pred(msg):
                return msg


def check(texts: list[str], frames: list[bytes]) -> set[str]:
    """Each text validates against its model and re-serializes to the very same bytes."""
    kinds = set()
    for text in texts:
        msg = protocol.server_message.validate_json(text)
        compact = json.dumps(protocol.dump(msg), separators=(",", ":"))
        spaced = json.dumps(protocol.dump(msg))  # scalars and history use json's default
        assert text in (compact, spaced), text[:300]
        kinds.add(msg.type)
    for data in frames:
        header, _ = wire.decode(data)
        protocol.FrameHeader.model_validate(header)
    return kinds


def test_every_message_of_a_session_validates_against_its_model(client):
    sid = secrets.token_urlsafe(16)
    with client.websocket_connect(f"/ws?session={sid}") as raw:
        d = Recorder(raw)
        d.until(lambda m: m["type"] == "error")  # not_found: the new id is free
        send(raw, {"type": "open", "lab": LAB})
        ready = d.until(lambda m: m["type"] == "ready")
        send(raw, {"type": "control", "action": "step", "count": 3})
        d.until(lambda m: m["type"] == "status" and m["step"] == 3)
        send(raw, {"type": "set", "params": {"lr": 0.05}})
        d.until(lambda m: m["type"] == "params")
        send(raw, {"type": "share"})
        d.until(lambda m: m["type"] == "shared")
        send(raw, {"type": "view", "state": {"present": True, "scrub": 2}})
        d.until(lambda m: m["type"] == "view")
        send(raw, {"type": "save", "name": "models"})
        d.until(lambda m: m["type"] == "saved")
        send(raw, {"type": "control", "action": "keep", "label": "first"})
        d.until(lambda m: m["type"] == "kept")
        diverging = {"dataset": "live-stream", "features": "raw", "loss": "mse", "lr": 1e-9}
        send(raw, {"type": "set", "params": diverging})  # resets
        send(raw, {"type": "control", "action": "play"})
        d.until(lambda m: m["type"] == "status" and m["state"] == "diverged")
        for bad in ({"type": "nope"}, {"type": "join", "session": "x"}):
            send(raw, bad)
            d.until(lambda m: m["type"] == "error" and m["code"] != "diverged")
        with client.websocket_connect(f"/ws?session={sid}") as raw_viewer:
            v = Recorder(raw_viewer)
            v.until(lambda m: m["type"] == "view")  # the view follows ready for a viewer
            send(raw_viewer, {"type": "control", "action": "pause"})
            v.until(lambda m: m["type"] == "error")
        assert ready["session"] == sid and ready["kept"] == []
        kinds = check(d.texts, d.frames) | check(v.texts, v.frames)
    sent = {"ready", "status", "scalars", "history", "params", "error", "view", "shared"}
    assert kinds >= sent | {"saved", "kept"}, kinds


def test_optional_fields_are_left_out_as_before():
    assert protocol.dump(protocol.error("busy", "slow down")) == {
        "type": "error",
        "code": "busy",
        "message": "slow down",
    }
    keyed = protocol.dump(protocol.error("forbidden", "no", "token", "err.token"))
    assert list(keyed) == ["type", "code", "message", "field", "key", "values"]
    assert keyed["values"] == {}


def test_no_server_message_is_a_hand_made_dict():
    """A new message must be a model: no `{"type": ...}` literal outside wire.py's frame."""
    kinds = get_args(get_args(protocol.ServerMessage)[0])
    names = "|".join(get_args(k.model_fields["type"].annotation)[0] for k in kinds)
    literal = re.compile(rf"""\{{\s*["']type["']\s*:\s*["']({names})["']""")
    assert "kept" in names and literal.search('{"type": "status", "run": 0}')
    found = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "backend").rglob("*.py")
        if path.name != "wire.py" and literal.search(path.read_text(encoding="utf-8"))
    ]
    assert not found, found


def text(msg) -> str:
    return json.dumps(protocol.dump(msg), separators=(",", ":"))


def test_the_bytes_are_those_of_the_documented_field_order():
    status = protocol.Status(run=1, state="paused", step=5, connections=2)
    assert text(status) == '{"type":"status","run":1,"state":"paused","step":5,"connections":2}'
    ready = protocol.Ready(
        session="s",
        role="viewer",
        lab="x",
        params={"a": 1},
        schema={},
        seed=0,
        step=0,
        state="paused",
        run=0,
    )
    assert text(ready) == (
        '{"type":"ready","protocol":1,"session":"s","role":"viewer","lab":"x","params":{"a":1},'
        '"schema":{},"seed":0,"step":0,"state":"paused","run":0,"read_only":false,"kept":[]}'
    )
    err = protocol.error("not_found", "no", "session", "err.no_session")
    assert text(err) == (
        '{"type":"error","code":"not_found","message":"no","field":"session",'
        '"key":"err.no_session","values":{}}'
    )
    scalars = protocol.Scalars(run=0, step=3, values={"loss": "NaN", "b": 0.5})
    assert json.dumps(protocol.dump(scalars)) == (
        '{"type": "scalars", "run": 0, "step": 3, "values": {"loss": "NaN", "b": 0.5}}'
    )
    history = protocol.History(run=0, steps=[1, 2], values={"loss": [1.0, None]})
    assert text(history) == '{"type":"history","run":0,"steps":[1,2],"values":{"loss":[1.0,null]}}'
    params = protocol.ParamsChanged(params={"lr": 0.1}, reset=False)
    assert text(params) == '{"type":"params","params":{"lr":0.1},"reset":false}'
    assert text(protocol.Shared(code="AB", url="/join/AB")) == (
        '{"type":"shared","code":"AB","url":"/join/AB"}'
    )
    assert text(protocol.Saved(run="r")) == '{"type":"saved","run":"r"}'


def test_the_plain_dump_of_the_hot_path_equals_the_full_one():
    scalars = protocol.Scalars.model_construct(run=2, step=3, values={"loss": "NaN"})
    history = protocol.History.model_construct(run=0, steps=[1], values={"a": [None]})
    for msg in (scalars, history):
        assert json.dumps(protocol.dump_plain(msg)) == json.dumps(protocol.dump(msg))
