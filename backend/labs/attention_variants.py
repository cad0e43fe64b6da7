"""Lab `attention-variants`: one toy decoder as MHA, GQA, MQA, CLA and MLA, side by side.

Five arms of the same Transformer (models.transformer), differing only in how attention
keeps its keys and values, train in lockstep on the same batches of a synthetic task from
the same seed (the trainer's arms). Every step streams each arm's loss and the batch's exact
accuracy; every EVAL_EVERY steps the held-out exact-sequence accuracy. A sent frame carries,
per arm: every layer's attention pattern on one fixed example, and a live greedy decode of
that example's answer with the arm's KV cache, whose `cache.nbytes / tokens` is set beside
the config's `kv_bytes_per_token`. The MLA arm adds the absorbed-vs-explicit check on the
example: with RoPE only in the decoupled part the two score computations agree to rounding
(~1e-6); with `mla_rope_in_latent` the keys rebuilt from the latent are rotated, W_uk can no
longer be folded into the query, and they visibly disagree.
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
from models.data.tasks import BOS, make_task, masked_loss, score
from models.hooks import capture
from models.transformer import Transformer, TransformerConfig

EVAL_EVERY = 25
N_EVAL = 256  # held-out samples, drawn once per session
BETAS = (0.9, 0.99)  # the task recipes' AdamW (models.data.tasks.Recipe)
SOLVED = 0.95
TIMELINE_MB = 64.0  # a session's recorded frames (Settings.timeline_mb's default)
LABELS = ("MHA", "GQA", "MQA", "CLA", "MLA")


class Params(LabParams):
    task: Literal["copy", "reverse", "induction"] = param(
        "copy",
        zh="任务",
        en="Task",
        choices={
            "copy": ("复制（copy）", "Copy"),
            "reverse": ("倒序（reverse，更慢）", "Reverse (slower)"),
            "induction": ("归纳头：重复一个串", "Induction: repeat a string"),
        },
    )
    seq_len: int = param(6, zh="任务长度（符号数）", en="Task length (symbols)", ge=2, le=10)
    n_layers: int = param(2, zh="层数", en="Layers", ge=2, le=4)
    n_heads: int = param(4, zh="查询头数", en="Query heads", ge=2, le=8, step=2)
    d_model: int = param(
        64, zh="模型宽度 d_model", en="Width d_model", ge=32, le=128, step=16, validate_default=True
    )
    gqa_kv_heads: int = param(
        2, zh="GQA 的 KV 头数", en="GQA: KV heads", ge=1, le=8, validate_default=True
    )
    cla_share: int = param(
        2,
        zh="CLA：几层共用一份 K/V",
        en="CLA: layers sharing one K/V",
        ge=2,
        le=4,
        validate_default=True,
    )
    d_c: int = param(16, zh="MLA 潜向量维度 d_c", en="MLA latent d_c", ge=4, le=64, step=4)
    d_rope: int = param(
        8, zh="MLA 的 RoPE 维度 d_rope", en="MLA RoPE part d_rope", ge=2, le=16, step=2
    )
    mla_rope_in_latent: bool = param(
        False,
        zh="把 RoPE 放进 MLA 的压缩路径（吸收就不成立了）",
        en="Put RoPE inside MLA's compressed path (breaks the absorption)",
    )
    lr: float = adamw_lr_param()
    batch: int = param(64, zh="批大小", en="Batch size", ge=8, le=256, live=True)
    warmup: int = param(30, zh="预热步数", en="Warm-up steps", ge=0, le=500)
    steps: int = param(200, zh="训练步数", en="Steps", ge=10, le=5000, live=True)

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

    @field_validator("gqa_kv_heads")
    @classmethod
    def _kv_divides_heads(cls, kv: int, info: ValidationInfo) -> int:
        heads = info.data.get("n_heads")
        if heads and (heads % kv or kv >= heads):
            raise refuse(
                "err.p_gqa",
                "GQA needs fewer KV heads than {heads} that divide them, got {kv}",
                heads=heads,
                kv=kv,
            )
        return kv

    @field_validator("cla_share")
    @classmethod
    def _share_fits(cls, share: int, info: ValidationInfo) -> int:
        layers = info.data.get("n_layers")
        if layers and share > layers:
            raise refuse(
                "err.p_cla",
                "CLA shares K/V across at most {layers} layers, got {share}",
                layers=layers,
                share=share,
            )
        return share


def configs(p: Params, vocab: int, n_ctx: int) -> dict[str, TransformerConfig]:
    """The five arms' configs: the same decoder (RoPE for every arm, so MLA's decoupled RoPE
    is the only difference), five ways of keeping K and V."""
    base = TransformerConfig(
        n_layers=p.n_layers,
        d_model=p.d_model,
        n_heads=p.n_heads,
        n_ctx=n_ctx,
        d_vocab=vocab,
        positional="rope",
    )
    return {
        "MHA": base,
        "GQA": base.replace(n_kv_heads=p.gqa_kv_heads),
        "MQA": base.replace(n_kv_heads=1),
        "CLA": base.replace(kv_share=p.cla_share),
        "MLA": base.replace(
            attention="mla", d_c=p.d_c, d_rope=p.d_rope, mla_rope_in_latent=p.mla_rope_in_latent
        ),
    }


TITLES = {
    "MHA": {"zh": "多头：每个头自己的 K/V", "en": "Multi-head: every head its own K/V"},
    "GQA": {"zh": "分组查询：几个头共用一组 K/V", "en": "Grouped-query: heads share K/V in groups"},
    "MQA": {"zh": "多查询：所有头共用一组 K/V", "en": "Multi-query: one K/V for every head"},
    "CLA": {"zh": "跨层共享：相邻几层共用 K/V", "en": "Cross-layer: neighbouring layers share K/V"},
    "MLA": {
        "zh": "多头潜注意力：只缓存一个潜向量",
        "en": "Multi-head latent: only a latent is cached",
    },
}


@register
class AttentionVariantsLab(MaskedTask, StepsAndWarmup, TrainingLab):
    id = "attention-variants"
    chapter = 7
    order = 2
    title = {
        "zh": "注意力的变体：MHA、GQA、MQA、CLA、MLA",
        "en": "Attention variants: MHA, GQA, MQA, CLA, MLA",
    }
    description = {
        "zh": "同一个小解码器的五种注意力，在同一任务、同一随机种子上并排训练：看损失曲线、注意力图，"
        "以及每种变体的 KV 缓存每个 token 占多少字节（配置算出，现场解码实测）。MLA 的吸收形式与显式形式"
        "一致到 1e-6；把 RoPE 放进压缩路径，两者就对不上了。",
        "en": "One small decoder, five kinds of attention, trained side by side on the same task "
        "and seed: their loss curves, attention maps, and each one's KV-cache bytes per token "
        "(from the config, and measured from a live decode). MLA's absorbed and explicit forms "
        "agree to 1e-6; put RoPE inside the compressed path and they stop agreeing.",
    }
    Params = Params
    view_keys = {  # what the class follows: the enlarged map (arm, layer × heads + head)
        "arm": {"type": "int", "min": 0, "max": 4},
        "map": {"type": "int", "min": 0, "max": 31},
    }
    pictures_later = True
    eval_every = EVAL_EVERY
    stream_lr = True
    tensors = ("arm.*.blocks.*.attn.hook_pattern",)

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        self.task = make_task(p.task, seq_len=p.seq_len)
        self.cfgs = configs(p, self.task.vocab_size, self.task.x_len)
        g = torch.Generator().manual_seed(self.seed + 1_000_003)  # not the training stream
        dev = self.device
        self.eval_x, self.eval_y, self.eval_mask = (t.to(dev) for t in self.task.sample(N_EVAL, g))
        ex = self.task.example()
        self.ex_x = torch.tensor([ex.x], device=dev)  # [1, T]
        self.ex_mask = ex.mask
        self.ex_meta = {"tokens": ex.x_tokens, "targets": ex.y_tokens, "graded": ex.mask}
        first = ex.mask.index(True)  # the prompt: up to and with the first graded position
        self.prompt = ex.x[: first + 1]
        self.answer = [ex.y[i] for i, g in enumerate(ex.mask) if g]
        self.solved_at: dict[int, int] = {}

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("adamw", lr=self.params.lr, betas=BETAS, weight_decay=0.0)
        return [
            ArmSpec(label, lambda c=cfg: Transformer(c), optim, self.seed, TITLES[label])
            for label, cfg in self.cfgs.items()
        ]

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """Five arms' weights, grads and AdamW moments, their training activations (~16
        d-wide numbers a position and layer, and scores, pattern and its grad), the timeline."""
        task = make_task(p.task, seq_len=p.seq_len)
        T, V = task.x_len, task.vocab_size
        weights = sum(c.param_count() for c in configs(p, V, T).values()) * 4 * 4
        per_arm = (
            p.n_layers * p.batch * T * (16 * p.d_model + 3 * p.n_heads * T) + 3 * p.batch * T * V
        )
        acts = 5 * 4 * per_arm
        mb = (weights + acts) / 2**20 + TIMELINE_MB
        return mb, "batch" if acts >= weights else "d_model"

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        if out is None:
            return {}
        _, y, mask = batch
        wrong = (out.detach().argmax(-1) != y) & mask  # [B, T]; graded positions only
        return {"train_seq_acc": 1.0 - wrong.any(1).sum().item() / len(y)}

    @torch.no_grad()
    def evaluate(self, arm: Arm) -> dict[str, float]:
        arm.model.eval()
        try:
            logits = arm.model(self.eval_x)
        finally:
            arm.model.train()
        acc, seq_acc = score(logits, self.eval_y, self.eval_mask)
        if seq_acc > SOLVED and arm.index not in self.solved_at:
            self.solved_at[arm.index] = self.t
        return {"acc": acc, "seq_acc": seq_acc}

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        out = self.evaluate(arm) if self.t == 0 else {}
        with torch.no_grad():
            x, y, mask = self.eval_x, self.eval_y, self.eval_mask
            out["loss"] = float(masked_loss(arm.model(x), y, mask))  # before any step: held out
        return out

    # -- the picture ------------------------------------------------------------------------
    @torch.inference_mode()
    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        model, cfg = arm.model, arm.model.cfg
        names = [f"blocks.{i}.attn.hook_pattern" for i in range(cfg.n_layers)]
        with capture(model, names) as store:
            model(self.ex_x)
        tensors = [TensorOut(n, store[n][0], "u8") for n in names]  # each [H, T, T]
        meta: dict[str, Any] = {
            **self._decode(model),
            "config_bytes_per_token": cfg.kv_bytes_per_token(torch.float32),
            "numbers_per_layer": cfg.kv_cache_numbers_per_token_per_layer(),
            "kv_layers": cfg.n_kv_layers,
            "n_layers": cfg.n_layers,
            "n_kv_heads": cfg.n_kv_heads,
            "d_head": cfg.d_head,
            "d_c": cfg.d_c,
            "d_rope": cfg.d_rope,
            "param_count": cfg.param_count(),
            "solved_at": self.solved_at.get(arm.index),
        }
        if cfg.attention == "mla":
            meta["mla_check"] = self._mla_check(model)
        return tensors, meta

    @torch.inference_mode()
    def _mla_check(self, model: Transformer) -> dict[str, float]:
        """Every MLA layer's scores on the example, explicit (K rebuilt from the latent) and
        absorbed (W_uk folded into the query): the largest difference, and the largest score
        for scale. Agree to rounding, unless RoPE sits inside the compressed path."""
        names = [f"blocks.{i}.hook_resid_pre" for i in range(model.cfg.n_layers)]
        with capture(model, names) as store:
            model(self.ex_x)
        diff = scale = 0.0
        for i, block in enumerate(model.blocks):
            if not block.attn.owns_kv:
                continue
            x = block.ln1(store[names[i]])  # the attention's input (pre-norm)
            explicit = block.attn.scores(x)  # [1, H, T, T]
            absorbed = block.attn.scores_absorbed(x)
            diff = max(diff, float((explicit - absorbed).abs().max()))
            scale = max(scale, float(explicit.abs().max()))
        return {"max_abs_diff": diff, "max_abs_score": scale}

    @torch.inference_mode()
    def _decode(self, model: Transformer) -> dict[str, Any]:
        """Greedy-decode the example's answer with the KV cache: what the arm writes, and
        the bytes its cache holds (measured: cache.nbytes / tokens cached)."""
        cache = model.new_cache()
        logits = model(torch.tensor([self.prompt], device=self.device), cache)  # prefill
        out = []
        for _ in range(len(self.answer)):
            tok = int(logits[0, -1].argmax())
            out.append(tok)
            if len(out) == len(self.answer):
                break
            logits = model(torch.tensor([[tok]], device=self.device), cache)  # one new row
        rows = cache.rows
        return {
            "decoded": [self.task.vocab[i] for i in out],
            "decoded_right": out == self.answer,
            "cache_rows": rows,
            "cache_bytes": cache.nbytes,
            "measured_bytes_per_token": cache.nbytes / rows,
        }

    def frame_meta(self) -> dict[str, Any]:
        return {
            **self.ex_meta,
            "task": self.params.task,
            "cla_share": self.params.cla_share,
            "mla_rope_in_latent": self.params.mla_rope_in_latent,
            "answer": [self.task.vocab[i] for i in self.answer],
            "prompt": [self.task.vocab[i] for i in self.prompt],
            "max_steps": self.max_steps(),
            "solved_threshold": SOLVED,
            "bos": BOS,
        }

    def lab_state(self) -> dict[str, Any]:
        return {"solved_at": dict(self.solved_at)}

    def load_lab_state(self, state: dict[str, Any]) -> None:
        self.solved_at = {int(k): v for k, v in state.get("solved_at", {}).items()}
