"""A session's scalars messages are encoded once per range of rows, for every connection at
that place (backend/scalars_message.ScalarsTexts), and never served stale."""

import json

from backend.scalars_message import ScalarsTexts, scalars_message


def test_connections_at_the_same_place_share_one_text_and_a_new_row_gets_a_new_one():
    texts = ScalarsTexts()
    rows = [{"loss": 2.0}, {"loss": 1.5}]
    first = texts.text([1, 2], rows, run=3)
    assert first == scalars_message([1, 2], rows, 3)
    assert texts.text([1, 2], list(rows), run=3) is first  # a second viewer: the same text
    one = texts.text([2], rows[1:], run=3)
    assert json.loads(one) == {"type": "scalars", "run": 3, "step": 2, "values": {"loss": 1.5}}
    # The step recorded again (a new row object) or another run: encoded afresh.
    again = texts.text([2], [{"loss": 0.5}], run=3)
    assert json.loads(again)["values"] == {"loss": 0.5}
    assert json.loads(texts.text([2], rows[1:], run=4))["run"] == 4
