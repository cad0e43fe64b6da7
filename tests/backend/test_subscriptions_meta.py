"""A subscribed connection is sent a frame's meta only when it changed (docs/streams.md):
a second frame with the same meta is smaller, and a new subscription, a late joiner and a
seek get the whole meta."""

import numpy as np

from backend import protocol, subscriptions, wire
from backend.bus import Outbox
from backend.subscriptions import Slice
from tests.wsutil import open_lab, recv_until, send, step

STATIC = {"tokens": ["<s>", "a", "b"] * 20, "targets": ["a", "b", "c"] * 20, "kind": "text"}


def _encode(step_at: int, meta: dict, replay: bool = False) -> bytes:
    tensors = [wire.TensorOut("blocks.0.attn.hook_pattern", np.random.rand(2, 4, 4), "u8")]
    data = wire.encode(wire.Frame(step=step_at, tensors=tensors, meta=meta))
    return wire.patch_header(data, {"replay": True}) if replay else data


def _box() -> Outbox:
    box = Outbox()
    box.slice = Slice(layer=0, head=1)
    return box


class Page:
    """What frontend/js/core/subscription.js `unslice` does with a cut frame's meta."""

    def __init__(self) -> None:
        self.meta: dict = {}

    def receive(self, data: bytes) -> dict:
        header, _ = wire.decode(data)
        m = dict(header.get("meta") or {})
        if "_keep" in m:
            base = dict(self.meta) if m.pop("_keep") else {}
            for k in m.pop("_drop", []):
                base.pop(k, None)
            self.meta = {**base, **m}
            return self.meta
        return m


def test_unchanged_meta_is_sent_once_and_the_page_rebuilds_every_frame():
    box, page = _box(), Page()
    metas = [{**STATIC, "next_top": [[str(i)] * 8] * 3, "sample": {"step": 0}} for i in range(3)]
    metas[2].pop("sample")  # a key that goes away is dropped by the page too
    sizes = []
    for i, meta in enumerate(metas):
        data = _encode(i + 1, meta)
        cut = subscriptions.cut(data, box)
        sizes.append(len(cut))
        header, _ = wire.decode(cut)
        if i == 0:  # a new subscription: the whole meta
            assert header["meta"]["_keep"] is False and header["meta"]["tokens"] == STATIC["tokens"]
        else:  # only what changed travels
            assert header["meta"]["_keep"] is True and "tokens" not in header["meta"]
            assert header["meta"]["next_top"] == meta["next_top"]
        assert page.receive(cut) == meta  # the page draws from the whole meta every frame
    assert header["meta"]["_drop"] == ["sample"]
    assert sizes[1] < sizes[0] - 300  # the static meta (tokens, targets) was left out


def test_a_new_subscription_a_late_joiner_and_a_seek_get_the_whole_meta():
    first, second = _encode(1, {**STATIC, "n": 1}), _encode(2, {**STATIC, "n": 2})
    follower = _box()
    subscriptions.cut(first, follower)
    delta = subscriptions.cut(second, follower)
    late = _box()  # joins now: its first frame is the second one, whole
    whole = subscriptions.cut(second, late)
    assert wire.decode(delta)[0]["meta"] == {"_keep": True, "n": 2}
    assert wire.decode(whole)[0]["meta"] == {**STATIC, "n": 2, "_keep": False}
    assert len(delta) < len(whole)
    # Equal slices with equal meta sent before share one cut; the late joiner's is its own.
    other = _box()
    subscriptions.cut(first, other)
    assert subscriptions.cut(second, other) is delta
    # A seek (a replay frame) is whole even to a follower who had this meta.
    replay = subscriptions.cut(_encode(1, {**STATIC, "n": 1}, replay=True), follower)
    assert wire.decode(replay)[0]["meta"]["_keep"] is False
    assert wire.decode(replay)[0]["meta"]["tokens"] == STATIC["tokens"]
    # A changed subscription starts whole: the page may have dropped frames in between.
    session = type("S", (), {"timeline": type("T", (), {"frame_at": lambda self, s: None})()})()
    session.step = 0
    msg = protocol.Subscribe(type="subscribe", tensors="*", layer=None, head=None)
    subscriptions.apply(follower, msg, session)
    follower.slice = Slice(layer=0)
    third = subscriptions.cut(_encode(3, {**STATIC, "n": 3}), follower)
    assert wire.decode(third)[0]["meta"]["tokens"] == STATIC["tokens"]


def _frame(ws, pred=lambda h: True):
    f, _ = recv_until(ws, lambda m: m["type"] == "frame" and pred(m["header"]))
    return f


def test_a_phone_following_gpt_gets_meta_once_and_a_late_joiner_and_a_seek_get_it_whole(client):
    with client.websocket_connect("/ws") as teacher:
        sid = open_lab(teacher, "gpt", {"n_layers": 2, "n_heads": 4})["session"]
        step(teacher, 1)
        with client.websocket_connect("/ws") as phone:
            send(phone, {"type": "join", "session": sid})
            _frame(phone)  # the latest frame, whole (no subscription yet)
            send(phone, {"type": "subscribe", "tensors": "*", "layer": 1, "head": 2})
            cut = _frame(phone, lambda h: "slice" in h)  # the latest again, cut, meta whole
            assert cut["header"]["meta"]["_keep"] is False
            tokens = cut["header"]["meta"]["tokens"]
            step(teacher, 1)
            nxt = _frame(phone, lambda h: h["step"] == 2)["header"]
            assert nxt["meta"]["_keep"] is True
            assert "tokens" not in nxt["meta"] and "n_layers" not in nxt["meta"]
            assert len(nxt["meta"]["next_top"]) == len(tokens)  # it changes: it travels
            # A late joiner with the same subscription: the whole meta at once.
            with client.websocket_connect("/ws") as late:
                send(late, {"type": "join", "session": sid})
                _frame(late)
                send(late, {"type": "subscribe", "tensors": "*", "layer": 1, "head": 2})
                first = _frame(late, lambda h: "slice" in h)["header"]
                assert first["meta"]["_keep"] is False and first["meta"]["tokens"] == tokens
            # A seek back: the recorded frame with its whole meta.
            send(phone, {"type": "seek", "step": 1})
            back = _frame(phone, lambda h: h.get("replay"))["header"]
            assert back["step"] == 1 and back["meta"]["tokens"] == tokens
            assert len(back["meta"]["next_top"]) == len(tokens)
