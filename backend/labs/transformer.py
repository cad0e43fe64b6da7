"""Lab `transformer`: a small encoder-decoder learns to translate number words, live.

The family's encoder-decoder (models/transformer/encoder_decoder.py: the text's shape at toy
size, post-norm, one shared table) trains on "three hundred twenty one" ↔ "三百二十一"
(models/data/translation.py; a tenth of the numbers held out) with a label-smoothed loss
(models/label_smoothing.py, either convention) and Adam β (0.9, 0.98), eps 1e-9 under the
warm-up schedule lr = factor · d^−0.5 · min(step^−0.5, step · warmup^−1.5), which the trainer
applies as the lr multiplier and streams as `lr`. A sent frame carries the example's
attention per layer and head: encoder self, decoder masked self, and cross-attention (rows:
the tokens written, columns: the source). The learner types a phrase: greedy decoding and
beam search with GNMT's length penalty translate it, each with its cross-attention.
Beside it: the label-smoothing targets of both conventions, LayerNorm against BatchNorm
on a padded batch (models/padded_norms.py), and the text's 63-million-parameter models
counted from their configs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import Field, ValidationInfo, field_validator

from backend.labs import register
from backend.labs._transformer_facts import lr_curve, static_facts
from backend.labs.base import Frame, LabError, LabInput, LabParams, TensorOut, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.data.translation import (
    BOS,
    EOS,
    INDEX,
    PAD,
    NumberTranslation,
    TranslationConfig,
    english,
)
from models.hooks import capture
from models.label_smoothing import smoothed_ce
from models.transformer.beam import beam_search, greedy, length_penalty
from models.transformer.encoder_decoder import (
    EncoderDecoder,
    noam_lr,
    toy_config,
)

EVAL_EVERY = 25
BETAS, EPS = (0.9, 0.98), 1e-9  # the text's recipe
TIMELINE_MB = 64.0
BANNED = (PAD, BOS)  # never a target: never written
SLACK = 2  # decoder positions beyond the longest target: a wrong output may run on


class Params(LabParams):
    direction: Literal["en-zh", "zh-en"] = param(
        "en-zh",
        zh="翻译方向",
        en="Direction",
        choices={
            "en-zh": ("英文 → 中文", "English → Chinese"),
            "zh-en": ("中文 → 英文", "Chinese → English"),
        },
    )
    max_number: int = param(999, zh="最大的数", en="Largest number", ge=9, le=9999)
    n_layers: int = param(
        2, zh="编码器、解码器各几层", en="Layers (encoder and decoder each)", ge=1, le=4
    )
    n_heads: int = param(4, zh="注意力头数", en="Attention heads", ge=1, le=8)
    d_model: int = param(
        64, zh="模型宽度 d_model", en="Width d_model", ge=16, le=128, step=8, validate_default=True
    )
    norm_placement: Literal["post", "pre"] = param(
        "post",
        zh="LayerNorm 的位置",
        en="LayerNorm placement",
        choices={"post": ("后置（原论文）", "Post-LN (the 2017 paper)"), "pre": ("前置", "Pre-LN")},
    )
    smoothing: float = param(
        0.1, zh="标签平滑 ε", en="Label smoothing ε", ge=0.0, le=0.5, step=0.01
    )
    convention: Literal["uniform", "others"] = param(
        "uniform",
        zh="平滑的约定",
        en="Smoothing convention",
        choices={
            "uniform": ("ε 分给全部 K 类（torch）", "ε over all K classes (torch)"),
            "others": (
                "ε/(K−1) 给其余各类（书中的表）",
                "ε/(K−1) on each other class (the text's table)",
            ),
        },
    )
    warmup: int = param(300, zh="预热步数 warmup", en="Warm-up steps", ge=1, le=4000)
    lr_factor: float = param(
        0.3,
        zh="学习率倍数（乘在公式上）",
        en="Learning-rate factor (times the formula)",
        ge=0.01,
        le=5.0,
        scale="log",
        live=True,
    )
    batch: int = param(32, zh="批大小", en="Batch size", ge=8, le=256, live=True)
    steps: int = param(1500, zh="训练步数", en="Steps", ge=10, le=5000, live=True)

    @field_validator("d_model")
    @classmethod
    def _heads_split_width(cls, d: int, info: ValidationInfo) -> int:
        heads = info.data.get("n_heads")
        if d % 2 or (heads and d % heads):
            raise refuse(
                "err.p_even_heads",
                "d_model {d_model} must be even (sinusoidal positions) and split into {heads} heads",
                d_model=d,
                heads=heads,
            )
        return d


class Translate(LabInput):
    text: str = Field(min_length=1, max_length=80)
    width: int = Field(4, ge=1, le=8)  # beam width
    alpha: float = Field(0.6, ge=0.0, le=2.0)  # length-penalty exponent


@register
class TransformerLab(TrainingLab):
    id = "transformer"
    chapter = 6
    order = 4
    title = {
        "zh": "Transformer：编码器-解码器学翻译",
        "en": "Transformer: an encoder-decoder learns to translate",
    }
    description = {
        "zh": "一个小编码器-解码器现场练习把英文数词译成中文（three hundred twenty one → 三百二十一）：看交叉注意力"
        "在每个头上的样子，输入你自己的短语，比较贪心解码与带长度惩罚的集束搜索；标签平滑的两种约定、预热学习率、"
        "填充批上的 LayerNorm 与 BatchNorm，以及书中 6300 万参数的模型。",
        "en": "A small encoder-decoder trains on number words live (three hundred twenty one → 三百二十一): "
        "watch the cross-attention of every head, type your own phrase and compare greedy decoding "
        "with beam search and its length penalty; label smoothing's two conventions, the warm-up "
        "schedule, LayerNorm vs BatchNorm on a padded batch, and the text's 63-million-parameter models.",
    }
    Params = Params
    Input = Translate
    pictures_later = True
    stream_lr = True
    eval_every = EVAL_EVERY
    tensors = (
        "encoder.blocks.*.attn.hook_pattern",
        "decoder.blocks.*.attn.hook_pattern",
        "decoder.blocks.*.cross_attn.hook_pattern",
        "grad_norm",
    )

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        self.task = NumberTranslation(
            TranslationConfig(direction=p.direction, max_number=p.max_number)
        )
        self.cfg = toy_config(
            self.task.vocab_size,
            self.task.src_len,
            self.task.tgt_len + SLACK,  # room for a longer (wrong) output
            n_layers=p.n_layers,
            d_model=p.d_model,
            n_heads=p.n_heads,
            norm_placement=p.norm_placement,
        )
        self.held = tuple(t.to(self.device) for t in self.task.rows(self.task.held_ids))
        n = int(self.task.held_ids[len(self.task.held_ids) // 2])  # a number never trained on
        self.example = self.task.sources[n]
        self.solved_at: int | None = None
        self.facts = static_facts()

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("adam", lr=self.params.lr_factor, betas=BETAS, eps=EPS)
        return [ArmSpec("transformer", lambda: EncoderDecoder(self.cfg), optim, self.seed)]

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """Weights, grads and Adam moments; activations (~20 d-wide numbers a position and
        layer, and scores); the timeline."""
        task_len = 6 if p.max_number < 1000 else 8
        weights = (
            toy_config(46, task_len, task_len, p.n_layers, p.d_model, p.n_heads).param_count() * 16
        )
        acts = 4 * 3 * p.n_layers * p.batch * task_len * (20 * p.d_model + 3 * p.n_heads * task_len)
        return (weights + acts) / 2**20 + TIMELINE_MB, "batch" if acts >= weights else "d_model"

    def max_steps(self) -> int:
        return self.params.steps

    def schedule(self, t: int) -> float:
        return float(noam_lr(t + 1, self.params.d_model, self.params.warmup))

    def batch(self, gen: torch.Generator):
        return tuple(x.to(self.device) for x in self.task.sample(self.params.batch, gen))

    def loss(self, arm: Arm, batch):
        src, tgt_in, tgt_out = batch
        logits = arm.model(src, tgt_in)  # [B, T, V]
        p = self.params
        return smoothed_ce(logits, tgt_out, p.smoothing, p.convention, ignore_index=PAD), logits

    def _scores(self, logits: torch.Tensor, tgt_out: torch.Tensor) -> dict[str, float]:
        nll = float(F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD))
        right = (logits.argmax(-1) == tgt_out) | (tgt_out == PAD)  # [B, T]
        # Teacher-forced and right at every position <=> greedy decoding writes it exactly.
        return {
            "nll": nll,
            "ppl": math.exp(min(nll, 50.0)),
            "exact": float(right.all(1).float().mean()),
        }

    def arm_scalars(self, arm: Arm, batch, logits) -> dict[str, float]:
        if batch is None:
            return {}
        out = self._scores(logits.detach(), batch[2])
        loss = arm.last_loss
        out["ppl_smoothed"] = math.exp(min(loss, 50.0)) if math.isfinite(loss) else loss
        return out

    @torch.no_grad()
    def evaluate(self, arm: Arm) -> dict[str, float]:
        src, tgt_in, tgt_out = self.held
        arm.model.eval()
        try:
            logits = arm.model(src, tgt_in)
        finally:
            arm.model.train()
        out = self._scores(logits, tgt_out)
        if out["exact"] > 0.95 and self.solved_at is None:
            self.solved_at = self.t
        return {"val_nll": out["nll"], "val_ppl": out["ppl"], "val_exact": out["exact"]}

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        lr = self.params.lr_factor * self.schedule(self.t)
        if self.t and arm.scalars:
            return {**arm.scalars, "lr": lr}
        out = self.evaluate(arm)
        return {**out, "loss": out["val_nll"], "lr": lr}

    # -- pictures ---------------------------------------------------------------------------
    @torch.no_grad()
    def _maps(
        self, model: EncoderDecoder, src_ids: list[int], out_ids: list[int], prefix: str = ""
    ):
        """Teacher-forced pass on (source, what was written): every attention map."""
        L = self.cfg.encoder.n_layers
        names = [f"encoder.blocks.{i}.attn.hook_pattern" for i in range(L)]
        names += [
            f"decoder.blocks.{i}.{k}.hook_pattern" for k in ("attn", "cross_attn") for i in range(L)
        ]
        src = torch.tensor([src_ids], device=self.device)
        tgt = torch.tensor([[BOS, *out_ids[:-1]]] if out_ids else [[BOS]], device=self.device)
        model.eval()
        try:
            with capture(model, names) as store:
                model(src, tgt)
        finally:
            model.train()
        return [TensorOut(prefix + n, store[n][0], "u8") for n in names]  # [H, Tq, Tk] each

    def _translate_meta(self, ids: list[int]) -> dict[str, Any]:
        words = [w for w in self.task.words(ids) if w not in ("<eos>",)]
        return {
            "tokens": self.task.words(ids),
            "text": self.task.join([i for i in ids if i != EOS], self.task.tgt_lang),
            "words": words,
        }

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        model = arm.model
        src_ids = [INDEX[w] for w in self.example]
        src = torch.tensor([src_ids], device=self.device)
        model.eval()
        try:
            out_ids, _ = greedy(model, src, self.cfg.decoder.n_ctx, BOS, EOS, BANNED)
        finally:
            model.train()
        tensors = self._maps(model, src_ids, out_ids)
        norms = arm.grad_norms or [0.0] * len(arm.stages)
        tensors.append(TensorOut("grad_norm", norms, "f16", arm.stage_labels))
        meta = {"example": {"src": self.task.words(src_ids), **self._translate_meta(out_ids)}}
        return tensors, meta

    def frame_meta(self) -> dict[str, Any]:
        p = self.params
        return {
            **self.facts,
            "schedule": {
                **lr_curve(p.d_model, p.warmup, self.max_steps(), p.lr_factor),
                "warmup": p.warmup,
                "d_model": p.d_model,
                "factor": p.lr_factor,
            },
            "direction": p.direction,
            "src_lang": self.task.src_lang,
            "tgt_lang": self.task.tgt_lang,
            "n_layers": self.cfg.encoder.n_layers,
            "n_heads": self.cfg.encoder.n_heads,
            "n_params": self.cfg.param_count(),
            "max_src": self.task.src_len,
            "src_vocab": list(self.task.src_vocab),
            "held_out": len(self.task.held_ids),
            "train_numbers": len(self.task.train_ids),
            "max_number": p.max_number,
            "example_number_words": english(int(self.task.held_ids[0])),
            "smoothing_now": {"eps": p.smoothing, "convention": p.convention},
            "max_steps": self.max_steps(),
            "solved_at": self.solved_at,
        }

    # -- the learner's phrase ---------------------------------------------------------------
    def _source_ids(self, text: str) -> list[int]:
        try:
            ids = self.task.encode(text)
        except KeyError as exc:
            tok = exc.args[0]
            raise LabError(
                f"unknown token {tok!r}",
                field="input.text",
                key="transformer.err_unknown",
                values={"token": tok},
            ) from None
        if not ids:
            raise LabError("nothing to translate", field="input.text", key="transformer.err_empty")
        if len(ids) > self.task.src_len:
            raise LabError(
                f"{len(ids)} tokens; at most {self.task.src_len}",
                field="input.text",
                key="transformer.err_long",
                values={"n": len(ids), "max": self.task.src_len},
            )
        return ids

    def answer(self, inp: Translate) -> Iterator[Frame]:
        ids = self._source_ids(inp.text)
        model = self.model
        src = torch.tensor([ids], device=self.device)
        max_len = self.cfg.decoder.n_ctx
        model.eval()
        try:
            g_ids, g_logps = greedy(model, src, max_len, BOS, EOS, BANNED)
            beams = beam_search(model, src, max_len, BOS, EOS, inp.width, inp.alpha, BANNED)
        finally:
            model.train()
        best = list(beams[0].ids)
        self.example = self.task.words(ids)  # the training pictures follow the learner's phrase
        g_sum = sum(g_logps)
        tensors = self._maps(model, ids, g_ids, "greedy.") + self._maps(model, ids, best, "beam.")
        meta = {
            "src": self.task.words(ids),
            "greedy": {
                **self._translate_meta(g_ids),
                "logprob": g_sum,
                "score": g_sum / length_penalty(len(g_ids), inp.alpha),
                "logps": g_logps,
            },
            "beam": {
                **self._translate_meta(best),
                "logprob": beams[0].logprob,
                "score": beams[0].score,
            },
            "hypotheses": [
                {
                    **self._translate_meta(list(h.ids)),
                    "logprob": h.logprob,
                    "score": h.score,
                    "length": len(h.ids),
                    "penalty": length_penalty(len(h.ids), inp.alpha),
                    "finished": h.finished,
                }
                for h in beams
            ],
            "width": inp.width,
            "alpha": inp.alpha,
            "agree": g_ids == best,
            "step": self.t,
        }
        yield Frame(step=self.t, tensors=tensors, meta=meta)

    # -- persistence --------------------------------------------------------------------------
    def lab_state(self) -> dict[str, Any]:
        return {"solved_at": self.solved_at, "example": list(self.example)}

    def load_lab_state(self, state: dict[str, Any]) -> None:
        self.solved_at = state.get("solved_at")
        if state.get("example"):
            self.example = list(state["example"])
