"""Promise 1: every malformed message is answered, never fatal.

A property-based fuzz (hypothesis) sends a few hundred generated messages over one
websocket connection with an open session: arbitrary JSON, garbage text, binary frames and
near-valid protocol messages (a real message with a field replaced, added, dropped or
pushed to an extreme). After each one a probe (an unknown type with a numbered tag, which
the server must answer) shows the connection alive; a message the protocol refuses must
have its own `error` before the probe's. At the end the session still steps. The named
cases of the issue (NaN/inf, huge numbers, deep nesting, a 10 MB string, binary frames,
messages before `open`) are also checked one by one. The 10,000-message run against a
real server, with its memory, is `bench/fuzz.py`.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any, get_args

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from backend import protocol
from backend.app import create_app
from backend.config import Settings
from tests.wsutil import DEADLINE_S, NoAnswer, open_lab, recv, recv_until, send, step

CODES = set(get_args(protocol.ErrorCode))
LAB = "linear-regression"
MAX_BYTES = Settings().max_message_bytes

# Valid messages for an open linear-regression session (fork is left out: it would move the
# connection to a new session; open/join are in: on a connection with a session they are
# refused).
VALID: list[dict[str, Any]] = [
    {"type": "control", "action": "step", "count": 2},
    {"type": "control", "action": "play", "speed": 50},
    {"type": "control", "action": "pause"},
    {"type": "control", "action": "reset"},
    {"type": "set", "params": {"lr": 0.05}},
    {"type": "set", "params": {"features": "zscore", "batch": "mini"}},
    {"type": "seek", "step": 1},
    {"type": "infer", "input": {"x": 1.5}},
    {"type": "subscribe", "tensors": ["grad"], "max_fps": 10},
    {"type": "subscribe", "tensors": "*"},
    {"type": "view", "state": {"hover": 2, "present": True}},
    {"type": "share"},
    {"type": "save", "name": "fuzz"},
    {"type": "open", "lab": LAB, "params": {}, "seed": 1},
    {"type": "join", "session": "abc", "token": "def"},
]
EXTREMES = [
    0,
    -1,
    1e308,
    -1e308,
    2**64,
    -(2**63),
    10**400,
    math.nan,
    math.inf,
    -math.inf,
    "",
    "x" * 300,
    None,
    True,
    [],
    {},
    [[[[[]]]]],
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and ±inf included: json.dumps writes them as bare literals
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner, max_size=6)
    ),
    max_leaves=25,
)


@st.composite
def near_valid(draw) -> dict[str, Any]:
    """A valid message with one or two things wrong (or, sometimes, nothing)."""
    msg = json.loads(json.dumps(draw(st.sampled_from(VALID))))
    for _ in range(draw(st.integers(0, 2))):
        keys = list(msg)
        how = draw(st.sampled_from(["replace", "extreme", "add", "drop", "retype", "nest"]))
        key = draw(st.sampled_from(keys)) if keys else "type"
        if how == "replace":
            msg[key] = draw(json_values)
        elif how == "extreme":
            target = msg
            if isinstance(msg.get(key), dict) and msg[key]:  # reach into params/state/input
                target, key = msg[key], draw(st.sampled_from(sorted(msg[key])))
            target[key] = draw(st.sampled_from(EXTREMES))
        elif how == "add":
            msg[draw(st.text(min_size=1, max_size=10))] = draw(json_values)
        elif how == "drop":
            msg.pop(key, None)
        elif how == "retype":
            msg["type"] = draw(st.sampled_from([*(m["type"] for m in VALID), "fork ", "OPEN", 7]))
        elif how == "nest":
            depth = draw(st.integers(10, 400))
            msg[key] = json.loads("[" * depth + "]" * depth)
    if msg.get("type") == "fork":
        msg["type"] = "fork?"
    return msg


def _text(msg: dict) -> str:
    return json.dumps(msg)  # allow_nan: bare NaN/Infinity, as a hostile client may send


raw_texts = st.one_of(
    st.text(max_size=200),
    st.builds(lambda m, cut: _text(m)[:cut], near_valid(), st.integers(0, 40)),  # truncated
    st.sampled_from(
        [
            "",
            " ",
            "null",
            "[]",
            '"open"',
            "NaN",
            "1e999",
            "[" * 30_000 + "]" * 30_000,
            '{"type":"seek","step":' + "9" * 5000 + "}",
            '{"type":"set","params":' + '{"a":' * 3000 + "1" + "}" * 3000 + "}",
            "\ufeff{}",
            '{"type":"control","action":"step","count":1e400}',
            '{"type":"control","type":"seek","action":"step"}',
        ]
    ),
)

fuzz_messages = st.one_of(
    near_valid().map(lambda m: ("text", _text(m))),
    near_valid().map(lambda m: ("text", _text(m))),  # twice: most of the protocol is here
    st.sampled_from(VALID).map(lambda m: ("text", _text(m))),  # valid traffic in between
    json_values.map(lambda v: ("text", _text(v))),
    raw_texts.map(lambda t: ("text", t)),
    st.binary(max_size=64).map(lambda b: ("bytes", b)),
)


def refused_at_the_door(kind: str, data: str | bytes) -> bool:
    """Would the server refuse this before running it (size, JSON, schema)? Those errors
    are answered in order, before anything sent after the message."""
    if kind == "bytes" or len(data.encode()) > MAX_BYTES:
        return True
    try:
        protocol.client_message.validate_python(json.loads(data))
    except (ValueError, RecursionError, ValidationError):
        return True
    return False


class Probe:
    """Sends numbered probes and reads until each one's answer; checks everything between."""

    def __init__(self, ws):
        self.ws = ws
        self.n = 0

    def __call__(self) -> list[dict[str, Any]]:
        self.n += 1
        tag = f"probe-{self.n}"
        send(self.ws, {"type": tag})
        seen = []
        end = time.monotonic() + DEADLINE_S
        while True:  # recv raises if the server closed the connection or went quiet
            msg = recv(self.ws, end - time.monotonic(), f"the answer to {tag}")
            if msg["type"] == "error":
                assert msg["code"] in CODES and isinstance(msg["message"], str), msg
                if f"'{tag}'" in msg["message"]:
                    assert msg["code"] == "bad_message"
                    return seen
            seen.append(msg)


