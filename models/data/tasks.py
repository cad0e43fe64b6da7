"""Synthetic sequence tasks with exact answers: copy, reverse, sort, induction, modular addition.

Every task writes whole sequences `prompt + answer` and trains next-token prediction on
them: x = seq[:-1], y = seq[1:], and `loss_mask` marks the positions whose label is an
answer token (the prompt is random, so predicting it is noise, not skill).

Exact-sequence accuracy is measured teacher-forced: every answer token predicted from the
true prefix. For a causal model it equals the accuracy of greedy generation, because a
greedy decode that gets every token right sees exactly the teacher-forced prefixes. (Without
the causal mask it does not: each position can read its own label.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor

from models.gpt import GPTConfig

BOS, SEP, PAD = "<s>", "|", "_"
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Example:
    """One sample for display: ids, their strings, and which labels are graded."""

    x: list[int]
    y: list[int]
    mask: list[bool]
    x_tokens: list[str]
    y_tokens: list[str]


@dataclass(frozen=True)
class Task:
    """Base: subclasses write `_sequences` and say where the answer starts."""

    name: ClassVar[str] = ""
    seq_len: int = 6  # symbols in the prompt; answers have the same length
    n_symbols: int = 10  # distinct symbols; digits first, then letters

    def __post_init__(self) -> None:
        if not 1 <= self.n_symbols <= len(_ALPHABET):
            raise ValueError(f"n_symbols must be in 1..{len(_ALPHABET)}, got {self.n_symbols}")
        if self.seq_len < 1:
            raise ValueError(f"seq_len must be positive, got {self.seq_len}")

    @property
    def vocab(self) -> list[str]:
        return [*_ALPHABET[: self.n_symbols], BOS, SEP]

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def answer_start(self) -> int:
        """Index in the full sequence of the first answer token: <s> a1..an | answer."""
        return self.seq_len + 2

    @property
    def x_len(self) -> int:
        """Length T of the model's input: the full sequence minus its last token."""
        return self.answer_start + self.seq_len - 1

    def _symbols(self, batch: int, g: torch.Generator | None) -> Tensor:
        return torch.randint(0, self.n_symbols, (batch, self.seq_len), generator=g)

    def _answer(self, a: Tensor) -> Tensor:
        raise NotImplementedError

    def _sequences(self, batch: int, g: torch.Generator | None) -> Tensor:
        a = self._symbols(batch, g)  # [B, n]
        bos = torch.full((batch, 1), self.vocab.index(BOS))
        sep = torch.full((batch, 1), self.vocab.index(SEP))
        return torch.cat([bos, a, sep, self._answer(a)], dim=1)  # [B, 2n + 2]

    def sample(
        self, batch: int, generator: torch.Generator | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        """x, y [B, T] long for next-token training, and loss_mask [B, T] bool on answers."""
        seq = self._sequences(batch, generator)  # [B, T + 1]
        x, y = seq[:, :-1], seq[:, 1:]  # [B, T] each
        mask = torch.zeros_like(y, dtype=torch.bool)
        mask[:, self.answer_start - 1 :] = True
        return x, y, mask

    def example(self, generator: torch.Generator | None = None) -> Example:
        """One sample with token strings; without a generator, always the same one."""
        g = generator if generator is not None else torch.Generator().manual_seed(0)
        x, y, mask = (t[0].tolist() for t in self.sample(1, g))
        return Example(x, y, mask, self.decode(x), self.decode(y))

    def decode(self, ids: list[int]) -> list[str]:
        return [self.vocab[i] for i in ids]

    def score(self, logits_or_pred: Tensor, y: Tensor, mask: Tensor) -> tuple[float, float]:
        """(token accuracy, exact-sequence accuracy); see the module function `score`."""
        return score(logits_or_pred, y, mask)

    def config(self, **overrides) -> GPTConfig:
        """A GPTConfig sized for this task (vocabulary, context); other fields from overrides."""
        return GPTConfig(d_vocab=self.vocab_size, n_ctx=self.x_len, **overrides)


@dataclass(frozen=True)
class CopyTask(Task):
    name: ClassVar[str] = "copy"

    def _answer(self, a: Tensor) -> Tensor:
        return a


@dataclass(frozen=True)
class ReverseTask(Task):
    name: ClassVar[str] = "reverse"

    def _answer(self, a: Tensor) -> Tensor:
        return a.flip(1)


@dataclass(frozen=True)
class SortTask(Task):
    name: ClassVar[str] = "sort"

    def _answer(self, a: Tensor) -> Tensor:
        return a.sort(dim=1).values


@dataclass(frozen=True)
class InductionTask(Task):
    """<s> _ _ s s: a random string s repeated, after padding that makes its length vary.

    Each row draws |s| between max(2, seq_len // 2) and seq_len, so the repeat sits at a
    different offset in every row: no fixed "look n back" works, only finding the current
    token earlier and copying what followed it (an induction head). Symbols in s are
    distinct when n_symbols allows, so that lookup is never ambiguous. Graded: the second
    copy from its second token on (its first token cannot be known from the past).
    """

    name: ClassVar[str] = "induction"

    @property
    def vocab(self) -> list[str]:
        return [*_ALPHABET[: self.n_symbols], BOS, PAD]

    @property
    def answer_start(self) -> int:
        raise AttributeError("induction answers start at a different index in every row")

    @property
    def x_len(self) -> int:
        return 2 * self.seq_len

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.seq_len < 2:
            raise ValueError("induction needs seq_len >= 2: the first repeated token is ungraded")

    def _rows(self, batch: int, g: torch.Generator | None) -> tuple[Tensor, Tensor]:
        n = self.seq_len
        lengths = torch.randint(max(2, n // 2), n + 1, (batch,), generator=g)
        if n <= self.n_symbols:
            s = torch.rand(batch, self.n_symbols, generator=g).argsort(1)[:, :n]  # [B, n]
        else:
            s = self._symbols(batch, g)  # [B, n]
        seq = torch.full((batch, 2 * n + 1), self.vocab.index(PAD))
        seq[:, 0] = self.vocab.index(BOS)
        mask = torch.zeros(batch, 2 * n, dtype=torch.bool)
        for b, length in enumerate(lengths.tolist()):
            first = 1 + 2 * (n - length)  # where the first copy starts
            seq[b, first : first + length] = s[b, :length]
            seq[b, first + length :] = s[b, :length]
            mask[b, first + length :] = True  # labels y[t] = seq[t + 1]: second copy from s2
        return seq, mask

    def sample(
        self, batch: int, generator: torch.Generator | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        seq, mask = self._rows(batch, generator)  # [B, 2n + 1], [B, 2n]
        return seq[:, :-1], seq[:, 1:], mask


@dataclass(frozen=True)
class ModAddTask(Task):
    """a + b = c with c = (a + b) mod p, p = n_symbols; every number is one token.
    seq_len does not apply: the sequence is always five tokens, one of them graded."""

    name: ClassVar[str] = "modadd"
    n_symbols: int = 11

    @property
    def vocab(self) -> list[str]:
        return [*(str(i) for i in range(self.n_symbols)), "+", "="]

    @property
    def answer_start(self) -> int:
        return 4

    @property
    def x_len(self) -> int:
        return 4

    def __post_init__(self) -> None:
        if self.n_symbols < 2:
            raise ValueError(f"modulus must be at least 2, got {self.n_symbols}")

    def _sequences(self, batch: int, g: torch.Generator | None) -> Tensor:
        p = self.n_symbols
        ab = torch.randint(0, p, (batch, 2), generator=g)
        plus, eq = torch.full((batch, 1), p), torch.full((batch, 1), p + 1)
        c = ab.sum(1, keepdim=True) % p
        return torch.cat([ab[:, :1], plus, ab[:, 1:], eq, c], dim=1)  # [B, 5]


TASKS: dict[str, type[Task]] = {
    t.name: t for t in (CopyTask, ReverseTask, SortTask, InductionTask, ModAddTask)
}


def make_task(name: str, **params) -> Task:
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose from {sorted(TASKS)}")
    return TASKS[name](**params)


def masked_loss(logits: Tensor, y: Tensor, mask: Tensor) -> Tensor:
    """Mean cross-entropy over the answer positions only."""
    return F.cross_entropy(logits[mask], y[mask])


@torch.no_grad()
def score(logits_or_pred: Tensor, y: Tensor, mask: Tensor) -> tuple[float, float]:
    """(token accuracy over answer positions, fraction of sequences with every answer right).

    Accepts logits [B, T, V] (argmax is taken) or predicted ids [B, T].
    """
    pred = logits_or_pred.argmax(-1) if logits_or_pred.dim() == 3 else logits_or_pred
    right = (pred == y) | ~mask  # [B, T]; ungraded positions count as right
    graded = mask.any(1)
    token_acc = (pred == y)[mask].float().mean().item()
    seq_acc = right[graded].all(1).float().mean().item()
    return token_acc, seq_acc


@dataclass(frozen=True)
class Recipe:
    """Everything needed to reproduce a training run: model, optimizer, batch, steps."""

    config: GPTConfig
    lr: float
    batch: int
    steps: int
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.99)
    warmup: int = 0  # linear warm-up steps, then constant lr
    seed: int = 0

    def optimizer(self, model: torch.nn.Module) -> torch.optim.AdamW:
        # foreach: torch's multi-tensor path, as the labs' optimizers (the same numbers).
        return torch.optim.AdamW(
            model.parameters(),
            lr=self.lr,
            betas=self.betas,
            weight_decay=self.weight_decay,
            foreach=True,
        )

    def lr_at(self, step: int) -> float:
        return self.lr * min(1.0, (step + 1) / self.warmup) if self.warmup else self.lr


# Steps of each task's default run: about 3-7x the step at which seed 0 first passes 95%
# exact-sequence accuracy with the defaults (reverse 40, copy 40, induction 200, sort 220,
# modadd 460 of 1500 at p = 11; measured on 1000 held-out samples every 20-50 steps).
_DEFAULT_STEPS = {"copy": 300, "reverse": 300, "sort": 1000, "induction": 600, "modadd": 1500}


def default_recipe(task: Task) -> Recipe:
    """The defaults the gpt lab starts from: a 2-layer, 4-head, d_model 64 GPT (about 100k
    parameters), AdamW at 3e-3 after a 50-step warm-up, batch 64. Every default run takes
    well under a minute on one CPU thread (reverse: ~300 steps × ~13 ms)."""
    cfg = task.config(n_layers=2, n_heads=4, d_model=64)
    steps = _DEFAULT_STEPS.get(task.name, 1000)
    return Recipe(config=cfg, lr=3e-3, batch=64, steps=steps, warmup=50)


DEFAULT_REVERSE = default_recipe(ReverseTask())
