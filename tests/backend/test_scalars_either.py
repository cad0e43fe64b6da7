"""Subscribed with `scalars: "either"` (as the page is), a step that has a frame is sent
once, in the frame: its header's scalars are the step's row, and no `scalars` text repeats
them; steps without a frame still come as rows; nothing is lost or sent twice. A client that
did not ask gets every step as a row, as before."""

from __future__ import annotations

from backend.connection import Connection
from tests.wsutil import frames, open_lab, scalar_rows, send, step


def _run(client, scalars: str | None):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt")
        if scalars:
            send(ws, {"type": "subscribe", "tensors": "*", "scalars": scalars})
        msgs = []
        for _ in range(5):  # a pressed step: each one ends with its picture
            msgs += step(ws, 1)
        msgs += step(ws, 40)  # flat out: frames for some steps, rows for the rest
    texts = {s: v for s, v in scalar_rows(msgs).items() if s}  # the steps taken (not the open)
    framed = {
        f["header"]["step"]: f["header"]["scalars"]
        for f in frames(msgs)
        if "scalars" in f["header"] and not f["header"].get("replay") and f["header"]["step"]
    }
    return texts, framed


def test_a_step_with_a_frame_is_sent_once_in_the_frame(client):
    texts, framed = _run(client, "either")
    assert not set(range(1, 6)) & set(texts)  # the pressed steps: no text row at all
    assert set(range(1, 6)) <= set(framed)
    assert set(texts) | set(framed) == set(range(1, 46))  # every step, by one or the other
    for s in set(texts) - set(framed):  # a step without a frame came as a row
        assert {"loss"} <= set(texts[s])


def test_a_client_that_did_not_ask_gets_every_step_as_a_row(client):
    texts, framed = _run(client, None)
    assert set(texts) == set(range(1, 46))
    for s, values in framed.items():  # the frame repeats its row (the old way)
        if s in texts:
            assert values == texts[s]


def test_a_frame_that_was_its_steps_row_leaves_nothing_to_wake_the_sender_for(client, monkeypatch):
    # Each frame used to leave a timer behind (rows "due soon") that woke the sender again
    # with nothing to send: a second wake-up a viewer a frame, a lecture hall's worth of them.
    due = []
    wake = Connection._scalars_due
    monkeypatch.setattr(Connection, "_scalars_due", lambda self: (due.append(1), wake(self)))
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt")
        send(ws, {"type": "subscribe", "tensors": "*", "scalars": "either"})
        msgs = []
        for _ in range(6):
            msgs += step(ws, 1)
    assert len(frames(msgs)) >= 6
    assert not due
