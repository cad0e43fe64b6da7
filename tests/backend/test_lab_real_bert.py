"""Websocket conversations with `real-bert`: all-MiniLM-L6-v2's real attention and embeddings.

The model loads once for this process (the first test pays ~2 s); every number asserted is
the real model's output on the sentence, read back from the frames the page receives.
"""

from __future__ import annotations

import numpy as np
import torch

from backend.labs import _real_models
from backend.labs.real_bert import EXAMPLE, Params, RealBertLab
from tests.wsutil import open_lab, recv_until, send

U8 = 0.5 / 255  # a u8 picture's rounding, per value


def frame_after_set(ws, **params) -> dict:
    send(ws, {"type": "set", "params": params})
    msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
    assert msg["type"] == "frame", msg
    return msg


def first_frame(ws, params: dict | None = None) -> dict:
    send(ws, {"type": "open", "lab": "real-bert", "params": params or {}, "seed": 0})
    msg, _ = recv_until(ws, lambda m: m["type"] == "frame")
    return msg


def test_every_head_of_the_example_and_it_finds_animal(client):
    with client.websocket_connect("/ws") as ws:
        f = first_frame(ws)
        meta = f["header"]["meta"]
        tokens = meta["tokens"]
        assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and "it" in tokens
        assert meta["n_layers"] == 6 and meta["n_heads"] == 12 and meta["d_model"] == 384
        assert meta["unk"] == [] and meta["truncated"] is False
        T = len(tokens)
        pats = np.stack([f["tensors"][f"blocks.{i}.attn.hook_pattern"] for i in range(6)])
        assert pats.shape == (6, 12, T, T)
        assert np.allclose(pats.sum(-1), 1.0, atol=T * U8)  # every row is a softmax
        it, animal = tokens.index("it"), tokens.index("animal")
        link = pats[:, :, it, animal]  # [L, H]: how much "it" reads "animal" in each head
        layer, head = np.unravel_index(link.argmax(), link.shape)
        assert link.max() > 0.5  # some head links them strongly (measured: 0.65)
        assert tokens[int(pats[layer, head, it].argmax())] == "animal"  # its favourite key
        # The sinks: much of the attention lands on [CLS] and [SEP], and the frame says how much.
        sink = f["tensors"]["sink_mass"]  # [L, H, 2]
        assert sink.shape == (6, 12, 2) and np.all(sink.sum(-1) <= 1 + 1e-5)
        cls_mass = pats[:, :, :, 0].mean(-1)  # the same number, from the maps themselves
        assert np.allclose(sink[..., 0], cls_mass, atol=2 * U8)
        assert sink[..., 0].mean() > 0.25  # a quarter of everything goes to [CLS] (0.47)


def test_chinese_becomes_unk_long_text_is_cut_pairs_get_segments(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "real-bert")
        meta = frame_after_set(ws, text="小烧麦实验室")["header"]["meta"]
        assert meta["unk"] and all(meta["tokens"][i] == "[UNK]" for i in meta["unk"])
        assert len(meta["unk"]) >= len(meta["tokens"]) // 2  # most characters are unknown
        long = " ".join(["word"] * 180)  # 180 tokens + [CLS] + [SEP]
        f = frame_after_set(ws, text=long)
        meta = f["header"]["meta"]
        assert meta["truncated"] is True and len(meta["tokens"]) == meta["max_tokens"] == 128
        assert meta["dropped"] == 180 + 2 - 128 and meta["tokens"][-1] == "[SEP]"
        assert f["tensors"]["blocks.0.attn.hook_pattern"].shape == (12, 128, 128)
        meta = frame_after_set(ws, text="A man is eating.\nSomeone eats food.", pair=True)
        meta = meta["header"]["meta"]
        assert meta["pair"] is True and meta["tokens"].count("[SEP]") == 2
        first_sep = meta["tokens"].index("[SEP]")
        assert set(meta["types"][: first_sep + 1]) == {0} and set(
            meta["types"][first_sep + 1 :]
        ) == {1}


def test_sentence_embeddings_and_their_cosine_similarities(client):
    lines = ["A man is eating food.", "A man is eating a meal.", "The stock market fell today."]
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "real-bert")
        f = frame_after_set(ws, text="\n".join(lines))
        emb, sim = f["tensors"]["embedding"], f["tensors"]["similarity"]
        assert emb.shape == (3, 384) and np.allclose(np.linalg.norm(emb, axis=1), 1, atol=1e-5)
        assert sim.shape == (3, 3) and np.allclose(np.diag(sim), 1, atol=1e-5)
        assert np.allclose(sim, sim.T, atol=1e-6) and np.allclose(sim, emb @ emb.T, atol=1e-5)
        assert sim[0, 1] > 0.7 > 0.2 > sim[0, 2]  # same meaning close, another topic far
        # The same sentences as a declared `infer` input give the same numbers.
        send(ws, {"type": "infer", "input": {"sentences": lines}})
        msg, _ = recv_until(ws, lambda m: m["type"] == "frame")
        assert msg["header"]["infer"] and np.allclose(msg["tensors"]["similarity"], sim)
        send(ws, {"type": "infer", "input": {"sentences": []}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["field"] == "input.sentences"
        send(ws, {"type": "set", "params": {"text": "\n".join(["x"] * 9)}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and err["field"] == "text"


def test_every_session_shares_one_copy_of_the_weights(client):
    with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
        first_frame(a)
        first_frame(b)
    assert _real_models.LOADS["minilm"] == 1
    one = RealBertLab(Params(), 0, torch.device("cpu"))
    two = RealBertLab(Params(text=EXAMPLE + "!"), 1, torch.device("cpu"))
    assert one.sh is two.sh and one.sh.model.embed.weight is two.sh.model.embed.weight
    assert _real_models.LOADS["minilm"] == 1
