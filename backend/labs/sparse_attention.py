"""Lab `sparse-attention`: one toy decoder as dense, window, sinks + window, strided and
block-selection attention, trained side by side on a task whose answers sit at growing
distances (reverse: 1, 3, 5, … tokens back; copy: n + 1 back for every answer).

Every step streams each arm's loss; every EVAL_EVERY steps, on a held-out batch, the loss
of the answers whose source lies past the window (distance ≥ window) and of those within
it, and the attention mass on the first token (<s>, which holds nothing an answer needs)
beside the share uniform attention would give it. A sent frame carries, per arm: every
layer's attention pattern and mask on the example (block selection: the blocks the heads
chose), the reachability after each layer (models.transformer.sparse: which earlier tokens
can influence each position at all), the loss and accuracy by distance, and the first-token
mass per layer and head. The masks, reachability and every number come from the models.
"""

from __future__ import annotations

from typing import Any, Literal

import torch

from backend.labs import register
from backend.labs._masked_task import MaskedTask
from backend.labs.base import LabParams, TensorOut, adamw_lr_param, param
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.data.tasks import make_task
from models.hooks import capture
from models.sparse_attention import (
    SparseArms,
    acc_by_distance,
    arm_configs,
    first_token_mass,
    loss_by_distance,
    merged_masks,
    source_distance,
    window_reach,
)
from models.transformer import Transformer, TransformerConfig
from models.transformer.sparse import reach_by_layer

EVAL_EVERY = 25
N_EVAL = 64  # held-out samples, drawn once; row 0 is the example drawn in the maps
BETAS = (0.9, 0.99)
TIMELINE_MB = 64.0
LABELS = {
    "dense": ("Dense", "稠密：看见之前的全部 token", "Dense: every earlier token"),
    "window": ("Window", "滑动窗口", "Sliding window"),
    "sinks+window": ("Sinks+window", "注意力汇点 + 滑动窗口", "Sinks + sliding window"),
    "strided": ("Strided", "窗口 + 跨步", "Window + strided"),
    "block": ("Block", "按块选择（top-k）", "Block selection (top-k)"),
}


class Params(LabParams):
    task: Literal["reverse", "copy"] = param(
        "reverse",
        zh="任务",
        en="Task",
        choices={
            "reverse": ("倒序：答案在 1、3、5… 个 token 之前", "Reverse: answers 1, 3, 5, … back"),
            "copy": ("复制：每个答案都在 n+1 个 token 之前", "Copy: every answer n + 1 back"),
        },
    )
    positional: Literal["rope", "learned", "none"] = param(
        "rope",
        zh="位置编码",
        en="Positions",
        choices={
            "rope": ("RoPE", "RoPE"),
            "learned": ("学习的位置向量（没有 RoPE）", "Learned (no RoPE)"),
            "none": ("没有位置编码（NoPE）", "None (NoPE)"),
        },
    )
    seq_len: int = param(6, zh="任务长度（符号数）", en="Task length (symbols)", ge=3, le=10)
    window: int = param(4, zh="窗口 w（含自己）", en="Window w (itself included)", ge=1, le=16)
    sinks: int = param(2, zh="汇点 token 个数", en="Sink tokens", ge=1, le=4)
    stride: int = param(4, zh="跨步", en="Stride", ge=2, le=16)
    block_size: int = param(4, zh="块大小", en="Block size", ge=2, le=8)
    top_blocks: int = param(1, zh="每个查询选几块", en="Blocks a query selects", ge=1, le=4)
    n_layers: int = param(2, zh="层数 L", en="Layers L", ge=1, le=4)
    d_model: int = param(64, zh="模型宽度 d_model", en="Width d_model", ge=32, le=128, step=32)
    lr: float = adamw_lr_param()
    batch: int = param(64, zh="批大小", en="Batch size", ge=8, le=256, live=True)
    steps: int = param(400, zh="训练步数", en="Steps", ge=10, le=5000, live=True)


def configs(p: Params, vocab: int, n_ctx: int) -> dict[str, TransformerConfig]:
    base = TransformerConfig(
        n_layers=p.n_layers,
        d_model=p.d_model,
        n_heads=4,
        n_ctx=n_ctx,
        d_vocab=vocab,
        positional=p.positional,
    )
    arms = SparseArms(p.window, p.sinks, p.stride, p.block_size, p.top_blocks)
    return arm_configs(base, arms)


