"""Lab `tokenizer`: characters vs words vs BPE on a bundled text or the learner's own.

`step` performs one BPE merge with the pure-Python trainer (models/tokenize_steps.StepBPE,
equal to models.data.tokenizers.BPETrainer merge for merge), so playing shows the
vocabulary growing while the text's token count falls. Nothing is trained by gradient:
`trains = False` and the curve's scalars are `tokens` and `vocab`, not a loss. Beside it:
the same sample sentence cut by characters, words, our BPE and sentencepiece's BPE (at the
vocabulary size of a live slider), with ids, and how ids become input and labels.
"""

from __future__ import annotations

import re
from typing import Literal

import torch
from pydantic import model_validator

from backend.labs import register
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param, refuse
from models.data import texts
from models.data.tokenizers import SentencePieceTokenizer
from models.tokenize_steps import StepBPE, baselines, split

MAX_SAMPLE = 300  # characters of the sample sentence
RECENT = 40  # merges listed, newest first
TOP = 48  # most frequent pieces shown with their counts
CURRICULUM_IDS = [11, 27, 42, 2]  # the book's example sequence


class Params(LabParams):
    source: Literal["zh", "en", "pasted"] = param(
        "zh",
        zh="文本",
        en="Text",
        choices={
            "zh": ("小烧麦学说话（中文）", "小烧麦学说话（Chinese）"),
            "en": ("The little shaomai (English)", "The little shaomai (English)"),
            "pasted": ("我粘贴的文本", "My pasted text"),
        },
    )
    pasted: str = param(
        "",
        zh="粘贴的文本（最多 200 KB）",
        en="Pasted text (up to 200 KB)",
        widget="hidden",  # the view's own box counts bytes and shows errors beside it
        max_length=texts.MAX_PASTED_BYTES,
    )
    sample: str = param(
        "",
        zh="示例句子（空：取文本的第一句）",
        en="Sample sentence (empty: the text's first sentence)",
        max_length=MAX_SAMPLE,
        live=True,
    )
    sp_vocab: int = param(
        300,
        zh="sentencepiece 词表大小",
        en="sentencepiece vocabulary size",
        ge=16,
        le=8000,
        scale="log",
        live=True,
    )
    merges: int = param(400, zh="最多合并次数", en="Merges to learn", ge=1, le=3000, live=True)

    @model_validator(mode="after")
    def _pasted_ok(self) -> Params:
        if self.pasted:  # empty with source "pasted" (a link does not carry the text): zh
            size = len(self.pasted.encode("utf-8"))
            if size > texts.MAX_PASTED_BYTES:
                raise refuse(
                    "err.p_pasted_bytes",
                    "pasted: the text is {size} bytes; the limit is {max}",
                    size=size,
                    max=texts.MAX_PASTED_BYTES,
                )
            if len(set(self.pasted)) < 2:
                raise refuse(
                    "err.p_pasted_distinct",
                    "pasted: the text needs at least two distinct characters",
                )
        return self


def _first_sentence(text: str) -> str:
    """The first sentence (or clause) of the first line that has one (titles have none)."""
    lines = [ln.strip() for ln in text.splitlines() if len(ln.strip()) >= 10]
    line = next((ln for ln in lines if re.search(r"[。！？.!?]", ln)), lines[0] if lines else text)
    m = re.search(r"[。！？.!?,，]", line[8:60])
    if m:
        return line[: 8 + m.end()]
    cut = line.rfind(" ", 0, 60)
    return line[:cut] if cut > 10 else line[:60]


def _merge_json(m, k: int) -> dict:
    return {"k": k, "left": m.left, "right": m.right, "piece": m.piece, "count": m.count}


