"""Websocket conversation with `mlp-playground`: frames, live params, drawn points, weight edits."""

from __future__ import annotations

import pytest

from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step


def set_params(ws, params: dict) -> tuple[dict, list[dict]]:
    send(ws, {"type": "set", "params": params})
    reply, seen = recv_until(ws, lambda m: m["type"] in ("params", "error"))
    return reply, seen


def test_open_and_train_frames(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "mlp-playground", {"hidden": [4, 3], "x1sq": True})
        assert ready["params"]["hidden"] == [4, 3] and ready["params"]["points"] == []
        props = ready["schema"]["properties"]
        assert props["hidden"]["maxItems"] == 6 and props["hidden"]["items"]["maximum"] == 8
        assert props["points"]["widget"] == "hidden" and props["lr"]["live"] is True
        msgs = step(ws, 10)
        f = frames(msgs)[-1]
        heads = {t["name"]: t for t in f["header"]["tensors"]}
        assert set(heads) == {
            "inputs",
            "layers.0.hook_post",
            "layers.1.hook_post",
            "boundary",
            "weights.0",
            "biases.0",
            "weights.1",
            "biases.1",
            "weights.2",
            "biases.2",
            "grad_norm",
            "train_points",
            "test_points",
        }
        t = f["tensors"]
        assert t["inputs"].shape == (3, 48, 48) and heads["inputs"]["labels"] == [
            "x1",
            "x2",
            "x1sq",
        ]
        assert t["layers.0.hook_post"].shape == (4, 48, 48)
        assert t["layers.1.hook_post"].shape == (3, 48, 48)
        assert heads["layers.0.hook_post"]["dtype"] == "u8"
        assert -1 <= heads["layers.0.hook_post"]["min"] < heads["layers.0.hook_post"]["max"] <= 1
        assert t["boundary"].shape == (2, 48, 48)
        assert t["boundary"].sum(0) == pytest.approx(1, abs=0.01)  # P(class 0) + P(class 1)
        assert t["weights.0"].shape == (4, 3) and t["weights.2"].shape == (1, 3)
        assert heads["grad_norm"]["labels"] == ["layers.0", "layers.1", "out"]
        assert t["train_points"].shape == (250, 3) and t["test_points"].shape == (250, 3)
        meta = f["header"]["meta"]
        assert meta["classes"] == 2 and meta["hidden"] == [4, 3] and meta["extent"] == 6.0
        rows = scalar_rows(msgs)
        assert sorted(rows) == list(range(1, 11))
        assert {"loss", "test_loss", "train_acc", "test_acc", "epoch"} <= set(rows[10])
        assert rows[10]["epoch"] == pytest.approx(10 * 10 / 250)


def test_live_lr_and_drawn_points_keep_the_model(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "mlp-playground", {"dataset": "gauss", "classes": 3})
        step(ws, 3)
        reply, seen = set_params(ws, {"lr": 0.1, "regularization": "l2"})
        assert reply["reset"] is False
        pts = [[1.0, 2.0, 2], [-3.5, 0.5, 0], [0.0, 0.0, 4]]  # class 4 does not exist here
        reply, seen = set_params(ws, {"points": pts})
        assert reply["reset"] is False
        f = frames(seen)[-1] if frames(seen) else recv_until(ws, lambda m: m["type"] == "frame")[0]
        assert f["step"] == 3  # the same run goes on
        meta = f["header"]["meta"]
        assert meta["n_mine"] == 2 and meta["n_train"] == 249 + 2
        assert f["tensors"]["train_points"][-2:].tolist() == [[1.0, 2.0, 2.0], [-3.5, 0.5, 0.0]]
        assert f["tensors"]["boundary"].shape == (3, 48, 48)
        assert "reg" in f["header"]["scalars"]


def test_bad_params_are_refused(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "mlp-playground")
        for bad in (
            {"hidden": [4, 2, 2, 2, 2, 2, 2]},
            {"hidden": [9]},
            {"x1": False, "x2": False},
            {"points": [[7.0, 0.0, 1]]},
            {"lr": 100},
        ):
            reply, _ = set_params(ws, bad)
            assert reply["type"] == "error" and reply["code"] == "invalid_params", bad


def test_click_a_weight_to_edit_it(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "mlp-playground", {"hidden": [3]})
        send(
            ws,
            {
                "type": "infer",
                "input": {"action": "set_weight", "layer": 0, "i": 2, "j": 1, "value": 2.5},
            },
        )
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        assert f["header"]["infer"] is True
        assert f["tensors"]["weights.0"][2, 1] == 2.5
        send(
            ws,
            {"type": "infer", "input": {"action": "set_bias", "layer": 1, "i": 0, "value": -1.25}},
        )
        f, _ = recv_until(ws, lambda m: m["type"] == "frame")
        assert f["tensors"]["biases.1"].tolist() == [-1.25]
        # Each edit is a step of the run: the scrubber goes back to before it.
        assert f["step"] == 2
        send(ws, {"type": "seek", "step": 1})
        back, _ = recv_until(ws, lambda m: m["type"] == "frame" and m["header"].get("replay"))
        assert back["tensors"]["weights.0"][2, 1] == 2.5 and back["tensors"]["biases.1"][0] != -1.25
        for bad, field in (
            ({"action": "set_weight", "layer": 0, "i": 0, "j": 0, "value": 11}, "input.value"),
            ({"action": "set_weight", "layer": 2, "i": 0, "j": 0, "value": 1}, "input.layer"),
            ({"action": "set_weight", "layer": 0, "i": 3, "j": 0, "value": 1}, "input.i"),
            ({"action": "set_weight", "layer": 0, "i": 0, "j": 2, "value": 1}, "input.j"),
            ({"action": "set_weight", "layer": 0, "i": 0, "j": True, "value": 1}, "input.j"),
            ({"action": "delete_everything"}, "input.action"),
        ):
            send(ws, {"type": "infer", "input": bad})
            err, _ = recv_until(ws, lambda m: m["type"] == "error")
            assert err["field"] == field, (bad, err)


def test_only_my_points_starts_empty_and_learns_what_i_draw(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "mlp-playground", {"dataset": "custom"})
        msgs = step(ws, 2)
        assert "loss" not in scalar_rows(msgs)[2]  # nothing to learn from yet
        set_params(ws, {"points": [[-2.0, 0.0, 0], [2.0, 0.0, 1]]})
        rows = scalar_rows(step(ws, 5))
        assert rows[7]["train_acc"] in (0.0, 0.5, 1.0) and "test_loss" not in rows[7]


def test_one_second_at_the_default_play_speed_learns_visibly(client):
    """The catalog's play_speed (the page's default steps a second) is within the server's
    cap and one second of it moves the default run: the loss falls by more than a tenth
    (100 steps, the old default, moved it 0.680 -> 0.671)."""
    import torch

    from backend.config import Settings
    from backend.labs.mlp_playground import MLPPlaygroundLab, Params

    entry = next(e for e in client.get("/api/labs").json() if e["id"] == "mlp-playground")
    speed = entry["play_speed"]
    assert 100 < speed <= Settings().max_steps_per_s
    lab = MLPPlaygroundLab(Params(), 0, torch.device("cpu"))
    first = lab.step(False).scalars["loss"]
    for _ in range(speed - 1):
        last = lab.step(False).scalars["loss"]
    assert last < 0.9 * first, (first, last)
