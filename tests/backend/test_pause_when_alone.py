"""A run nobody watches stops: a tab closed while playing leaves a paused session (still
there for a rejoin, its step kept), not one that trains on until the reaper.

A class keeps its teacher's choice while anyone watches: the teacher's tab closes, the
students' connections keep it playing; when the last one leaves it pauses. The same in a
class's own process (Settings.class_process). A long `step` whose connection left ends at
its next step. Each wait is bounded (wsutil.DEADLINE_S) and polls the session's own state.
"""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from tests.wsutil import DEADLINE_S, joined_viewers, open_lab, recv_until, send

SMALL = {"max_len": 6, "d_hidden": 32, "batch": 16}  # seq2seq: a few ms a step


def _app(tmp_path, class_process: bool = False) -> TestClient:
    return TestClient(create_app(Settings(data_dir=tmp_path / "data", class_process=class_process)))


def _until(what: str, cond, seconds: float = DEADLINE_S) -> None:
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, f"waited {seconds:.0f} s for {what}"
        time.sleep(0.02)


def _play(ws, at_least: int = 3) -> None:
    send(ws, {"type": "control", "action": "play", "speed": 200})
    recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "playing")
    recv_until(ws, lambda m: m["type"] == "scalars" and m["step"] >= at_least)


def test_a_tab_closed_while_playing_leaves_its_run_paused(tmp_path):
    with _app(tmp_path) as client:
        with client.websocket_connect("/ws") as ws:
            session = client.app.state.sessions.get(open_lab(ws, "seq2seq", SMALL)["session"])
            _play(ws)
            assert session.state == "playing"
        _until("the run to pause", lambda: session.state == "paused")
        assert session.step >= 3 and session._player is None
        assert client.app.state.sessions.sessions.get(session.id) is session  # kept to rejoin
        # The driver comes back (a reload, "Continue"): the run is there to go on with.
        with client.websocket_connect("/ws") as ws:
            send(ws, {"type": "join", "session": session.id, "token": session.token})
            ready, _ = recv_until(ws, lambda m: m["type"] == "ready")
            assert ready["state"] == "paused" and ready["step"] == session.step >= 3
            at = session.step
            _play(ws, at + 3)  # and plays on from there


@pytest.mark.slow
@pytest.mark.parametrize("class_process", [False, True], ids=["in-server", "class-process"])
def test_a_class_plays_on_without_its_teacher_and_pauses_when_all_have_left(
    tmp_path, class_process
):
    with _app(tmp_path, class_process) as client:
        ws = client.websocket_connect("/ws").__enter__()
        session = client.app.state.sessions.get(open_lab(ws, "seq2seq", SMALL)["session"])
        send(ws, {"type": "share"})
        recv_until(ws, lambda m: m["type"] == "shared")
        if class_process:
            _until("the class's lab in its process", lambda: session.in_process, 60.0)
        _play(ws)
        with joined_viewers(client, session.id, 1) as (stays,):
            with joined_viewers(client, session.id, 1):
                ws.__exit__(None, None, None)  # the teacher's tab closes
                at = session.step
                # The students' pages see the run go on: steps after the teacher left.
                recv_until(stays, lambda m: m["type"] == "scalars" and m["step"] > at + 5)
                assert session.state == "playing"
            # One student leaves: one still watches.
            recv_until(stays, lambda m: m["type"] == "scalars" and m["step"] > at + 10)
            assert session.state == "playing"
        _until("the class's run to pause", lambda: session.state == "paused")
        assert session._player is None


def test_a_long_step_whose_tab_closed_ends_at_its_next_step(tmp_path):
    count = 10_000  # a minute or more of rnn steps (no step limit of its own): it outlives its tab
    with _app(tmp_path) as client:
        with client.websocket_connect("/ws") as ws:
            session = client.app.state.sessions.get(open_lab(ws, "rnn")["session"])
            send(ws, {"type": "control", "action": "step", "count": count})
            _until("steps of the long command", lambda: session.step >= 2)
        # The worker takes jobs in order: this one runs once the step command has ended.
        ended = client.portal.start_task_soon(session._work, lambda: None)
        try:
            ended.result(DEADLINE_S)
        except TimeoutError:
            session.interrupt()  # (so that the app can close)
            raise AssertionError("the step command ran on after its tab closed") from None
        assert session.step < count and session.state == "paused"
