"""The `embeddings` lab: its static numbers over the websocket, the learner's table and
picked row, the learned scatter that keeps its signs, and the claims the page makes about
what the character model learned (checked on the trained model)."""

from __future__ import annotations

import numpy as np
import torch

from backend.labs.embeddings import EmbeddingsLab, Params
from models import embeddings as emb
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

CPU = torch.device("cpu")
TRAIN = 150  # steps after which the page's sentences must hold (they do from ~50)


def test_static_numbers_and_a_first_training_step(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "embeddings")
        assert ready["params"]["text"] == "zh"
        msgs = step(ws, 3)
    f = frames(msgs)[-1]
    T, meta = f["tensors"], f["header"]["meta"]
    assert T["ids"].tolist() == [1, 2, 3] and meta["id_words"] == ["苹果", "香蕉", "梨"]
    assert meta["id_sum"] == 3 and meta["id_sum_word"] == "梨"
    assert np.array_equal(T["onehot_gram"], np.eye(3)) and np.array_equal(
        T["onehot_cos"], np.eye(3)
    )
    cos = T["table_cos"]
    assert meta["table_words"] == ["苹果", "梨", "小米", "橙子"]
    assert [round(float(cos[a, b]), 3) for a, b in ((1, 3), (0, 1), (0, 2), (1, 2))] == [
        0.999,
        0.781,
        0.743,
        0.163,
    ]
    assert T["lookup_onehot"].tolist() == [1, 0, 0, 0]
    assert np.array_equal(T["lookup_row"], T["table"][0]) and meta["lookup_error"] == 0.0
    learned = meta["learned"]
    n = len(learned["chars"])
    assert T["points"].shape == (n, 2) and n > 20  # the frequent characters of the story
    assert "。" in learned["chars"] and learned["probe"] == "。"
    assert len(T["neighbours"]) == emb.DEFAULT.neighbours
    rows = scalar_rows(msgs)
    assert {"loss", "marks_within", "marks_across"} <= set(rows[3])


def test_the_learner_edits_the_table_and_picks_a_row(client):
    table = [[0.5, 0.5], [-0.4, 0.4], [0.1, 0.9], [1.0, 0.0]]
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "embeddings")
        send(ws, {"type": "set", "params": {"table": table, "word": 2}})
        reply, seen = recv_until(ws, lambda m: m["type"] == "params")
        assert reply["reset"] is False  # live: the run goes on
        f = frames(seen)[-1]  # the new picture comes before the answer
        send(ws, {"type": "set", "params": {"table": [[2.0, 0.0]] * 4}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and err["field"].startswith("table")
    T, meta = f["tensors"], f["header"]["meta"]
    assert np.allclose(T["table"], table)
    want = emb.cosine_matrix(torch.tensor(table)).numpy()
    assert np.allclose(T["table_cos"], want, atol=1e-6)
    assert round(float(T["table_cos"][0, 1]), 6) == 0.0  # [0.5, 0.5] ⟂ [−0.4, 0.4]
    assert meta["word"] == 2 and T["lookup_onehot"].tolist() == [0, 0, 1, 0]
    assert np.allclose(T["lookup_row"], [0.1, 0.9])


def _train(params: Params) -> tuple[EmbeddingsLab, list, list]:
    """Train TRAIN steps, drawing a picture every 5 as the page would get them."""
    torch.manual_seed(0)
    lab = EmbeddingsLab(params, 0, CPU)
    first = lab.snapshot()
    pictures = [first.tensors]
    for i in range(TRAIN):
        f = lab.step(i % 5 == 4)
        if f.tensors:
            pictures.append(f.tensors)
    return lab, first.meta["learned"], pictures


def _checks(meta: dict) -> dict[str, dict]:
    return {c["group"]: c for c in meta["checks"]}


def _points(tensors) -> torch.Tensor:
    return torch.as_tensor(next(t.data for t in tensors if t.name == "points"))


def test_marks_end_up_together_in_the_chinese_story_and_the_scatter_never_flips():
    lab, before, pictures = _train(Params())
    after = lab.snapshot().meta["learned"]
    assert not _checks(before)["marks"]["holds"]  # at random init: no such grouping
    marks = _checks(after)["marks"]
    assert marks["holds"], marks  # what the page says after training
    assert {"。", "，", "？"} <= set(marks["members"])
    # The page also says where they started: the random init's numbers, not holding.
    assert marks["start"]["holds"] is False
    assert abs(marks["start"]["within"] - _checks(before)["marks"]["within"]) < 1e-6
    # The page's numbers are the model's: recompute them from its embedding rows.
    w = lab.model.embed.weight.detach()[lab.keep]
    cos = emb.cosine_matrix(w)
    again = emb.group_check(cos, lab.chars, "marks", emb.DEFAULT.margin)
    assert abs(again["within"] - marks["within"]) < 1e-6
    # Consecutive frames: each PCA axis keeps its direction (a flip would anti-correlate).
    for a, b in zip(pictures, pictures[1:], strict=False):
        pa, pb = _points(a), _points(b)
        for k in range(2):
            r = torch.corrcoef(torch.stack([pa[:, k], pb[:, k]]))[0, 1]
            assert r > 0, (k, float(r))


def test_vowels_and_marks_end_up_together_in_the_english_story():
    lab, before, _ = _train(Params(text="en"))
    checks = _checks(lab.snapshot().meta["learned"])
    assert not _checks(before)["vowels"]["holds"]
    assert checks["vowels"]["members"] == ["a", "e", "i", "o", "u"]
    assert checks["vowels"]["holds"] and checks["marks"]["holds"], checks


def test_neighbours_of_the_picked_character_are_its_nearest_by_cosine():
    lab = EmbeddingsLab(Params(text="en", probe="e"), 0, CPU)
    for _ in range(10):
        lab.step(False)
    f = lab.snapshot()
    learned = f.meta["learned"]
    assert learned["probe"] == "e"
    w = lab.model.embed.weight.detach()[lab.keep]
    cos = emb.cosine_matrix(w)
    at = lab.chars.index("e")
    row = cos[at].clone()
    row[at] = -2
    want = [lab.chars[i] for i in row.argsort(descending=True)[: emb.DEFAULT.neighbours]]
    assert learned["neighbours"] == want
    # A character that is not drawn falls back to the default (the commonest mark).
    lab.update_live(Params(text="en", probe="Z"))
    assert lab.snapshot().meta["learned"]["probe"] == "."


def test_pasted_text_trains_and_too_short_is_refused(client):
    text = "猫追狗，狗追猫。猫跑了，狗也跑了。" * 8
    lab = EmbeddingsLab(Params(text="pasted", pasted=text), 0, CPU)
    lab.step(False)
    assert set(lab.snapshot().meta["learned"]["chars"]) == set(text)
    with client.websocket_connect("/ws") as ws:
        send(
            ws, {"type": "open", "lab": "embeddings", "params": {"text": "pasted", "pasted": "短"}}
        )
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
    assert err["code"] == "invalid_params"
