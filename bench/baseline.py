"""The baselines: the `gpt` lab's default model, data and optimizer in a bare torch loop, and
the lab itself stepped directly (no session, no websocket), both in this process.

The bare loop is what a researcher would write: sample a batch, forward, masked loss,
backward, AdamW step, read the loss. No hooks, no evaluation, no gradient norms. It runs on
one torch thread, as a session's worker does (backend.worker.init_worker).
"""

from __future__ import annotations

import time
from typing import Any

import torch

from backend import wire
from backend.admission import pick_device
from backend.labs import REGISTRY, load_all
from models.data.tasks import DEFAULT_REVERSE, ReverseTask, masked_loss
from models.gpt import GPT

LAB = "gpt"


def device() -> torch.device:
    return pick_device("auto")


def sync(dev: torch.device) -> None:
    """Wait for the device's queued work, so a step's time includes it."""
    if dev.type == "cuda":
        torch.cuda.synchronize()


def bare_loop(n: int, warmup: int = 0) -> list[float]:
    """Seconds of each of n training steps (after `warmup` untimed ones)."""
    torch.set_num_threads(1)
    dev = device()
    recipe = DEFAULT_REVERSE
    torch.manual_seed(recipe.seed)
    model = GPT(recipe.config).to(dev)
    opt = recipe.optimizer(model)
    task = ReverseTask()
    gen = torch.Generator().manual_seed(0)
    times = []
    for i in range(warmup + n):
        t0 = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = recipe.lr_at(i)
        x, y, mask = task.sample(recipe.batch, gen)
        x, y, mask = x.to(dev), y.to(dev), mask.to(dev)
        loss = masked_loss(model(x), y, mask)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()  # the loss is read every step, as a lab does
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return times


def lab_class(name: str):
    load_all()
    return REGISTRY[name]


def new_lab(params: dict[str, Any] | None = None, dev: torch.device | None = None):
    """The `gpt` lab as a session builds it (seed 0): its defaults, or `params`."""
    lab_cls = lab_class(LAB)
    torch.manual_seed(0)
    return lab_cls(lab_cls.Params(**(params or {})), 0, dev or device())


def lab_loop(n: int, capture: bool, lab=None) -> list[float]:
    """Seconds of each of n `lab.step` calls (+ encoding when captured), as a session does;
    on a fresh default lab unless one is given."""
    torch.set_num_threads(1)
    lab = lab or new_lab()
    dev = lab.device
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        frame = lab.step(capture)
        frame.step = i + 1
        if capture:
            wire.encode(frame, {"run": 0})
        sync(dev)
        times.append(time.perf_counter() - t0)
    return times


def same_model_check() -> dict:
    """The bare loop trains the very model the lab builds (parameter count and shapes), with
    the same batch, schedule and optimizer settings."""
    lab = new_lab()
    bare = GPT(DEFAULT_REVERSE.config)
    a = {k: tuple(v.shape) for k, v in lab.model.state_dict().items()}
    b = {k: tuple(v.shape) for k, v in bare.state_dict().items()}
    p = lab.params
    same = (
        a == b
        and p.batch == DEFAULT_REVERSE.batch
        and p.lr == DEFAULT_REVERSE.lr
        and p.warmup == DEFAULT_REVERSE.warmup
        # every optimizer setting (betas, eps, weight decay, ...): the lab once had AdamW's
        # default weight decay of 0.01 where the recipe has none, ~3% of a step's time
        and lab.opt.defaults == DEFAULT_REVERSE.optimizer(bare).defaults
    )
    return {"same": same, "params": lab.model.num_params()}
