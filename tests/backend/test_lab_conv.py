"""The `conv` lab over the websocket: the worked examples' numbers arrive from torch, step
walks the examples, goto jumps, and an edited image or kernel recomputes the output live."""

from __future__ import annotations

import numpy as np

from tests.wsutil import open_lab, recv_until, send, step

STAGES = ["correlate", "flip", "avg_pool", "max_pool", "out_size", "receptive", "one_by_one"]


def frame_after(ws, msg: dict) -> dict:
    send(ws, msg)
    f, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
    assert f["type"] == "frame", f
    return f


def test_the_examples_numbers(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "conv", "params": {}, "seed": 0})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        t, meta = f["tensors"], f["header"]["meta"]
        assert meta["stages"] == STAGES and meta["stage"] == 0
        assert (
            t["image"].shape == (5, 5) and t["image"][:, :2].all() and not t["image"][:, 2:].any()
        )
        assert t["output"].tolist() == [[0, 1, 0, 0]] * 4  # cross-correlation
        assert t["convolved"].tolist() == [[0, -1, 0, 0]] * 4  # the kernel flipped
        assert t["kernel_flipped"].tolist() == [[-1, 0], [0, 1]]
        assert t["avg_out"].tolist() == [[3.5, 5.5], [11.5, 13.5]]
        assert t["max_out"].tolist() == [[7, 6], [8, 9]]
        assert meta["size"]["formula"] == meta["size"]["torch"] == 3  # n 5, k 3, p 0, s 1
        assert meta["rf"] == {"seen": 5, "two_3x3": 18, "one_5x5": 25}
        assert int((t["rf_two"] > 0).sum()) == 25
        assert meta["one"]["max_abs_diff"] < 1e-5
        assert np.allclose(t["one_conv"], t["one_linear"], atol=1e-5)
        assert set(meta["presets"]) == {"example", "edge", "blur", "sharpen"}


def test_step_walks_and_goto_jumps(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "conv")
        msgs = step(ws, 2)
        stages = [m["header"]["meta"]["stage"] for m in msgs if m["type"] == "frame"]
        assert stages == [1, 2]
        f = frame_after(ws, {"type": "infer", "input": {"action": "goto", "stage": 5}})
        assert f["header"]["meta"]["stage"] == 5
        send(ws, {"type": "infer", "input": {"action": "goto", "stage": 9}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert "stage" in str(err)


def test_edits_are_live(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "conv")
        image = np.zeros((6, 6))
        image[:, 3:] = 1.0  # an edge the learner drew
        sobel = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]
        params = {
            "image": image.tolist(),
            "kernel": sobel,
            "padding": 1,
            "n": 7,
            "k": 3,
            "p": 1,
            "s": 2,
        }
        send(ws, {"type": "set", "params": params})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        t, meta = f["tensors"], f["header"]["meta"]
        assert t["output"].shape == (6, 6) and t["output"][2].tolist() == [0, 0, 4, 4, 0, -4]
        assert meta["play"]["out_shape"] == [6, 6] == [meta["play"]["formula"][0]] * 2
        assert meta["size"]["formula"] == meta["size"]["torch"] == 4
        assert meta["size"]["starts"] == [0, 2, 4, 6]
        # A kernel larger than the padded image: torch's refusal, no output.
        send(ws, {"type": "set", "params": {"image": [[1.0, 0.0]], "kernel": sobel, "padding": 0}})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        assert (
            "output" not in f["tensors"] and "Kernel size" in f["header"]["meta"]["play"]["error"]
        )
        send(ws, {"type": "set", "params": {"kernel": [[1, 0], [0]]}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert "square" in str(err)
