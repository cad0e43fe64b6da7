"""Promise 7 (faults): a failing lab hurts only its own session.

A tiny lab defined here (and registered for these tests only) raises on command: in its
step, while building, in a snapshot or in inference, or returns a NaN loss. Its session
goes to `error` (or `diverged`) with a message and one logged traceback; a bystander session
on another connection keeps playing; `reset` recovers; nothing non-finite reaches the wire
as a bare NaN (JSON has none, and a browser's JSON.parse would throw).
"""

from __future__ import annotations

import json
import logging
import math
import struct
from typing import Literal

import pytest
import torch

from backend.labs import REGISTRY
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param
from tests.wsutil import (  # deadlines: fail, never hang
    open_lab,
    receive_within,
    recv_until,
    send,
    step,
)

BOOM = "the faulty lab's deliberate failure"


class FaultyParams(LabParams):
    fail_in: Literal["step", "build", "snapshot", "infer", "never"] = param(
        "step", zh="在哪里失败", en="Where it fails"
    )
    at: int = param(3, zh="第几步", en="At step", ge=1, le=1000)
    nan_at: int = param(0, zh="第几步出现 NaN", en="NaN loss at step (0: never)", ge=0, le=1000)


class FaultyLab(Lab):
    id = "test-faulty"
    chapter = 99
    title = {"zh": "会出错的实验", "en": "A lab that fails"}
    description = {"zh": "只用于测试", "en": "For tests only"}
    Params = FaultyParams
    tensors = ("w",)

    def __init__(self, params: FaultyParams, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        if params.fail_in == "build":
            raise RuntimeError(BOOM)
        self.t = 0

    def _frame(self, capture: bool) -> Frame:
        nan = self.params.nan_at and self.t >= self.params.nan_at
        loss = math.nan if nan else 1.0 / (1 + self.t)
        w = torch.tensor([loss, math.inf, -math.inf, 0.5])
        tensors = [TensorOut("w", w), TensorOut("w_u8", w, "u8")] if capture else []
        return Frame(scalars={"loss": loss, "other": math.inf}, tensors=tensors)

    def step(self, capture: bool) -> Frame:
        self.t += 1
        if self.params.fail_in == "step" and self.t == self.params.at:
            raise RuntimeError(BOOM)
        return self._frame(capture)

    def snapshot(self) -> Frame:
        if self.params.fail_in == "snapshot":
            raise RuntimeError(BOOM)
        return self._frame(True)

    def infer(self, data):
        if self.params.fail_in == "infer":
            raise ZeroDivisionError(BOOM)
        yield self._frame(True)


@pytest.fixture(autouse=True)
def faulty_lab():
    REGISTRY[FaultyLab.id] = FaultyLab
    yield
    REGISTRY.pop(FaultyLab.id, None)


def _no_bare_constants(name: str):
    raise AssertionError(f"bare {name} on the wire: JSON has no such number")


def strict_recv(ws) -> dict:
    """Like wsutil.recv, but a NaN/Infinity literal anywhere in the JSON fails the test."""
    m = receive_within(ws)
    if m.get("text") is not None:
        return json.loads(m["text"], parse_constant=_no_bare_constants)
    data = m.get("bytes")
    assert data is not None, f"connection closed: {m}"
    (n,) = struct.unpack_from("<I", data)
    header = json.loads(data[4 : 4 + n], parse_constant=_no_bare_constants)
    return {"type": "frame", "header": header, "step": header["step"]}


def strict_until(ws, pred, limit: int = 10_000) -> tuple[dict, list[dict]]:
    seen = []
    for _ in range(limit):
        msg = strict_recv(ws)
        if pred(msg):
            return msg, seen
        seen.append(msg)
    raise AssertionError(f"never came; got {[m['type'] for m in seen]}")


def tracebacks(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.exc_info or r.exc_text]


def start_bystander(ws) -> None:
    open_lab(ws, "linear-regression", {"epochs": 100000})
    send(ws, {"type": "control", "action": "play", "speed": 200})
    recv_until(ws, lambda m: m["type"] == "frame" and m["step"] >= 2)


def still_playing(ws) -> None:
    """The bystander keeps stepping: frames well past where it was."""
    now, _ = recv_until(ws, lambda m: m["type"] == "frame")
    later, _ = recv_until(ws, lambda m: m["type"] == "frame" and m["step"] >= now["step"] + 20)
    assert later["header"]["scalars"]["loss"] > 0


def test_a_step_that_raises_puts_only_its_session_in_error(client, caplog):
    caplog.set_level(logging.INFO)
    with client.websocket_connect("/ws") as bystander, client.websocket_connect("/ws") as ws:
        start_bystander(bystander)
        open_lab(ws, FaultyLab.id, {"fail_in": "step", "at": 3})
        send(ws, {"type": "control", "action": "step", "count": 5})
        err, seen = strict_until(ws, lambda m: m["type"] == "error")
        assert (
            err["code"] == "error" and BOOM in err["message"] and "RuntimeError" in err["message"]
        )
        status = [m for m in seen if m["type"] == "status" and m["state"] == "error"]
        assert status and BOOM in status[0]["message"]
        assert status[0]["step"] == 2  # the two steps that worked
        logged = tracebacks(caplog)
        assert len(logged) == 1 and BOOM in logged[0].exc_text + str(logged[0].exc_info)
        assert FaultyLab.id in logged[0].getMessage()

        send(ws, {"type": "control", "action": "play"})  # refused until a reset
        assert strict_until(ws, lambda m: m["type"] == "error")[0]["code"] == "error"
        still_playing(bystander)

        send(ws, {"type": "control", "action": "reset"})
        back, _ = strict_until(ws, lambda m: m["type"] == "status" and m["run"] == 1)
        assert back["state"] == "paused" and back["step"] == 0
        strict_until(ws, lambda m: m["type"] == "frame")  # the new run's first picture
        strict_until(ws, lambda m: m["type"] == "status")  # and the reset's end
        assert step(ws, 2)[-1]["step"] == 2  # recovered
        assert len(tracebacks(caplog)) == 1  # refusals are answered, not logged as crashes


def test_a_lab_that_fails_while_playing(client, caplog):
    with client.websocket_connect("/ws") as bystander, client.websocket_connect("/ws") as ws:
        start_bystander(bystander)
        open_lab(ws, FaultyLab.id, {"fail_in": "step", "at": 40})
        send(ws, {"type": "control", "action": "play", "speed": 500})
        status, _ = strict_until(ws, lambda m: m["type"] == "status" and m["state"] == "error")
        assert BOOM in status["message"] and status["step"] == 39
        still_playing(bystander)
        assert len(tracebacks(caplog)) == 1


@pytest.mark.parametrize("where", ["build", "snapshot"])
def test_a_lab_that_fails_to_build_or_draw(client, caplog, where):
    with client.websocket_connect("/ws") as ws:
        params = {"fail_in": where, "at": 1}
        send(ws, {"type": "open", "lab": FaultyLab.id, "params": params})
        err, _ = strict_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "error" and BOOM in err["message"]
        assert client.get("/api/health").json()["sessions"] == 0  # nothing half-made is kept
        open_lab(ws, "linear-regression")  # the connection goes on
        step(ws, 1)
    assert len(tracebacks(caplog)) == 1


def test_inference_that_raises(client, caplog):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, FaultyLab.id, {"fail_in": "infer"})
        send(ws, {"type": "infer", "input": {}})
        err, _ = strict_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "error" and "ZeroDivisionError" in err["message"]
        send(ws, {"type": "control", "action": "reset"})
        strict_until(ws, lambda m: m["type"] == "status" and m["run"] == 1)
        step(ws, 1)
    assert len(tracebacks(caplog)) == 1