@register
class SparseAttentionLab(MaskedTask, TrainingLab):
    id = "sparse-attention"
    chapter = 7
    order = 6
    title = {
        "zh": "稀疏注意力：窗口、注意力汇点、跨步、按块选择",
        "en": "Sparse attention: windows, sinks, strides, blocks",
    }
    description = {
        "zh": "同一个小解码器用五种注意力掩码并排训练：稠密、滑动窗口、注意力汇点 + 窗口、跨步、按块选择。"
        "画出每种掩码、L 层之后哪些 token 还能影响位置 t（窗口 w 每层多看 w−1 个），以及答案在窗口之外时的损失。"
        "再量一量第一个 token 上的注意力：softmax 总得把权重放在某处。",
        "en": "One small decoder, five attention masks, trained side by side: dense, sliding "
        "window, sinks + window, strided and block selection. See each mask, which earlier "
        "tokens can still influence position t after L layers (a window w reaches w − 1 more "
        "a layer), and the loss of answers past the window. And measure the attention on the "
        "first token: softmax must put its mass somewhere.",
    }
    Params = Params
    eval_every = EVAL_EVERY
    parallel_arms = True  # each arm's loss and evaluation read its model and the fixed data
    pictures_later = True  # the picture reads only the weights and the held-out batch
    stream_lr = True
    tensors = (
        "arm.*.blocks.*.attn.hook_pattern",
        "arm.*.masks",
        "arm.*.reach",
    )

    def setup(self) -> None:
        p = self.params
        self.task = make_task(p.task, seq_len=p.seq_len)
        self.cfgs = configs(p, self.task.vocab_size, self.task.x_len)
        self.distance = source_distance(p.task, p.seq_len)
        g = torch.Generator().manual_seed(self.seed + 1_000_003)  # not the training stream
        x, y, mask = self.task.sample(N_EVAL, g)
        self.eval_x, self.eval_y, self.eval_mask = x.to(self.device), y.to(self.device), mask
        self.far = torch.tensor([d >= p.window for d in self.distance], device=self.device)
        self.near = torch.tensor([0 < d < p.window for d in self.distance], device=self.device)

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("adamw", lr=self.params.lr, betas=BETAS, weight_decay=0.0)
        out = []
        for kind, cfg in self.cfgs.items():
            label, zh, en = LABELS[kind]
            out.append(
                ArmSpec(label, lambda c=cfg: Transformer(c), optim, self.seed, {"zh": zh, "en": en})
            )
        return out

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        task = make_task(p.task, seq_len=p.seq_len)
        T, V = task.x_len, task.vocab_size
        weights = sum(c.param_count() for c in configs(p, V, T).values()) * 4 * 4
        acts = 5 * 4 * (p.n_layers * p.batch * T * (16 * p.d_model + 16 * T) + 3 * p.batch * T * V)
        mb = (weights + acts) / 2**20 + TIMELINE_MB
        return mb, "batch" if acts >= weights else "d_model"

    def max_steps(self) -> int:
        return self.params.steps

    # -- measured on the held-out batch -----------------------------------------------------
    @torch.no_grad()
    def measure(self, arm: Arm) -> dict[str, Any]:
        """One held-out forward with the patterns and masks captured: everything shown."""
        model, cfg = arm.model, arm.model.cfg
        L = cfg.n_layers
        pats = [f"blocks.{i}.attn.hook_pattern" for i in range(L)]
        masks = [f"blocks.{i}.attn.hook_mask" for i in range(L)] if cfg.sparse != "dense" else []
        model.eval()
        try:
            with capture(model, pats + masks) as store:
                logits = model(self.eval_x)  # [N, T, V]
        finally:
            model.train()
        B, T = self.eval_x.shape
        layer_masks = merged_masks(cfg, store, B, T)  # [B, T, T] each
        ce = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), self.eval_y, reduction="none"
        )  # [N, T]
        sink = first_token_mass([store[n] for n in pats], layer_masks)
        return {
            "logits": logits,
            "patterns": [store[n][0] for n in pats],  # the example: [H, T, T] each
            "masks": torch.stack([m[0] for m in layer_masks]),  # [L, T, T]
            "reach": torch.stack([r[0] for r in reach_by_layer(layer_masks)]),  # [L, T, T]
            "loss_far": float(ce[:, self.far].mean()) if self.far.any() else None,
            "loss_near": float(ce[:, self.near].mean()) if self.near.any() else None,
            "sink": sink,
        }

    def evaluate(self, arm: Arm) -> dict[str, float]:
        m = self.measure(arm)
        last = m["sink"]["per_head"][-1]
        out = {
            "first_mass": sum(last) / len(last),  # last layer, mean over heads
            "first_uniform": m["sink"]["uniform"][-1],
        }
        for k in ("loss_far", "loss_near"):
            if m[k] is not None:
                out[k] = m[k]
        return out

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        return self.evaluate(arm) if self.t == 0 else {}

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        m = self.measure(arm)
        cfg = arm.model.cfg
        tensors = [
            TensorOut(f"blocks.{i}.attn.hook_pattern", p, "u8") for i, p in enumerate(m["patterns"])
        ]
        tensors.append(TensorOut("masks", m["masks"].to(torch.uint8), "u8"))  # [L, T, T]
        tensors.append(TensorOut("reach", m["reach"].to(torch.uint8), "u8"))  # [L, T, T]
        y = self.eval_y
        meta = {
            "loss_by_distance": loss_by_distance(m["logits"], y, self.distance),
            "acc_by_distance": acc_by_distance(m["logits"], y, self.distance),
            "first_mass": m["sink"]["per_head"],  # [L][H]
            "first_uniform": m["sink"]["uniform"],  # [L]
            "sparse": cfg.sparse,
            "window": cfg.window,
            "stride": cfg.stride,
            "sinks": cfg.sinks,
            "block_size": cfg.block_size,
            "top_blocks": cfg.top_blocks,
            "n_layers": cfg.n_layers,
            "n_heads": cfg.n_heads,
        }
        return tensors, meta

    def frame_meta(self) -> dict[str, Any]:
        p = self.params
        x = self.eval_x[0].tolist()
        return {
            "tokens": self.task.decode(x),
            "targets": self.task.decode(self.eval_y[0].tolist()),
            "distance": self.distance,
            "window": p.window,
            "reach_window": window_reach(p.window, p.n_layers, len(x)),  # L·(w−1), measured
            "n_layers": p.n_layers,
            "task": p.task,
            "positional": p.positional,
            "max_steps": self.max_steps(),
        }
