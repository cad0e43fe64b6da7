"""What `real-llm` computes for each generated token: the step, its odds, attention and lens.

The prompt is prefilled into a fresh KV cache without capturing anything (the fused
attention path); then every step runs ONE position with the cache, capturing each layer's
attention pattern (the new token's query row over every cached key) and residual stream.
The last prompt token is the first such step, so the first new token's attention is the
same row a full forward would give. The logit lens reads each layer's residual stream at
that position through the final RMSNorm and the tied unembedding: the token the model
"would say" if it stopped after that layer (the last layer's reading is the real output).
Every forward on the shared model takes its lock (`_real_models.run_locked`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from backend.labs._real_models import Shared, run_locked
from models.generate import sampling_probs
from models.hooks import capture

N_TOP = 10  # candidates shown a step


@dataclass
class Step:
    index: int
    token: int
    prob: float  # under the distribution sampled from
    logits: Tensor  # [V] raw
    probs: Tensor  # [V] after temperature / top-k / top-p
    attention: Tensor | None  # [L, H, S]: the new query's weights over the cached keys
    lens_top: list[int]  # per layer: the top token of the residual stream read out
    lens_prob: Tensor | None  # [L] its probability
    lens_chosen: Tensor | None  # [L] the probability each layer gives the chosen token
    cache_rows: int
    cache_bytes: int
    forward_ms: float  # the model's forward for this position (with the attention capture)
    lens_ms: float
    elapsed_s: float  # since the first decode step started (prefill excluded)


def logit_lens(model, resid: Tensor) -> Tensor:
    """resid [L, d] (each layer's stream at one position) -> probabilities [L, V]."""
    return model.unembed(model.ln_final(resid)).float().softmax(-1)


def generate(
    sh: Shared,
    prompt_ids: Sequence[int],
    max_new: int,
    *,
    temperature: float,
    top_k: int,
    top_p: float,
    generator: torch.Generator,
    stop_ids: frozenset[int] = frozenset(),
    attention: bool = True,
    lens: bool = True,
) -> Iterator[Step]:
    """Yield each new token as it is decided (stops after a stop token)."""
    model = sh.model
    L = model.cfg.n_layers
    names: list[str] = []
    if attention:
        names.append("blocks.*.attn.hook_pattern")
    if lens:
        names.append("blocks.*.hook_resid_post")
    cache = model.new_cache()
    if len(prompt_ids) > 1:
        run_locked(sh, model, torch.tensor([list(prompt_ids[:-1])]), cache)  # prefill
    feed = int(prompt_ids[-1])
    start = time.perf_counter()

    def one(token: int):
        t0 = time.perf_counter()
        with capture(model, names) as store:
            logits = model(torch.tensor([[token]]), cache)[0, -1].float()  # [V]
        t1 = time.perf_counter()
        att = None
        if attention:
            att = torch.stack(
                [store[f"blocks.{i}.attn.hook_pattern"][0, :, -1, :] for i in range(L)]
            )  # [L, H, S]
        lp = None
        if lens:
            resid = torch.stack([store[f"blocks.{i}.hook_resid_post"][0, -1] for i in range(L)])
            lp = logit_lens(model, resid)  # [L, V]
        return logits, att, lp, 1e3 * (t1 - t0), 1e3 * (time.perf_counter() - t1)

    for index in range(max_new):
        logits, att, lp, fwd_ms, lens_ms = run_locked(sh, one, feed)
        probs = sampling_probs(logits, temperature, top_k or None, top_p)
        if temperature <= 0:
            token = int(probs.argmax())
        else:
            token = int(torch.multinomial(probs.float(), 1, generator=generator))
        lens_top, lens_prob, lens_chosen = [], None, None
        if lp is not None:
            lens_prob, top = lp.max(-1)  # [L], [L]
            lens_top = top.tolist()
            lens_chosen = lp[:, token]
        yield Step(
            index=index,
            token=token,
            prob=float(probs[token]),
            logits=logits,
            probs=probs.float(),
            attention=att,
            lens_top=lens_top,
            lens_prob=lens_prob,
            lens_chosen=lens_chosen,
            cache_rows=cache.rows,
            cache_bytes=cache.nbytes,
            forward_ms=fwd_ms,
            lens_ms=lens_ms,
            elapsed_s=time.perf_counter() - start,
        )
        if token in stop_ids:
            return
        feed = token
