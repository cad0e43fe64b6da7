"""The `memory` lab: RNN, GRU and LSTM arms on the delayed-recall task. At the default delay
the gated arms learn and the plain RNN stays at chance; the LSTM's forget gate holds along the
delay on the example shown (what the view's text says); the sweep fills in one delay at a time."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.labs.memory import SWEEP_DELAYS, MemoryLab, Params
from models.hooks import capture
from models.recall import RecallConfig, sample
from tests.wsutil import frames, open_lab, scalar_rows, step

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def trained() -> MemoryLab:
    """The defaults after 200 updates (~10 s here): what a new user sees within a minute."""
    lab = MemoryLab(Params(), 0, CPU)
    lab.kept_at_start = lab.snapshot().meta["arms"][2]["hold"]["kept"]
    for _ in range(200):
        lab.step(False)
    return lab


@pytest.mark.slow  # the shared 200-step training: 10-35 s on 2 busy cores
def test_defaults_gated_arms_learn_the_plain_rnn_stays_at_chance(trained):
    rnn, gru, lstm = (trained.held_out_acc(a, Params().delay) for a in trained.arm_list)
    chance = 1 / Params().n_symbols
    assert lstm > 0.95, lstm
    assert gru > 0.85, gru
    assert abs(rnn - chance) < 0.08, rnn  # 512 held-out sequences: chance ± sampling noise


@pytest.mark.slow  # the shared 200-step training: 10-35 s on 2 busy cores
def test_the_forget_gate_holds_along_the_delay_on_the_example(trained):
    """The view's text: one LSTM unit's forget gate stays ≥ its shown minimum across the
    delay, so Π f of that unit's cell survives to the cue; the numbers are the trained model's."""
    f = trained.snapshot()
    lstm = f.meta["arms"][2]
    hold = lstm["hold"]
    assert hold["gate"] == "forget_gate"
    assert hold["min_along_delay"] > 0.95 and hold["kept"] > 0.5, hold
    assert lstm["right"]
    gates = next(t.data for t in f.tensors if t.name == "arm.2.gates")  # [gate, H, T]
    forget = gates[1, hold["unit"], 1:-1]  # the delay steps
    assert float(forget.min()) == pytest.approx(hold["min_along_delay"])
    assert float(torch.prod(gates[1, hold["unit"], 1:])) == pytest.approx(hold["kept"], rel=1e-5)
    # The unit's cell at the cue tells the symbols apart: it is the memory the text names.
    lab_model = trained.arm_list[2].model
    x, y, _ = sample(4, Params().delay, 256, torch.Generator().manual_seed(5))
    with torch.no_grad(), capture(lab_model, "rnn.hook_cell") as store:
        lab_model(x)
    cue = store["rnn.hook_cell"][:, -1, hold["unit"]]
    means = torch.stack([cue[y == k].mean() for k in range(4)])
    spread = float(means.max() - means.min())
    within = float(torch.stack([cue[y == k].std() for k in range(4)]).max())
    assert spread > 2 * within, (means, within)


@pytest.mark.slow  # the shared 200-step training: 10-35 s on 2 busy cores
def test_training_raises_the_hold_above_the_initial_keep_bias(trained):
    """σ(keep_bias) alone keeps less: the trained unit holds more than any unit at the start."""
    after = trained.snapshot().meta["arms"][2]["hold"]["kept"]
    assert after > trained.kept_at_start + 0.1, (trained.kept_at_start, after)


def test_frames_over_the_websocket(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "memory", {"delay": 6})
        assert ready["params"]["mode"] == "train"
        msgs = step(ws, 25)
    rows = scalar_rows(msgs)
    for i in range(3):
        assert f"arm.{i}.loss" in rows[25] and f"arm.{i}.acc" in rows[25]
        assert 0 <= rows[25][f"arm.{i}.held_acc"] <= 1  # evaluated at step 25
    f = frames(msgs)[-1]
    meta = f["header"]["meta"]
    assert [a["label"] for a in meta["arms"]] == ["RNN", "GRU", "LSTM"]
    T, H = 6 + 2, 16
    assert len(meta["tokens"]) == T and meta["tokens"][-1] == "?"
    assert meta["chance"] == 0.25
    tensors = f["tensors"]
    assert tensors["arm.0.states"].shape == (1, H, T)
    assert "arm.0.gates" not in tensors  # the plain RNN has none
    assert tensors["arm.1.gates"].shape == (2, H, T)
    assert tensors["arm.2.gates"].shape == (3, H, T)
    assert tensors["arm.2.states"].shape == (2, H, T)
    assert np.all((tensors["arm.2.gates"] > 0) & (tensors["arm.2.gates"] < 1))
    np.testing.assert_allclose(tensors["arm.2.probs"].sum(), 1.0, atol=1e-5)
    params = [a["param_count"] for a in meta["arms"]]
    assert params == [RecallConfig(k).param_count() for k in ("rnn", "gru", "lstm")]


def test_sweep_fills_in_one_delay_at_a_time_from_fresh_weights():
    lab = MemoryLab(Params(mode="sweep", sweep_steps=50), 0, CPU)
    assert lab.max_steps() == 50 * len(SWEEP_DELAYS)
    first = [p.detach().clone() for p in lab.arm_list[2].model.parameters()]
    for _ in range(50):
        lab.step(False)
    sweep = lab.snapshot().meta["sweep"]
    assert sweep["delays"] == list(SWEEP_DELAYS)
    for i in range(3):  # the first delay's point is in; the rest are still to come
        assert sweep["acc"][i][0] == lab.held_out_acc(lab.arm_list[i], SWEEP_DELAYS[0])
        assert sweep["acc"][i][1:] == [None] * (len(SWEEP_DELAYS) - 1)
    assert lab.snapshot().meta["delay"] == SWEEP_DELAYS[0]
    frame = lab.step(True)  # the next delay starts from the first weights
    assert frame.meta["delay"] == SWEEP_DELAYS[1]
    assert len(lab.arm_list[2].optimizer.state) == len(first)  # one Adam step taken, fresh
    step_sizes = [
        float((p.detach() - q).abs().max())
        for p, q in zip(lab.arm_list[2].model.parameters(), first, strict=True)
    ]
    assert max(step_sizes) <= 1.01 * Params().lr  # one Adam step from the start, not 51
    rows = {}
    for _ in range(49):
        rows = lab.step(False).scalars
    assert rows["arm.2.sweep_delay"] == SWEEP_DELAYS[1]
    assert rows["arm.2.sweep_acc"] == lab.sweep[2][SWEEP_DELAYS[1]]
