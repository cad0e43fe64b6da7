"""Lab `gpt`: a tiny decoder trained live, with every head's attention forming as it learns.

Data: a synthetic task (copy, reverse, sort, induction, modular addition) or a text (the
bundled zh/en stories or pasted text, char or BPE tokens). Every step streams the loss (and
perplexity for text), held-out accuracy for tasks every few steps, the learning rate and the
gradient norm of each layer group. Sent frames add, for one fixed example (at most 64
tokens, see `_gpt_source.EXAMPLE_CAP`): every layer's and head's attention pattern (u8
[heads, T, T]), residual-stream norms per layer, the token and position embeddings' norms
and the next-token candidates. `infer` generates from a prompt one token at a time with the
KV cache (see `_gpt_frames`; the params are in `_gpt_params`). Turning `causal` off lets
each position read the token it has to predict: training loss collapses while generation
is garbage (the periodic text sample and the view's previous-run curve make that visible).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import torch

from backend.in_parts import (
    FORWARD_SHARE,
    Parts,
    advance,
    frozen_copy,
    parts_for,
    pending,
    whole,
)
from backend.labs import register
from backend.labs._gpt_cell import CellInput, cell_frame
from backend.labs._gpt_frames import InferInput, example_picture, generation_frames
from backend.labs._gpt_params import TASKS, TEXTS, Params
from backend.labs._gpt_source import TaskSource, TextSource
from backend.labs.base import Frame, LabError, TensorOut, validate_input
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.data.tasks import DEFAULT_REVERSE, make_task
from models.data.texts import load_text
from models.transformer import Transformer, TransformerConfig, preset

# Steps between held-out evaluations. A task's evaluation (_gpt_source.TASK_EVAL) once took
# four training steps every 10 steps, a third of the lab's time; now under 1%.
# Between them the training batch's exact accuracy (each batch freshly generated, scored
# before the update: data the model has not seen) shows the trend every step, and when it
# passes SOLVED the held-out set is asked at once, so "solved at" stays exact.
EVAL_EVERY = {"task": 200, "text": 25}
# The text's evaluation is a forward pass over its held-out windows, a fixed cost: at batch 4
# it is worth ~5 training steps, a fifth of the steps between evaluations every 25. Small
# batches evaluate every few multiples of 25 instead, so the evaluations take at most this
# share of the training (batch 4: every 75 steps; batch ≥ 9: every 25, as before).
EVAL_SHARE = 0.1
CONFIRM_GAP = 10  # steps at least between two confirming evaluations
SAMPLE_EVERY = 100  # steps between the text samples shown in frames
PACE_S, PACE_TOTAL_S = 0.03, 3.0  # generated tokens are paced so a learner can watch them
TIMELINE_MB = 64.0  # a session's recorded frames (Settings.timeline_mb's default)
SOLVED = 0.95  # exact-sequence accuracy that counts as "solved"


@lru_cache(maxsize=8)
def _cached_text(name: str) -> str:
    return load_text(name)


def _config(p: Params, n_ctx: int, vocab: int) -> TransformerConfig:
    """The lab's model: the `gpt-nano` preset with the learner's shape, positions and mask."""
    return preset(
        "gpt-nano",
        n_layers=p.n_layers,
        n_heads=p.n_heads,
        d_model=p.d_model,
        n_ctx=n_ctx,
        d_vocab=vocab,
        positional=p.positional,
        causal=p.causal,
    )


def _source(p: Params, seed: int) -> TaskSource | TextSource:
    if p.data in TASKS:
        return TaskSource(p.data, p.seq_len, seed)
    text = _cached_text(TEXTS[p.data]) if p.data in TEXTS else p.pasted
    return TextSource(text, p.tokenizer, p.vocab_size, p.n_ctx, seed)


@register
class GPTLab(TrainingLab):
    id = "gpt"
    chapter = 6
    order = 3
    title = {"zh": "GPT：从零训练一个小解码器", "en": "GPT: train a tiny decoder live"}
    description = {
        "zh": "按下播放：一个两层 GPT 练习倒序，每个注意力头的图案当场可见。换成文本，"
        "输入开头看它逐字生成，每一步的候选概率和 KV 缓存一目了然；关掉因果掩码，看损失会怎样。",
        "en": "Press play: a two-layer GPT trains to reverse a string while you watch every "
        "attention head's pattern. Switch to text, type a prompt and watch it write token "
        "by token with each step's candidates and the KV cache; turn the causal mask off and "
        "see what the loss does.",
    }
    Params = Params
    view_keys = {  # what the class follows: the layer and head shown, the token hovered
        "layer": {"type": "int", "min": 0, "max": 5, "below": "n_layers"},
        "head": {"type": "int", "min": 0, "max": 7, "below": "n_heads"},
        "hover": {"type": "int", "min": -1, "max": 4096},
    }
    phone_slice = True  # gpt.js follows the selected layer and head on a phone
    # The next-token and residual panels draw one position: a phone is sent only it.
    per_position = {
        "tensors": ("next_probs",),
        "meta": ("next_top",),
        "columns": ("resid_norm", "embed_norm"),  # [rows, T]: the position is the last axis
    }
    Input = InferInput
    pictures_later = True  # the example's picture is drawn beside the next backward pass
    stream_lr = True
    tensors = (
        "blocks.*.attn.hook_pattern",
        "grad_norm",
        "resid_norm",
        "embed_norm",
        "next_probs",
        "target_prob",
        "top_probs",
        "new_token_attention",
    )

    def setup(self) -> None:
        self.source = _source(self.params, self.seed)
        self.n_infer = 0
        self.solved_at: int | None = None
        self.last_eval: dict[str, float] = {}
        self.eval_t = -CONFIRM_GAP  # step of the latest held-out evaluation
        self.sample: tuple[int, str] | None = None  # (step, text) of the latest text sample
        self.sampling: tuple[int, Parts[str]] | None = None  # (step, parts) under way
        self.evaluated_t = -1  # the step an evaluation in parts last finished

    def arms(self) -> list[ArmSpec]:
        p = self.params
        cfg = _config(p, self.source.n_ctx, self.source.vocab_size)
        # AdamW as the task recipes have it (models.data.tasks.Recipe): no weight decay
        optim = OptimConfig(
            "adamw", lr=p.lr, betas=DEFAULT_REVERSE.betas, weight_decay=DEFAULT_REVERSE.weight_decay
        )
        return [ArmSpec("gpt", lambda: Transformer(cfg), optim, self.seed)]

    # -- limits ---------------------------------------------------------------------------
    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """Weights + grads + AdamW moments, training activations, the timeline."""
        d, L, H, B = p.d_model, p.n_layers, p.n_heads, p.batch
        if p.data in TASKS:
            task = make_task(p.data) if p.data == "modadd" else make_task(p.data, seq_len=p.seq_len)
            T, V = task.x_len, task.vocab_size
        else:
            T = p.n_ctx
            chars = len(set(p.pasted)) + 1 if p.data == "text-pasted" else 800
            V = chars if p.tokenizer == "char" else max(p.vocab_size, chars)
        weights = _config(p, T, V).param_count() * 4 * 4
        # Per layer: ~16 d-wide activations a position, and scores, pattern and its grad.
        acts = 4 * (L * B * T * (16 * d + 3 * H * T) + 3 * B * T * V)
        mb = (weights + acts) / 2**20 + TIMELINE_MB
        if acts >= weights:
            field = "batch" if B > 8 else ("n_ctx" if p.data not in TASKS else "n_layers")
        else:
            field = "d_model"
        return mb, field

    def max_steps(self) -> int:
        return self.params.steps or self.source.default_steps

    # -- training (the engine runs the loop: backend/trainer.py) --------------------------
    def schedule(self, t: int) -> float:
        warm = self.params.warmup
        return min(1.0, (t + 1) / warm) if warm else 1.0

    def batch(self, gen: torch.Generator):
        x, y, mask = self.source.batch(self.params.batch, gen)
        mask = mask.to(self.device) if mask is not None else None
        return x.to(self.device), y.to(self.device), mask

    def loss(self, arm: Arm, batch):
        x, y, mask = batch
        logits = arm.model(x)  # fused attention: no pattern is materialised here
        return self.source.loss(logits, y, mask), logits

    def arm_scalars(self, arm: Arm, batch, logits) -> dict[str, float]:
        if batch is None:
            return {}
        scalars: dict[str, float] = {}
        if self.source.kind == "text":
            value = arm.last_loss
            scalars["ppl"] = math.exp(min(value, 50.0)) if math.isfinite(value) else value
        _, y, mask = batch
        scalars.update(self.source.train_scalars(logits.detach(), y, mask))
        return scalars

    def eval_due(self, arm: Arm, scalars: dict[str, float]) -> bool:
        if not math.isfinite(scalars["loss"]):
            return False
        if self.t % self.eval_every_now() == 0 or self.t == self.max_steps():
            return True
        looks_solved = scalars.get("train_seq_acc", 0.0) > SOLVED  # the fresh batch says so
        return looks_solved and self.solved_at is None and self.t - self.eval_t >= CONFIRM_GAP

    def evaluate(self, arm: Arm) -> dict[str, float]:
        self.eval_t = self.t
        model = arm.model
        model.eval()
        try:
            out = self.source.evaluate(model)
        finally:
            model.train()
        if out.get("seq_acc", 0.0) > SOLVED and self.solved_at is None:
            self.solved_at = self.t
        self.last_eval = {**out, "step": self.t}
        return out

    def eval_every_now(self) -> int:
        """Steps between held-out evaluations at the batch size now (batch is live)."""
        every = EVAL_EVERY[self.source.kind]
        if self.source.kind != "text":
            return every
        return every * max(1, math.ceil(self._eval_cost() / EVAL_SHARE / every))

    def _eval_cost(self) -> float:
        """The text's evaluation in training steps: its windows' forward pass."""
        return len(self.source.eval_x) / self.params.batch * FORWARD_SHARE

    def _parts(self) -> int:
        """A small batch's steps are short: the text's evaluation and its sample, in as
        many parts, spread over several."""
        if self.source.kind != "text" or self.t >= self.max_steps():
            return 1  # the last step's evaluation has no later step to finish in
        return parts_for(self._eval_cost())

    def evaluate_in_parts(self, arm: Arm) -> Parts[dict[str, float]] | None:
        parts = self._parts()
        return None if parts == 1 else self._evaluation(arm, parts)

    def _evaluation(self, arm: Arm, parts: int) -> Parts[dict[str, float]]:
        self.eval_t = asked = self.t
        out = yield from self.source.evaluate_parts(frozen_copy(arm.model), parts)
        self.last_eval, self.evaluated_t = {**out, "step": asked}, self.t
        return out

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        lr = self.params.lr * self.schedule(self.t)
        if self.t and arm.scalars:
            return {**arm.scalars, "lr": lr}
        scalars = self.evaluate(arm)
        scalars["loss"] = scalars["val_loss"]  # before any step: the held-out loss
        if self.source.kind == "text":
            scalars["ppl"] = scalars["val_ppl"]
        scalars["lr"] = lr
        return scalars

    # -- the picture ----------------------------------------------------------------------
    def frame_meta(self) -> dict[str, Any]:
        cfg = self.model.cfg
        meta: dict[str, Any] = {
            "kind": self.source.kind,
            "data": self.params.data,
            "causal": cfg.causal,
            "positional": cfg.positional,
            "n_layers": cfg.n_layers,
            "n_heads": cfg.n_heads,
            "n_ctx": cfg.n_ctx,
            "vocab_size": cfg.d_vocab,
            "n_params": cfg.param_count(),
            "max_steps": self.max_steps(),
            "eval": self.last_eval,
            "solved_at": self.solved_at,
            "solved_threshold": SOLVED,
            "prompt_example": self.source.prompt_example(),
        }
        if self.source.kind == "text":
            self._write_sample()
            if self.sample is not None:
                meta["sample"] = {"step": self.sample[0], "text": self.sample[1]}
        return meta

    def _write_sample(self) -> None:
        """A new sample every SAMPLE_EVERY steps, in parts over the frames after it is asked
        (on a copy of the model then): the frames show the last one finished meanwhile."""
        if self.sampling is None and self.sample and self.t - self.sample[0] < SAMPLE_EVERY:
            return
        parts = self._parts()
        if parts > 1 and (self.arm.evaluating or self.evaluated_t == self.t):
            return  # one piece of work in parts a step: an evaluation's goes first
        if self.sampling is None:
            model = self.model if parts == 1 else frozen_copy(self.model)
            self.sampling = (self.t, self.source.sample_parts(model, self.seed, parts))
        asked, work = self.sampling
        text = advance(work)
        if not pending(text):
            self.sample, self.sampling = (asked, text), None

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        """The fixed example's picture; f16 bars of the stage norms (the exact norms are in
        the step's scalars), zeros before the first step."""
        norms = arm.grad_norms or [0.0] * len(arm.stages)
        tensors, example = example_picture(arm.model, self.source)
        return [*tensors, TensorOut("grad_norm", norms, "f16", arm.stage_labels)], example

    # -- generation -----------------------------------------------------------------------
    def infer(self, data: dict[str, Any]) -> Iterator[Frame]:
        """A `cell` asks for one attention cell's arithmetic (_gpt_cell); else generation."""
        if isinstance(data, dict) and "cell" in data:
            return iter([cell_frame(self, validate_input(CellInput, data, self))])
        return super().infer(data)

    def answer(self, inp: InferInput) -> Iterator[Frame]:
        self.n_infer += 1
        pace = min(PACE_S, PACE_TOTAL_S / inp.max_new)
        seed = self.seed * 7919 + self.n_infer
        try:
            for i, (frame, _) in enumerate(generation_frames(self.model, self.source, inp, seed)):
                if i:
                    time.sleep(pace)
                yield frame
        except ValueError as exc:  # e.g. a context the model cannot hold
            raise LabError(str(exc), field="input") from None

    # -- persistence (the engine saves the model, optimizer and generators) ---------------
    def finish_parts(self) -> None:
        super().finish_parts()
        if self.sampling is not None:
            asked, work = self.sampling
            self.sample, self.sampling = (asked, whole(work)), None

    def lab_state(self) -> dict[str, Any]:
        return {
            "solved_at": self.solved_at,
            "eval_t": self.eval_t,
            "last_eval": self.last_eval,
            "sample": self.sample and list(self.sample),
        }

    def load_lab_state(self, state: dict[str, Any]) -> None:
        self.solved_at = state.get("solved_at")
        self.eval_t = state.get("eval_t", -CONFIRM_GAP)
        self.last_eval = dict(state.get("last_eval", {}))
        sample = state.get("sample")
        self.sample, self.sampling = (tuple(sample) if sample else None), None
