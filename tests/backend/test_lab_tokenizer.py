"""Websocket conversation with the `tokenizer` lab: merges per step, four tokenizers, paste."""

from __future__ import annotations

from models.data.texts import MAX_PASTED_BYTES
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


def next_frame(ws) -> dict:
    msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
    return msg


def test_each_step_is_one_merge_and_the_token_count_falls(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "tokenizer")
        assert ready["params"]["source"] == "zh"
        msgs = step(ws, 10)
        rows = scalar_rows(msgs)
        tokens = [rows[i]["tokens"] for i in range(1, 11)]
        assert all(b < a for a, b in zip(tokens, tokens[1:], strict=False))
        assert [rows[i]["vocab"] for i in (1, 10)] == [rows[1]["vocab"], rows[1]["vocab"] + 9]
        assert "loss" not in rows[10]
        f = frames(msgs)[-1]
        meta = f["header"]["meta"]
        assert meta["merges_done"] == 10 and meta["merge"]["k"] == 10
        assert [r["k"] for r in meta["recent"]][:3] == [10, 9, 8]
        assert meta["compare"]["char"]["tokens"] == meta["chars"] == 1312
        assert meta["compare"]["bpe"]["tokens"] == tokens[-1]
        assert meta["compare"]["word"]["tokens"] < meta["compare"]["bpe"]["tokens"]
        assert meta["sample"] == "街角有一家小小的茶楼。"
        cuts = meta["cuts"]
        assert cuts["char"]["pieces"] == list(meta["sample"])
        for kind in ("word", "bpe", "sp"):
            assert len(cuts[kind]["pieces"]) == len(cuts[kind]["ids"])
            assert "".join(cuts[kind]["pieces"]).replace("▁", "") == meta["sample"]
        io = meta["io"]
        assert io["input"] == io["ids"][:-1] and io["labels"] == io["ids"][1:]
        assert meta["example"] == {
            "ids": [11, 27, 42, 2],
            "input": [11, 27, 42],
            "labels": [27, 42, 2],
        }
        top = f["tensors"]["top_counts"]
        assert top.ndim == 1 and len(top) == len(meta["top"]) and top[0] >= top[-1]


def test_sample_and_sentencepiece_size_are_live(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "tokenizer", {"source": "en"})
        step(ws, 20)
        send(ws, {"type": "set", "params": {"sample": "the little shaomai", "sp_vocab": 120}})
        f = next_frame(ws)
        meta = f["header"]["meta"]
        assert meta["merges_done"] == 20  # not reset
        assert meta["cuts"]["char"]["pieces"] == list("the little shaomai")
        sp = meta["compare"]["sp"]
        assert sp["requested"] == 120 and sp["vocab"] >= 120  # clamped up to the text's minimum
        send(ws, {"type": "set", "params": {"sp_vocab": 600}})
        f = next_frame(ws)
        assert f["header"]["meta"]["compare"]["sp"]["tokens"] < sp["tokens"]


def test_pasted_text_trains_and_oversized_text_is_refused(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "tokenizer")
        text = "low lower lowest slow slower " * 40
        send(ws, {"type": "set", "params": {"source": "pasted", "pasted": text}})
        f = next_frame(ws)
        assert f["header"]["meta"]["source"] == "pasted"
        assert f["header"]["meta"]["chars"] == len(text)
        merges = frames(step(ws, 3))[-1]["header"]["meta"]["recent"]
        assert merges[-1]["piece"] in ("lo", " l", "ow", "er")

        # "pasted" without its text (a reloaded link): the Chinese text, flagged.
        send(ws, {"type": "set", "params": {"source": "pasted", "pasted": ""}})
        f = next_frame(ws)
        assert f["header"]["meta"]["pasted_missing"] and f["header"]["meta"]["chars"] == 1312

        send(ws, {"type": "set", "params": {"source": "pasted", "pasted": "a"}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and "two distinct characters" in err["message"]

        # Over the cap in bytes (3 bytes a character) but under it in characters.
        big = "烧麦" * (MAX_PASTED_BYTES // 6 + 1)
        send(
            ws, {"type": "open", "lab": "tokenizer", "params": {"source": "pasted", "pasted": big}}
        )
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] in ("invalid_params", "too_large")


def test_pasted_cap_is_checked_in_bytes(client):
    from backend.labs.tokenizer import Params

    ok = Params(source="pasted", pasted="ab" * 1000)
    assert ok.pasted.startswith("ab")
    try:
        Params(source="pasted", pasted="烧" * 70_000)  # 210,000 bytes
    except ValueError as err:
        assert "210,000 bytes; the limit is 200,000" in str(err)
    else:
        raise AssertionError("a pasted text over 200 KB was accepted")
