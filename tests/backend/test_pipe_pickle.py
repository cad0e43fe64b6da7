"""A session process's messages carry tensors by value, and give back what was sent."""

from __future__ import annotations

import multiprocessing as mp
import pickle

import torch

from backend import pipe_pickle


def _state() -> dict:
    g = torch.Generator().manual_seed(0)
    w = torch.randn(64, 32, generator=g)
    return {
        "model": {"w": w, "tied": w, "b": torch.zeros(32, dtype=torch.float16)},
        "steps": torch.tensor(7),
        "mask": torch.rand(5, generator=g) > 0.5,
        "ids": torch.arange(10, dtype=torch.int64),
        "cols": torch.randn(8, 6, generator=g).t(),  # not contiguous
        "bf16": torch.randn(4, generator=g).to(torch.bfloat16),  # no numpy dtype: plain pickle
        "note": ("step", 3, 0.5, b"\x00frame"),
    }


def _same(a, b) -> None:
    assert type(a) is type(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, tuple | list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(a, b)
    else:
        assert a == b


def test_a_state_round_trips_bitwise_and_writable():
    sent = _state()
    got = pickle.loads(pipe_pickle.dumps(sent))
    _same(sent, got)
    assert got["model"]["tied"] is got["model"]["w"]  # one object sent twice stays one
    got["model"]["w"].add_(1.0)  # its own memory: a lab may train on it
    assert not torch.equal(got["model"]["w"], sent["model"]["w"])


def test_tensors_travel_in_the_message_not_in_shared_memory():
    big = torch.ones(256, 1024)  # 1 MiB
    data = pipe_pickle.dumps({"w": big})
    assert len(data) >= big.numel() * 4  # the bytes are in the message itself
    assert not pickle.loads(data)["w"].is_shared()


def test_send_and_recv_over_a_pipe():
    a, b = mp.Pipe()
    try:
        sent = _state()
        pipe_pickle.send(a, ("done", (sent, 3, 2)))
        kind, (got, wstep, framed) = pipe_pickle.recv(b)
        assert (kind, wstep, framed) == ("done", 3, 2)
        _same(sent, got)
        pipe_pickle.send(b, None)
        assert pipe_pickle.recv(a) is None
    finally:
        a.close()
        b.close()
