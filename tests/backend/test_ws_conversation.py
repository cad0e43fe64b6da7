"""Whole websocket conversations with the engine, on the linear-regression lab."""

import math

import pytest

from tests.wsutil import frames, open_lab, recv, recv_until, scalar_rows, send, step


def test_open_step_seek_conversation(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "linear-regression", "params": {"loss": "half_mse"}})
        ready = recv(ws)
        assert ready["type"] == "ready" and ready["role"] == "driver" and ready["protocol"] == 1
        assert ready["lab"] == "linear-regression" and ready["step"] == 0
        assert len(ready["token"]) >= 32 and len(ready["session"]) >= 16
        assert ready["params"]["lr"] == 0.1
        assert ready["schema"]["properties"]["lr"]["label"] == {
            "zh": "学习率",
            "en": "Learning rate",
        }
        first = recv(ws)  # the scalar history follows `ready` at once
        assert first == {
            "type": "scalars",
            "run": 0,
            "step": 0,
            "values": {"loss": 3.25, "w_x": 0.0, "b": 0.0, "grad_w_x": -4.0, "grad_b": -2.5},
        }
        status = recv(ws)
        assert status == {
            "type": "status",
            "run": 0,
            "state": "paused",
            "step": 0,
            "connections": 1,
        }
        f0 = recv(ws)
        assert f0["type"] == "frame" and f0["step"] == 0

        msgs = step(ws, 5)
        fs = frames(msgs)
        assert [f["step"] for f in fs] == [1, 2, 3, 4, 5]
        losses = [f["header"]["scalars"]["loss"] for f in fs]
        assert losses == sorted(losses, reverse=True)  # falling
        assert fs[0]["header"]["scalars"]["w_x"] == pytest.approx(0.4)
        assert fs[0]["header"]["scalars"]["b"] == pytest.approx(0.25)
        names = {m["name"] for m in fs[0]["header"]["tensors"]}
        assert names == {"weights", "grad", "loss_surface", "prediction", "line"}
        assert fs[0]["tensors"]["loss_surface"].shape == (48, 48)
        assert sorted(scalar_rows(msgs)) == [1, 2, 3, 4, 5]  # every step's scalars, once
        assert msgs[-1] == {
            "type": "status",
            "run": 0,
            "state": "paused",
            "step": 5,
            "connections": 1,
        }

        send(ws, {"type": "seek", "step": 2})
        replay = recv(ws)
        assert replay["type"] == "frame" and replay["step"] == 2 and replay["header"]["replay"]
        assert replay["header"]["scalars"]["loss"] == losses[1]


def test_mse_convention_first_step(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression", {"loss": "mse"})
        f = frames(step(ws, 1))[0]
        assert f["header"]["scalars"]["w_x"] == pytest.approx(0.8)
        assert f["header"]["scalars"]["b"] == pytest.approx(0.5)


def test_live_stream_raw_diverges_then_reset_recovers(client):
    params = {"dataset": "live-stream", "features": "raw", "loss": "mse", "lr": 1e-9}
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression", params)
        send(ws, {"type": "control", "action": "play"})
        err, seen = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "diverged"
        status, _ = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "diverged")
        rows = scalar_rows(seen)
        assert rows[1]["loss"] > 1e8 and rows[2]["loss"] / rows[1]["loss"] > 100
        assert 10 <= status["step"] <= 14
        send(ws, {"type": "control", "action": "step"})  # refused while diverged
        refused, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert refused["code"] == "diverged"
        send(ws, {"type": "control", "action": "reset"})
        back, _ = recv_until(ws, lambda m: m["type"] == "status" and m["run"] == 1)
        assert back["state"] == "paused" and back["step"] == 0
        f = frames(step(ws, 1))[0]
        assert math.isfinite(f["header"]["scalars"]["loss"])


