"""BPE one merge at a time, so a lab can show the vocabulary growing and the text shrinking.

`StepBPE` is `models.data.tokenizers.BPETrainer` with its training loop turned inside out:
`merge_once()` performs exactly one iteration of that loop (count adjacent pairs inside
pre-tokens, merge the most frequent one everywhere), so after k calls its merges equal
`BPETrainer(text, k).merges` and it tokenizes the same way (a test holds both). Each merge
recounts every pair over the distinct pre-tokens, like the trainer; on a 200 KB pasted text
that is tens of milliseconds a merge.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from models.data.tokenizers import (
    _PRE_BPE,
    UNK,
    BPETrainer,
    CharTokenizer,
    Merge,
    Tokenizer,
    WordTokenizer,
    _merge_pair,
)


class StepBPE(BPETrainer):
    """A BPE trainer stepped by the caller. Starts with the text's characters, no merges."""

    def __init__(self, text: str):  # BPETrainer.__init__ trains at once; this one waits
        self._words = Counter(_PRE_BPE.findall(text))
        self._splits = {w: list(w) for w in self._words}
        self._chars = sorted(set(text))
        self.merges: list[Merge] = []
        self.finished = False  # no pair occurs twice any more
        self._rank: dict[tuple[str, str], int] = {}
        self._reset_table()

    def _reset_table(self) -> None:
        pieces = [*self._chars, *dict.fromkeys(m.piece for m in self.merges)]
        self._pieces = [UNK, *pieces]
        self._ids = {p: i for i, p in enumerate(self._pieces)}
        self.vocab_size = len(self._pieces)

    def merge_once(self) -> Merge | None:
        """One iteration of BPETrainer's loop; None (and `finished`) once nothing repeats."""
        if self.finished:
            return None
        pairs: Counter[tuple[str, str]] = Counter()
        for w, parts in self._splits.items():
            for pair in zip(parts, parts[1:], strict=False):
                pairs[pair] += self._words[w]
        if not pairs or (best := pairs.most_common(1)[0])[1] < 2:
            self.finished = True
            return None
        (left, right), count = best
        merge = Merge(left, right, count)
        self.merges.append(merge)
        for w, parts in self._splits.items():
            self._splits[w] = _merge_pair(parts, left, right)
        self._rank[(left, right)] = len(self.merges) - 1
        if merge.piece not in self._ids:
            self._pieces.append(merge.piece)
            self._ids[merge.piece] = len(self._pieces) - 1
            self.vocab_size = len(self._pieces)
        return merge

    def piece_id(self, piece: str) -> int:
        """The id of a piece of the vocabulary (0, the unknown id, if it is not one)."""
        return self._ids.get(piece, 0)

    @property
    def n_tokens(self) -> int:
        """Tokens of the training text under the merges so far (from the training state)."""
        return sum(len(self._splits[w]) * n for w, n in self._words.items())

    def piece_counts(self) -> Counter[str]:
        """How often each piece occurs in the training text now."""
        out: Counter[str] = Counter()
        for w, n in self._words.items():
            for p in self._splits[w]:
                out[p] += n
        return out


@dataclass(frozen=True)
class Split:
    """One text through one tokenizer: its pieces, their ids, and the vocabulary size."""

    pieces: list[str]
    ids: list[int]
    vocab_size: int


def split(tok: Tokenizer, text: str) -> Split:
    return Split(tok.pieces(text), tok.encode(text), tok.vocab_size)


def baselines(text: str) -> dict[str, Tokenizer]:
    """The tokenizers BPE is compared with: one id per character, and whole words."""
    return {"char": CharTokenizer(text), "word": WordTokenizer(text)}
