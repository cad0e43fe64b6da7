"""Greedy decoding and beam search with a length penalty, for the encoder-decoder.

Greedy keeps the single most likely token each step. Beam search keeps the `width` best
partial translations by summed log-probability; a hypothesis that emits eos is finished
and scored by GNMT's length penalty, score = log p(y) / lp(|y|) with
lp(L) = ((5 + L) / 6)^α (|y| counts eos). α = 0 ranks by raw log-probability, which favours
short outputs (every token adds a negative number); larger α lets longer ones win. An ending
counts only when it ranks inside the beam (else a trail of unlikely early endings would fill
the finished list and stop the search before the likely translation ends); the search stops
once `width` hypotheses have finished, or at max_len (the unfinished are then scored as they
are). The memory is encoded once; the tiny decoder recomputes each prefix (no cache).
`banned` tokens (pad, bos: never a target) are never written.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from models.transformer.encoder_decoder import EncoderDecoder


def length_penalty(length: int, alpha: float) -> float:
    return ((5 + length) / 6) ** alpha


@dataclass(frozen=True)
class Hypothesis:
    ids: tuple[int, ...]  # generated tokens, eos included when finished
    logprob: float  # summed log-probability
    score: float  # logprob / length_penalty(len(ids), alpha)
    finished: bool


def _ban(logits: Tensor, banned: tuple[int, ...]) -> Tensor:
    if not banned:
        return logits
    return logits.index_fill(-1, torch.tensor(banned, device=logits.device), float("-inf"))


@torch.no_grad()
def greedy(
    model: EncoderDecoder,
    src: Tensor,
    max_len: int,
    bos: int,
    eos: int,
    banned: tuple[int, ...] = (),
) -> tuple[list[int], list[float]]:
    """src [1, S] -> (tokens until and with eos, each token's log-probability)."""
    memory, mask = model.encode(src)
    ids: list[int] = []
    logps: list[float] = []
    for _ in range(max_len):
        tgt = torch.tensor([[bos, *ids]], device=src.device)  # [1, t]
        logp = _ban(model.decode(tgt, memory, mask)[0, -1], banned).log_softmax(-1)  # [V]
        tok = int(logp.argmax())
        ids.append(tok)
        logps.append(float(logp[tok]))
        if tok == eos:
            break
    return ids, logps


@torch.no_grad()
def beam_search(
    model: EncoderDecoder,
    src: Tensor,
    max_len: int,
    bos: int,
    eos: int,
    width: int = 4,
    alpha: float = 0.6,
    banned: tuple[int, ...] = (),
) -> list[Hypothesis]:
    """src [1, S] -> up to `width` hypotheses, best score first."""
    memory, mask = model.encode(src)
    alive: list[tuple[tuple[int, ...], float]] = [((), 0.0)]
    done: list[Hypothesis] = []
    for _ in range(max_len):
        n = len(alive)
        tgt = torch.tensor([[bos, *ids] for ids, _ in alive], device=src.device)  # [n, t]
        mem = memory.expand(n, -1, -1)  # [n, S, d_model]
        logits = model.decode(tgt, mem, mask.expand(n, -1))[:, -1]  # [n, V]
        logp = _ban(logits, banned).log_softmax(-1)
        total = logp + torch.tensor([lp for _, lp in alive], device=logp.device)[:, None]
        top = total.flatten().topk(min(2 * width, total.numel()))  # room for eos endings
        vocab = logp.shape[-1]
        nxt: list[tuple[tuple[int, ...], float]] = []
        for rank, (value, flat) in enumerate(
            zip(top.values.tolist(), top.indices.tolist(), strict=True)
        ):
            ids = (*alive[flat // vocab][0], flat % vocab)
            if ids[-1] == eos:
                if rank < width:  # only an ending that would be in the beam (fairseq's rule)
                    done.append(
                        Hypothesis(ids, value, value / length_penalty(len(ids), alpha), True)
                    )
            elif len(nxt) < width:
                nxt.append((ids, value))
        alive = nxt
        if len(done) >= width or not alive:
            break
    else:
        done += [Hypothesis(i, v, v / length_penalty(len(i), alpha), False) for i, v in alive]
    return sorted(done, key=lambda h: h.score, reverse=True)[:width]
