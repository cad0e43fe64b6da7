"""A session's lab in a process of its own (Settings.session_process, backend/session_process.py):
the numbers of a session in a thread, the commands and refusals as before, the lab truly in
another process, a dead process reported as the lab's failure, and no process left behind."""

from __future__ import annotations

import os
import signal

import pytest
from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

SMALL = {"max_len": 6, "d_hidden": 32, "batch": 16}


def _app(tmp_path, process: bool) -> TestClient:
    return TestClient(create_app(Settings(data_dir=tmp_path / "data", session_process=process)))


def _trained(tmp_path, process: bool):
    with _app(tmp_path, process) as client, client.websocket_connect("/ws") as ws:
        open_lab(ws, "seq2seq", SMALL)
        msgs = step(ws, 26)  # the 25th update evaluates the held-out set
        send(ws, {"type": "control", "action": "play"})
        recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "playing")
        send(ws, {"type": "control", "action": "pause"})
        paused, _ = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "paused")
    return scalar_rows(msgs), frames(msgs)[-1], paused["step"]


def test_a_lab_in_its_own_process_trains_the_numbers_of_one_in_a_thread(tmp_path):
    rows, frame, played = _trained(tmp_path / "p", process=True)
    rows_t, frame_t, _ = _trained(tmp_path / "t", process=False)
    assert rows == rows_t  # every step's scalars, the evaluation's included: bitwise
    assert "arm.1.seq_acc" in rows[25]
    assert frame["header"]["meta"]["arms"] == frame_t["header"]["meta"]["arms"]
    assert (frame["tensors"]["arm.1.alignment"] == frame_t["tensors"]["arm.1.alignment"]).all()
    assert played >= 26  # play went on from step 26 and pause stopped it


@pytest.fixture
def proc_client(tmp_path):
    with _app(tmp_path, process=True) as client:
        yield client


def test_commands_and_refusals_reach_the_lab_in_its_process(proc_client):
    with proc_client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "seq2seq", SMALL)
        session = proc_client.app.state.sessions.get(ready["session"])
        child = session._remote.process
        assert session.lab is None and child.is_alive() and child.pid != os.getpid()
        send(ws, {"type": "infer", "input": {"text": "hello"}})
        f, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
        assert f["type"] == "frame" and f["header"]["infer"] is True
        assert f["header"]["meta"]["probe"]["arms"][1]["target"] == "olleh"
        send(ws, {"type": "infer", "input": {"text": "héllo"}})  # a LabError, from the child
        err, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
        assert err["key"] == "seq2seq.err_alphabet" and err["field"] == "input.text"
        send(ws, {"type": "control", "action": "play"})
        send(ws, {"type": "set", "params": {"lr": 0.002}})  # live: no reset, while playing
        changed, _ = recv_until(ws, lambda m: m["type"] == "params")
        assert changed["reset"] is False and changed["params"]["lr"] == 0.002
        send(ws, {"type": "control", "action": "pause"})
        paused, _ = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "paused")
        msgs = step(ws, 2)
        assert sorted(scalar_rows(msgs)) == [paused["step"] + 1, paused["step"] + 2]
    proc_client.app.state.sessions.get(ready["session"])  # still kept for a rejoin
    assert child.is_alive()


def test_a_process_that_died_is_the_labs_failure_and_a_reset_starts_another(proc_client):
    with proc_client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "seq2seq", SMALL)
        session = proc_client.app.state.sessions.get(ready["session"])
        os.kill(session._remote.process.pid, signal.SIGKILL)  # as the kernel's OOM killer would
        send(ws, {"type": "control", "action": "step", "count": 1})
        err, before = recv_until(ws, lambda m: m["type"] == "error")
        assert "ChildExited" in err["message"]
        (status,) = [m for m in before if m["type"] == "status" and m["state"] == "error"]
        assert "ChildExited" in status["message"]  # everyone watching hears it
        send(ws, {"type": "control", "action": "reset"})
        first, _ = recv_until(ws, lambda m: m["type"] == "frame")  # the new run's step 0
        assert first["header"]["step"] == 0
        recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "paused")
        assert session._remote.process.is_alive()
        assert scalar_rows(step(ws, 3)).keys() == {1, 2, 3}  # a new run in a new process


def test_no_session_process_outlives_the_server(tmp_path):
    with _app(tmp_path, process=True) as client, client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "seq2seq", SMALL)
        child = client.app.state.sessions.get(ready["session"])._remote.process
        step(ws, 1)
    child.join(10)
    assert not child.is_alive()
