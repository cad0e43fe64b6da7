"""Arms trained side by side on a spare core (backend/side_by_side.py): the same numbers as
one after another, both threads used only when no other step waits for the core, and an
error in either thread reaches the caller; a session spreads only while no class watches."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from backend import worker
from backend.labs import ffn_moe, linear_attention, norms, seq2seq, sparse_attention
from backend.session_worker import SPREAD_CONNECTIONS
from backend.side_by_side import side_by_side
from tests.wsutil import joined_viewers, open_lab, step

LABS = {
    ffn_moe: ffn_moe.FFNMoELab,
    norms: norms.NormsLab,
    seq2seq: seq2seq.Seq2SeqLab,
    linear_attention: linear_attention.LinearAttentionLab,
    sparse_attention: sparse_attention.SparseAttentionLab,
}
# An evaluation's scalar of each lab's last arm: it ran side by side too.
EVALUATED = {
    ffn_moe: "arm.3.val_loss",
    norms: "arm.3.held_loss",
    seq2seq: "arm.1.seq_acc",
    linear_attention: "arm.3.acc_rebound",
    sparse_attention: "arm.4.first_mass",
}


def _trained(parallel: bool, steps: int = 26, mod=ffn_moe):
    """The lab after `steps` steps (a frame every 10th, kept in `lab.frames`), its scalars
    rows, the threads that ran its arms' losses."""
    lab = LABS[mod](mod.Params(steps=100), 0, torch.device("cpu"))
    lab.parallel_arms = parallel
    threads: set[str] = set()
    loss = lab.loss

    def seen(arm, batch):
        threads.add(threading.current_thread().name)
        return loss(arm, batch)

    lab.loss = seen
    rows, lab.frames = [], []
    for i in range(steps):
        frame = lab.step(capture=i % 10 == 0)
        rows.append(frame.scalars)
        if i % 10 == 0:
            lab.frames.append(frame)
    return lab, rows, threads


def _same_frames(a: list, b: list) -> None:
    assert len(a) == len(b) > 0
    for x, y in zip(a, b, strict=True):
        assert [t.name for t in x.tensors] == [t.name for t in y.tensors]
        for t, u in zip(x.tensors, y.tensors, strict=True):
            assert np.array_equal(np.asarray(t.data), np.asarray(u.data)), t.name
        assert x.meta == y.meta


@pytest.mark.parametrize("mod", list(LABS), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_side_by_side_arms_give_the_numbers_of_arms_one_after_another(mod):
    torch.set_num_threads(1)
    par, par_rows, par_threads = _trained(True, mod=mod)
    seq, seq_rows, seq_threads = _trained(False, mod=mod)
    assert len(par_threads) == 2 and len(seq_threads) == 1
    # Bitwise: side by side promises the very same computation (each arm the same kernels on
    # the same shapes and batches, one torch thread), only on two threads at once.
    assert par_rows == seq_rows  # every arm's loss, evaluation and lab scalars
    assert any(EVALUATED[mod] in row for row in par_rows)  # an evaluation ran side by side
    for a, b in zip(par.arm_list, seq.arm_list, strict=True):
        mine, theirs = a.model.state_dict(), b.model.state_dict()
        assert mine.keys() == theirs.keys()
        for name, x in mine.items():
            assert torch.equal(x, theirs[name]), (a.spec.label, name)
    _same_frames(par.frames, seq.frames)  # and the frames' pictures


def test_arms_stay_on_one_thread_when_no_core_is_spare(monkeypatch):
    gate = worker.StepGate(2)
    monkeypatch.setattr(worker, "_GATE", gate)
    with gate:  # this session's step
        with gate:  # another session's
            _, _, threads = _trained(True, steps=2)
        assert len(threads) == 1
        _, _, threads = _trained(True, steps=2)  # the other one is done: a core is free
        assert len(threads) == 2
    assert gate.try_enter()  # the spare slot was handed back after each step
    assert gate.try_enter()
    assert not gate.try_enter()


def test_an_error_in_either_thread_reaches_the_caller():
    done = []

    def work(i):
        if i == 3:
            raise ValueError("arm 3 failed")
        done.append(i)

    with pytest.raises(ValueError, match="arm 3 failed"):
        side_by_side(range(8), work)
    assert 3 not in done and {0, 1} <= set(done)  # the first items ran, then it stopped


def test_a_session_spreads_its_arms_alone_and_not_while_a_class_watches(client, monkeypatch):
    """A real app: ffn-moe's arms use two threads while the driver is alone; with more
    connections than SPREAD_CONNECTIONS (a class), the core is left to their sends."""
    threads: list[set[str]] = []
    loss = ffn_moe.FFNMoELab.loss

    def seen(self, arm, batch):
        threads[-1].add(threading.current_thread().name)
        return loss(self, arm, batch)

    monkeypatch.setattr(ffn_moe.FFNMoELab, "loss", seen)
    with client.websocket_connect("/ws") as driver:
        ready = open_lab(driver, "ffn-moe", {"steps": 100})
        threads.append(set())
        step(driver, 3)
        assert len(threads[-1]) == 2  # alone: side by side
        with joined_viewers(client, ready["session"], SPREAD_CONNECTIONS):
            threads.append(set())
            step(driver, 3)
            assert len(threads[-1]) == 1  # five connections: one thread


def test_the_slowest_arms_are_taken_first():
    """Side by side, the arms whose last update took longest start first (ffn-moe's MoE arm
    was the last taken, and one thread trained it alone while the other waited)."""
    torch.set_num_threads(1)
    lab = ffn_moe.FFNMoELab(ffn_moe.Params(steps=100), 0, torch.device("cpu"))
    started: list[int] = []
    loss = lab.loss

    def seen(arm, batch):
        started.append(arm.index)
        return loss(arm, batch)

    lab.loss = seen
    lab.step(False)
    for _ in range(3):
        last = sorted(lab.arm_list, key=lambda a: -a.train_s)
        started.clear()
        lab.step(False)
        assert set(started[:2]) == {last[0].index, last[1].index}
        assert all(a.train_s > 0 for a in lab.arm_list)
