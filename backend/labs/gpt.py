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

from backend.labs import register
from backend.labs._gpt_frames import example_picture, generation_frames, parse_input
from backend.labs._gpt_params import TASKS, TEXTS, Params
from backend.labs._gpt_source import TaskSource, TextSource
from backend.labs.base import Frame, Lab, LabError, TensorOut
from models.data.tasks import DEFAULT_REVERSE, make_task
from models.data.texts import load_text
from models.gpt import GPT, GPTConfig, grad_stages, stage_grad_norms

# Steps between held-out evaluations. A task's evaluation (_gpt_source.TASK_EVAL) once took
# four training steps every 10 steps, a third of the lab's time; now under 1%.
# Between them the training batch's exact accuracy (each batch freshly generated, scored
# before the update: data the model has not seen) shows the trend every step, and when it
# passes SOLVED the held-out set is asked at once, so "solved at" stays exact.
EVAL_EVERY = {"task": 200, "text": 25}
CONFIRM_GAP = 10  # steps at least between two confirming evaluations
SAMPLE_EVERY = 100  # steps between the text samples shown in frames
PACE_S, PACE_TOTAL_S = 0.03, 3.0  # generated tokens are paced so a learner can watch them
TIMELINE_MB = 64.0  # a session's recorded frames (Settings.timeline_mb's default)
SOLVED = 0.95  # exact-sequence accuracy that counts as "solved"


@lru_cache(maxsize=8)
def _cached_text(name: str) -> str:
    return load_text(name)


def _source(p: Params, seed: int) -> TaskSource | TextSource:
    if p.data in TASKS:
        return TaskSource(p.data, p.seq_len, seed)
    text = _cached_text(TEXTS[p.data]) if p.data in TEXTS else p.pasted
    return TextSource(text, p.tokenizer, p.vocab_size, p.n_ctx, seed)


