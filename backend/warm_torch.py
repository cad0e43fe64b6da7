"""Torch's one-time costs paid at start-up, off the event loop, not in a learner's session."""

from __future__ import annotations

import gc
import logging

import torch

log = logging.getLogger("shaomai.sessions")


def warm_torch() -> None:
    """Pay torch's one-time costs now rather than in the first learner's session: an
    optimizer's first construction imports torch._dynamo (2-4 s on two busy cores), and
    the first backward starts autograd's machinery. Then everything start-up made is
    moved out of the garbage collector's sight (`gc.freeze`): a full collection scanned
    those ~200k objects in 44-75 ms, a pause of every session's stream each time it ran.
    No matrix product here: the fork server runs this too, and its children crash more
    often after a parent's product (`first_products`)."""
    try:
        w = torch.zeros(4, requires_grad=True)
        opt = torch.optim.AdamW([w], lr=0.1)
        (w * 2.0).sum().backward()
        opt.step()
    except Exception:  # a failed warm-up only costs the first session its time
        log.exception("torch warm-up failed")
    gc.freeze()


def first_products() -> torch.nn.Module:
    """A matrix product and its backward on this thread, before any other thread of the
    process runs one: in a process forked from one that used torch (a session process,
    backend/session_process.py), two threads' first products at once (a lab's arms side by
    side) crash it now and then (SIGSEGV; docs/architecture.md, "Sessions and threads";
    tests/backend/test_fork_safety.py)."""
    layer = torch.nn.Linear(64, 64)
    layer(torch.ones(64, 64)).square().sum().backward()
    return layer
