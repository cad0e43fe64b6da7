"""Lab `seq2seq`: one GRU encoder-decoder with a single context vector and with Bahdanau
attention, side by side, on string reversal or date normalisation.

Two arms of models.seq2seq.Seq2Seq, differing only in what the decoder reads from the
encoder (its last state, or an attention-weighted sum of every state), train in lockstep on
the same batches, teacher forced. Every EVAL_EVERY updates both arms are scored on a fixed
held-out set grouped by input length, twice: free running (greedy, each step reads the
arm's own previous output) and teacher forced (each step reads the true previous token);
the gap between the two token accuracies is exposure bias. A sent frame carries, per arm,
the free-running decode of one fixed example with, for the attention arm, its alignment
[T_dec, T_enc], and the example's steps under both feeding regimes. The worked example of
teacher forcing (今天天气真好) is built from that string's tokenisation, one id a character.
The learner's own string (`Input`) runs through both arms the same way.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

import torch
from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from backend.labs import register
from backend.labs.base import Frame, LabInput, LabParams, TensorOut, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.data.seq2seq_tasks import EOS, Seq2SeqTask, teacher_forcing_pairs, write_date
from models.hooks import capture
from models.seq2seq import Seq2Seq, Seq2SeqConfig, cut_at_eos, loss_fn

EVAL_EVERY = 25
N_PER_LEN = 32  # reversal: held-out strings of each length
N_DATES = 384  # dates: held-out dates
HELD_OUT_SEED = 1_000_003  # the held-out set's generator: not the training stream
EXAMPLE_SEED = 7  # the reversal example shown: the same string every session
WORKED_EXAMPLE = "今天天气真好"
MAX_INPUT = 24  # the learner's string, in characters
EXTRA_STEPS = 2  # free running may run this far past the longest target before it stops
CLIP = 1.0  # a GRU's occasional gradient spike; the clip coefficient is streamed
ARMS = {
    "context": {
        "attention": False,
        "title": {"zh": "单个上下文向量", "en": "One context vector"},
    },
    "attention": {
        "attention": True,
        "title": {"zh": "Bahdanau 注意力", "en": "Bahdanau attention"},
    },
}


class Params(LabParams):
    task: Literal["reverse", "dates"] = param(
        "reverse",
        zh="任务",
        en="Task",
        choices={
            "reverse": ("倒序一个字符串", "Reverse a string"),
            "dates": ("日期规范化（→ 2021-05-03）", "Normalise a date (→ 2021-05-03)"),
        },
    )
    min_len: int = param(
        3, zh="最短输入", en="Shortest input", ge=1, le=10, show_if={"task": "reverse"}
    )
    max_len: int = param(
        10,
        zh="最长输入",
        en="Longest input",
        ge=4,
        le=20,
        show_if={"task": "reverse"},
        validate_default=True,
    )
    d_hidden: int = param(
        64,
        zh="隐藏状态维度（上下文向量的大小）",
        en="Hidden size (the context vector)",
        ge=16,
        le=128,
        step=16,
    )
    lr: float = param(
        5e-3,
        zh="学习率（Adam）",
        en="Learning rate (Adam)",
        ge=1e-4,
        le=3e-2,
        scale="log",
        live=True,
    )
    batch: int = param(64, zh="批大小", en="Batch size", ge=8, le=256, live=True)
    steps: int = param(2000, zh="训练步数", en="Steps", ge=50, le=20000, live=True)

    @field_validator("max_len")
    @classmethod
    def _longer_than_shortest(cls, max_len: int, info: ValidationInfo) -> int:
        lo = info.data.get("min_len")
        if lo is not None and max_len < lo:
            raise refuse(
                "err.p_len_order",
                "the longest input ({max_len}) must not be shorter than the shortest ({min_len})",
                max_len=max_len,
                min_len=lo,
            )
        return max_len


class Probe(LabInput):
    """The learner's own string, run through both arms (free running)."""

    text: str = Field(min_length=1, max_length=200)

    @field_validator("text")
    @classmethod
    def _in_alphabet(cls, text: str, info: ValidationInfo) -> str:
        text = text.strip()
        if not text:
            raise PydanticCustomError("seq2seq.err_empty", "type a string first")
        if len(text) > MAX_INPUT:
            raise PydanticCustomError(
                "seq2seq.err_long", "at most {max} characters", {"max": MAX_INPUT}
            )
        lab = (info.context or {}).get("lab")
        if lab is not None:
            bad = lab.task.unknown(text)
            if bad:
                raise PydanticCustomError(
                    "seq2seq.err_alphabet",
                    "characters outside the alphabet: {chars}",
                    {"chars": " ".join(bad[:8]), "alphabet": lab.task.chars.strip()},
                )
        return text