@register
class TokenizerLab(Lab):
    id = "tokenizer"
    chapter = 6
    order = 0
    title = {"zh": "分词：字、词与 BPE", "en": "Tokenizers: characters, words and BPE"}
    description = {
        "zh": "同一段文字按字、按词、按 BPE 切开：看切出的片段、编号、个数和词表。按“播放”一次合并一对"
        "最常见的相邻片段，词表变大，文本的 token 数变少；再和 sentencepiece 的 BPE 比一比。",
        "en": "The same text cut into characters, words and BPE pieces: see the pieces, their ids, "
        "counts and the vocabulary. Press play to merge the most frequent adjacent pair, one "
        "merge a step: the vocabulary grows and the text's token count falls. Compare with "
        "sentencepiece's BPE.",
    }
    Params = Params
    tensors = ("top_counts",)
    trains = False

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        # A shared link or a reload may say "pasted" without the text (the URL leaves long
        # values out): fall back to the bundled Chinese text and say so.
        self.pasted_missing = params.source == "pasted" and not params.pasted
        source = "zh" if self.pasted_missing else params.source
        self.text = params.pasted if source == "pasted" else texts.load_text(source)
        self.bpe = StepBPE(self.text)
        self.base = baselines(self.text)
        self.base_counts = {k: len(tok.encode(self.text)) for k, tok in self.base.items()}
        self._train_sp()

    def _train_sp(self) -> None:
        self.sp = SentencePieceTokenizer(self.text, self.params.sp_vocab)
        self.sp_tokens = len(self.sp.encode(self.text))

    def update_live(self, params: Params) -> None:
        retrain = params.sp_vocab != self.params.sp_vocab
        self.params = params
        if retrain:
            self._train_sp()

    def max_steps(self) -> int:
        return len(self.bpe.merges) if self.bpe.finished else self.params.merges

    def step(self, capture: bool) -> Frame:
        self.bpe.merge_once()
        return self._frame(capture)

    def snapshot(self) -> Frame:
        return self._frame(True)

    def _frame(self, capture: bool) -> Frame:
        bpe = self.bpe
        n_tokens = bpe.n_tokens
        frame = Frame(
            scalars={
                "tokens": float(n_tokens),
                "vocab": float(bpe.vocab_size),
                "chars_per_token": len(self.text) / max(1, n_tokens),
            }
        )
        if bpe.merges:
            frame.scalars["merge_count"] = float(bpe.merges[-1].count)
        if not capture:
            return frame
        sample = self.params.sample or _first_sentence(self.text)
        tokenizers = {**self.base, "bpe": bpe, "sp": self.sp}
        cuts = {k: split(tok, sample) for k, tok in tokenizers.items()}
        counts = bpe.piece_counts().most_common(TOP)
        ids = cuts["bpe"].ids
        x, y = texts.input_and_labels(ids)
        ex_x, ex_y = texts.input_and_labels(CURRICULUM_IDS)
        n = len(bpe.merges)
        frame.tensors = [
            TensorOut("top_counts", [c for _, c in counts], "f32", [p for p, _ in counts]),
        ]
        frame.meta = {
            "source": self.params.source,
            "max_pasted_bytes": texts.MAX_PASTED_BYTES,
            "pasted_missing": self.pasted_missing,
            "chars": len(self.text),
            "bytes": len(self.text.encode("utf-8")),
            "merges_done": n,
            "finished": bpe.finished,
            "merge": _merge_json(bpe.merges[-1], n) if n else None,
            "recent": [
                _merge_json(bpe.merges[i], i + 1) for i in range(n - 1, max(-1, n - 1 - RECENT), -1)
            ],
            "compare": {
                "char": {"vocab": self.base["char"].vocab_size, "tokens": self.base_counts["char"]},
                "word": {"vocab": self.base["word"].vocab_size, "tokens": self.base_counts["word"]},
                "bpe": {"vocab": bpe.vocab_size, "tokens": n_tokens},
                "sp": {
                    "vocab": self.sp.vocab_size,
                    "requested": self.sp.requested_vocab_size,
                    "tokens": self.sp_tokens,
                },
            },
            "sample": sample,
            "cuts": {k: {"pieces": c.pieces, "ids": c.ids} for k, c in cuts.items()},
            "top": [{"piece": p, "id": bpe.piece_id(p), "count": c} for p, c in counts],
            "io": {"ids": ids, "input": x, "labels": y},
            "example": {"ids": CURRICULUM_IDS, "input": ex_x, "labels": ex_y},
        }
        return frame

    @classmethod
    def estimate_mb(cls, params: Params) -> tuple[float, str | None]:
        return 8.0 + 40.0 * len(params.pasted) / texts.MAX_PASTED_BYTES, None

    def state_dict(self) -> dict:
        return {"merges": len(self.bpe.merges)}

    def load_state_dict(self, state: dict) -> None:
        self.bpe = StepBPE(self.text)
        for _ in range(int(state["merges"])):
            self.bpe.merge_once()
