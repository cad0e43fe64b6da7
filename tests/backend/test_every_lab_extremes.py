"""Every lab at each numeric param's minimum and maximum: a run, a divergence or a refusal,
never a lab error.

One param at a time at a bound of its Params schema (ge / le), the others at their
defaults; the session is opened over the websocket and stepped a few steps with a frame
each (where a blow-up's picture is drawn). A rate or a scale (a float: lr, σ, C, β, ...)
goes on to STEPS with one frame at the end, enough to blow up (depth at lr 1: step 7,
apple at lr 0.25: 35, linear-regression at lr 1: 49). A size or a count (an int) only
decides shapes, and a positive minimum (lr 1e-5, σ 1e-4) only slows a run: their first
steps and pictures meet what they do. It must end `paused` or `done`, or `diverged` (the
friendly "diverged at step N, lower the learning rate"; one arm of several: marked
diverged, the others train on), or be refused at the door with a clean code (`too_large`
over the memory cap, `invalid_params` where another param's default does not fit the
extreme). A `Lab error` (state `error`, code `error`) fails, whatever raised it: a NaN
that the wire could not encode, a shape that does not fit, an overflow in a picture.

First the walkthrough's case (depth at lr 1: the reference arm blew up and its picture's
meta, NaN, failed to encode): the arm is marked diverged, the others train on.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from backend.labs import REGISTRY, load_all
from tests.wsutil import DEADLINE_S, frames, open_lab, recv, recv_until, send, step

FIRST = 3  # steps with a frame each: a blow-up's picture is encoded on the way
STEPS = 60  # a float param's run in all: past where an lr at its top blows a lab up
REFUSED = {"too_large", "invalid_params"}  # clean answers to an open at an extreme
FINAL = {"paused", "done", "diverged", "error"}

load_all()


def _bounds(field: Any) -> tuple[float | None, float | None]:
    ge = le = None
    for m in field.metadata:
        ge = getattr(m, "ge", ge)
        le = getattr(m, "le", le)
    return ge, le


def _cases() -> list[Any]:
    out = []
    for lab_id, cls in sorted(REGISTRY.items()):
        for name, field in cls.Params.model_fields.items():
            ge, le = _bounds(field)
            for bound in (ge, le):
                if bound is None or bound == field.default:
                    continue
                size = field.annotation is int
                value = int(bound) if size else float(bound)
                steps = FIRST if size or (bound == ge and bound > 0) else STEPS
                case = f"{lab_id}-{name}={value:g}"
                out.append(pytest.param(lab_id, name, value, steps, id=case))
    return out


CASES = _cases()


@pytest.fixture(scope="module")
def app_client(tmp_path_factory):
    # Hundreds of sessions from one address, one after another (each closed after its case).
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("data"),
        max_sessions_per_ip=10_000,
        sessions_per_ip_per_min=100_000,
        messages_per_s=1e6,
        autosave_s=0,
    )
    with TestClient(create_app(settings)) as c:
        yield c


def _run(ws, count: int) -> tuple[str, list[dict]]:
    """Step `count`; the state the command ends in, and the messages on the way."""
    send(ws, {"type": "control", "action": "step", "count": count})
    end, seen, framed = time.monotonic() + 10 * DEADLINE_S, [], False
    while True:
        msg = recv(ws, end - time.monotonic(), f"the end of `step` count={count}")
        seen.append(msg)
        if msg["type"] == "error" and msg["code"] != "diverged":
            return "error", seen
        framed = framed or msg["type"] == "frame"
        if (
            msg["type"] == "status"
            and msg["state"] in FINAL
            and (framed or msg["state"] != "paused")
        ):
            return msg["state"], seen


def _lab_errors(seen: list[dict]) -> list[dict]:
    return [
        m
        for m in seen
        if (m["type"] == "error" and m["code"] not in ("diverged",))
        or (m["type"] == "status" and m.get("state") == "error")
    ]


def test_depth_at_lr_1_marks_its_blown_up_arm_diverged_and_trains_the_others(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "depth", {"lr": 1.0})
        msgs = [m for _ in range(12) for m in step(ws, 1)]  # a frame every step
    assert not _lab_errors(msgs)
    last = frames(msgs)[-1]
    arms = last["header"]["meta"]["arms"]
    assert [a["label"] for a in arms] == ["plain", "residual", "reference"]
    assert arms[2]["diverged"] and not arms[0]["diverged"]  # the plain sigmoid stack trains on
    assert last["header"]["scalars"]["arm.2.diverged"] == 1.0
    assert math.isfinite(last["header"]["scalars"]["loss"])  # the mean of the live arms
    # Its picture's numbers travel as what they are (NaN), read back as floats.
    assert last["header"]["nonfinite"] is True
    assert all(math.isnan(v) for v in arms[2]["act_std"])
    assert all(math.isfinite(v) for v in arms[0]["act_std"])
    assert msgs[-1]["type"] == "status" and msgs[-1]["state"] == "paused"


@pytest.mark.slow
@pytest.mark.parametrize(("lab_id", "name", "value", "steps"), CASES)
def test_a_param_at_its_extreme_runs_diverges_or_is_refused(app_client, lab_id, name, value, steps):
    manager = app_client.app.state.sessions
    with app_client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": lab_id, "params": {name: value}, "seed": 0})
        first, _ = recv_until(ws, lambda m: m["type"] in ("ready", "error"))
        if first["type"] == "error":
            assert first["code"] in REFUSED, first
            return
        recv_until(ws, lambda m: m["type"] == "frame", awaiting="the step-0 frame")
        sid = first["session"]
        try:
            state, seen = _run(ws, FIRST)
            if state == "paused" and steps > FIRST:
                more, rest = _run(ws, steps - FIRST)
                state, seen = more, seen + rest
            assert not _lab_errors(seen), (state, _lab_errors(seen))
            assert state in ("paused", "done", "diverged"), state
        finally:
            session = manager.sessions.get(sid)
            if session is not None:
                app_client.portal.call(manager.close, session)
