"""The `seq2seq` lab: a context-vector arm and a Bahdanau-attention arm in lockstep over the
websocket; held-out accuracy by input length, free running and teacher forced; the
attention arm's alignment on the example; the teacher-forcing pairs of 今天天气真好 from the
server's tokenisation; the learner's own string, refused outside the alphabet. And, after a
bounded number of steps at the lab's defaults, what the view says about the learned model:
reversal's alignment is a clean anti-diagonal and attention beats the context vector on
long inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from backend.labs.seq2seq import Params, Seq2SeqLab, antidiagonal
from tests.wsutil import frames, open_lab, recv_until, scalar_rows, send, step

SMALL = {"max_len": 6, "d_hidden": 32, "batch": 16}


def test_two_arms_step_together_with_alignment_and_accuracy_by_length(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, "seq2seq", SMALL)
        assert ready["params"]["task"] == "reverse"
        msgs = step(ws, 25)  # the 25th update evaluates the held-out set
    rows = scalar_rows(msgs)
    for s in range(1, 26):
        assert {"arm.0.loss", "arm.1.loss", "arm.0.clip_coef"} <= set(rows[s])
        assert rows[s]["loss"] == np.mean([rows[s]["arm.0.loss"], rows[s]["arm.1.loss"]])
    for i in (0, 1):
        assert rows[25][f"arm.{i}.loss"] < 0.9 * rows[1][f"arm.{i}.loss"], i
        for key in ("seq_acc", "tok_acc_free", "tok_acc_tf", "long_seq_acc"):
            assert 0 <= rows[25][f"arm.{i}.{key}"] <= 1
        assert f"arm.{i}.grad_norm.encoder" in rows[25]
    assert "arm.1.grad_norm.attn_v" in rows[25] and "arm.0.grad_norm.attn_v" not in rows[25]
    f = frames(msgs)[-1]
    meta = f["header"]["meta"]
    assert [a["label"] for a in meta["arms"]] == ["context", "attention"]
    assert meta["lengths"] == [3, 4, 5, 6] and meta["held_out"] == 4 * 32
    ctx, att = meta["arms"]
    assert (ctx["attention"], att["attention"]) == (False, True)
    ex = att["example"]
    assert len(ex["source"]) == 6 and ex["target"] == "".join(ex["source"][::-1])
    align = f["tensors"]["arm.1.alignment"]
    assert ex["align_mode"] == "teacher" and ex["align_rows"] == [*ex["target"], "</s>"]
    assert align.shape == (7, 6)  # [T_dec, T_enc]: a row per target character and EOS
    assert np.allclose(align.sum(1), 1, atol=1e-5)
    assert "arm.0.alignment" not in f["tensors"]  # one context vector aligns nothing
    for i in (0, 1):
        acc = f["tensors"][f"arm.{i}.acc_by_len"]
        assert acc.shape == (3, 4)  # [exact, token free, token teacher forced] × length
    steps = ex["steps"]  # per decoder step: label, TF input, TF output, free input, free output
    assert [s[0] for s in steps] == [*ex["target"], "</s>"]
    assert [s[1] for s in steps] == ["<s>", *ex["target"]]  # teacher forcing: the true prefix
    assert [s[3] for s in steps[1:]] == [s[4] for s in steps[:-1]]  # free: its own outputs
    worked = meta["worked"]
    pairs = [f"{i[0]}→{o[0]}" for i, o in zip(worked["inputs"], worked["labels"], strict=True)]
    assert pairs[:6] == ["<s>→今", "今→天", "天→天", "天→气", "气→真", "真→好"]


def test_the_learners_string_runs_through_both_arms_and_bad_ones_are_refused(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "seq2seq", SMALL)
        send(ws, {"type": "infer", "input": {"text": "hello"}})
        f, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
        assert f["type"] == "frame" and f["header"]["infer"] is True
        probe = f["header"]["meta"]["probe"]
        assert probe["text"] == "hello" and len(probe["arms"]) == 2
        assert all(a["target"] == "olleh" for a in probe["arms"])
        att = probe["arms"][1]
        assert att["align_mode"] == "free"  # the learner's string: rows are what it wrote
        assert f["tensors"]["arm.1.alignment"].shape == (len(att["output"]), 5)
        for text, key in (
            ("héllo", "seq2seq.err_alphabet"),
            ("x" * 25, "seq2seq.err_long"),
            ("   ", "seq2seq.err_empty"),
        ):
            send(ws, {"type": "infer", "input": {"text": text}})
            err, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
            assert err["type"] == "error" and err["key"] == key, (text, err)
            assert err["field"] == "input.text"
        assert err["key"] == "seq2seq.err_empty"
        send(ws, {"type": "infer", "input": {"text": "héllo"}})
        err, _ = recv_until(ws, lambda m: m["type"] in ("frame", "error"))
        assert err["values"]["chars"] == "é"
        msgs = step(ws, 1)  # nothing was lost: the session still trains
        assert scalar_rows(msgs)


def test_dates_task_and_its_refusals():
    lab = Seq2SeqLab(Params(task="dates", d_hidden=32), 0, torch.device("cpu"))
    meta = lab.snapshot().meta
    assert meta["task"] == "dates" and "年" in meta["alphabet"]
    ex = meta["arms"][0]["example"]
    assert "".join(ex["source"]) == "3 May 2021" and ex["target"] == "2021-05-03"
    (f,) = lab.infer({"text": "2021年5月3日"})
    assert [a["target"] for a in f.meta["probe"]["arms"]] == ["2021-05-03"] * 2
    (f,) = lab.infer({"text": "May 33, 2021"})  # no such day: the arms answer, no target
    assert [a["target"] for a in f.meta["probe"]["arms"]] == [None, None]
    assert "steps" not in f.meta["probe"]["arms"][0]


def test_antidiagonal_counts_mirrored_argmaxes():
    rows = torch.eye(4).flip(1)  # row i peaks at column 3 - i
    assert antidiagonal(rows, 4) == {"hits": 4, "rows": 4}
    assert antidiagonal(torch.eye(4), 4) == {"hits": 0, "rows": 4}
    assert antidiagonal(rows[:2], 4) == {"hits": 2, "rows": 2}


@pytest.mark.slow  # trains both arms at the lab's defaults for 300 updates (~30-90 s)
def test_after_300_steps_attention_aligns_anti_diagonally_and_wins_on_long_inputs():
    lab = Seq2SeqLab(Params(), 0, torch.device("cpu"))
    for _ in range(299):
        lab.step(False)  # no frames: no pictures drawn on the way
    f = lab.step(True)  # the 300th update: evaluated and drawn
    s = f.scalars
    ctx, att = f.meta["arms"]
    # What the view says: on reversal most of attention's alignment rows put their largest
    # weight on the mirrored input character (output step i reads input T-1-i), the rest on
    # a neighbour of it; and attention solves long inputs the context vector cannot.
    assert s["arm.1.antidiag"] > 0.6, s  # every held-out reversal's rows
    assert "arm.0.antidiag" not in s
    hits = att["example"]["antidiag"]
    # the one drawn example: well above chance (1 row in 10); its share varies with the
    # CPU's float kernels: the held-out figure above is the claim
    assert hits["rows"] == 10 and hits["hits"] >= 4, hits
    align = {t.name: t.data for t in f.tensors}["arm.1.alignment"]
    assert align.shape == (11, 10)  # 10 characters and EOS, teacher forced
    peaks = align[:10].argmax(-1)
    assert torch.all((peaks - torch.arange(9, -1, -1)).abs() <= 1), peaks  # on it or beside it
    assert float(align[:10].flip(1).diagonal().mean()) > 0.4  # the mirror cell's mean weight
    assert s["arm.1.long_seq_acc"] > 0.6, s
    assert s["arm.0.long_seq_acc"] < 0.2, s
    assert s["arm.1.long_seq_acc"] > s["arm.0.long_seq_acc"] + 0.5
    by_len = {t.name: t.data for t in f.tensors}["arm.0.acc_by_len"]
    assert by_len[0, 0] > by_len[0, -1] + 0.5  # the bottleneck: short strings, not long ones
    # Exposure bias: free running reads its own mistakes, so its token accuracy falls below
    # the teacher-forced one (the context vector's is the larger gap).
    gap = [s[f"arm.{i}.tok_acc_tf"] - s[f"arm.{i}.tok_acc_free"] for i in (0, 1)]
    assert gap[0] > 0.05 and gap[0] > gap[1], gap
