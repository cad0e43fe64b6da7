"""Scenario `gpu` (issue 19): a ~10M-parameter GPT trained live on CUDA, beside a bare loop.

The `gpt` lab on the English text at 6 layers × 8 heads and d_model 384 (10.7M parameters,
counted by its config) plays through a real server to one real websocket client that
receives every frame, in rounds interleaved with the same model, data and AdamW in a bare
torch loop in this process (forward, loss, backward, step, the loss read every step), and
with the lab stepped directly (no server: its own work, hooks and evaluations, without the
streaming). Targets: the session ≥ 50 steps/s and within 5% of the bare loop.

It runs only where the bench's device is CUDA (`SHAOMAI_DEVICE=auto` picks it, as the app
does); elsewhere it reports that it did not run. CI has no GPU: the CPU path is what the
tests check (tests/test_bench_smoke.py runs `measure` on a tiny model on the CPU).

The lab's memory estimate for this size is ≈ 2 GB (activations of 64 × 128 tokens), over
the default per-session cap of 512 MB: the bench's server runs with the cap a GPU box would
be given (`SHAOMAI_MAX_SESSION_MB`, docs/deploy.md).
"""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.nn.functional as F

from bench import baseline
from bench.overhead import interleaved_rounds, rate, round_figures
from bench.report import Figure, Result
from bench.server import Server
from models.gpt import GPT

S = "gpu"
BIG = {
    "data": "text-en",
    "n_layers": 6,
    "n_heads": 8,
    "d_model": 384,
    "n_ctx": 128,
    "batch": 64,
    "steps": 20_000,
}
SERVER_ENV = {"SHAOMAI_MAX_SESSION_MB": "4096"}
STEPS_PER_S = 50.0
RATIO = 0.95  # ≤ 5% streaming overhead


def bare_loop(lab, n: int, dev: torch.device) -> list[float]:
    """Seconds of each of n steps of what a researcher would write for the lab's model: a
    fresh model of its config, AdamW with its settings, its warm-up, its batches."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = GPT(lab.model.cfg).to(dev)
    d = lab.opt.defaults
    opt = torch.optim.AdamW(
        model.parameters(), d["lr"], betas=d["betas"], eps=d["eps"], weight_decay=d["weight_decay"]
    )
    gen = torch.Generator().manual_seed(0)
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = d["lr"] * lab.schedule(i)
        x, y, _ = lab.source.batch(lab.params.batch, gen)
        x, y = x.to(dev), y.to(dev)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss.item()  # read every step, as the lab does (and a sync on CUDA)
        times.append(time.perf_counter() - t0)
    return times


def measure(params: dict[str, Any], n: int, rounds: int, dev: torch.device) -> dict[str, Any]:
    """Interleaved rounds (bench/overhead.py), each from a fresh model; the session runs in a
    real server on the same device."""
    lab = baseline.new_lab(params, dev)
    bare_loop(lab, 5, dev)  # this process's first kernels (CUDA's context, cuBLAS) untimed
    with Server(env=SERVER_ENV, name="gpu") as srv:
        rows = interleaved_rounds(
            srv,
            params,
            n,
            rounds,
            lambda: rate(bare_loop(lab, n, dev)),
            lambda: rate(baseline.lab_loop(n, False, baseline.new_lab(params, dev))),
            baseline.LAB,
        )
    return {"rows": rows, "params": lab.model.cfg.param_count(), "device": describe(dev)}


def describe(dev: torch.device) -> str:
    return torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"


def figures(out: dict[str, Any]) -> list[Figure]:
    shape = f"{out['params'] / 1e6:.1f}M parameters on {out['device']}"
    return round_figures(
        S,
        out["rows"],
        session=("session steps/s (1 client)", STEPS_PER_S, shape),
        bare_note="same model, data, AdamW",
        ratio_target=RATIO,
        lab_note="held-out loss and text sample in parts, grad norms: no streaming",
    )


def run(opts) -> Result:
    dev = baseline.device()
    if dev.type != "cuda":
        why = f"no CUDA device here (the bench's device is {dev.type}); CI never has one"
        return Result(figures=[Figure(S, "not run", None, note=why)])
    out = measure(BIG, 100 if opts.quick else 300, 2 if opts.quick else 5, dev)
    return Result(figures=figures(out), raw={**out, "config": BIG, "started": time.time()})
