"""Tokenizers the labs compare: characters, words, and BPE, all trained on the chosen text.

All share one small interface: encode(str) -> ids, decode(ids) -> str, pieces(str) -> the
piece strings, vocab_size, id_to_piece(i). Id 0 is always the unknown piece.

- CharTokenizer: one id per character seen. Round-trips any text made of those characters.
- WordTokenizer: runs of letters/digits, single punctuation marks and runs of whitespace.
  Chinese has no spaces, so a "word" there is a whole run of characters between punctuation:
  nearly every one is rare, which is exactly what the lab shows.
- SentencePieceTokenizer: real BPE (sentencepiece) trained in memory, nothing on disk.
- BPETrainer: a small pure-Python BPE that records its merges in the order it learns them,
  for display; it tokenizes too, so it can be compared with sentencepiece.
"""

from __future__ import annotations

import io
import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

import sentencepiece as spm

log = logging.getLogger(__name__)

UNK = "<unk>"
_WORDS = re.compile(r"\s+|\w+|[^\w\s]")  # covers every character: decode = concatenation
_PRE_BPE = re.compile(r" ?\w+| ?[^\w\s]+|\s+")  # GPT-2 style: a word keeps its leading space


class Tokenizer(Protocol):
    vocab_size: int

    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: list[int]) -> str: ...
    def pieces(self, text: str) -> list[str]: ...
    def id_to_piece(self, i: int) -> str: ...


class _TableTokenizer:
    """A fixed piece list; subclasses say how text splits into pieces."""

    def __init__(self, pieces: list[str]):
        self._pieces = [UNK, *pieces]
        self._ids = {p: i for i, p in enumerate(self._pieces)}
        self.vocab_size = len(self._pieces)

    def _split(self, text: str) -> list[str]:
        raise NotImplementedError

    def pieces(self, text: str) -> list[str]:
        return [p if p in self._ids else UNK for p in self._split(text)]

    def encode(self, text: str) -> list[int]:
        return [self._ids.get(p, 0) for p in self._split(text)]

    def decode(self, ids: list[int]) -> str:
        return "".join("\ufffd" if i == 0 else self._pieces[i] for i in ids)

    def id_to_piece(self, i: int) -> str:
        return self._pieces[i]


class CharTokenizer(_TableTokenizer):
    def __init__(self, text: str):
        super().__init__(sorted(set(text)))

    def _split(self, text: str) -> list[str]:
        return list(text)


class WordTokenizer(_TableTokenizer):
    """Words by frequency, most frequent first; past max_vocab, rarer words become <unk>."""

    def __init__(self, text: str, max_vocab: int | None = None):
        counts = Counter(_WORDS.findall(text))
        keep = max_vocab - 1 if max_vocab else None  # one id goes to <unk>
        super().__init__([w for w, _ in counts.most_common(keep)])

    def _split(self, text: str) -> list[str]:
        return _WORDS.findall(text)


class SentencePieceTokenizer:
    """sentencepiece BPE trained in memory on `text`.

    vocab_size is clamped, never refused: below the minimum (every character of the text
    plus <unk>, <s>, </s> and the newline piece) it is raised to that minimum; above what
    the text can support it is lowered (sentencepiece's soft limit). `requested_vocab_size`
    keeps what was asked, `vocab_size` is what was trained. Normalisation is off, so
    full-width Chinese punctuation and repeated spaces round-trip unchanged.
    """

    _MAX_LINE = 2000  # sentencepiece skips longer "sentences"; split them for training

    def __init__(self, text: str, vocab_size: int = 256, model_type: str = "bpe"):
        self.requested_vocab_size = vocab_size
        lines = [
            line[i : i + self._MAX_LINE]
            for line in text.split("\n")
            for i in range(0, len(line), self._MAX_LINE)
        ]
        if not lines:
            raise ValueError("cannot train a tokenizer on empty text")
        try:
            proto = self._train(lines, vocab_size, model_type)
        except RuntimeError as err:
            need = re.search(r"smaller than required_chars\. \d+ vs (\d+)", str(err))
            if need is None:
                raise ValueError(f"sentencepiece could not train: {err}") from err
            log.info("vocab_size %d is below this text's minimum; using %s", vocab_size, need[1])
            proto = self._train(lines, int(need[1]), model_type)
        self.sp = spm.SentencePieceProcessor(model_proto=proto)
        self.vocab_size = self.sp.get_piece_size()

    @staticmethod
    def _train(lines: list[str], vocab_size: int, model_type: str) -> bytes:
        model = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=model,
            vocab_size=vocab_size,
            model_type=model_type,
            character_coverage=1.0,  # keep every character: a tiny text has no long tail to drop
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            hard_vocab_limit=False,  # too large a vocabulary for the text: use what it supports
            user_defined_symbols=["\n"],  # training splits on lines; encoding keeps newlines
            minloglevel=2,
        )
        return model.getvalue()

    def encode(self, text: str) -> list[int]:
        return self.sp.encode(text)

    def decode(self, ids: list[int]) -> str:
        return self.sp.decode(ids)

    def pieces(self, text: str) -> list[str]:
        return self.sp.encode(text, out_type=str)

    def id_to_piece(self, i: int) -> str:
        return self.sp.id_to_piece(i)


