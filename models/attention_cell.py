"""One cell of an attention map, as arithmetic: q_i · k_j, ÷ √d_head, the mask, the softmax.

`attention_cell` runs the model on a sequence with the explicit attention path captured
(the same hooks the lab's picture reads: `hook_q`/`hook_k`, or `hook_rot_q`/`hook_rot_k`
under RoPE, `hook_attn_scores`, `hook_pattern`) and returns the numbers behind the pattern's
entry [query, key] of one layer's head, so a learner can redo the sum by hand. The weight
it returns is the hooked pattern's own value, and the row's softmax is recomputed from the
hooked scores, so the two can be compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from models.hooks import capture


@dataclass
class CellArithmetic:
    """The numbers of pattern[layer, head, query, key] for one sequence."""

    q: Tensor  # [d_head] the query vector of position `query` (as scored: rotated under RoPE)
    k: Tensor  # [d_head] the key vector of position `key`
    dot: float  # q · k
    d_head: int
    scaled: float  # q · k / √d_head
    score: float  # the hooked score (scaled, plus any positional bias), before the mask
    masked: bool  # the causal mask hides this key from this query (score → −∞)
    row_scores: Tensor  # [S] row `query`'s scores after the mask (−inf where masked)
    row_softmax: Tensor  # [S] softmax of row_scores, recomputed here
    weight: float  # the hooked pattern's value at [query, key]: what the map shows


@torch.inference_mode()
def attention_cell(
    model: nn.Module, x: Tensor, layer: int, head: int, query: int, key: int
) -> CellArithmetic:
    """x: [1, T] token ids. Dropout is switched off for the pass (eval mode) and restored."""
    prefix = f"blocks.{layer}.attn."
    rope = getattr(model.blocks[layer].attn, "rope", False)
    qk = ("hook_rot_q", "hook_rot_k") if rope else ("hook_q", "hook_k")
    names = [prefix + n for n in (*qk, "hook_attn_scores", "hook_pattern")]
    was_training = model.training
    model.eval()
    try:
        with capture(model, names) as store:
            model(x)
    finally:
        model.train(was_training)
    q_all, k_all = store[prefix + qk[0]][0], store[prefix + qk[1]][0]  # [H, T, dh], [Hkv, T, dh]
    group = q_all.shape[0] // k_all.shape[0]  # GQA: query heads sharing one key head
    q, k = q_all[head, query].double(), k_all[head // group, key].double()
    scores = store[prefix + "hook_attn_scores"][0, head, query].double()  # [S], before the mask
    pattern = store[prefix + "hook_pattern"][0, head, query]  # [S]
    d_head = q.shape[-1]
    dot = float(q @ k)
    masked_row = getattr(model.blocks[layer].attn, "causal", False)
    hidden = (
        torch.arange(scores.shape[0]) > query
        if masked_row
        else torch.zeros_like(scores, dtype=torch.bool)
    )
    row = scores.masked_fill(hidden, float("-inf"))
    return CellArithmetic(
        q=q,
        k=k,
        dot=dot,
        d_head=d_head,
        scaled=dot / math.sqrt(d_head),
        score=float(scores[key]),
        masked=bool(hidden[key]),
        row_scores=row,
        row_softmax=row.softmax(-1),
        weight=float(pattern[key]),
    )
