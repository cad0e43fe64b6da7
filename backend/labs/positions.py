"""Lab `positions`: none, sinusoidal, learned, RoPE and ALiBi, trained at L, tested at 4L.

Five arms of one small decoder (models.positions_lab), differing only in `positional`,
train in lockstep on the same batches of the lag task (label at t = the token `lag` places
back, models.data.positions_task) at length `train_len`. Every EVAL_EVERY steps each arm is
scored on a held-out batch at `test_len` (= every arm's n_ctx): accuracy by position (the
extrapolation curve), its mean inside and past train_len, and where it breaks. The RoPE arm
adds the layout check: its weights permuted into the other layout give the same logits to
rounding, the same weights run in the other layout unpermuted do not (loss and the example's
output for all three). The frame's meta carries RoPE's wavelengths at the chosen θ.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import ValidationInfo, field_validator

from backend.labs import register
from backend.labs._masked_task import MaskedTask
from backend.labs.base import LabParams, TensorOut, adamw_lr_param, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, StepsAndWarmup, TrainingLab
from models.data.positions_task import LagTask
from models.positions_lab import (
    SCHEMES,
    PositionsConfig,
    accuracy_by_position,
    bag_accuracy,
    breaks_at,
    convert_rope_layout,
    mixed_rope_layout,
    rope_wavelengths,
    span_mean,
)
from models.transformer import Transformer

EVAL_EVERY = 25
N_EVAL = 64  # held-out sequences at test_len, drawn once per session
EVAL_CHUNK = 16  # sequences per forward pass: a 512-long batch's patterns stay ~70 MB
BETAS = (0.9, 0.99)
TIMELINE_MB = 64.0
LABELS = {
    "none": ("NoPE", "无位置编码（NoPE）", "No positions (NoPE)"),
    "sinusoidal": ("Sinusoidal", "正弦（绝对）", "Sinusoidal (absolute)"),
    "learned": ("Learned", "学习的位置向量（绝对）", "Learned table (absolute)"),
    "rope": ("RoPE", "旋转位置编码（相对）", "Rotary (relative)"),
    "alibi": ("ALiBi", "按距离线性惩罚（相对）", "Linear distance penalty (relative)"),
}
LAYOUTS = {"rotate_half": ("前后两半配对（rotate_half）", "rotate_half (Llama, Qwen)"),
           "interleaved": ("相邻两维配对（interleaved）", "interleaved (RoFormer)")}  # fmt: skip


class Params(LabParams):
    lag: int = param(2, zh="往回数几个：答案是前面第 k 个 token", en="Lag k: the answer is the token k places back", ge=1, le=8)  # fmt: skip
    train_len: int = param(32, zh="训练长度 L", en="Train length L", ge=8, le=64, step=8)
    test_len: int = param(
        128,
        zh="测试长度（= n_ctx）",
        en="Test length (= n_ctx)",
        ge=16,
        le=512,
        step=16,
        validate_default=True,
    )
    rope_theta: float = param(
        10000.0, zh="RoPE 的底数 θ", en="RoPE base θ", ge=10.0, le=1e6, scale="log"
    )
    rope_layout: Literal["rotate_half", "interleaved"] = param(
        "rotate_half", zh="RoPE 的配对方式", en="RoPE layout", choices=LAYOUTS
    )
    causal: bool = param(True, zh="因果掩码", en="Causal mask")
    n_layers: int = param(2, zh="层数", en="Layers", ge=1, le=3)
    n_heads: int = param(4, zh="头数", en="Heads", ge=2, le=8, step=2)
    d_model: int = param(
        64, zh="模型宽度 d_model", en="Width d_model", ge=32, le=128, step=16, validate_default=True
    )
    lr: float = adamw_lr_param()
    batch: int = param(32, zh="批大小", en="Batch size", ge=8, le=128, live=True)
    warmup: int = param(30, zh="预热步数", en="Warm-up steps", ge=0, le=200)
    steps: int = param(300, zh="训练步数", en="Steps", ge=10, le=3000, live=True)

    @field_validator("test_len")
    @classmethod
    def _test_covers_train(cls, test_len: int, info: ValidationInfo) -> int:
        train = info.data.get("train_len")
        if train and test_len < train:
            raise refuse(
                "err.p_test_len",
                "test length {test_len} must be at least the train length {train_len}",
                test_len=test_len,
                train_len=train,
            )
        return test_len

    @field_validator("d_model")
    @classmethod
    def _heads_split_width(cls, d_model: int, info: ValidationInfo) -> int:
        heads = info.data.get("n_heads")
        if heads and (d_model % heads or (d_model // heads) % 2):
            raise refuse(
                "err.p_heads_even",
                "d_model {d_model} must split into {heads} heads of an even size "
                "(RoPE rotates pairs)",
                d_model=d_model,
                heads=heads,
            )
        return d_model


def positions_config(p: Params) -> PositionsConfig:
    return PositionsConfig(
        n_layers=p.n_layers,
        d_model=p.d_model,
        n_heads=p.n_heads,
        train_len=p.train_len,
        test_len=p.test_len,
        rope_theta=p.rope_theta,
        rope_layout=p.rope_layout,
        causal=p.causal,
    )


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else x


@register
class PositionsLab(MaskedTask, StepsAndWarmup, TrainingLab):
    id = "positions"
    chapter = 7
    order = 3
    title = {
        "zh": "位置编码的比较：NoPE、正弦、学习、RoPE、ALiBi",
        "en": "Positions compared: NoPE, sinusoidal, learned, RoPE, ALiBi",
    }
    description = {
        "zh": "同一个小解码器的五种位置编码，在同一任务（答出前面第 k 个 token）、同一随机种子上并排训练："
        "在长度 L 上训练，在 4L 上测试，看每一种在训练没见过的位置上还剩多少准确率。调大 RoPE 的 θ 看看"
        "什么变了；RoPE 的两种配对方式换个排列就是同一个网络，直接混用就坏了。",
        "en": "One small decoder with five kinds of positions, trained side by side on the same "
        "task (name the token k places back) and seed: trained at length L, tested at 4L, so "
        "you see how much accuracy each keeps at positions it never trained on. Raise RoPE's θ "
        "and watch what changes; RoPE's two layouts are one network up to a permutation, and "
        "mixing them breaks it.",
    }
    Params = Params
    eval_every = EVAL_EVERY
    stream_lr = True
    tensors = ("arm.*.acc_by_pos",)

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        self.task = LagTask(lag=p.lag)
        self.pcfg = positions_config(p)
        g = torch.Generator().manual_seed(self.seed + 1_000_003)  # not the training stream
        dev = self.device
        self.eval_long = [t.to(dev) for t in self.task.sample(N_EVAL, p.test_len, g)]
        self.eval_short = [t.to(dev) for t in self.task.sample(N_EVAL, p.train_len, g)]
        self.bag = bag_accuracy(*self.eval_long, self.task.n_symbols)  # order-blind guessing
        self.curves: dict[int, list[float]] = {}
        self.layout_check: dict[str, Any] | None = None
        self.scored_at = 0  # the step the curves were measured at

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("adamw", lr=self.params.lr, betas=BETAS, weight_decay=0.0)
        out = []
        for scheme in SCHEMES:
            cfg = self.pcfg.arm(scheme)
            label, zh, en = LABELS[scheme]
            out.append(
                ArmSpec(label, lambda c=cfg: Transformer(c), optim, self.seed, {"zh": zh, "en": en})
            )
        return out

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """Five arms' weights, grads and AdamW moments; training activations (~16 d-wide
        numbers a position and layer, and scores, pattern and grad at train_len); one eval
        chunk's patterns at test_len; the timeline."""
        pc = positions_config(p)
        weights = sum(pc.arm(s).param_count() for s in SCHEMES) * 4 * 4
        T = p.train_len
        train = 5 * 4 * p.n_layers * p.batch * T * (16 * p.d_model + 3 * p.n_heads * T)
        evals = 4 * EVAL_CHUNK * p.n_heads * p.test_len**2 * 3
        mb = (weights + train + evals) / 2**20 + TIMELINE_MB
        return mb, "batch" if train >= evals else "test_len"

    def sample(self, gen: torch.Generator):
        return self.task.sample(self.params.batch, self.params.train_len, gen)

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        if out is None:
            return {}
        _, y, mask = batch  # a fresh batch, scored before the update: held out
        right = (out.detach().argmax(-1) == y)[mask]
        return {"train_acc": right.float().mean().item()}

    @torch.no_grad()
    def evaluate(self, arm: Arm) -> dict[str, float]:
        model, L = arm.model, self.params.train_len
        model.eval()
        try:
            x, y, mask = self.eval_long
            logits = torch.cat([model(c) for c in x.split(EVAL_CHUNK)])  # [N, T, V]
            acc = accuracy_by_position(logits, y, mask)  # [test_len]
            if model.cfg.positional == "rope":
                self.layout_check = self._layout_check(model)
        finally:
            model.train()
        self.curves[arm.index] = acc.tolist()
        self.scored_at = self.t
        out = {"acc_in": span_mean(acc, 0, L)}
        if self.params.test_len > L:
            out["acc_past"] = span_mean(acc, L, self.params.test_len)
        return out

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        return self.evaluate(arm) if self.t == 0 else {}

    @torch.no_grad()
    def _layout_check(self, model: Transformer) -> dict[str, Any]:
        """The RoPE arm at train_len: as trained, converted to the other layout (q/k
        permuted), and mixed (the same weights in the other layout): the largest logit
        difference, each one's loss and accuracy, and what each writes for one example."""
        x, y, mask = self.eval_short
        other = "interleaved" if model.cfg.rope_layout == "rotate_half" else "rotate_half"
        runs = {
            "trained": model,
            "converted": convert_rope_layout(model, other).eval(),
            "mixed": mixed_rope_layout(model).eval(),
        }
        logits = {k: m(x) for k, m in runs.items()}
        base = logits["trained"]
        out: dict[str, Any] = {
            "layout": model.cfg.rope_layout,
            "other": other,
            "max_abs_diff": float((base - logits["converted"]).abs().max()),
            "mixed_max_abs_diff": float((base - logits["mixed"]).abs().max()),
            "max_abs_logit": float(base.abs().max()),
            "input": self.task.decode(x[0].tolist()),
            "target": self.task.decode(y[0].tolist()),
            "graded": mask[0].tolist(),
        }
        for k, lg in logits.items():
            out[k] = {
                "loss": float(F.cross_entropy(lg[mask], y[mask])),
                "acc": float((lg.argmax(-1) == y)[mask].float().mean()),
                "output": self.task.decode(lg[0].argmax(-1).tolist()),
            }
        return out

    # -- the picture ------------------------------------------------------------------------
    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        curve = self.curves.get(arm.index)
        if curve is None:
            return [], {}
        acc = torch.tensor(curve)
        p, chance = self.params, self.task.chance
        inside = span_mean(acc, 0, p.train_len)
        learned = inside >= (1.0 + chance) / 2  # the bar `breaks_at` measures against
        meta: dict[str, Any] = {
            "scheme": arm.model.cfg.positional,
            "learned": learned,  # inside L: above halfway from chance to 1
            "breaks_at": breaks_at(acc, p.train_len, chance) if learned else None,
            "acc_in": _finite(inside),
            "acc_past": _finite(span_mean(acc, p.train_len, p.test_len)),
            "param_count": arm.model.cfg.param_count(),
        }
        if arm.model.cfg.positional == "rope" and self.layout_check is not None:
            meta["layout_check"] = self.layout_check
        return [TensorOut("acc_by_pos", acc, "f32")], meta

    def frame_meta(self) -> dict[str, Any]:
        p = self.params
        cfg = self.pcfg.arm("rope")
        waves = rope_wavelengths(cfg.d_head, p.rope_theta)
        return {
            "train_len": p.train_len,
            "test_len": p.test_len,
            "lag": p.lag,
            "chance": self.task.chance,
            "bag_accuracy": self.bag,
            "causal": p.causal,
            "rope_theta": p.rope_theta,
            "rope_layout": p.rope_layout,
            "first_graded": p.lag + 1,
            "wavelengths": waves.tolist(),
            "slow_pairs": int((waves > p.train_len).sum()),
            "max_steps": self.max_steps(),
            "eval_every": EVAL_EVERY,
            "scored_at": self.scored_at,
            "n_eval": N_EVAL,
        }

    def lab_state(self) -> dict[str, Any]:
        return {
            "curves": dict(self.curves),
            "layout_check": self.layout_check,
            "scored_at": self.scored_at,
        }

    def load_lab_state(self, state: dict[str, Any]) -> None:
        self.curves = {int(k): v for k, v in state.get("curves", {}).items()}
        self.layout_check = state.get("layout_check")
        self.scored_at = state.get("scored_at", 0)
