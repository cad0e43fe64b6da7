"""Torch's one-time costs paid at start-up, off the event loop, not in a learner's session."""

from __future__ import annotations

import gc
import logging

import torch

log = logging.getLogger("shaomai.sessions")


def warm_torch() -> None:
    """Pay torch's one-time costs now rather than in the first learner's session: an
    optimizer's first construction imports torch._dynamo (2-4 s on two busy cores); the
    first matrix product and backward (`first_products`) start MKL and autograd. Then
    everything start-up made is moved out of the garbage collector's sight (`gc.freeze`): a full collection scanned those
    ~200k objects in 44-75 ms, a pause of every session's stream each time it ran."""
    try:
        layer = first_products()
        torch.optim.AdamW(layer.parameters(), lr=0.1).step()
    except Exception:  # a failed warm-up only costs the first session its time
        log.exception("torch warm-up failed")
    gc.freeze()


def first_products() -> torch.nn.Module:
    """A matrix product and its backward on this thread, before any other thread of the
    process runs one: in a process forked from one that used torch (a session process,
    backend/session_process.py), two threads' first products at once (a lab's arms side by
    side) crash it now and then (SIGSEGV; docs/architecture.md, "Sessions and threads")."""
    layer = torch.nn.Linear(64, 64)
    layer(torch.ones(64, 64)).square().sum().backward()
    return layer
