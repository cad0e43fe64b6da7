"""What the `gpt` lab sends: the fixed example's picture, and one frame per generated token.

The picture runs a separate no-grad forward of the example with `capture()`, so only frames
that are sent pay for the explicit attention path (training keeps the fused kernel).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

import torch
from pydantic import Field

from backend.labs.base import Frame, LabInput, TensorOut
from models.generate import GenStep, generate_steps
from models.gpt import GPT
from models.hooks import capture

N_TOP = 8  # next-token candidates per example position
N_TOP_INFER = 10  # candidates shown for each generated token
HOOKS = (
    "blocks.*.attn.hook_pattern",
    "blocks.0.hook_resid_pre",
    "blocks.*.hook_resid_post",
    "hook_embed",
    "hook_pos_embed",
)


def shown(piece: str) -> str:
    """A token as the view prints it: line breaks, tabs and lone spaces made visible."""
    out = piece.replace("\n", "⏎").replace("\t", "⇥")
    return out if out.strip() else out.replace(" ", "␣")


@dataclass
class _Example:
    """What never changes about a source's fixed example, worked out once per source."""

    x: torch.Tensor  # [1, T]
    y: torch.Tensor  # [T]
    pieces: list[str]  # every token of the vocabulary as shown: 8 candidates a position
    meta: dict[str, Any]  # tokens, targets, which positions are graded


_EXAMPLES: WeakKeyDictionary[Any, _Example] = WeakKeyDictionary()


def _example(source: Any) -> _Example:
    ex = _EXAMPLES.get(source)
    if ex is None:
        ex = _EXAMPLES[source] = _Example(
            x=torch.tensor([source.example_x]),
            y=torch.tensor(source.example_y),
            pieces=[shown(source.piece(i)) for i in range(source.vocab_size)],
            meta={
                "tokens": [shown(source.piece(i)) for i in source.example_x],
                "targets": [shown(source.piece(i)) for i in source.example_y],
                "graded": list(source.example_mask),
            },
        )
    return ex


@torch.inference_mode()  # not just no_grad: ~10% less per-op bookkeeping on these tiny ops
def example_picture(model: GPT, source: Any) -> tuple[list[TensorOut], dict[str, Any]]:
    """Tensors and meta of the fixed example: every head's pattern, the residual stream's
    norm after each layer, the token/position embeddings' norms and the next-token odds.
    Norms and odds travel as f16: drawn as bars and printed to 3 digits, they need no more,
    and on the default task's 13 tokens they weighed as much as every attention map."""
    cfg = model.cfg
    ex = _example(source)
    # Train and eval differ only by dropout; switching modes walks every module (~0.5 ms,
    # a third of a frame's cost), so it is done only when there is dropout to switch off.
    switch = model.training and cfg.dropout > 0
    if switch:
        model.eval()
    try:
        with capture(model, HOOKS) as store:
            logits = model(ex.x)[0]  # [T, V]
    finally:
        if switch:
            model.train()
    tensors = [
        TensorOut(f"blocks.{i}.attn.hook_pattern", store[f"blocks.{i}.attn.hook_pattern"][0], "u8")
        for i in range(cfg.n_layers)
    ]  # each [H, T, T]
    resid = [store["blocks.0.hook_resid_pre"]]
    resid += [store[f"blocks.{i}.hook_resid_post"] for i in range(cfg.n_layers)]
    resid_norm = torch.cat(resid).norm(dim=-1)  # [L + 1, T]
    tok = store["hook_embed"][0]
    pos = store.get("hook_pos_embed", torch.zeros(1, *tok.shape))[0]
    embed_norm = torch.stack([tok, pos]).norm(dim=-1)  # [2, T]
    probs = logits.softmax(-1)  # [T, V]
    top_p, top_i = probs.topk(min(N_TOP, probs.shape[-1]), dim=-1)  # [T, K]
    target_p = probs.gather(-1, ex.y[:, None])[:, 0]  # [T]
    tensors += [
        TensorOut(
            "resid_norm",
            resid_norm,
            "f16",
            ["embed", *(f"blocks.{i}" for i in range(cfg.n_layers))],
        ),
        TensorOut("embed_norm", embed_norm, "f16", ["token", "position"]),
        TensorOut("next_probs", top_p, "f16"),
        TensorOut("target_prob", target_p, "f16"),
    ]
    meta = {**ex.meta, "next_top": [[ex.pieces[i] for i in row] for row in top_i.tolist()]}
    return tensors, meta


