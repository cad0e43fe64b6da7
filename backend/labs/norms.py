"""Lab `norms`: where the norm goes, which norm, and QK-norm, as arms of one toy decoder.

The arms (models.norm_stats.arm_configs) are one Transformer with one choice changed: the
placement (pre, post, OLMo-2, sandwich), the norm (LayerNorm, RMSNorm) or QK-norm (off, on),
trained in lockstep on the same batches of a synthetic task from the same seed. Each step
streams every arm's loss and the engine's per-layer gradient norms (the dashboard's
waterfall); the snapshot at step 0 streams the gradient at init on one fixed batch, so the
waterfall's first column is the init's. Every EVAL_EVERY steps: held-out exact accuracy,
the largest attention logit (over layers) and the mean attention entropy. A sent frame
carries per arm, per layer: the largest logit, the entropy and QK-norm's cap from the
learned gains as measured at that evaluation (`stats_step`), and the gradient norm at init
and at the last step.

Warm-up is a linear ramp of `warmup` steps (0: none). On the defaults (6 layers, AdamW at
3e-3, no warm-up) pre-norm solves `copy` while post-norm leaves chance late or not within 300
steps, depending on the seed: the page reads when each arm leaves chance off the run
(frontend/js/labs/norms.js), it does not state it.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from pydantic import ValidationInfo, field_validator

from backend.labs import register
from backend.labs._masked_task import MaskedTask
from backend.labs.base import LabParams, TensorOut, adamw_lr_param, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, StepsAndWarmup, TrainingLab
from models.data.tasks import make_task, masked_loss, score
from models.norm_stats import (
    AttentionStats,
    NormArmsConfig,
    arm_configs,
    attention_stats,
    qk_caps,
    uniform_entropy,
)
from models.transformer import Transformer, TransformerConfig

EVAL_EVERY = 20  # an evaluation costs the four arms about 2.7 steps (docs/norms.md)
N_EVAL = 256  # held-out samples for accuracy, drawn once per session
N_STATS = 64  # of them, the ones the attention statistics are measured on
BETAS = (0.9, 0.99)  # the task recipes' AdamW (models.data.tasks.Recipe)
TIMELINE_MB = 64.0
# The text's own model (the QK-norm encoder-decoder the transformer lab counts): a logged
# measurement, shown as a cited fact beside the toy's, never computed here.
CITED = {"max_logit": 222.2, "layer": 4, "stack": "encoder", "qk_norm": True}

PLACEMENTS = {
    "pre": ("前置（GPT-2、Llama）", "Pre-norm (GPT-2, Llama)"),
    "post": ("后置（2017 原版、BERT）", "Post-norm (2017, BERT)"),
    "olmo2": ("OLMo-2：归一化分支的输出", "OLMo-2: norm on the branch output"),
    "sandwich": ("三明治：输入和输出都归一化", "Sandwich: norm in and out"),
}
NORMS = {"layernorm": ("LayerNorm", "LayerNorm"), "rmsnorm": ("RMSNorm", "RMSNorm")}
TITLES = {
    **{k: {"zh": zh, "en": en} for k, (zh, en) in {**PLACEMENTS, **NORMS}.items()},
    "qk_off": {"zh": "不做 QK-norm", "en": "QK-norm off"},
    "qk_on": {"zh": "QK-norm：q、k 每个头先归一化", "en": "QK-norm: q and k normalised per head"},
}
LABELS = {"pre": "pre", "post": "post", "olmo2": "OLMo-2", "sandwich": "sandwich",
          "layernorm": "LayerNorm", "rmsnorm": "RMSNorm", "qk_off": "QK-norm off",
          "qk_on": "QK-norm on"}  # fmt: skip


class Params(LabParams):
    compare: Literal["placement", "norm", "qk_norm"] = param(
        "placement",
        zh="比较什么",
        en="Compare",
        choices={
            "placement": ("归一化放在哪里（4 个变体）", "Where the norm goes (4 arms)"),
            "norm": ("LayerNorm 对 RMSNorm", "LayerNorm vs RMSNorm"),
            "qk_norm": ("QK-norm 关 / 开", "QK-norm off vs on"),
        },
    )
    placement: Literal["pre", "post", "olmo2", "sandwich"] = param(
        "pre",
        zh="归一化的位置",
        en="Norm placement",
        choices=PLACEMENTS,
        show_if={"compare": ["norm", "qk_norm"]},
    )
    norm: Literal["layernorm", "rmsnorm"] = param(
        "layernorm",
        zh="归一化",
        en="Norm",
        choices=NORMS,
        show_if={"compare": ["placement", "qk_norm"]},
    )
    qk_norm: bool = param(
        False,
        zh="QK-norm（q、k 每个头先归一化）",
        en="QK-norm (q and k normalised per head)",
        show_if={"compare": ["placement", "norm"]},
    )
    warmup: int = param(0, zh="预热步数（0 = 不预热）", en="Warm-up steps (0 = none)", ge=0, le=500)
    task: Literal["copy", "reverse"] = param(
        "copy",
        zh="任务",
        en="Task",
        choices={"copy": ("复制（copy）", "Copy"), "reverse": ("倒序（reverse）", "Reverse")},
    )
    seq_len: int = param(6, zh="任务长度（符号数）", en="Task length (symbols)", ge=2, le=8)
    n_layers: int = param(6, zh="层数", en="Layers", ge=2, le=12)
    d_model: int = param(32, zh="模型宽度 d_model", en="Width d_model", ge=16, le=64, step=16)
    n_heads: int = param(4, zh="头数", en="Heads", ge=1, le=8, validate_default=True)
    lr: float = adamw_lr_param(3e-3)
    batch: int = param(32, zh="批大小", en="Batch size", ge=8, le=256, live=True)
    steps: int = param(300, zh="训练步数", en="Steps", ge=10, le=5000, live=True)

    @field_validator("n_heads")
    @classmethod
    def _heads_split_width(cls, heads: int, info: ValidationInfo) -> int:
        d = info.data.get("d_model")
        if d and d % heads:
            raise refuse(
                "err.p_heads_split",
                "d_model {d_model} must split evenly into {heads} heads",
                d_model=d,
                heads=heads,
            )
        return heads


def configs(p: Params, vocab: int, n_ctx: int) -> dict[str, TransformerConfig]:
    """The arms' configs: the learner's decoder with the compared choice set per arm."""
    base = TransformerConfig(
        n_layers=p.n_layers,
        d_model=p.d_model,
        n_heads=p.n_heads,
        n_ctx=n_ctx,
        d_vocab=vocab,
        norm=p.norm,
        norm_placement=p.placement,
        qk_norm=p.qk_norm,
    )
    return arm_configs(NormArmsConfig(compare=p.compare), base)


@register
class NormsLab(MaskedTask, StepsAndWarmup, TrainingLab):
    id = "norms"
    chapter = 7
    order = 4
    title = {
        "zh": "归一化：放在哪里、用哪种、QK-norm",
        "en": "Norms: where, which, and QK-norm",
    }
    description = {
        "zh": "同一个小解码器，只改归一化：后置、前置、OLMo-2、三明治；LayerNorm 对 RMSNorm；QK-norm "
        "关或开。同一任务、同一随机种子并排训练：每层的梯度范数（初始化时和训练中）、每层最大的注意力 "
        "logit、注意力熵。不预热时，后置归一化会不会、什么时候离开随机猜测的水平，取决于随机种子："
        "页面从本次训练读出。",
        "en": "One small decoder with only its norm changed: post-norm, pre-norm, OLMo-2, "
        "sandwich; LayerNorm vs RMSNorm; QK-norm off or on. Trained side by side on the same "
        "task and seed: each layer's gradient norm (at init and while training), each layer's "
        "largest attention logit, the attention entropy. Without warm-up, whether and when "
        "post-norm leaves chance depends on the seed: the page reads it off the run.",
    }
    Params = Params
    eval_every = EVAL_EVERY
    stream_lr = True
    parallel_arms = True  # each hook reads its arm and the fixed data (stats: its own key)
    tensors = ("arm.*.grad_norm", "arm.*.head_entropy")

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        self.task = make_task(p.task, seq_len=p.seq_len)
        self.cfgs = configs(p, self.task.vocab_size, self.task.x_len)
        g = torch.Generator().manual_seed(self.seed + 1_000_003)  # not the training stream
        dev = self.device
        self.eval_x, self.eval_y, self.eval_mask = (t.to(dev) for t in self.task.sample(N_EVAL, g))
        self.init_grad: dict[int, list[float]] = {}
        # Per arm, the attention statistics of the last evaluation and its step: the picture
        # shows them until the next one (a forward with hooks per arm per frame cost more
        # than the steps themselves).
        self.stats: dict[int, tuple[int, AttentionStats, list[float | None]]] = {}

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("adamw", lr=self.params.lr, betas=BETAS, weight_decay=0.0)
        return [
            ArmSpec(LABELS[k], lambda c=cfg: Transformer(c), optim, self.seed, TITLES[k])
            for k, cfg in self.cfgs.items()
        ]

    def built(self) -> None:
        """The gradient at init of every arm, on the held-out batch (fixed: the same for
        every arm and for a fork, which rebuilds the same init before loading)."""
        for arm in self.arm_list:
            self.gradient_at_rest(arm, self._held_out())
            arm.optimizer.zero_grad(set_to_none=True)
            self.init_grad[arm.index] = list(arm.grad_norms)
            arm.grad_norms = []

    def _held_out(self):
        return self.eval_x, self.eval_y, self.eval_mask

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """The arms' weights, grads and AdamW moments, activations (~16 d-wide numbers a
        position and layer, plus scores, pattern and its grad), the timeline."""
        task = make_task(p.task, seq_len=p.seq_len)
        T, V = task.x_len, task.vocab_size
        cfgs = configs(p, V, T)
        weights = sum(c.param_count() for c in cfgs.values()) * 4 * 4
        per_arm = p.n_layers * p.batch * T * (16 * p.d_model + 3 * p.n_heads * T)
        acts = len(cfgs) * 4 * (per_arm + 3 * p.batch * T * V)
        mb = (weights + acts) / 2**20 + TIMELINE_MB
        return mb, "batch" if acts >= weights else "d_model"

    @torch.no_grad()
    def evaluate(self, arm: Arm) -> dict[str, float]:
        model = arm.model
        model.eval()
        try:
            logits = model(self.eval_x)
        finally:
            model.train()
        _, seq_acc = score(logits, self.eval_y, self.eval_mask)
        stats = self._measure(arm)
        return {
            "held_loss": float(masked_loss(logits, self.eval_y, self.eval_mask)),
            "seq_acc": seq_acc,
            "max_logit": max(stats.max_logit),
            "entropy": sum(stats.entropy) / len(stats.entropy),
        }

    def _measure(self, arm: Arm) -> AttentionStats:
        stats = attention_stats(arm.model, self.eval_x[:N_STATS])
        self.stats[arm.index] = (self.t, stats, qk_caps(arm.model))
        return stats

    def load_lab_state(self, state: dict[str, Any]) -> None:
        self.stats = {}  # a rewind or a loaded run: measured again at its first picture

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        if self.t:
            return {}
        out = self.evaluate(arm)
        out["loss"] = out["held_loss"]  # before any step: the held-out loss
        for (label, _), g in zip(arm.stages, self.init_grad[arm.index], strict=True):
            out[f"grad_norm.{label}"] = g  # the waterfall's first column: the init's
        return out

    # -- the picture ------------------------------------------------------------------------
    @torch.no_grad()
    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        model: Transformer = arm.model
        cfg = model.cfg
        at, stats, caps = self.stats.get(arm.index, (-1, None, None))
        if stats is None or not 0 <= self.t - at < EVAL_EVERY:
            self._measure(arm)
            at, stats, caps = self.stats[arm.index]
        tensors = [TensorOut("head_entropy", torch.tensor(stats.head_entropy), "f32")]
        g = arm.grad_norm_tensor()
        if g is not None:
            tensors.append(g)
        stages = [label for label, _ in arm.stages]
        meta: dict[str, Any] = {
            "max_logit": stats.max_logit,
            "entropy": stats.entropy,
            "qk_cap": caps,  # the gains' cap at the step the logits were measured
            "stats_step": at,
            "stages": stages,
            "init_grad": self.init_grad.get(arm.index, []),
            "grad_now": list(arm.grad_norms),
            "placement": cfg.norm_placement,
            "norm": cfg.norm,
            "qk_norm": cfg.qk_norm,
            "param_count": cfg.param_count(),
        }
        return tensors, meta

    def frame_meta(self) -> dict[str, Any]:
        p = self.params
        return {
            "compare": p.compare,
            "warmup": p.warmup,
            "n_layers": p.n_layers,
            "d_head": p.d_model // p.n_heads,
            "uniform_entropy": uniform_entropy(self.task.x_len),
            "max_steps": p.steps,
            "eval_every": EVAL_EVERY,
            "cited": CITED,
        }