@pytest.fixture
def fuzz_client(tmp_path):
    # The parser is under test, not the throttle: no rate limit; short commands.
    settings = Settings(
        data_dir=tmp_path, messages_per_s=1e6, max_step_count=20, max_steps_per_s=200
    )
    with TestClient(create_app(settings)) as c:
        yield c


def test_fuzzed_messages_are_answered_and_never_fatal(fuzz_client):
    with fuzz_client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, LAB)
        probe = Probe(ws)
        kinds: dict[str, int] = {}

        @settings(
            max_examples=300,
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(fuzz_messages)
        def one(message):
            kind, data = message
            if kind == "bytes":
                ws.send_bytes(data)
            else:
                ws.send_text(data)
            seen = probe()
            refused = refused_at_the_door(kind, data)
            verdict = "refused" if refused else "accepted"
            kinds[verdict] = kinds.get(verdict, 0) + 1
            if refused:
                assert [m for m in seen if m["type"] == "error"], (kind, str(data)[:200])

        one()
        assert kinds.get("refused", 0) > 100 and kinds.get("accepted", 0) > 20, kinds
        # Still the same session, and it still steps.
        send(ws, {"type": "control", "action": "pause"})
        send(ws, {"type": "control", "action": "reset"})
        send(ws, {"type": "subscribe", "tensors": "*"})
        send(ws, {"type": "control", "action": "step", "count": 2})
        done, seen = recv_until(ws, lambda m: m["type"] == "status" and m["step"] == 2)
        assert done["state"] == "paused" and not [m for m in seen if m["type"] == "error"]
    with fuzz_client.websocket_connect("/ws") as ws:
        send(ws, {"type": "join", "session": ready["session"], "token": ready["token"]})
        again, _ = recv_until(ws, lambda m: m["type"] == "ready")
        assert again["role"] == "driver"


NAMED = [
    ('{"type":"control","action":"play","speed":NaN}', "bad_message"),
    ('{"type":"control","action":"play","speed":Infinity}', "bad_message"),
    ('{"type":"seek","step":-Infinity}', "bad_message"),
    ('{"type":"set","params":{"lr":NaN}}', "invalid_params"),
    ('{"type":"set","params":{"lr":-Infinity}}', "invalid_params"),
    ('{"type":"set","params":{"lr":1e308}}', "invalid_params"),
    ('{"type":"set","params":{"epochs":' + str(10**30) + "}}", "invalid_params"),
    ('{"type":"control","action":"step","count":' + str(2**70) + "}", "bad_message"),
    ('{"type":"seek","step":' + "9" * 5000 + "}", "bad_message"),  # > Python's digit limit
    ('{"type":"set","params":' + '{"a":' * 3000 + "1" + "}" * 3000 + "}", "bad_message"),
    ('{"type":"set","params":{"lr":' + "[" * 500 + "]" * 500 + "}}", "invalid_params"),
    ('{"type":"view","state":{"zoom":2}}', "bad_message"),
    ('{"type":"view","state":{"head":1e9}}', "bad_message"),
    ('{"type":"subscribe","tensors":["' + "t" * 200 + '"]}', "bad_message"),
    ('{"type":"save","name":"' + "n" * 500 + '"}', "bad_message"),
    ('{"type":5}', "bad_message"),
    ('{"type":null}', "bad_message"),
    ("null", "bad_message"),
    ("", "bad_message"),
    ("\ufeff{}", "bad_message"),
]


@pytest.mark.parametrize(("raw", "code"), NAMED, ids=lambda x: str(x)[:40])
def test_named_hostile_messages(client, raw, code):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, LAB)
        ws.send_text(raw)
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == code, err
        assert step(ws, 1)[-1]["step"] == 1