class InferInput(LabInput):
    """`infer` input (the lab's declared `Input`): a prompt and how to sample; anything else
    is refused, with the field's path."""

    prompt: str = Field(min_length=1, max_length=2000)
    max_new: int = Field(40, ge=1, le=200)
    temperature: float = Field(0.8, ge=0.0, le=5.0)  # 0 = greedy
    top_k: int = Field(0, ge=0, le=4096)  # 0 = off
    top_p: float = Field(1.0, gt=0.0, le=1.0)  # 1 = off
    use_cache: bool = True


def generation_frames(
    model: GPT, source: Any, inp: InferInput, seed: int
) -> Iterator[tuple[Frame, GenStep]]:
    """One frame per new token: candidates, the new token's attention, cache and work."""
    cfg = model.cfg
    prompt = source.encode_prompt(inp.prompt)
    use_cache = inp.use_cache and cfg.causal
    note = None if use_cache == inp.use_cache else "not_causal"
    ctx = list(prompt)
    new: list[int] = []
    done = {"positions": 0, "positions_no_cache": 0, "flops": 0, "flops_no_cache": 0}
    history: dict[str, list[int]] = {"positions": [], "positions_no_cache": []}
    steps = generate_steps(
        model,
        prompt,
        inp.max_new,
        temperature=inp.temperature,
        top_k=inp.top_k or None,
        top_p=inp.top_p,
        use_cache=use_cache,
        generator=torch.Generator().manual_seed(seed),
        n_top=N_TOP_INFER,
    )
    for s in steps:
        window = ctx[max(0, len(ctx) - cfg.n_ctx) :]  # what the new query attended to
        new.append(s.token)
        ctx.append(s.token)
        for k in done:
            done[k] += getattr(s, k)
        for k in history:
            history[k].append(done[k])
        # Candidates by the model's own odds (softmax at T = 1), shown beside the odds
        # actually sampled from (after temperature, top-k, top-p); the chosen one always.
        raw = s.logits.double().softmax(-1)  # [V]
        top_ids = raw.topk(min(N_TOP_INFER, raw.shape[-1])).indices.tolist()
        if s.token not in top_ids:
            top_ids.append(s.token)
        frame = Frame(
            tensors=[
                TensorOut(
                    "top_probs", s.probs[top_ids], "f32", [shown(source.piece(i)) for i in top_ids]
                ),
                TensorOut("top_raw_probs", raw[top_ids], "f32"),
                TensorOut("new_token_attention", torch.stack(s.attention), "u8"),  # [L, H, T]
            ],
            meta={
                "index": s.index,
                "last": s.index == inp.max_new - 1,
                "token": shown(source.piece(s.token)),
                "token_id": s.token,
                "prob": s.prob,
                "top_ids": top_ids,
                "prompt_tokens": [shown(source.piece(i)) for i in prompt],
                "tokens": [shown(source.piece(i)) for i in new],
                "context": [shown(source.piece(i)) for i in window],
                "text": source.decode(prompt + new),
                "use_cache": use_cache,
                "cache_note": note,
                "cache_rows": [s.cache_rows] * cfg.n_layers,
                "cache_bytes": s.cache_bytes,
                "bytes_per_row": s.bytes_per_token,  # the config's kv_bytes_per_token
                "n_layers": cfg.n_layers,
                "n_heads": cfg.n_heads,
                "d_head": cfg.d_head,
                "n_ctx": cfg.n_ctx,
                "positions": s.positions,
                "positions_no_cache": s.positions_no_cache,
                "flops": s.flops,
                "flops_no_cache": s.flops_no_cache,
                "total": dict(done),
                "history": {k: list(v) for k, v in history.items()},  # frames may be skipped
            },
        )
        yield frame, s
