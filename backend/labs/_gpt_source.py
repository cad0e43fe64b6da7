"""Where the `gpt` lab's sequences come from: a synthetic task or a text, behind one interface.

Both sources give training batches (x, y, loss mask), a held-out evaluation, the one fixed
example whose attention the view draws, and prompt encoding for `infer`. The maths lives in
`models/` (tasks, texts, tokenizers); this file only adapts it to the lab.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import Tensor

from backend.in_parts import Parts, whole
from backend.labs.base import LabError
from models.data.tasks import BOS, Task, default_recipe, make_task, masked_loss, score
from models.data.texts import lm_batch, split
from models.data.tokenizers import make_tokenizer
from models.generate import generate_steps
from models.gpt import GPT

EXAMPLE_CAP = 64  # the shown example is at most this many tokens: 6×8 maps of 64×64 ≈ 200 KB
# Held-out task samples, drawn once: 256 give exact accuracy to ±1.4 points at 95%, and in
# chunks of 128 (cache-sized: 20% faster than one batch) cost ~14 ms, 1.3 training steps.
TASK_EVAL, EVAL_CHUNK = 256, 128
TEXT_EVAL_WINDOWS = 64  # held-out text windows, evenly spaced over the validation tail
SAMPLE_PROMPT, SAMPLE_NEW = 12, 60  # the periodic text sample: tokens of prompt, new tokens


@lru_cache(maxsize=4)
def _tokenizer(text: str, kind: str, vocab_size: int):
    """Tokenizers are read-only once trained: toggling a model param reuses this one."""
    return make_tokenizer(kind, text, vocab_size)


class TaskSource:
    kind = "task"

    def __init__(self, name: str, seq_len: int, seed: int):
        self.task: Task = make_task(name) if name == "modadd" else make_task(name, seq_len=seq_len)
        self.vocab = self.task.vocab
        self.vocab_size = self.task.vocab_size
        self.n_ctx = self.task.x_len
        self.default_steps = default_recipe(self.task).steps
        # A different stream from training; tiny tasks (modadd) overlap it anyway.
        self.eval_x, self.eval_y, self.eval_mask = self.task.sample(
            TASK_EVAL, torch.Generator().manual_seed(seed + 1_000_003)
        )
        ex = self.task.example()  # always the same sample, whatever the seed
        self.example_x, self.example_y, self.example_mask = ex.x, ex.y, ex.mask
        self._symbol = re.compile(r"\d+|[+=]" if name == "modadd" else re.escape(BOS) + r"|\S")

    def batch(self, size: int, gen: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        return self.task.sample(size, gen)

    @staticmethod
    def loss(logits: Tensor, y: Tensor, mask: Tensor) -> Tensor:
        return masked_loss(logits, y, mask)  # only the answer is graded: the prompt is noise

    @staticmethod
    def train_scalars(logits: Tensor, y: Tensor, mask: Tensor) -> dict[str, float]:
        """Exact accuracy of the batch just trained on, scored before the update: the batch
        was generated fresh, so this is unseen data too (the held-out set confirms it). The
        logits come detached."""
        wrong = (logits.argmax(-1) != y) & mask  # [B, T]; only graded positions count
        # (fewest ops: every one costs ~15 µs in a training step, and this runs in each)
        return {"train_seq_acc": 1.0 - wrong.any(1).sum().item() / len(y)}

    @torch.no_grad()
    def evaluate(self, model: GPT) -> dict[str, float]:
        logits = torch.cat([model(x) for x in self.eval_x.split(EVAL_CHUNK)])  # [N, T, V]
        acc, seq_acc = score(logits, self.eval_y, self.eval_mask)
        val_loss = float(masked_loss(logits, self.eval_y, self.eval_mask))
        return {"acc": acc, "seq_acc": seq_acc, "val_loss": val_loss}

    def piece(self, i: int) -> str:
        return self.vocab[i]

    def decode(self, ids: list[int]) -> str:
        return "".join(self.vocab[i] for i in ids)

    def encode_prompt(self, text: str) -> list[int]:
        symbols = self._symbol.findall(text)
        bad = [s for s in symbols if s not in self.vocab]
        if bad:
            raise LabError(
                f"{bad[0]!r} is not a symbol of this task; use {' '.join(self.vocab)}",
                field="input.prompt",
                key="gpt.err_not_symbol",
                values={"symbol": bad[0], "symbols": " ".join(self.vocab)},
            )
        if BOS in self.vocab and (not symbols or symbols[0] != BOS):
            symbols.insert(0, BOS)
        if not symbols:
            raise LabError("the prompt is empty", field="input.prompt", key="gpt.err_empty")
        return [self.vocab.index(s) for s in symbols]

    def prompt_example(self) -> str:
        """The example's prompt (everything before its first graded answer) as text."""
        first = self.example_mask.index(True) if True in self.example_mask else 0
        return self.decode(self.example_x[: first + 1])


