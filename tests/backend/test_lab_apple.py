"""Websocket conversation with the `apple` lab: frames, the four buttons, divergence, reset."""

from __future__ import annotations

import math

import pytest

from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


def step_until_diverged(ws, count: int) -> list[dict]:
    """Step `count` times, expecting the run to diverge; every message up to that status."""
    send(ws, {"type": "control", "action": "step", "count": count})
    status, seen = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "diverged")
    return [*seen, status]


def infer(ws, action: str) -> dict:
    send(ws, {"type": "infer", "input": {"action": action}})
    msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
    return msg


def test_snapshot_and_one_step(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "apple")
        assert ready["params"]["lr"] == 1 / 36
        msgs = step(ws, 1)
        (f,) = frames(msgs)
        assert set(f["tensors"]) == {"curve", "tangent"}
        assert f["tensors"]["curve"].shape == (121,)
        assert f["tensors"]["tangent"].shape == (4,)
        s = f["header"]["scalars"]
        assert (s["x"], s["loss"], s["slope"]) == (1.5, 2.25, -9.0)
        assert s["grad_used"] == -18.0
        assert "grad" not in s  # zero_grad ran: x.grad is None
        meta = f["header"]["meta"]
        assert meta["critical_lr"] == 2 / 18
        assert meta["optimum"] == 2.0
        x0, y0, x1, y1 = f["tensors"]["tangent"]
        assert (y1 - y0) / (x1 - x0) == pytest.approx(
            -9.0
        )  # the tangent's slope is autograd's gradient
        assert scalar_rows(msgs)[1]["loss"] == 2.25


def test_buttons_accumulate_grad(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "apple")
        assert infer(ws, "forward")["header"]["meta"]["has_graph"] is True
        assert infer(ws, "backward")["header"]["scalars"]["grad"] == -18.0
        err = infer(ws, "backward")  # the graph was freed by the last backward
        assert err["type"] == "error" and err["field"] == "input.action"
        infer(ws, "forward")
        assert infer(ws, "backward")["header"]["scalars"]["grad"] == -36.0
        f = infer(ws, "step")  # x = 1 - (1/36)(-36) = 2
        assert f["header"]["scalars"]["x"] == 2.0
        assert f["header"]["scalars"]["grad"] == -36.0
        f = infer(ws, "zero_grad")
        assert "grad" not in f["header"]["scalars"] and f["header"]["meta"]["grad_none"]
        f = infer(ws, "step")
        assert f["header"]["meta"]["note"] == "no_grad"
        assert infer(ws, "jump")["type"] == "error"


def test_above_critical_lr_diverges_and_reset_recovers(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "apple", {"lr": 0.2})
        msgs = step_until_diverged(ws, 200)
        assert msgs[-1]["state"] == "diverged"
        assert any(m["type"] == "error" and m["code"] == "diverged" for m in msgs)
        last = frames(msgs)[-1]["header"]
        assert not math.isfinite(float(last["scalars"]["loss"]))
        assert last["meta"]["critical_lr"] == 2 / 18  # the blow-up frame is drawn in full
        send(ws, {"type": "control", "action": "reset"})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        assert f["step"] == 0 and f["header"]["scalars"]["loss"] == 9.0


def test_forget_zero_grad_while_playing(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "apple", {"forget_zero_grad": True})
        rows = scalar_rows(step(ws, 3))
        # x.grad sums the gradients at x = 1, 1.5, 2.25 (-18, -9, +4.5), so x overshoots 2
        assert [rows[i]["grad"] for i in (1, 2, 3)] == [-18.0, -27.0, -22.5]
        assert [rows[i]["x"] for i in (1, 2, 3)] == [1.5, 2.25, 2.875]


def test_a_pressed_step_is_recorded_as_the_next_step(client):
    """A pressed `step` moves x outside `Lab.step`: it is the run's next step, so the charts,
    the scrubber and a rejoin show it; a step that did nothing (x.grad None) is not."""
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "apple")
        infer(ws, "forward")
        infer(ws, "backward")
        pressed = infer(ws, "step")
        assert pressed["step"] == 1 and pressed["header"]["infer"]
        assert pressed["header"]["scalars"]["x"] == 1.5  # x = 1 - (1/36)(-18)
        assert pressed["header"]["scalars"]["grad_used"] == -18.0
        recv_until(ws, lambda m: m["type"] == "status" and m["step"] == 1)  # the scrubber's end
        infer(ws, "zero_grad")
        assert infer(ws, "step")["step"] == 1  # x.grad is None: nothing moved, nothing recorded
        for at, x in ((0, 1.0), (1, 1.5)):  # the scrubber finds both
            send(ws, {"type": "seek", "step": at})
            seen, _ = recv_until(ws, lambda m: m["type"] == "frame" and m["header"].get("replay"))
            assert (seen["step"], seen["header"]["scalars"]["x"]) == (at, x)
        # A rejoin (a reload of the page) gets the history and the latest recorded frame.
        with client.websocket_connect("/ws") as again:
            send(again, {"type": "join", "session": ready["session"], "token": ready["token"]})
            latest, seen = recv_until(again, lambda m: m["type"] == "frame")
        assert scalar_rows(seen)[1]["x"] == 1.5
        assert (latest["step"], latest["header"]["scalars"]["x"]) == (1, 1.5)
        # Playing goes on from there: step 2 starts at x = 1.5.
        rows = scalar_rows(step(ws, 1))
        assert rows[2]["x"] == 1.5 - (1 / 36) * -9.0  # x.grad was zeroed: the slope at 1.5


def test_above_the_critical_lr_at_the_exact_optimum_nothing_moves_and_frames_say_why(client):
    """Converged in float32 (loss exactly 0), x.grad is exactly 0: a raised lr cannot move x,
    and the frame says so (`exact_optimum`); from the first guess the same lr diverges."""
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "apple")
        f = frames(step(ws, 80))[-1]["header"]
        assert f["scalars"]["loss"] == 0.0 and f["meta"]["exact_optimum"] is True
        send(ws, {"type": "set", "params": {"lr": 0.12}})
        recv_until(ws, lambda m: m["type"] == "params")
        g = frames(step(ws, 20))[-1]["header"]
        assert g["scalars"]["x"] == 2.0 and g["meta"]["exact_optimum"] is True
        send(ws, {"type": "control", "action": "reset"})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")  # the reset's step-0 frame
        assert f["step"] == 0
        rows = scalar_rows(step(ws, 20))
        first, last = rows[min(rows)], rows[max(rows)]
        assert max(rows) - min(rows) >= 10, sorted(rows)
        assert last["loss"] > first["loss"]  # |1 − 0.12·18| = 1.16 > 1: the error grows
