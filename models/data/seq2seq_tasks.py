"""Well-posed tasks for an encoder-decoder: string reversal and date normalisation.

The source goes to the encoder and only the target's previous tokens to the decoder, so
nothing of the answer leaks into the encoder (the book's task did leak it). One character
is one id: the vocabulary is three specials (padding, BOS, EOS) then the task's characters.

- reverse: a string over a small alphabet, length drawn from [min_len, max_len] →
  the same string backwards ("abcde" → "edcba").
- dates: a day between 1950 and 2049 written one of three ways, two English and one
  Chinese ("3 May 2021", "May 3, 2021", "2021年5月3日") → ISO 8601 ("2021-05-03").

Everything is drawn from a `torch.Generator` the caller owns, never the global RNG.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

import torch
from torch import Tensor

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
SPECIALS = (PAD, BOS, EOS)  # ids 0, 1, 2 (models.seq2seq.Seq2SeqConfig's defaults)
REVERSE_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
FORMS = ("en_dmy", "en_mdy", "zh")  # "3 May 2021", "May 3, 2021", "2021年5月3日"
FIRST_DAY = dt.date(1950, 1, 1).toordinal()
LAST_DAY = dt.date(2049, 12, 31).toordinal()


def write_date(day: dt.date, form: str) -> str:
    if form == "en_dmy":
        return f"{day.day} {MONTHS[day.month - 1]} {day.year}"
    if form == "en_mdy":
        return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
    if form == "zh":
        return f"{day.year}年{day.month}月{day.day}日"
    raise ValueError(f"unknown date form {form!r}")


def _date_chars() -> str:
    chars = set("0123456789-")
    for m in MONTHS:
        chars |= set(m)
    chars |= set(" ,年月日")
    return "".join(sorted(chars))


DATE_CHARS = _date_chars()


@dataclass(frozen=True)
class Batch:
    """Right-padded ids: the source, the decoder's inputs (BOS + target) and its labels
    (target + EOS), the lengths, and the strings they came from."""

    src: Tensor  # [B, T_enc]
    src_len: Tensor  # [B]
    tgt_in: Tensor  # [B, T_dec]: BOS, y_0, ..., y_{n-1}
    tgt_out: Tensor  # [B, T_dec]: y_0, ..., y_{n-1}, EOS
    sources: list[str]
    targets: list[str]


@dataclass(frozen=True)
class Seq2SeqTask:
    name: str  # "reverse" or "dates"
    min_len: int = 3  # reversal: the shortest string
    max_len: int = 12  # reversal: the longest string

    def __post_init__(self) -> None:
        if self.name not in ("reverse", "dates"):
            raise ValueError(f"unknown task {self.name!r}")
        if not 1 <= self.min_len <= self.max_len:
            raise ValueError(f"need 1 <= min_len <= max_len, got {self.min_len}, {self.max_len}")

    # -- the vocabulary -------------------------------------------------------------------
    @property
    def chars(self) -> str:
        return REVERSE_ALPHABET if self.name == "reverse" else DATE_CHARS

    @property
    def vocab(self) -> list[str]:
        return [*SPECIALS, *self.chars]

    @property
    def vocab_size(self) -> int:
        return len(SPECIALS) + len(self.chars)

    def encode(self, text: str) -> list[int]:
        index = _index(self.chars)
        return [index[c] for c in text]  # one character, one id

    def decode(self, ids: list[int]) -> str:
        vocab = self.vocab
        return "".join(vocab[i] if i >= len(SPECIALS) else "" for i in ids)

    def unknown(self, text: str) -> list[str]:
        """The characters of `text` outside the vocabulary, each once, in order."""
        known = set(self.chars)
        return list(dict.fromkeys(c for c in text if c not in known))

    # -- answers and samples --------------------------------------------------------------
    def target(self, source: str) -> str | None:
        """The right answer for a source, or None where there is none (a date that is not
        one of the task's forms)."""
        if self.name == "reverse":
            return source[::-1]
        return _parse_date(source)

    @property
    def longest_source(self) -> int:
        if self.name == "reverse":
            return self.max_len
        return max(len(write_date(dt.date(2000, 9, 28), f)) for f in FORMS)  # "September"

    @property
    def longest_target(self) -> int:
        return self.max_len if self.name == "reverse" else len("2021-05-03")

    def sources(self, n: int, gen: torch.Generator, length: int | None = None) -> list[str]:
        """`n` sources drawn from `gen` (reversal: of one `length` when given)."""
        if self.name == "reverse":
            lo, hi = (length, length) if length else (self.min_len, self.max_len)
            lens = torch.randint(lo, hi + 1, (n,), generator=gen).tolist()
            chars = torch.randint(0, len(REVERSE_ALPHABET), (n, hi), generator=gen).tolist()
            return [
                "".join(REVERSE_ALPHABET[c] for c in row[:k])
                for row, k in zip(chars, lens, strict=True)
            ]
        days = torch.randint(FIRST_DAY, LAST_DAY + 1, (n,), generator=gen).tolist()
        forms = torch.randint(0, len(FORMS), (n,), generator=gen).tolist()
        return [
            write_date(dt.date.fromordinal(d), FORMS[f]) for d, f in zip(days, forms, strict=True)
        ]

    def sample(self, n: int, gen: torch.Generator, length: int | None = None) -> Batch:
        return self.batch(self.sources(n, gen, length))

    def batch(self, sources: list[str]) -> Batch:
        targets = [self.target(s) or "" for s in sources]
        src = [self.encode(s) for s in sources]
        eos, bos = SPECIALS.index(EOS), SPECIALS.index(BOS)
        tgt = [self.encode(t) for t in targets]
        return Batch(
            src=_pad(src),
            src_len=torch.tensor([len(s) for s in src]),
            tgt_in=_pad([[bos, *t] for t in tgt]),
            tgt_out=_pad([[*t, eos] for t in tgt]),
            sources=list(sources),
            targets=targets,
        )


@lru_cache(maxsize=4)
def _index(chars: str) -> dict[str, int]:
    return {c: i for i, c in enumerate([*SPECIALS, *chars])}


def _pad(rows: list[list[int]]) -> Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [0] * (width - len(r)) for r in rows], dtype=torch.long)  # PAD 0