@register
class Seq2SeqLab(TrainingLab):
    id = "seq2seq"
    chapter = 5
    order = 3
    title = {
        "zh": "编码器-解码器：上下文向量与注意力",
        "en": "Encoder-decoder: one context vector vs attention",
    }
    description = {
        "zh": "同一个 GRU 编码器-解码器，一个变体只把编码器最后的状态交给解码器，另一个用 Bahdanau 注意力"
        "每一步回看所有位置。倒序字符串或规范化日期：看输入变长时单个向量撑不撑得住，对齐矩阵会不会长成"
        "反对角线，以及教师强制与自由生成之间的差距（曝光偏差）。",
        "en": "One GRU encoder-decoder twice: one arm hands the decoder only the encoder's last "
        "state, the other looks back at every position with Bahdanau attention. Reverse a string "
        "or normalise a date: watch whether the single vector gives way as inputs grow, whether "
        "the alignment forms an anti-diagonal, and the gap between teacher forcing and free running (exposure "
        "bias).",
    }
    Params = Params
    Input = Probe
    eval_every = EVAL_EVERY
    clip_norm = CLIP
    parallel_arms = True  # each arm's loss and evaluation read its model and the fixed data
    tensors = ("arm.*.alignment", "arm.*.acc_by_len")

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        self.task = Seq2SeqTask(p.task, p.min_len, p.max_len)
        g = torch.Generator().manual_seed(self.seed + HELD_OUT_SEED)
        if p.task == "reverse":
            sources = [s for n in self.lengths_wanted() for s in self.task.sources(N_PER_LEN, g, n)]
            example = self.task.sources(1, torch.Generator().manual_seed(EXAMPLE_SEED), p.max_len)[
                0
            ]
        else:
            sources = self.task.sources(N_DATES, g)
            example = write_date(dt.date(2021, 5, 3), "en_dmy")
        self.held = self._to_device(self.task.batch(sources))
        lens = self.held.src_len
        self.lengths = sorted(set(lens.tolist()))
        self.bucket = torch.tensor(
            [self.lengths.index(n) for n in lens.tolist()], device=self.device
        )
        self.example = example
        self.by_len: dict[int, list[list[float]]] = {}
        self.evaluated_at: int | None = None
        self.worked = teacher_forcing_pairs(WORKED_EXAMPLE)

    def lengths_wanted(self) -> range:
        return range(self.params.min_len, self.params.max_len + 1)

    def config(self, attention: bool) -> Seq2SeqConfig:
        return Seq2SeqConfig(
            self.task.vocab_size, d_hidden=self.params.d_hidden, attention=attention
        )

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("adam", lr=self.params.lr)

        def arm(label: str) -> ArmSpec:
            cfg = self.config(ARMS[label]["attention"])
            return ArmSpec(label, lambda: Seq2Seq(cfg), optim, self.seed, ARMS[label]["title"])

        return [arm(label) for label in ARMS]  # same seed, same batches: only attention differs

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """Two arms' activations (a dozen H-wide numbers a sample and decoder step, kept for
        backward) dominate the weights; plus the timeline."""
        T = max(p.max_len, 18) + 2
        acts = 2 * 4 * p.batch * T * (12 * p.d_hidden + 2 * T)
        return acts / 2**20 + 64.0, "batch"

    def max_steps(self) -> int:
        return self.params.steps

    def _to_device(self, b):
        dev = self.device
        return type(b)(
            b.src.to(dev),
            b.src_len.to(dev),
            b.tgt_in.to(dev),
            b.tgt_out.to(dev),
            b.sources,
            b.targets,
        )

    def batch(self, gen: torch.Generator):
        return self._to_device(self.task.sample(self.params.batch, gen))

    def loss(self, arm: Arm, b):
        return loss_fn(arm.model(b.src, b.src_len, b.tgt_in), b.tgt_out)

    # -- held out: free running and teacher forced, by input length -----------------------
    @torch.no_grad()
    def evaluate(self, arm: Arm) -> dict[str, float]:
        h, model = self.held, arm.model
        mask = h.tgt_out != 0  # [N, T_dec]: the target's characters and its EOS
        n_tok = mask.sum(1).float()  # [N]
        with capture(model, "hook_alignment") as store:
            tf_ok = (model(h.src, h.src_len, h.tgt_in).argmax(-1) == h.tgt_out) & mask
        free, _ = model.greedy(h.src, h.src_len, h.tgt_out.shape[1])
        free_ok = (free == h.tgt_out) & mask
        exact = (free_ok.sum(1) == n_tok).float()  # [N]: the whole answer, EOS included
        tok_free = free_ok.sum(1) / n_tok
        tok_tf = tf_ok.sum(1) / n_tok
        per = torch.stack([exact, tok_free, tok_tf])  # [3, N]
        k = len(self.lengths)
        sums = torch.zeros(3, k, device=per.device).index_add_(1, self.bucket, per)
        counts = torch.bincount(self.bucket, minlength=k).clamp(min=1)
        self.by_len[arm.index] = (sums / counts).tolist()  # [3, lengths]
        self.evaluated_at = self.t
        extra = {}
        if model.cfg.attention and self.task.name == "reverse":
            extra["antidiag"] = held_out_antidiagonal(store["hook_alignment"], h.src_len)
        return {
            **extra,
            "seq_acc": float(exact.mean()),
            "tok_acc_free": float(tok_free.mean()),
            "tok_acc_tf": float(tok_tf.mean()),
            "long_seq_acc": float(exact[h.src_len >= self._long_from()].mean()),
        }

    def _long_from(self) -> int:
        """Where "long inputs" start: the top third of the held-out lengths."""
        return self.lengths[(2 * len(self.lengths)) // 3]

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        out = self.evaluate(arm) if self.t == 0 else {}
        with torch.no_grad():
            h = self.held
            out["loss"] = float(loss_fn(arm.model(h.src, h.src_len, h.tgt_in), h.tgt_out))
        return out

    # -- the picture: the example, free running and teacher forced ------------------------
    @torch.no_grad()
    def run_example(
        self, arm: Arm, source: str, align: str = "teacher"
    ) -> tuple[dict[str, Any], torch.Tensor]:
        """One source through an arm: the free-running output (its tokens up to and with
        EOS); each decoder step's input and output under both feeding regimes where the
        right answer is known; and the alignment rows [T_dec, T_enc], either teacher forced
        (a row per target character and EOS: the rows stay put while the output is still
        wrong) or free running (a row per character the arm wrote)."""
        task, model = self.task, arm.model
        b = self._to_device(task.batch([source]))
        steps = task.longest_target + 1 + EXTRA_STEPS
        toks, free_align = model.greedy(b.src, b.src_len, steps)
        toks = toks[0].tolist()
        eos = task.vocab.index(EOS)
        body = cut_at_eos(toks, eos)
        n_rows = min(len(body) + 1, steps)  # with the EOS step when it came
        out_tokens = [task.vocab[i] for i in toks[:n_rows]]
        target = task.target(source)
        info: dict[str, Any] = {
            "source": list(source),
            "output": out_tokens,
            "decoded": task.decode(body),
            "target": target,
            "right": target is not None and task.decode(body) == target and len(body) < len(toks),
        }
        rows = free_align[0, :n_rows]  # [T_out, T_enc]
        info["align_rows"], info["align_mode"] = out_tokens, "free"
        if target is not None:
            with capture(model, "hook_alignment") as store:
                tf_pred = model(b.src, b.src_len, b.tgt_in)[0].argmax(-1).tolist()
            want = b.tgt_out[0].tolist()
            free_in = [b.tgt_in[0, 0].item(), *toks[: len(want) - 1]]
            info["steps"] = [
                [task.vocab[w], task.vocab[i], task.vocab[p], task.vocab[fi], task.vocab[fp]]
                for w, i, p, fi, fp in zip(
                    want, b.tgt_in[0].tolist(), tf_pred, free_in, toks[: len(want)], strict=True
                )
            ]  # [label, teacher-forced input, its prediction, free-running input, its output]
            if align == "teacher":
                rows = store["hook_alignment"][0]  # [T_tgt + 1, T_enc]
                info["align_rows"], info["align_mode"] = [task.vocab[w] for w in want], "teacher"
        if model.cfg.attention and task.name == "reverse":
            info["antidiag"] = antidiagonal(rows, len(source))
        return info, rows

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        info, rows = self.run_example(arm, self.example)
        tensors = []
        if arm.model.cfg.attention:
            tensors.append(TensorOut("alignment", rows, "f32"))
        by_len = self.by_len.get(arm.index)
        if by_len is not None:
            tensors.append(TensorOut("acc_by_len", torch.tensor(by_len), "f32"))  # [3, lengths]
        meta = {
            "example": info,
            "attention": arm.model.cfg.attention,
            "param_count": arm.model.cfg.param_count(),
        }
        return tensors, meta

    def frame_meta(self) -> dict[str, Any]:
        return {
            "task": self.params.task,
            "lengths": self.lengths,
            "long_from": self._long_from(),
            "acc_rows": ["exact", "tok_free", "tok_tf"],
            "worked": self.worked,
            "alphabet": self.task.chars,
            "max_input": MAX_INPUT,
            "eval_every": EVAL_EVERY,
            "held_out": len(self.held.sources),
            "evaluated_at": self.evaluated_at,
            "d_hidden": self.config(False).d_hidden,
            "max_steps": self.max_steps(),
        }

    def lab_state(self) -> dict[str, Any]:
        return {
            "by_len": {str(k): v for k, v in self.by_len.items()},
            "evaluated_at": self.evaluated_at,
        }

    def load_lab_state(self, state: dict[str, Any]) -> None:
        self.by_len = {int(k): v for k, v in state.get("by_len", {}).items()}
        self.evaluated_at = state.get("evaluated_at")

    # -- the learner's string -------------------------------------------------------------
    def answer(self, inp: Probe):
        tensors, arms = [], []
        for arm in self.arm_list:
            info, rows = self.run_example(arm, inp.text, align="free")
            arms.append(info)
            if arm.model.cfg.attention:
                tensors.append(TensorOut(f"{arm.prefix}alignment", rows, "f32"))
        yield Frame(tensors=tensors, meta={"probe": {"text": inp.text, "arms": arms}})


def antidiagonal(rows: torch.Tensor, n_src: int) -> dict[str, int]:
    """How many of the first n_src alignment rows put their largest weight on the mirrored
    source position (row i on column n_src-1-i): reversal's clean anti-diagonal."""
    n = min(len(rows), n_src)
    want = torch.arange(n_src - 1, n_src - 1 - n, -1, device=rows.device)
    hits = int((rows[:n].argmax(-1) == want).sum()) if n else 0
    return {"hits": hits, "rows": n}


def held_out_antidiagonal(align: torch.Tensor, src_len: torch.Tensor) -> float:
    """The share of every held-out reversal's decoder rows (one per character, EOS left
    out) whose largest weight is on the mirrored source position: align [N, T_dec, T_enc]."""
    n, t_dec, _ = align.shape
    i = torch.arange(t_dec, device=align.device)[None]  # [1, T_dec]
    want = src_len[:, None] - 1 - i  # [N, T_dec]
    real = want >= 0  # rows of a character, not EOS or padding
    hits = (align.argmax(-1) == want) & real
    return float(hits.sum() / real.sum())