def test_set_live_param_keeps_training_and_structural_param_resets(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression")
        step(ws, 3)
        send(ws, {"type": "set", "params": {"lr": 0.05}})
        reply, _ = recv_until(ws, lambda m: m["type"] == "params")
        assert reply["reset"] is False and reply["params"]["lr"] == 0.05
        send(ws, {"type": "set", "params": {"dataset": "live-stream", "features": "zscore"}})
        reply, seen = recv_until(ws, lambda m: m["type"] == "params")
        assert reply["reset"] is True
        assert any(m["type"] == "status" and m["run"] == 1 and m["step"] == 0 for m in seen)


def test_viewer_sees_the_session_but_cannot_drive(client):
    with client.websocket_connect("/ws") as driver:
        ready = open_lab(driver, "linear-regression")
        step(driver, 2)
        with client.websocket_connect("/ws") as viewer:
            send(viewer, {"type": "join", "session": ready["session"]})
            joined = recv(viewer)
            assert joined["type"] == "ready" and joined["role"] == "viewer"
            assert "token" not in joined and joined["step"] == 2
            hist, _ = recv_until(viewer, lambda m: m["type"] == "history")
            assert hist["steps"] == [0, 1, 2]  # the whole scalar history, once
            for msg in (
                {"type": "control", "action": "step"},
                {"type": "set", "params": {"lr": 0.2}},
                {"type": "infer", "input": {}},
            ):
                send(viewer, msg)
                err, _ = recv_until(viewer, lambda m: m["type"] == "error")
                assert err["code"] == "forbidden"
            step(driver, 1)
            f, _ = recv_until(viewer, lambda m: m["type"] == "frame" and m["step"] == 3)
            assert f["header"]["scalars"]["loss"] > 0


def test_driver_rejoins_with_token_and_gets_history(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "linear-regression")
        step(ws, 4)
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "join", "session": ready["session"], "token": "wrong"})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "forbidden"
        send(ws, {"type": "join", "session": ready["session"], "token": ready["token"]})
        again, _ = recv_until(ws, lambda m: m["type"] == "ready")
        assert again["role"] == "driver" and again["step"] == 4
        hist, _ = recv_until(ws, lambda m: m["type"] == "history")
        assert hist["steps"] == [0, 1, 2, 3, 4]
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        assert f["step"] == 4
        step(ws, 1)


def test_subscribe_limits_the_tensors_sent(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression")
        send(ws, {"type": "subscribe", "tensors": ["grad"]})
        f = frames(step(ws, 1))[0]
        assert list(f["tensors"]) == ["grad"]
        assert f["header"]["scalars"]["loss"] > 0


def test_play_then_pause_stops_training(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression", {"epochs": 100000})
        send(ws, {"type": "control", "action": "play", "speed": 200})
        recv_until(ws, lambda m: m["type"] == "frame" and m["step"] >= 3)
        send(ws, {"type": "control", "action": "pause"})
        paused, _ = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "paused")
        assert paused["step"] >= 3
        # Once paused, the step count stays put: a step command moves it by exactly one.
        last = step(ws, 1)[-1]
        assert last["step"] == paused["step"] + 1


def test_messages_of_one_connection_run_in_order(client):
    """A control sent right after open (before `ready`) acts on the new session."""
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "linear-regression"})
        send(ws, {"type": "control", "action": "step", "count": 2})
        status, seen = recv_until(ws, lambda m: m["type"] == "status" and m["step"] == 2)
        assert not [m for m in seen if m["type"] == "error"]
        assert seen[0]["type"] == "ready"


def test_the_last_step_always_has_its_picture(client):
    """Playing to `done`, or pausing, ends on a frame of the very last step."""
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression", {"epochs": 300})
        send(ws, {"type": "control", "action": "play"})
        done, seen = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "done")
        assert done["step"] == 300
        assert frames(seen)[-1]["step"] == 300
        send(ws, {"type": "control", "action": "reset"})
        recv_until(ws, lambda m: m["type"] == "status" and m["run"] == 1)
        send(ws, {"type": "control", "action": "play", "speed": 300})
        first, before = recv_until(ws, lambda m: m["type"] == "frame" and m["step"] >= 20)
        send(ws, {"type": "control", "action": "pause"})
        paused, after = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "paused")
        seen = [*before, first, *after]
        last = frames(seen)[-1]
        assert last["step"] == paused["step"]
        assert last["header"]["scalars"]["loss"] == scalar_rows(seen)[paused["step"]]["loss"]


def test_playing_fast_sends_every_steps_scalars_in_few_messages(client):
    """Scalars without a frame go out together (at most ~30 messages a second): none is lost,
    and a session playing hundreds of steps a second does not cost a message per step."""
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression", {"epochs": 3000})
        send(ws, {"type": "control", "action": "play"})
        _, seen = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "done")
        assert sorted(scalar_rows(seen)) == list(range(1, 3001))
        batches = [m for m in seen if m["type"] in ("scalars", "history")]
        assert len(batches) < 3000 / 4