def _parse_date(text: str) -> str | None:
    """ISO form of a date written in one of FORMS, else None."""
    patterns = (
        (r"(\d{1,2}) ([A-Za-z]+) (\d{4})", ("d", "m", "y")),
        (r"([A-Za-z]+) (\d{1,2}), (\d{4})", ("m", "d", "y")),
        (r"(\d{4})年(\d{1,2})月(\d{1,2})日", ("y", "m", "d")),
    )
    for pat, order in patterns:
        m = re.fullmatch(pat, text)
        if not m:
            continue
        parts = dict(zip(order, m.groups(), strict=True))
        month = parts["m"]
        if not month.isdigit():
            if month not in MONTHS:
                return None
            month = str(MONTHS.index(month) + 1)
        try:
            return dt.date(int(parts["y"]), int(month), int(parts["d"])).isoformat()
        except ValueError:
            return None
    return None


def teacher_forcing_pairs(text: str) -> dict:
    """The decoder's inputs and labels for a target `text` under teacher forcing, from its
    tokenisation (one character one id, ids given in order of first appearance after the
    specials): input BOS→label text[0], text[0]→text[1], ..., text[-1]→EOS."""
    vocab = list(SPECIALS)
    for c in text:
        if c not in vocab:
            vocab.append(c)
    ids = [vocab.index(c) for c in text]
    inputs = [vocab.index(BOS), *ids]
    labels = [*ids, vocab.index(EOS)]
    return {
        "text": text,
        "ids": ids,
        "inputs": [[vocab[i], i] for i in inputs],
        "labels": [[vocab[i], i] for i in labels],
    }
