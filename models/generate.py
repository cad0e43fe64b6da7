"""Token-by-token generation with a KV cache, and the numbers a lab shows for each step.

`generate_steps` yields one `GenStep` per new token: the distribution actually sampled from
(after temperature, top-k, top-p), the new query's attention in every layer, the cache's
size, and the work done with the cache versus recomputing the whole prefix.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from models.gpt import GPT, GPTConfig
from models.hooks import capture

log = logging.getLogger(__name__)


def sampling_probs(
    logits: Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> Tensor:
    """The distribution to sample from: softmax(logits / T), then top-k, then top-p, renormalised.

    temperature <= 0 means greedy: all mass on the argmax. top_k None/0 and top_p None/1.0
    are off. top-p keeps the smallest set of most likely tokens whose mass reaches p (the
    most likely token is always kept).
    """
    logits = logits.double()
    if temperature <= 0:
        return torch.zeros_like(logits).scatter_(-1, logits.argmax(-1, keepdim=True), 1.0)
    logits = logits / temperature
    if top_k:
        kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]  # [..., 1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = logits.softmax(-1)
    if top_p is not None and top_p < 1.0:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        before = sorted_p.cumsum(-1) - sorted_p  # mass of the strictly more likely tokens
        drop = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, before >= top_p)
        probs = probs.masked_fill(drop, 0.0)
        probs = probs / probs.sum(-1, keepdim=True)
    return probs


def forward_flops(cfg: GPTConfig, n_new: int, n_past: int = 0) -> int:
    """Multiply-adds × 2 of one forward pass over n_new positions after n_past cached ones:
    the sum of the config's `flops_per_token` at each new position's context (causal: the
    keys up to itself; no mask: all of them)."""
    total = n_past + n_new
    return sum(cfg.flops_per_token(n_past + i + 1 if cfg.causal else total) for i in range(n_new))


@dataclass(frozen=True)
class GenStep:
    index: int  # 0 for the first generated token
    token: int
    prob: float  # the chosen token's probability under `probs`
    logits: Tensor  # [V] raw next-token logits
    probs: Tensor  # [V] the distribution sampled from, after temperature/top-k/top-p
    top: list[tuple[int, float]]  # the most likely candidates under `probs`, best first
    attention: list[Tensor]  # per layer [H, T_ctx]: the last context position's pattern
    cache_rows: int  # rows per layer in the KV cache after this step (0 without cache)
    cache_bytes: int  # what the cache really holds (its tensors' bytes)
    positions: int  # positions run through the model this step
    positions_no_cache: int  # what recomputing the whole context would have run
    flops: int
    flops_no_cache: int
    bytes_per_token: int = 0  # the config's kv_bytes_per_token in the model's dtype


@torch.no_grad()
def generate_steps(
    model: GPT,
    prompt_ids: Sequence[int] | Tensor,
    max_new: int,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    use_cache: bool = True,
    generator: torch.Generator | None = None,
    n_top: int = 10,
    attention: bool = True,
) -> Iterator[GenStep]:
    """Generate max_new tokens after prompt_ids, yielding each step as it is decided.

    With use_cache the prompt is run once (prefill) and each later step runs one position.
    Past n_ctx the context is cropped to its last n_ctx tokens (as nanoGPT does); every
    position then moves, so absolute positions and earlier layers change and the cache is
    rebuilt each step: it saves nothing there. A model without a causal mask cannot use a
    cache at all (old rows would have to see new tokens), so that raises.
    """
    cfg = model.cfg
    if use_cache and not cfg.causal:
        raise ValueError("a KV cache needs a causal model: pass use_cache=False")
    ctx = [int(t) for t in (prompt_ids.tolist() if isinstance(prompt_ids, Tensor) else prompt_ids)]
    if not ctx:
        raise ValueError("the prompt needs at least one token")
    param = next(model.parameters())
    device = param.device
    bytes_per_token = cfg.kv_bytes_per_token(param.dtype)
    was_training = model.training
    model.eval()
    cache = model.new_cache() if use_cache else None
    names = "blocks.*.attn.hook_pattern" if attention else ()
    try:
        for index in range(max_new):
            start = max(0, len(ctx) - cfg.n_ctx)
            if cache is not None and start > 0:
                log.debug("context %d > n_ctx %d: rebuilding the KV cache", len(ctx), cfg.n_ctx)
                cache = model.new_cache()  # the window slid: every cached row is stale
            n_past = cache.rows if cache is not None else 0
            new = ctx[start + n_past :]
            idx = torch.tensor([new], device=device)  # [1, T_new]
            with capture(model, names) as store:
                logits = model(idx, cache)[0, -1].float()  # [V]
            probs = sampling_probs(logits, temperature, top_k, top_p)
            if temperature <= 0:
                token = int(probs.argmax())
            else:
                token = int(torch.multinomial(probs.float().cpu(), 1, generator=generator))
            top_p_, top_i = probs.topk(min(n_top, probs.shape[-1]))
            n_ctx_now = len(ctx) - start
            yield GenStep(
                index=index,
                token=token,
                prob=float(probs[token]),
                logits=logits.cpu(),
                probs=probs.float().cpu(),
                top=[(int(i), float(p)) for i, p in zip(top_i, top_p_, strict=True) if p > 0],
                attention=[
                    store[f"blocks.{i}.attn.hook_pattern"][0, :, -1, :].cpu()  # [H, T_ctx]
                    for i in range(cfg.n_layers)
                    if attention
                ],
                cache_rows=cache.rows if cache is not None else 0,
                cache_bytes=cache.nbytes if cache is not None else 0,
                positions=len(new),
                positions_no_cache=n_ctx_now,
                flops=forward_flops(cfg, len(new), n_past),
                flops_no_cache=forward_flops(cfg, n_ctx_now, 0),
                bytes_per_token=bytes_per_token,
            )
            ctx.append(token)
    finally:
        model.train(was_training)


def generate(model: GPT, prompt_ids: Sequence[int] | Tensor, max_new: int, **kwargs) -> list[int]:
    """Just the new tokens of `generate_steps` (same keyword arguments)."""
    kwargs.setdefault("attention", False)
    return [step.token for step in generate_steps(model, prompt_ids, max_new, **kwargs)]