def test_a_diverging_model_is_reported_not_propagated(client, caplog):
    with client.websocket_connect("/ws") as bystander, client.websocket_connect("/ws") as ws:
        start_bystander(bystander)
        open_lab(ws, FaultyLab.id, {"fail_in": "never", "nan_at": 4})
        send(ws, {"type": "control", "action": "play", "speed": 100})
        err, seen = strict_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "diverged" and "step 4" in err["message"]
        status, more = strict_until(ws, lambda m: m["type"] == "status" and m["state"] != "playing")
        assert status["state"] == "diverged" and status["step"] == 4
        # NaN travels as the string "NaN", in scalar messages and frame headers alike.
        msgs = seen + more
        values = [m["values"] for m in msgs if m["type"] == "scalars" and m["step"] == 4]
        assert values and values[0]["loss"] == "NaN" and values[0]["other"] == "Infinity"
        last = [m for m in msgs if m["type"] == "frame" and m["step"] == 4]
        assert last and last[-1]["header"]["scalars"]["loss"] == "NaN"
        send(ws, {"type": "control", "action": "step"})
        assert strict_until(ws, lambda m: m["type"] == "error")[0]["code"] == "diverged"
        still_playing(bystander)
        send(ws, {"type": "seek", "step": 4})  # a replayed diverged frame is as strict
        strict_until(ws, lambda m: m["type"] == "frame" and m["header"].get("replay"))
    assert tracebacks(caplog) == []  # divergence is the learner's lesson, not a server bug
