"""The gpt lab's drill-down: one attention cell's arithmetic, from the live model, equals the
map the frame drew (tests/backend/test_lab_gpt.py covers the rest of the lab)."""

from __future__ import annotations

import math

import numpy as np

from tests.backend.test_lab_gpt import infer
from tests.wsutil import frames, open_lab, step

SMALL = {"d_model": 32, "n_heads": 4}  # d_head = 8: every entry of q and k is sent


def cell_of(ws, **cell) -> dict:
    (msg,) = infer(ws, cell=cell)
    assert msg["type"] == "frame", msg
    return msg["header"]["meta"]["cell"]


def test_a_cells_softmax_is_the_frames_pattern_at_the_same_step(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt", SMALL)
        f = frames(step(ws, 30))[-1]
        assert f["step"] == 30
        pattern = f["tensors"]["blocks.1.attn.hook_pattern"]  # [H, T, T], u8 on the wire
        T = pattern.shape[-1]
        for head, query, key in [(2, 9, 4), (0, 12, 12), (3, 5, 0)]:
            c = cell_of(ws, layer=1, head=head, query=query, key=key)
            assert c["step"] == 30  # the model now is the model of the frame
            assert abs(c["weight"] - pattern[head, query, key]) <= 0.5 / 255 + 1e-6
            assert math.isclose(c["row_softmax"][key], c["weight"], rel_tol=1e-5, abs_tol=1e-7)
            assert np.allclose(c["row_softmax"], pattern[head, query], atol=0.5 / 255 + 1e-6)
            # the arithmetic, as the panel prints it: q·k over d_head, ÷√d_head, the score
            assert c["d_head"] == 8 and len(c["q"]) == len(c["k"]) == 8
            assert math.isclose(float(np.dot(c["q"], c["k"])), c["dot"], rel_tol=1e-9, abs_tol=1e-9)
            assert math.isclose(c["scaled"], c["dot"] / math.sqrt(8), rel_tol=1e-9)
            assert math.isclose(c["score"], c["scaled"], rel_tol=1e-4, abs_tol=1e-5)
            row = [s for s in c["row_scores"] if s is not None]
            assert len(row) == query + 1  # causal: keys 0..query are seen
            e = np.exp(np.array(row) - max(row))
            assert math.isclose(e[key] / e.sum(), c["weight"], rel_tol=1e-4)
            assert c["query_token"] == f["header"]["meta"]["tokens"][query]
        # a key after the query: masked, −∞, weight 0 as the map's blank cell
        c = cell_of(ws, layer=0, head=1, query=3, key=7)
        assert c["masked"] and c["row_scores"][7] is None and c["weight"] == 0.0
        assert len(c["row_scores"]) == T


def test_a_cell_outside_the_model_is_refused_with_its_field(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt", SMALL)
        step(ws, 2)
        for cell, field in [
            ({"layer": 2, "head": 0, "query": 0, "key": 0}, "input.cell.layer"),
            ({"layer": 0, "head": 4, "query": 0, "key": 0}, "input.cell.head"),
            ({"layer": 0, "head": 0, "query": 13, "key": 0}, "input.cell.query"),
            ({"layer": 0, "head": 0, "query": 0, "key": -1}, "input.cell.key"),
            ({"layer": 0, "head": 0, "query": 0}, "input.cell.key"),
            ({"layer": 0, "head": 0, "query": 0, "key": 0, "x": 1}, "input.cell.x"),
        ]:
            (err,) = infer(ws, cell=cell)
            assert err["type"] == "error" and err["field"] == field, (cell, err)
        (err,) = infer(ws, cell={"layer": 0, "head": 0, "query": 0, "key": 0}, prompt="01|")
        assert err["field"] == "input.prompt"  # a cell is asked alone
        assert (
            "out of range"
            in infer(ws, cell={"layer": 9, "head": 0, "query": 0, "key": 0})[0]["message"]
        )
        assert cell_of(ws, layer=1, head=3, query=12, key=0)["step"] == 2  # the session still works
