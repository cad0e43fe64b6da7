"""Websocket conversations with the `digits` lab: frames, accuracy, ablations, the drawing pad."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

DEFAULT_TENSORS = {
    "templates": (128, 8, 8),
    "input": (8, 8),
    "layers.0.hook_post": (128,),
    "layers.1.hook_post": (64,),
    "hook_logits": (10,),
    "probs": (10,),
    "grad_norm": (3,),
    "confusion": (10, 10),
}


def infer(ws, data: dict) -> dict:
    send(ws, {"type": "infer", "input": data})
    msg, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
    return msg


def block_drawing(image: np.ndarray) -> list[list[float]]:
    """An 8×8 count image as a 32×32 drawing whose 4×4 blocks hold exactly those counts."""
    out = np.zeros((32, 32))
    for r in range(8):
        for c in range(8):
            block = np.zeros(16)
            block[: int(image[r, c])] = 1.0
            out[4 * r : 4 * r + 4, 4 * c : 4 * c + 4] = block.reshape(4, 4)
    return out.tolist()


def test_snapshot_frame_names_shapes_and_meta(client):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "digits", "params": {}, "seed": 0})
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        t, h = f["tensors"], f["header"]
        for name, shape in DEFAULT_TENSORS.items():
            assert t[name].shape == shape, name
        labels = {x["name"]: x.get("labels") for x in h["tensors"]}
        assert labels["grad_norm"] == ["layers.0", "layers.1", "out"]
        assert np.all(t["grad_norm"] > 0)  # autograd's gradient of the full training loss
        meta = h["meta"]
        assert meta["shape"] == [64, 128, 64, 10]
        assert meta["params"] == {"total": 17_226, "weights": 17_024}
        assert meta["book"] == {"shape": [784, 512, 256, 10], "total": 535_818, "weights": 535_040}
        assert meta["split"] == {"train": 1438, "test": 359}
        # The confusion matrix covers the whole test split; mistakes are its off-diagonal.
        assert t["confusion"].sum() == 359
        n_wrong = 359 - int(np.trace(t["confusion"]))
        assert meta["n_wrong"] == n_wrong
        assert t["mistakes"].shape == (min(24, n_wrong), 8, 8) == (len(meta["mistakes"]), 8, 8)
        assert abs(float(t["probs"].sum()) - 1) < 1e-5
        assert t["input"].min() >= 0 and t["input"].max() <= 16
        s = h["scalars"]
        assert {"loss", "train_acc", "test_acc", "test_loss"} <= set(s)
        assert math.isclose(s["test_acc"], 1 - n_wrong / 359, abs_tol=1e-6)


def test_loss_every_step_accuracy_every_n_steps(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "digits", {"eval_every": 5})
        msgs = step(ws, 10)
        rows = scalar_rows(msgs)
        assert sorted(rows) == list(range(1, 11))
        assert all("loss" in rows[i] for i in rows)
        assert [i for i in rows if "test_acc" in rows[i]] == [5, 10]
        assert len(frames(msgs)) == 10  # short steps send every frame
        assert rows[10]["loss"] < rows[1]["loss"]


def test_default_run_reaches_90_percent_test_accuracy_within_100_steps(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "digits")
        rows = scalar_rows(step(ws, 100))
        assert rows[100]["test_acc"] >= 0.9
        assert rows[100]["train_acc"] >= 0.9


def test_one_hidden_layer_and_mini_batches(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "digits", {"hidden1": 32, "hidden2": 0, "batch": "minibatch"})
        (f,) = frames(step(ws, 1))
        assert "layers.1.hook_post" not in f["tensors"]
        assert f["tensors"]["templates"].shape == (32, 8, 8)
        assert [x.get("labels") for x in f["header"]["tensors"] if x["name"] == "grad_norm"] == [
            ["layers.0", "out"]
        ]
        assert f["header"]["meta"]["params"]["total"] == 65 * 32 + 33 * 10


def test_templates_show_change_since_step_0_and_sample_is_live(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "digits", {"templates": "change"})
        send(ws, {"type": "set", "params": {"sample": 7}})
        f, seen = recv_until(ws, lambda m: m["type"] == "frame")
        assert f["header"]["meta"]["sample"]["index"] == 7
        assert not np.any(f["tensors"]["templates"])  # nothing changed before the first step
        params, _ = recv_until(ws, lambda m: m["type"] == "params")
        assert params["reset"] is False
        (f,) = frames(step(ws, 1))
        assert np.any(f["tensors"]["templates"])


def test_hand_softmax_overflows_where_cross_entropy_does_not(client):
    # lr 5 drives the logits up; exp(z) overflows in the hand softmax within a few steps.
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "digits", {"loss": "hand", "lr": 5.0})
        send(ws, {"type": "control", "action": "step", "count": 20})
        status, msgs = recv_until(ws, lambda m: m["type"] == "status" and m["state"] == "diverged")
        assert status["step"] < 20
        assert any(m["type"] == "error" and m["code"] == "diverged" for m in msgs)
        last = frames(msgs)[-1]["header"]  # the blow-up frame is drawn in full
        assert not math.isfinite(float(last["scalars"]["loss"]))
        assert last["meta"]["shape"] == [64, 128, 64, 10]
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "digits", {"loss": "ce", "lr": 5.0})
        msgs = step(ws, 20)
        assert msgs[-1]["state"] == "paused"
        assert all(math.isfinite(r["loss"]) for r in scalar_rows(msgs).values())


def test_drawing_is_reduced_to_the_same_8x8_counts_and_classified(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "digits", {"sample": 3})
        msgs = step(ws, 60)
        f = frames(msgs)[-1]
        image = f["tensors"]["input"]  # test image 3, counts 0..16
        # Drawn as its 4×4 block pattern, unfitted: the server counts the very same image.
        out = infer(ws, {"image": block_drawing(image), "fit": False})
        assert out["type"] == "frame" and out["header"]["infer"] is True
        t = out["tensors"]
        assert t["bitmap"].shape == (32, 32) and set(np.unique(t["bitmap"])) <= {0.0, 1.0}
        np.testing.assert_array_equal(t["input"], image)
        np.testing.assert_allclose(t["probs"], f["tensors"]["probs"], atol=1e-6)
        np.testing.assert_allclose(t["hook_logits"], f["tensors"]["hook_logits"], atol=1e-5)
        assert t["layers.0.hook_post"].shape == (128,) and t["layers.1.hook_post"].shape == (64,)
        assert out["header"]["meta"]["pred"] == int(np.argmax(t["probs"]))
        assert out["header"]["meta"]["empty"] is False
        # A vertical bar drawn small in a corner is scaled to full height and centred.
        bar = np.zeros((32, 32))
        bar[2:12, 3:5] = 0.9
        out = infer(ws, {"image": bar.tolist()})
        rows = np.nonzero(out["tensors"]["bitmap"].any(axis=1))[0]
        assert (rows[0], rows[-1]) == (0, 31)
        assert out["tensors"]["input"].max() <= 16 and abs(out["tensors"]["probs"].sum() - 1) < 1e-5
        # An empty pad is allowed and says so.
        out = infer(ws, {"image": np.zeros((32, 32)).tolist()})
        assert out["header"]["meta"]["empty"] is True and not out["tensors"]["input"].any()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({}, "input.image"),
        ({"image": "a digit"}, "input.image"),
        ({"image": [[0.0] * 32] * 31}, "input.image"),
        ({"image": [[0.0] * 32] * 31 + [[0.0] * 33]}, "input.image"),
        ({"image": [[0.0] * 32] * 31 + [[0.0] * 31 + [1.5]]}, "input.image"),
        ({"image": [[0.0] * 32] * 31 + [[0.0] * 31 + [-0.1]]}, "input.image"),
        ({"image": [[0.0] * 32] * 31 + [[0.0] * 31 + ["1"]]}, "input.image"),
        ({"image": [[0.0] * 32] * 31 + [[0.0] * 31 + [True]]}, "input.image"),
        ({"image": [[0.0] * 32] * 31 + [[0.0] * 31 + [None]]}, "input.image"),
        ({"image": [[0.0] * 32] * 32, "fit": "yes"}, "input.fit"),
        ({"image": [[0.0] * 32] * 32, "colour": 1}, "input.colour"),  # the unknown field
    ],
)
def test_bad_drawings_are_refused_naming_the_field(client, data, field):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "digits")
        err = infer(ws, data)
        assert err["type"] == "error" and err["code"] == "bad_message", err
        assert err["field"] == field
        ok = infer(ws, {"image": [[0.0] * 32] * 32})  # the connection stays usable
        assert ok["type"] == "frame"


def test_nan_in_a_drawing_is_refused(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "digits")
        image = [[0.0] * 32 for _ in range(32)]
        image[5][5] = float("nan")
        ws.send_text(json.dumps({"type": "infer", "input": {"image": image}}))  # NaN literal
        err, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
        assert err["type"] == "error" and err["field"] in ("input.image", "input")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"hidden1": 4}, "hidden1"),
        ({"hidden2": 1000}, "hidden2"),
        ({"test_frac": 0.9}, "test_frac"),
        ({"activation": "softplus"}, "activation"),
        ({"loss": "mse"}, "loss"),
        ({"lr": 0}, "lr"),
    ],
)
def test_params_out_of_range_are_refused(client, params, field):
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "digits", "params": params, "seed": 0})
        err, _ = recv_until(ws, lambda m: m["type"] in ("ready", "error"))
        assert err["type"] == "error" and err["code"] == "invalid_params"
        assert err["field"] == field