@register
class GPTLab(Lab):
    id = "gpt"
    chapter = 6
    order = 3
    title = {"zh": "GPT：从零训练一个小解码器", "en": "GPT: train a tiny decoder live"}
    description = {
        "zh": "按下播放：几秒内一个两层 GPT 学会倒序，每个注意力头的图案当场成形。换成文本，"
        "输入开头看它逐字生成，每一步的候选概率和 KV 缓存一目了然；关掉因果掩码看损失如何作弊。",
        "en": "Press play: in seconds a two-layer GPT learns to reverse a string while every "
        "attention head's pattern forms. Switch to text, type a prompt and watch it write token "
        "by token with each step's candidates and the KV cache; turn the causal mask off and "
        "watch the loss cheat.",
    }
    Params = Params
    pictures_later = True  # step() runs beside_backward(); see Lab.pictures_later
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

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.source = _source(params, seed)
        cfg = GPTConfig(
            n_layers=params.n_layers,
            n_heads=params.n_heads,
            d_model=params.d_model,
            n_ctx=self.source.n_ctx,
            d_vocab=self.source.vocab_size,
            positional=params.positional,
            causal=params.causal,
        )
        torch.manual_seed(seed)
        self.model = GPT(cfg).to(device)
        # AdamW as the task recipes have it (models.data.tasks.Recipe): no weight decay
        self.opt = torch.optim.AdamW(
            self.model.parameters(),
            lr=params.lr,
            betas=DEFAULT_REVERSE.betas,
            weight_decay=DEFAULT_REVERSE.weight_decay,
        )
        self.t = 0
        self.n_infer = 0
        self.solved_at: int | None = None
        self.n_params = self.model.num_params()
        self.stages = grad_stages(self.model)
        self.grad_norm = [0.0] * len(self.stages)
        self.grad_labels = [label for label, _ in self.stages]
        self.last_eval: dict[str, float] = {}
        self.eval_t = -CONFIRM_GAP  # step of the latest held-out evaluation
        self.scalars: dict[str, float] = {}
        self.sample: tuple[int, str] | None = None  # (step, text) of the latest text sample

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
        n_params = 2 * V * d + T * d + L * (12 * d * d + 13 * d)
        weights = n_params * 4 * 4
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

    def update_live(self, params: Params) -> None:
        self.params = params  # lr is set before every step; batch and steps are read there

    # -- training -------------------------------------------------------------------------
    def _lr_at(self, t: int) -> float:
        warm = self.params.warmup
        return self.params.lr * min(1.0, (t + 1) / warm) if warm else self.params.lr

    def step(self, capture: bool, later: bool = False) -> Frame:
        lr = self._lr_at(self.t)
        for group in self.opt.param_groups:
            group["lr"] = lr
        x, y, mask = self.source.batch(self.params.batch)
        x, y = x.to(self.device), y.to(self.device)
        mask = mask.to(self.device) if mask is not None else None
        logits = self.model(x)  # fused attention: no pattern is materialised here
        loss = self.source.loss(logits, y, mask)
        self.opt.zero_grad(set_to_none=True)
        with self.beside_backward():  # the previous step's picture is drawn meanwhile
            loss.backward()
        self.grad_norm = stage_grad_norms(self.stages)
        self.opt.step()
        self.t += 1
        value = loss.item()
        scalars: dict[str, float] = {"loss": value, "lr": lr}
        if self.source.kind == "text":
            scalars["ppl"] = math.exp(min(value, 50.0)) if math.isfinite(value) else value
        scalars.update(self.source.train_scalars(logits.detach(), y, mask))
        for label, g in zip(self.grad_labels, self.grad_norm, strict=True):
            scalars[f"grad_norm.{label}"] = g
        if math.isfinite(value) and self._eval_due(scalars):
            scalars.update(self._evaluate())
        self.scalars = scalars
        return self._frame(scalars, capture, later)

    def _eval_due(self, scalars: dict[str, float]) -> bool:
        if self.t % EVAL_EVERY[self.source.kind] == 0 or self.t == self.max_steps():
            return True
        looks_solved = scalars.get("train_seq_acc", 0.0) > SOLVED  # the fresh batch says so
        return looks_solved and self.solved_at is None and self.t - self.eval_t >= CONFIRM_GAP

    def _evaluate(self) -> dict[str, float]:
        self.eval_t = self.t
        self.model.eval()
        try:
            out = self.source.evaluate(self.model)
        finally:
            self.model.train()
        if out.get("seq_acc", 0.0) > SOLVED and self.solved_at is None:
            self.solved_at = self.t
        self.last_eval = {**out, "step": self.t}
        return out

    def snapshot(self) -> Frame:
        if self.t == 0 or not self.scalars:
            scalars = self._evaluate()
            scalars["loss"] = scalars["val_loss"]  # before any step: the held-out loss
            if self.source.kind == "text":
                scalars["ppl"] = scalars["val_ppl"]
            scalars["lr"] = self._lr_at(0)
            self.scalars = scalars
        else:
            self.scalars = {**self.scalars, "lr": self._lr_at(self.t)}
        return self._frame(self.scalars, True)

    def _frame(self, scalars: dict[str, float], capture: bool, later: bool = False) -> Frame:
        """The step's frame; with `later`, the example's picture is drawn by `frame.finish`
        (what else the frame says is fixed now: the step it belongs to may be left first)."""
        frame = Frame(scalars=scalars)
        if not capture:
            return frame
        # f16 for the bars; the exact norms are in the step's scalars
        grad_norm = TensorOut("grad_norm", self.grad_norm, "f16", self.grad_labels)
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
            "n_params": self.n_params,
            "max_steps": self.max_steps(),
            "eval": self.last_eval,
            "solved_at": self.solved_at,
            "solved_threshold": SOLVED,
            "prompt_example": self.source.prompt_example(),
        }
        if self.source.kind == "text":
            if self.sample is None or self.t - self.sample[0] >= SAMPLE_EVERY:
                self.sample = (self.t, self.source.sample_text(self.model, self.seed))
            meta["sample"] = {"step": self.sample[0], "text": self.sample[1]}

        def finish() -> None:
            tensors, example = example_picture(self.model, self.source)
            frame.tensors = [*tensors, grad_norm]
            frame.meta = {**example, **meta}

        if later:
            frame.finish = finish
        else:
            finish()
        return frame

    # -- generation -----------------------------------------------------------------------
    def infer(self, data: dict[str, Any]) -> Iterator[Frame]:
        inp = parse_input(data)
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

    # -- persistence ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "model": self.model.state_dict(),
            "opt": self.opt.state_dict(),
            "t": self.t,
            "gen": self.source.gen.get_state(),
            "solved_at": self.solved_at,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.t = state["t"]
        self.source.gen.set_state(state["gen"])
        self.solved_at = state["solved_at"]
        self.sample = None
