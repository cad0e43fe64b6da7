"""A class's lab in a process of its own (Settings.class_process, Session.move_to_process):
at its share a session's lab moves out of the server's process between two steps, and the
run goes on there, numbers bit for bit those it would have had, play included."""

from __future__ import annotations

import os
import time

from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from backend.in_parts import parts_for
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

SMALL = {"max_len": 6, "d_hidden": 32, "batch": 16}
TEXT_BATCH_4 = {"data": "text-en", "n_ctx": 32, "batch": 4}  # evaluated in parts, every 75
PARTS = parts_for(64 / 4 / 3)  # its 64 held-out windows, in parts of a third of a step


def _app(tmp_path, moves: bool) -> TestClient:
    return TestClient(create_app(Settings(data_dir=tmp_path / "data", class_process=moves)))


def _moved(session, seconds: float = 60.0) -> bool:
    """Wait for the move (the fork server's first start takes a few seconds)."""
    end = time.monotonic() + seconds
    while not session.in_process and time.monotonic() < end:
        time.sleep(0.05)
    return session.in_process


def _share(ws) -> None:
    send(ws, {"type": "share"})
    recv_until(ws, lambda m: m["type"] == "shared")


def _shared_at(client, ws, lab: str, params: dict, steps: int, moves: bool, singly: int = 0):
    """Open `lab`, step it (the first `singly` steps one command each: a frame each), share
    it: (its session, the messages of the steps), moved or not."""
    ready = open_lab(ws, lab, params)
    session = client.app.state.sessions.get(ready["session"])
    msgs = [m for _ in range(singly) for m in step(ws, 1)] + step(ws, steps - singly)
    _share(ws)
    assert _moved(session, 60.0 if moves else 1.0) is moves
    return session, msgs


def _class_run(tmp_path, moves: bool):
    with _app(tmp_path, moves) as client, client.websocket_connect("/ws") as ws:
        session, msgs = _shared_at(client, ws, "seq2seq", SMALL, 5, moves)
        if moves:
            child = session._remote.process
            assert session.lab is None and child.is_alive() and child.pid != os.getpid()
        msgs += step(ws, 21)  # over the 25th update's held-out evaluation
    return scalar_rows(msgs)


def test_a_shared_labs_move_to_a_process_keeps_its_numbers_bit_for_bit(tmp_path):
    moved = _class_run(tmp_path / "moved", moves=True)
    stayed = _class_run(tmp_path / "stayed", moves=False)
    assert sorted(moved) == list(range(1, 27))
    assert moved == stayed  # every step's scalars, the evaluation's included
    assert "arm.1.seq_acc" in moved[25]


def test_play_goes_on_across_the_move(tmp_path):
    with _app(tmp_path, moves=True) as client, client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "seq2seq", SMALL)
        session = client.app.state.sessions.get(ready["session"])
        send(ws, {"type": "control", "action": "play", "speed": 20})
        recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "playing")
        _share(ws)
        assert _moved(session)
        at = session.step
        after, seen = recv_until(ws, lambda m: m["type"] == "scalars" and m["step"] > at + 5)
        states = [m["state"] for m in seen if m["type"] == "status"]
        assert "paused" not in states and session.state == "playing"  # nobody saw a pause
        send(ws, {"type": "control", "action": "pause"})
        paused, _ = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "paused")
        assert paused["step"] >= after["step"]
        assert scalar_rows(step(ws, 2)).keys() == {paused["step"] + 1, paused["step"] + 2}


def test_a_lab_that_does_not_train_stays_in_the_servers_process(tmp_path):
    """Nothing to move (a real model's weights would only load twice)."""
    with _app(tmp_path, moves=True) as client, client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "attention")
        session = client.app.state.sessions.get(ready["session"])
        _share(ws)
        assert client.portal.call(session.move_to_process) is False  # as the share's own ask
        assert not session.in_process and session.lab is not None


def test_a_student_forks_a_moved_class_with_its_weights_and_step(tmp_path):
    """The fork's state comes from the class's process (copied there, over the pipe): the
    student's next steps are the teacher's, number for number."""
    with _app(tmp_path, moves=True) as client, client.websocket_connect("/ws") as teacher:
        ready = open_lab(teacher, "seq2seq", SMALL)
        step(teacher, 4)
        _share(teacher)
        assert _moved(client.app.state.sessions.get(ready["session"]))
        with client.websocket_connect("/ws") as student:
            send(student, {"type": "join", "session": ready["session"]})
            recv_until(student, lambda m: m["type"] == "frame")
            send(student, {"type": "fork"})
            forked, _ = recv_until(student, lambda m: m["type"] == "ready")
            assert forked["step"] == 4 and forked["session"] != ready["session"]
            mine = {t: v for t, v in scalar_rows(step(student, 3)).items() if t > 4}
        # (not `step`: the status of the student leaving may close it early)
        send(teacher, {"type": "control", "action": "step", "count": 3})
        last, seen = recv_until(teacher, lambda m: m["type"] == "status" and m["step"] >= 7)
        theirs = {t: v for t, v in scalar_rows([*seen, last]).items() if t > 4}
    assert sorted(mine) == [5, 6, 7] and mine == theirs


def _text_run(tmp_path, moves: bool):
    """gpt's text at batch 4, shared at step 76, while its evaluation asked at 75 is under way.
    Its text sample is written in parts, one a sent frame: the first PARTS + 2 steps send a
    frame each, so it is there before the move however fast the machine steps (a command of
    many steps sends fewer frames on a quicker machine)."""
    with _app(tmp_path, moves) as client, client.websocket_connect("/ws") as ws:
        _, msgs = _shared_at(client, ws, "gpt", TEXT_BATCH_4, 76, moves, singly=PARTS + 2)
        assert "sample" in frames(msgs)[-1]["header"]["meta"]  # written before the move
        after = step(ws, 1)
        msgs += after + step(ws, PARTS)
    vals = {t: v["val_loss"] for t, v in scalar_rows(msgs).items() if "val_loss" in v}
    return vals, frames(after)[-1]["header"]["meta"]


def test_a_move_finishes_the_evaluation_under_way_and_the_class_sees_it(tmp_path):
    """Not dropped with the thread's copy of the lab: its numbers reach the class with the
    first step after the move (the held-out perplexity would wait 75 steps), and the text
    sample goes along too."""
    assert PARTS > 2
    moved, meta = _text_run(tmp_path / "moved", moves=True)
    stayed, stayed_meta = _text_run(tmp_path / "stayed", moves=False)
    assert list(stayed) == [75 + PARTS - 1]  # in parts, as it would have been
    assert list(moved) == [77] and moved[77] == stayed[75 + PARTS - 1]
    assert meta["eval"]["step"] == 75 and meta["eval"]["val_loss"] == moved[77]
    assert meta["sample"] == stayed_meta["sample"]  # the one written at the open, not gone


def test_a_fork_during_an_evaluation_in_parts_gets_its_numbers(tmp_path):
    """A student's fork at step 76 (Session.copy_state(finish=True)): the evaluation asked at
    75 comes with the fork's first step, as with the class's."""
    with _app(tmp_path, moves=False) as client, client.websocket_connect("/ws") as teacher:
        ready = open_lab(teacher, "gpt", TEXT_BATCH_4)
        step(teacher, 76)
        _share(teacher)
        with client.websocket_connect("/ws") as student:
            send(student, {"type": "join", "session": ready["session"]})
            recv_until(student, lambda m: m["type"] == "frame")
            send(student, {"type": "fork"})
            recv_until(student, lambda m: m["type"] == "ready")
            mine = scalar_rows(step(student, 1))
    assert "val_loss" in mine[77]
