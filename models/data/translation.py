"""A toy translation task the project generates: number words, English ↔ Chinese.

"three hundred twenty one" ↔ "三百二十一", by rules, for every number 0 … max_number
(at most 9,999). The two languages share one vocabulary (pad, bos, eos, 30 English words,
13 Chinese characters), so one embedding table serves the source, the target and the output
projection, as in the 2017 Transformer. English tokens are words, Chinese tokens are
characters (one character, one id). A fixed share of the numbers is held out: the model never
trains on them, and the held-out exact accuracy says whether it learned the rules or the list.

Chinese rules: 十 alone for 10–19 at the front (十五, not 一十五), 一十 inside (一百一十),
one 零 for any run of zeros before a nonzero digit (一千零五, 一千零一十), trailing zeros
dropped (一千五百), 零 for 0. English: "one thousand five", no "and", no hyphens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

Direction = Literal["en-zh", "zh-en"]

PAD, BOS, EOS = 0, 1, 2
SPECIALS = ("<pad>", "<bos>", "<eos>")
ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
EN_WORDS = (*ONES, *TENS, "hundred", "thousand")
ZH_DIGITS = "零一二三四五六七八九"
ZH_CHARS = (*ZH_DIGITS, "十", "百", "千")
VOCAB = (*SPECIALS, *EN_WORDS, *ZH_CHARS)
INDEX = {tok: i for i, tok in enumerate(VOCAB)}
MAX_NUMBER = 9999


def english(n: int) -> list[str]:
    if not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"{n} is outside 0..{MAX_NUMBER}")
    if n < 20:
        return [ONES[n]]
    words: list[str] = []
    if n >= 1000:
        words += [ONES[n // 1000], "thousand"]
        n %= 1000
    if n >= 100:
        words += [ONES[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(TENS[n // 10 - 2])
        n %= 10
        if n:
            words.append(ONES[n])
    elif n:
        words.append(ONES[n])
    return words


def chinese(n: int) -> list[str]:
    if not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"{n} is outside 0..{MAX_NUMBER}")
    if n == 0:
        return ["零"]
    out: list[str] = []
    started = zero_pending = False
    for unit, digit in (
        ("千", n // 1000),
        ("百", n // 100 % 10),
        ("十", n // 10 % 10),
        ("", n % 10),
    ):
        if digit == 0:
            zero_pending = started  # one 零 for a run of zeros, only before a nonzero digit
            continue
        if zero_pending:
            out.append("零")
            zero_pending = False
        if not (unit == "十" and digit == 1 and not started):  # 十五, not 一十五
            out.append(ZH_DIGITS[digit])
        if unit:
            out.append(unit)
        started = True
    return out


def tokens_of(text: str, lang: str) -> list[str]:
    """A learner's phrase as tokens: English words (any case), Chinese characters."""
    if lang == "en":
        return text.lower().split()
    return [ch for ch in text if not ch.isspace()]


@dataclass(frozen=True)
class TranslationConfig:
    direction: Direction = "en-zh"
    max_number: int = 999  # numbers 0 … max_number
    held_out: float = 0.1  # share of the numbers never trained on
    seed: int = 0  # which numbers are held out


class NumberTranslation:
    """Every pair as padded id tables, drawn by index from a torch.Generator."""

    def __init__(self, cfg: TranslationConfig = TranslationConfig()):
        if not 9 <= cfg.max_number <= MAX_NUMBER:
            raise ValueError(f"max_number must be in 9..{MAX_NUMBER}")
        self.cfg = cfg
        self.src_lang, self.tgt_lang = cfg.direction.split("-")
        write = {"en": english, "zh": chinese}
        numbers = range(cfg.max_number + 1)
        self.sources = [write[self.src_lang](n) for n in numbers]
        self.targets = [write[self.tgt_lang](n) for n in numbers]
        self.src_len = max(map(len, self.sources))
        self.tgt_len = max(map(len, self.targets)) + 1  # bos + target, target + eos
        self.src = self._table([[INDEX[w] for w in s] for s in self.sources], self.src_len)
        tgt = [[INDEX[w] for w in t] for t in self.targets]
        self.tgt_in = self._table([[BOS, *t] for t in tgt], self.tgt_len)  # [N, T]
        self.tgt_out = self._table([[*t, EOS] for t in tgt], self.tgt_len)  # [N, T]
        perm = torch.randperm(len(numbers), generator=torch.Generator().manual_seed(cfg.seed))
        n_held = max(1, round(cfg.held_out * len(numbers)))
        self.held_ids = perm[:n_held].sort().values
        self.train_ids = perm[n_held:].sort().values
        self.src_vocab = EN_WORDS if self.src_lang == "en" else ZH_CHARS

    @staticmethod
    def _table(rows: list[list[int]], width: int) -> Tensor:
        out = torch.full((len(rows), width), PAD, dtype=torch.long)
        for i, r in enumerate(rows):
            out[i, : len(r)] = torch.tensor(r)
        return out

    @property
    def vocab_size(self) -> int:
        return len(VOCAB)

    def rows(self, ids: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """(src [B, S], tgt_in [B, T], tgt_out [B, T]) of these numbers, PAD-padded."""
        return self.src[ids], self.tgt_in[ids], self.tgt_out[ids]

    def sample(self, batch: int, gen: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        pick = torch.randint(len(self.train_ids), (batch,), generator=gen)
        return self.rows(self.train_ids[pick])

    def encode(self, text: str) -> list[int]:
        """The learner's phrase as source ids; ValueError(token) for a token the source
        language does not have (the caller turns it into a message)."""
        ids = []
        for tok in tokens_of(text, self.src_lang):
            if tok not in self.src_vocab:
                raise KeyError(tok)
            ids.append(INDEX[tok])
        return ids

    def words(self, ids: list[int]) -> list[str]:
        return [VOCAB[i] for i in ids]

    def join(self, ids: list[int], lang: str) -> str:
        return (" " if lang == "en" else "").join(self.words(ids))