class TextSource:
    kind = "text"

    def __init__(self, text: str, tokenizer: str, vocab_size: int, n_ctx: int, seed: int):
        self.tok = _tokenizer(text, tokenizer, vocab_size if tokenizer == "bpe" else 0)
        self.vocab_size = self.tok.vocab_size
        ids = torch.tensor(self.tok.encode(text), dtype=torch.long)
        if len(ids) < 4:
            raise LabError(
                "the text is too short to learn from", field="pasted", key="gpt.err_too_short"
            )
        self.train_ids, self.val_ids = split(ids, 0.1)
        if len(self.val_ids) < 2:
            self.val_ids = ids[-2:]
        # A short text cannot fill a long window: the context is what it can supply.
        self.n_ctx = max(1, min(n_ctx, len(self.train_ids) - 1))
        self.default_steps = 3000
        n_val = max(1, min(self.n_ctx, len(self.val_ids) - 1))
        span = len(self.val_ids) - n_val  # number of possible window starts
        starts = torch.linspace(0, span - 1, min(TEXT_EVAL_WINDOWS, span)).round().long()
        windows = self.val_ids[starts[:, None] + torch.arange(n_val + 1)]  # [W, n_val + 1]
        self.eval_x, self.eval_y = windows[:, :-1], windows[:, 1:]
        head = self.val_ids if len(self.val_ids) > 2 else self.train_ids
        n_ex = min(EXAMPLE_CAP, self.n_ctx, len(head) - 1)
        self.example_x = head[:n_ex].tolist()
        self.example_y = head[1 : n_ex + 1].tolist()
        self.example_mask = [True] * n_ex
        self.prompt_ids = head[: min(SAMPLE_PROMPT, n_ex)].tolist()

    def batch(self, size: int, gen: torch.Generator) -> tuple[Tensor, Tensor, None]:
        x, y = lm_batch(self.train_ids, size, self.n_ctx, gen)
        return x, y, None

    @staticmethod
    def loss(logits: Tensor, y: Tensor, mask: None) -> Tensor:
        return F.cross_entropy(logits.flatten(0, 1), y.flatten())

    @staticmethod
    def train_scalars(logits: Tensor, y: Tensor, mask: None) -> dict[str, float]:
        return {}

    def evaluate(self, model: GPT) -> dict[str, float]:
        return whole(self.evaluate_parts(model, 1))

    @torch.no_grad()
    def evaluate_parts(self, model: GPT, parts: int) -> Parts[dict[str, float]]:
        """The held-out loss in `parts` (backend/in_parts.py): the windows a share at a time."""
        total, count = 0.0, 0
        shares = zip(self.eval_x.chunk(parts), self.eval_y.chunk(parts), strict=True)
        for i, (x, y) in enumerate(shares):
            if i:
                yield
            logits = model(x)  # [W / parts, T, V]
            total += float(F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum"))
            count += y.numel()
        val = total / count
        return {"val_loss": val, "val_ppl": math.exp(min(val, 50.0))}

    def sample_parts(self, model: GPT, seed: int, parts: int) -> Parts[str]:
        """What the model writes from the example's opening (sampled at T = 0.8), its new
        tokens in `parts` runs."""
        per_part = math.ceil(SAMPLE_NEW / parts)
        new: list[int] = []
        steps = generate_steps(
            model,
            self.prompt_ids,
            SAMPLE_NEW,
            temperature=0.8,
            use_cache=model.cfg.causal,  # a model without the mask cannot use a cache
            generator=torch.Generator().manual_seed(seed),
            attention=False,
        )
        for step in steps:  # each token is computed as the loop asks for it
            new.append(step.token)
            if len(new) % per_part == 0 and len(new) < SAMPLE_NEW:
                yield
        return self.tok.decode(self.prompt_ids + new)

    def piece(self, i: int) -> str:
        return self.tok.id_to_piece(i)

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids)

    def encode_prompt(self, text: str) -> list[int]:
        ids = self.tok.encode(text)
        if not ids:
            raise LabError("the prompt is empty", field="input.prompt", key="gpt.err_empty")
        return ids

    def prompt_example(self) -> str:
        return self.tok.decode(self.prompt_ids)