def test_a_10_mb_string_and_binary_frames(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, LAB)
        ws.send_text(json.dumps({"type": "save", "name": "x" * 10_000_000}))
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "too_large" and str(MAX_BYTES) in err["message"]
        ws.send_bytes(json.dumps({"type": "control", "action": "step"}).encode())
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "bad_message" and "binary" in err["message"]
        ws.send_bytes(b"\x00" * 1_000_000)
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "bad_message"
        assert step(ws, 1)[-1]["step"] == 1


BEFORE_OPEN = [m for m in VALID if m["type"] not in ("open", "join")] + [{"type": "fork"}]


@pytest.mark.parametrize("msg", BEFORE_OPEN, ids=lambda m: m.get("action") or m["type"])
def test_every_command_before_open_is_refused(client, msg):
    with client.websocket_connect("/ws") as ws:
        send(ws, msg)
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "bad_message" and "before" in err["message"]
        open_lab(ws, LAB)  # and the connection can still open a session


def test_a_quiet_server_fails_the_wait_naming_what_was_awaited(client):
    """tests.wsutil's waits end in a clear failure, not in pytest-timeout's 300 s."""
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, LAB)  # paused: nothing more comes unprompted
        with pytest.raises(NoAnswer, match=r"waited 1 s for `ready` again; got \d+ other"):
            recv_until(ws, lambda m: m["type"] == "ready", seconds=1, awaiting="`ready` again")
        with pytest.raises(NoAnswer, match=r"for recv_until\(ws, lambda m: m\[.type.\] == .nev"):
            recv_until(ws, lambda m: m["type"] == "never", seconds=1)
        with pytest.raises(NoAnswer, match="waited 1 s for a message"):
            recv(ws, seconds=1)
        assert step(ws, 1)[-1]["step"] == 1  # a wait that failed leaves the connection usable
