"""Lab `ffn-moe`: ReLU, GELU, SwiGLU and a mixture of experts as the FFN of one toy decoder.

Four arms of the same char-level Transformer (models.ffn_moe) train in lockstep on the same
batches of a bundled text: only the FFN differs. Every step streams each arm's loss and the
MoE arm's per-expert load (`arm.3.load.<layer>.<e>`: the fraction of routed slots each
expert took), the load share of its two busiest experts and its balancing loss; every
EVAL_EVERY steps the held-out loss and every dense layer's dead-unit fraction. The
balancing loss is a live switch: turn it off and the load collapses onto two experts, on
and it evens out again (tests/backend/test_lab_ffn_moe.py). A sent frame carries which
experts each token of the example goes to, each arm's total and active parameters (from
its config), SiLU's minimum (computed), the FFN ratio of the qwen3-0.6b preset and
DeepSeek-V3's counts from the deepseek-v3 preset.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import ValidationInfo, field_validator

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, adamw_lr_param, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.data.texts import lm_batch, load_text, split
from models.data.tokenizers import CharTokenizer
from models.ffn_moe import (
    ARMS,
    FFNMoEConfig,
    activation_curves,
    dead_fraction,
    moe_layers,
    routes,
    silu_minimum,
    top_share,
)
from models.transformer import Transformer, TransformerConfig, preset

EVAL_EVERY = 25
N_EVAL = 64  # held-out windows, drawn once per session
BETAS = (0.9, 0.99)
TIMELINE_MB = 64.0
LABELS = {"relu": "ReLU", "gelu": "GELU", "swiglu": "SwiGLU", "moe": "MoE"}
TITLES = {
    "relu": {"zh": "ReLU：max(0, x)", "en": "ReLU: max(0, x)"},
    "gelu": {"zh": "GELU（GPT-2）", "en": "GELU (GPT-2)"},
    "swiglu": {"zh": "SwiGLU：silu(门) · 上投影", "en": "SwiGLU: silu(gate) · up"},
    "moe": {"zh": "混合专家（路由 top-k）", "en": "Mixture of experts (top-k routing)"},
}


class Params(LabParams):
    text: Literal["en", "zh"] = param(
        "en",
        zh="文本",
        en="Text",
        choices={"en": ("英文短文", "The English story"), "zh": ("中文短文", "The Chinese story")},
    )
    n_experts: int = param(8, zh="专家数", en="Experts", ge=2, le=16)
    top_k: int = param(
        2, zh="每个 token 去几个专家（top-k）", en="Experts per token (top-k)", ge=1, le=4,
        validate_default=True,
    )  # fmt: skip
    expert_ffn: int = param(
        32, zh="每个专家的宽度", en="Width of each expert", ge=8, le=128, step=8
    )
    shared_expert: bool = param(
        False, zh="共享专家（每个 token 都经过）", en="Shared expert (every token passes it)"
    )
    balance: bool = param(
        True, zh="负载均衡损失", en="Load-balancing loss", live=True
    )  # read by `loss` every step: no restart
    balance_coef: float = param(
        0.1, zh="均衡损失系数", en="Balancing coefficient", ge=1e-3, le=1.0, scale="log"
    )
    lr: float = adamw_lr_param(1e-2)
    batch: int = param(32, zh="批大小", en="Batch size", ge=4, le=128, live=True)
    steps: int = param(400, zh="训练步数", en="Steps", ge=10, le=5000, live=True)

    @field_validator("top_k")
    @classmethod
    def _k_fits(cls, k: int, info: ValidationInfo) -> int:
        n = info.data.get("n_experts")
        if n and k > n:
            raise refuse("err.p_top_k", "top_k {k} must be at most the {n} experts", k=k, n=n)
        return k


def model_config(p: Params, vocab: int) -> FFNMoEConfig:
    return FFNMoEConfig(
        d_vocab=vocab,
        n_experts=p.n_experts,
        top_k=p.top_k,
        expert_ffn=p.expert_ffn,
        shared_expert=p.shared_expert,
        balance_coef=p.balance_coef,
    )


def shown(ch: str) -> str:
    return {"\n": "↵", " ": "␣"}.get(ch, ch)


@register
class FFNMoELab(TrainingLab):
    id = "ffn-moe"
    chapter = 7
    order = 5
    title = {
        "zh": "前馈层与混合专家：ReLU、GELU、SwiGLU、MoE",
        "en": "The FFN and mixture of experts: ReLU, GELU, SwiGLU, MoE",
    }
    description = {
        "zh": "同一个小解码器换四种前馈层，在同一段文本、同一随机种子上并排训练：每层的死单元比例、"
        "SiLU 的取值范围（不是 0 到 1 的门）、FFN 宽度比。混合专家每步把每个 token 送到 top-k 个专家："
        "看每个专家每步的负载。默认开着负载均衡损失，看负载怎样摊在各专家上；"
        "再试 “不做负载均衡”，看负载会不会塌到少数几个专家上。"
        "总参数与激活参数都由配置算出（DeepSeek-V3：6710 亿总参数，370 亿激活）。",
        "en": "One small decoder with four kinds of FFN, trained side by side on the same text "
        "and seed: the dead-unit fraction per layer, SiLU's range (not a 0–1 gate), the FFN "
        "ratio. The mixture of experts sends each token to its top-k experts: watch every "
        "expert's load, step by step. The default run keeps the balancing loss on: see how "
        "the load spreads over the experts; then try “No load balancing” and see whether it "
        "collapses onto a few. Total and active parameters come from the config (DeepSeek-V3: "
        "671B total, 37B active).",
    }
    Params = Params
    eval_every = EVAL_EVERY
    stream_lr = True
    parallel_arms = True  # each hook reads only its arm and the fixed data; no dropout
    tensors = ("arm.3.route.*", "act_curves")

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        text = load_text(p.text)
        self.tok = CharTokenizer(text)
        ids = torch.tensor(self.tok.encode(text))
        self.train_ids, val = split(ids)
        self.cfg = model_config(p, self.tok.vocab_size)
        g = torch.Generator().manual_seed(self.seed + 1_000_003)  # not the training stream
        self.eval_x, self.eval_y = lm_batch(val, N_EVAL, self.cfg.n_ctx, g)
        self.ex_x = val[: self.cfg.n_ctx][None]  # [1, T]: the example whose routes are shown
        self.ex_tokens = [shown(self.tok.id_to_piece(int(i))) for i in self.ex_x[0]]
        self.silu_min = silu_minimum()
        self.curves = activation_curves()

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("adamw", lr=self.params.lr, betas=BETAS, weight_decay=0.0)
        cfgs = {f: self.cfg.transformer(f) for f in ARMS}
        return [
            ArmSpec(LABELS[f], lambda c=cfgs[f]: Transformer(c), optim, self.seed, TITLES[f])
            for f in ARMS
        ]

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """Four arms' weights, grads and AdamW moments, their activations, the timeline."""
        cfg = model_config(p, 1000)
        weights = sum(cfg.transformer(f).param_count() for f in ARMS) * 4 * 4
        T, d = cfg.n_ctx, cfg.d_model
        acts = 4 * 4 * p.batch * T * cfg.n_layers * (16 * d + 3 * cfg.n_heads * T + 3 * cfg.d_ff)
        return (weights + acts) / 2**20 + TIMELINE_MB, "batch"

    def max_steps(self) -> int:
        return self.params.steps

    def batch(self, gen: torch.Generator):
        x, y = lm_batch(self.train_ids, self.params.batch, self.cfg.n_ctx, gen)
        return x.to(self.device), y.to(self.device)

    def loss(self, arm: Arm, batch):
        x, y = batch
        logits = arm.model(x)
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten())
        if self.params.balance and moe_layers(arm.model):
            loss = loss + arm.model.aux_loss()  # Σ layers balance_coef · E·Σ f_e·P_e
        return loss

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        """The MoE arm's load this step: per expert, the top-2 share, the balancing loss."""
        scalars: dict[str, float] = {}
        for i, layer in moe_layers(arm.model):
            for e, f in enumerate(layer.load.tolist()):
                scalars[f"load.{i}.{e}"] = f
            scalars[f"top2.{i}"] = top_share(layer.load, 2)
            scalars[f"balance.{i}"] = float(layer.balance.detach())
        return scalars

    @torch.no_grad()
    def evaluate(self, arm: Arm) -> dict[str, float]:
        model = arm.model
        model.eval()
        try:
            logits = model(self.eval_x.to(self.device))
            out = {"val_loss": float(F.cross_entropy(logits.flatten(0, 1), self.eval_y.flatten().to(logits.device)))}  # fmt: skip
            for i, frac in dead_fraction(model, self.eval_x.to(self.device)).items():
                out[f"dead.{i}"] = frac
        finally:
            model.train()
        return out

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        out = self.evaluate(arm)
        with torch.no_grad():
            arm.model(self.eval_x.to(self.device))  # the load the router gives before a step
        return {**out, **self.arm_scalars(arm, None, None)}

    # -- the picture ------------------------------------------------------------------------
    @torch.no_grad()
    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        cfg = arm.model.cfg
        meta: dict[str, Any] = dict(counted(cfg))
        tensors: list[TensorOut] = []
        if not moe_layers(arm.model):
            return tensors, meta
        arm.model.eval()
        try:
            for i, (chosen, gates, load) in routes(arm.model, self.ex_x.to(self.device)).items():
                tensors.append(TensorOut(f"route.{i}.chosen", chosen.float(), "f32"))  # [T, k]
                tensors.append(TensorOut(f"route.{i}.gates", gates, "f32"))  # [T, k]
                tensors.append(TensorOut(f"route.{i}.load", load, "f32"))  # [E]
        finally:
            arm.model.train()
        meta.update(
            moe_layers=[i for i, _ in moe_layers(arm.model)],
            n_experts=cfg.n_experts,
            top_k=cfg.top_k,
            shared_expert=cfg.shared_expert,
            expert_ffn=cfg.expert_ffn,
            even_top2=min(2, cfg.n_experts) / cfg.n_experts,  # the top-2 share of an even load
        )
        return tensors, meta

    def shared_picture(self) -> list[TensorOut]:
        xs, ys = self.curves
        return [TensorOut("act_xs", xs, "f32"), TensorOut("act_curves", ys, "f32")]  # [3, n]

    def frame_meta(self) -> dict[str, Any]:
        x, y = self.silu_min
        return {
            "tokens": self.ex_tokens,
            "balance": self.params.balance,
            "balance_coef": self.params.balance_coef,
            "max_steps": self.max_steps(),
            "silu_min": {"x": x, "y": y},
            **preset_facts(),
        }


# Counting walks every layer of a config (DeepSeek-V3: 61) and was half of a frame's picture
# when asked every frame; the configs are frozen, so each is counted once.
@functools.cache
def counted(cfg: TransformerConfig) -> tuple[tuple[str, Any], ...]:
    """One arm's facts for its frame: total and active parameters, widths."""
    return (
        ("param_count", cfg.param_count()),
        ("active_param_count", cfg.active_param_count()),
        ("d_ff", cfg.d_ff),
        ("d_model", cfg.d_model),
    )


@functools.cache
def preset_facts() -> dict[str, Any]:
    """Qwen3-0.6B's FFN ratio and DeepSeek-V3's counts, from their presets' configs."""
    qwen, ds = preset("qwen3-0.6b"), preset("deepseek-v3")
    return {
        "qwen3": {"d_ff": qwen.d_ff, "d_model": qwen.d_model, "ratio": qwen.d_ff / qwen.d_model},
        "deepseek_v3": {
            "total": ds.param_count(),
            "active": ds.active_param_count(),
            "n_experts": ds.n_experts,
            "top_k": ds.top_k,
            "shared": int(ds.shared_expert),
            "dense_layers": ds.dense_layers,
            "n_layers": ds.n_layers,
        },
    }