@dataclass(frozen=True)
class Merge:
    left: str
    right: str
    count: int  # how often the pair occurred when it was merged

    @property
    def piece(self) -> str:
        return self.left + self.right


class BPETrainer(_TableTokenizer):
    """Byte-pair encoding from scratch, on characters: repeatedly merge the most frequent
    adjacent pair inside pre-tokens (a word with its leading space). `merges` is the list
    in the order learned. Stops early once no pair occurs twice. Cost grows with distinct
    words × merges, so keep n_merges in the hundreds for pasted text."""

    def __init__(self, text: str, n_merges: int):
        words = Counter(_PRE_BPE.findall(text))
        splits = {w: list(w) for w in words}
        self.merges: list[Merge] = []
        for _ in range(n_merges):
            pairs: Counter[tuple[str, str]] = Counter()
            for w, parts in splits.items():
                for pair in zip(parts, parts[1:], strict=False):
                    pairs[pair] += words[w]
            if not pairs:
                break
            (left, right), count = pairs.most_common(1)[0]
            if count < 2:
                break
            self.merges.append(Merge(left, right, count))
            for w, parts in splits.items():
                splits[w] = _merge_pair(parts, left, right)
        self._rank = {(m.left, m.right): r for r, m in enumerate(self.merges)}
        super().__init__([*sorted(set(text)), *dict.fromkeys(m.piece for m in self.merges)])

    def _split(self, text: str) -> list[str]:
        out: list[str] = []
        never = len(self._rank)  # rank of a pair that was never merged
        for word in _PRE_BPE.findall(text):
            parts = list(word)
            while len(parts) > 1:  # apply the earliest-learned merge first, as training did
                pairs = zip(parts, parts[1:], strict=False)
                rank, (left, right) = min((self._rank.get(p, never), p) for p in pairs)
                if rank == never:
                    break
                parts = _merge_pair(parts, left, right)
            out.extend(parts)
        return out


def _merge_pair(parts: list[str], left: str, right: str) -> list[str]:
    out, i = [], 0
    while i < len(parts):
        if i + 1 < len(parts) and parts[i] == left and parts[i + 1] == right:
            out.append(left + right)
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return out


def make_tokenizer(kind: str, text: str, vocab_size: int = 256) -> Tokenizer:
    """Build a tokenizer by kind: char, word (capped at vocab_size), bpe (sentencepiece),
    or bpe-simple (the pure-Python trainer, with vocab_size - characters - 1 merges)."""
    if kind == "char":
        return CharTokenizer(text)
    if kind == "word":
        return WordTokenizer(text, max_vocab=vocab_size)
    if kind == "bpe":
        return SentencePieceTokenizer(text, vocab_size)
    if kind == "bpe-simple":
        return BPETrainer(text, n_merges=max(0, vocab_size - len(set(text)) - 1))
    raise ValueError(f"unknown tokenizer {kind!r}; choose from char, word, bpe, bpe-simple")
