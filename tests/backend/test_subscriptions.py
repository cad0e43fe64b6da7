"""Per-viewer streams: each connection gets only its slice, cut once per distinct key."""

import numpy as np

from backend import subscriptions, wire
from backend.subscriptions import Slice, slice_frame
from tests.wsutil import open_lab, recv_until, send, step

PATTERN = "blocks.{}.attn.hook_pattern"


def _frame(ws, step_at=None):
    f, _ = recv_until(
        ws, lambda m: m["type"] == "frame" and (step_at is None or m["step"] == step_at)
    )
    return f


def _subscribe(ws, **sub) -> None:
    send(ws, {"type": "subscribe", **sub})


def test_viewers_get_exactly_their_cut_and_equal_subscriptions_share_one_cut(client):
    with client.websocket_connect("/ws") as teacher:
        ready = open_lab(teacher, "gpt", {"n_layers": 2, "n_heads": 4})
        sid = ready["session"]
        views = {}
        subs = {
            "a": {"layer": 1, "head": 2},
            "b": {"layer": 1, "head": 2},  # the same key as a: the same bytes
            "c": {"layer": 0},
            "d": {"quality": "low"},
        }
        socks = {k: client.websocket_connect("/ws") for k in subs}
        try:
            for k, ws in socks.items():
                views[k] = ws.__enter__()
                send(views[k], {"type": "join", "session": sid})
                _frame(views[k])  # the step-0 frame, whole (no subscription yet)
                _subscribe(views[k], **subs[k])
            # A round trip after the subscribe: a bad one answers, so the good one is in.
            for ws in views.values():
                _subscribe(ws, layer=9)
                err, _ = recv_until(ws, lambda m: m["type"] == "error")
                assert err["code"] == "invalid_params" and err["field"] == "layer"
                assert "beyond this model" in err["message"]
            for k, ws in views.items():
                _subscribe(ws, **subs[k])  # the connection still works: subscribe again
            before = subscriptions.counts["cuts"]
            full = None
            seen = {}
            teacher_frames = step(teacher, 1)
            full = next(m for m in teacher_frames if m["type"] == "frame")
            for k, ws in views.items():
                seen[k] = _frame(ws, full["step"])
            # a and b share a key: three distinct cuts for four viewers.
            assert subscriptions.counts["cuts"] - before == 3
        finally:
            for ws in socks.values():
                ws.__exit__(None, None, None)
    pat1 = full["tensors"][PATTERN.format(1)]  # [H, T, T]
    a, c, d = seen["a"], seen["c"], seen["d"]
    assert PATTERN.format(0) not in a["tensors"]
    np.testing.assert_array_equal(a["tensors"][PATTERN.format(1)], pat1[2:3])
    assert a["header"]["slice"]["head"] == 2 and a["header"]["slice"]["layer"] == 1
    assert set(a["tensors"]) == {n for n in full["tensors"] if not n.startswith("blocks.0.")}
    assert set(c["tensors"]) == {n for n in full["tensors"] if not n.startswith("blocks.1.")}
    np.testing.assert_array_equal(
        c["tensors"][PATTERN.format(0)], full["tensors"][PATTERN.format(0)]
    )
    # Quality low: every layer, every head, each map at half resolution (2 × 2 means).
    T = pat1.shape[-1]
    low = d["tensors"][PATTERN.format(1)]
    assert low.shape == (pat1.shape[0], (T + 1) // 2, (T + 1) // 2)
    assert d["header"]["slice"]["scale"] == 2
    assert d["header"]["slice"]["pooled"][PATTERN.format(1)] == [T, T]
    even = pat1[:, : T // 2 * 2, : T // 2 * 2]
    means = even.reshape(pat1.shape[0], T // 2, 2, T // 2, 2).mean(axis=(2, 4))
    step_q = (full["header"]["tensors"][0]["max"] - full["header"]["tensors"][0]["min"]) / 255
    np.testing.assert_allclose(low[:, : T // 2, : T // 2], means, atol=step_q + 1e-6)


def test_a_cut_is_made_once_per_frame_and_key_and_shared():
    frame = wire.Frame(
        step=3,
        tensors=[
            wire.TensorOut("blocks.0.attn.hook_pattern", np.random.rand(4, 5, 5), "u8"),
            wire.TensorOut("blocks.1.attn.hook_pattern", np.random.rand(4, 5, 5), "u8"),
            wire.TensorOut("loss_curve", np.arange(6.0), "f32"),
        ],
    )
    data = wire.encode(frame)

    class Box:
        tensors = None

        def __init__(self, sl):
            self.slice = sl

    one, two, other = Box(Slice(layer=1, head=3)), Box(Slice(layer=1, head=3)), Box(Slice())
    before = subscriptions.counts["cuts"]
    assert subscriptions.cut(data, one) is subscriptions.cut(data, two)  # one object, shared
    assert subscriptions.cut(data, other) is data  # a whole subscription: the frame itself
    assert subscriptions.counts["cuts"] - before == 1
    header, tensors = wire.decode(subscriptions.cut(data, one))
    _, whole = wire.decode(data)
    assert set(tensors) == {"blocks.1.attn.hook_pattern", "loss_curve"}
    np.testing.assert_array_equal(
        tensors["blocks.1.attn.hook_pattern"], whole["blocks.1.attn.hook_pattern"][3:4]
    )
    np.testing.assert_array_equal(tensors["loss_curve"], whole["loss_curve"])
    # Odd sizes pool with the edge repeated: 5 -> 3.
    _, low = wire.decode(slice_frame(data, Slice(quality="low")))
    assert low["blocks.0.attn.hook_pattern"].shape == (4, 3, 3)


def test_bad_subscriptions_are_refused_and_old_clients_keep_working(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt", {"n_layers": 2, "n_heads": 4})
        for bad, field in (({"head": 4}, "head"), ({"layer": 2}, "layer")):
            _subscribe(ws, **bad)
            err, _ = recv_until(ws, lambda m: m["type"] == "error")
            assert (err["code"], err["field"]) == ("invalid_params", field), err
            assert err["values"]["limit"] in (2, 4)
        _subscribe(ws, layer=-1)
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "bad_message" and err["field"] == "subscribe.layer"
        _subscribe(ws, tensors=["grad_norm"])  # the old message, as before
        f = next(m for m in step(ws, 1) if m["type"] == "frame")
        assert set(f["tensors"]) <= {"grad_norm"}
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression")
        _subscribe(ws, layer=0)
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "invalid_params" and err["field"] == "layer"
        assert len(step(ws, 1)) > 0  # still serving


def test_the_driver_of_a_class_hears_the_bytes_per_second_sent_to_it(client):
    with client.websocket_connect("/ws") as teacher:
        ready = open_lab(teacher, "gpt", {"n_layers": 2, "n_heads": 4})
        send(teacher, {"type": "share"})
        recv_until(teacher, lambda m: m["type"] == "shared")
        with client.websocket_connect("/ws") as viewer:
            send(viewer, {"type": "join", "session": ready["session"]})
            _frame(viewer)
            step(teacher, 2)
            stats, _ = recv_until(
                teacher, lambda m: m["type"] == "class_stats" and m["bytes_per_s"] > 0
            )
            assert stats["viewers"] == 1
            assert stats["per_viewer"] == stats["bytes_per_s"] == stats["max_viewer"]


def test_a_causal_map_is_sent_as_its_lower_triangle_and_decodes_whole():
    causal = np.tril(np.random.rand(4, 6, 6))  # zero above the diagonal, as a causal mask's
    full = np.random.rand(4, 6, 6)  # an encoder's: nothing to leave out
    frame = wire.Frame(
        step=1,
        tensors=[
            wire.TensorOut("blocks.0.attn.hook_pattern", causal, "u8"),
            wire.TensorOut("blocks.0.cross.hook_pattern", full, "u8"),
        ],
    )
    data = wire.encode(frame)
    _, whole = wire.decode(data)
    for sl in (Slice(layer=0), Slice(layer=0, head=1), Slice(quality="low")):
        header, tensors = wire.decode(slice_frame(data, sl))
        desc = {t["name"]: t for t in header["tensors"]}
        tri, sq = desc["blocks.0.attn.hook_pattern"], desc["blocks.0.cross.hook_pattern"]
        assert tri["packed"] == "tril" and "packed" not in sq, sl
        side = tri["shape"][-1]
        assert tri["length"] == tri["shape"][0] * side * (side + 1) // 2
        assert tensors["blocks.0.attn.hook_pattern"].shape == tuple(tri["shape"])
    # Cut to one head at full quality, the map is the whole frame's, level for level.
    _, head = wire.decode(slice_frame(data, Slice(layer=0, head=1)))
    np.testing.assert_array_equal(
        head["blocks.0.attn.hook_pattern"], whole["blocks.0.attn.hook_pattern"][1:2]
    )
    np.testing.assert_array_equal(np.triu(head["blocks.0.attn.hook_pattern"][0], 1), 0)


def test_a_position_gets_its_rows_of_the_next_token_panel_and_nothing_else(client):
    with client.websocket_connect("/ws") as teacher, client.websocket_connect("/ws") as phone:
        ready = open_lab(teacher, "gpt", {"n_layers": 2, "n_heads": 4})
        send(phone, {"type": "join", "session": ready["session"]})
        _frame(phone)
        _subscribe(phone, layer=0, head=1, position=3)
        cut = _frame(phone)  # the latest frame again, cut to the new subscription
        whole = next(m for m in step(teacher, 1) if m["type"] == "frame")
        both = _frame(phone, whole["step"])
        # A lab with nothing per position refuses it by name; the connection keeps working.
        with client.websocket_connect("/ws") as other:
            open_lab(other, "linear-regression", {})
            _subscribe(other, position=1)
            err, _ = recv_until(other, lambda m: m["type"] == "error")
            assert err["field"] == "position" and err["key"] == "err.sub_none"
    for got in (cut, both):
        assert got["header"]["slice"]["position"] == 3
        assert got["tensors"]["next_probs"].shape[0] == 1
    rows = whole["tensors"]["next_probs"].shape[0]
    assert both["header"]["slice"]["rows"]["next_probs"] == rows
    np.testing.assert_array_equal(
        both["tensors"]["next_probs"][0], whole["tensors"]["next_probs"][3]
    )
    top = whole["header"]["meta"]["next_top"]
    if "next_top" in both["header"]["meta"]:  # left out only when unchanged since `cut`
        assert both["header"]["meta"]["next_top"] == [top[3]]
    assert cut["header"]["meta"]["next_top"][0] and len(cut["header"]["meta"]["next_top"]) == 1
    assert cut["header"]["slice"]["rows"]["next_top"] == len(top)


def test_a_phone_gets_one_tokens_norms_and_its_steps_scalars_once(client):
    """A position subscription gets column p of the [rows, T] norms the residual panel draws,
    and, for a client that keeps its rows, a live cut leaves its scalars to the `scalars` row
    the connection got just before (a seek's frame keeps them: its row may be long gone)."""
    with client.websocket_connect("/ws") as teacher, client.websocket_connect("/ws") as phone:
        ready = open_lab(teacher, "gpt", {"n_layers": 2, "n_heads": 4})
        send(phone, {"type": "join", "session": ready["session"]})
        _frame(phone)
        _subscribe(phone, layer=1, position=3, scalars="row")  # the page keeps the rows
        _frame(phone)
        whole = next(m for m in step(teacher, 1) if m["type"] == "frame")
        got, before = recv_until(
            phone, lambda m: m["type"] == "frame" and m["step"] == whole["step"]
        )
        send(phone, {"type": "seek", "step": 0})
        replay, _ = recv_until(phone, lambda m: m["type"] == "frame" and m["header"].get("replay"))
        # A client that does not say it keeps the rows (an older one) still gets them.
        _subscribe(phone, layer=1, position=3)
        _frame(phone)
        step(teacher, 1)
        old, _ = recv_until(phone, lambda m: m["type"] == "frame" and m["step"] == 2)
    for name in ("resid_norm", "embed_norm"):
        full = whole["tensors"][name]
        assert got["tensors"][name].shape == (full.shape[0], 1)
        assert got["header"]["slice"]["cols"][name] == full.shape[1]
        np.testing.assert_array_equal(got["tensors"][name][:, 0], full[:, 3])
    assert "scalars" not in got["header"] and got["header"]["slice"]["scalars"] == "row"
    rows = [m for m in before if m["type"] == "scalars" and m["step"] == whole["step"]]
    assert rows and rows[-1]["values"] == whole["header"]["scalars"]
    assert replay["header"]["scalars"] and "scalars" not in replay["header"]["slice"]
    assert old["header"]["scalars"]["loss"] > 0 and "scalars" not in old["header"]["slice"]
