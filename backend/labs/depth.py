"""Lab `depth`: plain against residual stacks, and what init, activation and norm do to them.

Arms of the trainer (backend/trainer.py), same data, same seed, same batches: `plain` and
`residual`, both with the learner's depth, width, activation, init and norm, and (on by
default) a reference arm `residual · Kaiming · ReLU` (models/deep.py: DeepStack). At depth 30
with sigmoid and N(0, 0.01) the plain arm's early layers get no gradient at all (float32
reads 0: the waterfall's bottom rows go blank) while the reference arm trains.

Each step streams every arm's loss and per-layer gradient norms (the engine's); every
EVAL_EVERY steps the held-out accuracy. A sent frame carries per arm: `act_hist` [layers,
BINS] (each layer's activation histogram on the held-out points, counts / the row's
largest, u8; its range in meta), `weight` (layers.1's weight matrix: with a constant init
its rows stay identical, `row_spread` = 0 exactly), `grad_norm`; per-arm meta: `act_std`,
`row_spread`, `nonzero_weights` (zero init: stays 0), BatchNorm's train vs eval output of
one example; frame meta: the init facts for the chosen fan_in → fan_out (torch.nn.init's
own helpers) and the text's hand BatchNorm against torch's on a real batch.

Stages are listed output first (`out`, `layers.{L-1}` ... `layers.0`): the waterfall then
draws the input layer at the bottom of each arm's band.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Literal

import torch
from torch import nn
from torch.nn import functional as F

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, activation_param, param
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.batchnorm_steps import compare
from models.data import playground as pg
from models.deep import DeepConfig, DeepStack, init_facts
from models.hooks import capture
from models.stages import Stages, grad_stages

EVAL_EVERY = 20
BINS = 40
N_PROBE = 256  # held-out points the histograms are drawn from
NOISE = 1e-3  # "break the symmetry": N(0, 0.001²) on every weight
BN_BATCH = 8  # the BatchNorm comparison's batch: B/(B − 1) = 8/7 is plain to see
SCALE = 2.5  # playground's points (radius 5) / SCALE: inputs of about unit size

INITS = {
    "zeros": ("全零", "Zeros"),
    "constant": ("常数", "Constant"),
    "normal": ("正态 N(0, σ²)", "Normal N(0, σ²)"),
    "xavier": ("Xavier（正态）", "Xavier (normal)"),
    "kaiming_in": ("Kaiming fan_in", "Kaiming fan_in"),
    "kaiming_out": ("Kaiming fan_out", "Kaiming fan_out"),
    "default": ("PyTorch 默认（nn.Linear）", "PyTorch default (nn.Linear)"),
}
TITLES = {
    "plain": {"zh": "普通堆叠", "en": "Plain stack"},
    "residual": {"zh": "残差堆叠", "en": "Residual stack"},
    "reference": {
        "zh": "参照：残差 · Kaiming · ReLU",
        "en": "Reference: residual · Kaiming · ReLU",
    },
}


class Params(LabParams):
    depth: int = param(30, zh="层数", en="Depth (layers)", ge=2, le=50)
    width: int = param(32, zh="每层宽度", en="Width", ge=4, le=64, step=4)
    activation: Literal["relu", "tanh", "sigmoid", "gelu"] = activation_param(
        "sigmoid", ("relu", "tanh", "sigmoid", "gelu")
    )
    init: Literal[
        "zeros", "constant", "normal", "xavier", "kaiming_in", "kaiming_out", "default"
    ] = param("normal", zh="初始化", en="Init", choices=INITS)
    sigma: float = param(
        0.01, zh="σ", en="σ", ge=1e-4, le=2.0, scale="log", show_if={"init": "normal"}
    )
    constant: float = param(
        0.5, zh="常数值", en="Constant", ge=-2.0, le=2.0, show_if={"init": "constant"}
    )
    noise: bool = param(
        False,
        zh="加一点噪声打破对称（N(0, 0.001²)）",
        en="Break the symmetry with tiny noise (N(0, 0.001²))",
    )
    norm: Literal["none", "batchnorm", "layernorm"] = param(
        "none",
        zh="归一化",
        en="Normalisation",
        choices={
            "none": ("无", "None"),
            "batchnorm": ("BatchNorm", "BatchNorm"),
            "layernorm": ("LayerNorm", "LayerNorm"),
        },
    )
    reference: bool = param(
        True,
        zh="加一个参照变体：残差 · Kaiming · ReLU",
        en="Add a reference arm: residual · Kaiming · ReLU",
    )
    dataset: Literal["circle", "xor", "gauss", "spiral"] = param(
        "circle",
        zh="数据",
        en="Data",
        choices={
            "circle": ("圆", "Circle"),
            "xor": ("异或", "XOR"),
            "gauss": ("高斯", "Gaussian"),
            "spiral": ("螺旋", "Spiral"),
        },
    )
    lr: float = param(
        0.03, zh="学习率（SGD 动量 0.9）", en="Learning rate (SGD, momentum 0.9)",
        ge=1e-4, le=1.0, scale="log", live=True,
    )  # fmt: skip
    batch: int = param(64, zh="批大小", en="Batch size", ge=8, le=256, live=True)
    fan_in: int = param(512, zh="初始化数值：fan_in", en="Init facts: fan_in", ge=1, le=8192, live=True)  # fmt: skip
    fan_out: int = param(256, zh="初始化数值：fan_out", en="Init facts: fan_out", ge=1, le=8192, live=True)  # fmt: skip
    steps: int = param(400, zh="训练步数", en="Steps", ge=10, le=5000, live=True)


def configs(p: Params) -> dict[str, DeepConfig]:
    """Params -> the arms' configs: plain and residual differ only in the skip connection."""
    base = DeepConfig(
        d_in=2,
        width=p.width,
        depth=p.depth,
        d_out=2,
        activation=p.activation,
        init=p.init,
        sigma=p.sigma,
        constant=p.constant,
        noise=NOISE if p.noise else 0.0,
        norm=p.norm,
    )
    out = {"plain": base, "residual": base.replace(residual=True)}
    if p.reference:
        out["reference"] = base.replace(
            residual=True, activation="relu", init="kaiming_in", norm="none", noise=0.0
        )
    return out


@lru_cache(maxsize=32)
def _facts(fan_in: int, fan_out: int) -> dict[str, float]:
    return init_facts(fan_in, fan_out)


@register
class DepthLab(TrainingLab):
    id = "depth"
    chapter = 4
    order = 0  # the chapter opens with it (then conv, cnn, optimizers, regularization)
    title = {"zh": "深度、初始化与残差", "en": "Depth, initialisation and residuals"}
    description = {
        "zh": "普通堆叠与残差堆叠在同一数据、同一随机种子上并排训练：每层的梯度范数（对数色标的瀑布图）、"
        "每层激活的直方图、各变体的损失。30 层 sigmoid 加 N(0, 0.01) 初始化，越靠前的层梯度小几个数量级；"
        "残差 + Kaiming + ReLU 能不能照常学习，由本次训练回答。全零初始化时，哪些权重还在学？常数初始化让每一行永远相同，加一点噪声才打破。",
        "en": "Plain and residual stacks trained side by side on the same data and seed: each "
        "layer's gradient norm (a waterfall on a log colour scale), each layer's activation "
        "histogram, the loss of every arm. At depth 30 with sigmoid and N(0, 0.01) the early "
        "layers' gradients are orders of magnitude smaller; does residual + Kaiming + ReLU "
        "train? The run answers. Zero init: which weights still learn? A constant init keeps "
        "every row identical until tiny noise breaks it.",
    }
    Params = Params
    eval_every = EVAL_EVERY
    tensors = ("arm.*.act_hist", "arm.*.weight", "arm.*.grad_norm")

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        split = pg.make(pg.PlaygroundConfig(kind=p.dataset, n=800, noise=0.1), self.seed)
        dev = self.device
        self.x_train = (split.x_train / SCALE).to(dev)
        self.y_train = split.y_train.to(dev)
        self.x_test = (split.x_test / SCALE).to(dev)
        self.y_test = split.y_test.to(dev)
        self.probe = self.x_test[:N_PROBE]
        self.cfgs = configs(p)

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("momentum", lr=self.params.lr, momentum=0.9)
        return [
            ArmSpec(label, lambda c=cfg: DeepStack(c), optim, self.seed, TITLES[label])
            for label, cfg in self.cfgs.items()
        ]

    def stages(self, model: nn.Module) -> Stages:
        return grad_stages(model)[::-1]  # output first: the input layer at the bottom

    def max_steps(self) -> int:
        return self.params.steps

    def batch(self, gen: torch.Generator):
        idx = torch.randint(len(self.x_train), (self.params.batch,), generator=gen)
        idx = idx.to(self.device)
        return self.x_train[idx], self.y_train[idx]

    def loss(self, arm: Arm, batch):
        x, y = batch
        return F.cross_entropy(arm.model(x), y)

    @torch.no_grad()
    def evaluate(self, arm: Arm) -> dict[str, float]:
        model = arm.model
        model.eval()
        try:
            logits = model(self.x_test)
        finally:
            model.train()
        return {
            "test_loss": F.cross_entropy(logits, self.y_test).item(),
            "test_acc": (logits.argmax(1) == self.y_test).float().mean().item(),
        }

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        out = self.evaluate(arm)
        out["loss"] = out["test_loss"] if self.t == 0 else arm.last_loss
        return out

    # -- the picture ------------------------------------------------------------------------
    @torch.no_grad()
    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        model: DeepStack = arm.model
        cfg = model.cfg
        # A copy in train mode: what training sees (BatchNorm's batch statistics) without
        # touching the running statistics of the arm's own model.
        probe_model = copy.deepcopy(model) if cfg.norm == "batchnorm" else model
        names = [f"layers.{i}.hook_post" for i in range(cfg.depth)]
        with capture(probe_model, names) as store:
            probe_model(self.probe)
        acts = torch.stack([store[n] for n in names])  # [L, N, width]
        finite = acts[torch.isfinite(acts)]
        lo, hi = _hist_range(cfg.activation, finite)
        hist = torch.stack(
            [torch.histc(a.nan_to_num(lo).clamp(lo, hi), BINS, lo, hi) for a in acts]
        )
        hist = hist / hist.amax(1, keepdim=True).clamp_min(1)
        layer = model.layers[1 if cfg.depth > 1 else 0].linear.weight  # [width, width]
        spread = (layer - layer[:1]).abs().max().item()
        weights = [lin.weight for lin in model.linears()]
        tensors = [
            TensorOut("act_hist", hist, "u8"),
            TensorOut("weight", layer.detach().float(), "f32"),
        ]
        g = arm.grad_norm_tensor()
        if g is not None:
            tensors.append(g)
        meta: dict[str, Any] = {
            "hist_range": [lo, hi],
            "act_std": [float(a.std()) for a in acts],
            "row_spread": spread,
            "nonzero_weights": int(sum(int(torch.count_nonzero(w)) for w in weights)),
            "weights_total": int(sum(w.numel() for w in weights)),
            "out_bias": model.out.bias.tolist(),
            "depth": cfg.depth,
            "residual": cfg.residual,
            "activation": cfg.activation,
            "init": cfg.init,
            "norm": cfg.norm,
            "alpha": cfg.alpha if cfg.residual else None,
        }
        if cfg.norm == "batchnorm":
            meta["bn_modes"] = self._bn_modes(model)
        return tensors, meta

    @torch.no_grad()
    def _bn_modes(self, model: DeepStack) -> dict[str, float]:
        """One held-out example's P(class 1): in train mode inside two different batches
        (BatchNorm normalises by each batch's statistics), and in eval mode (running
        statistics: the same whatever the batch). A copy: the arm's statistics stay put."""
        m = copy.deepcopy(model).train()
        x = self.x_test
        a = torch.cat([x[:1], x[1:32]])
        b = torch.cat([x[:1], x[32:40]])
        train_a = F.softmax(m(a)[0], -1)[1].item()
        train_b = F.softmax(m(b)[0], -1)[1].item()
        m.eval()
        return {
            "train_a": train_a,
            "train_b": train_b,
            "eval": F.softmax(m(x[:1])[0], -1)[1].item(),
            "batch_a": len(a),
            "batch_b": len(b),
        }

    def frame_meta(self) -> dict[str, Any]:
        p = self.params
        return {
            "init_facts": _facts(p.fan_in, p.fan_out),
            "batchnorm": self._bn_compare(),
            "max_steps": p.steps,
            "noise_std": NOISE,
            "eval_every": EVAL_EVERY,
        }

    @torch.no_grad()
    def _bn_compare(self) -> dict[str, Any]:
        """The text's hand BatchNorm against nn.BatchNorm1d on a real batch: the first
        BN_BATCH training points (x1, x2), one training step of each from a fresh state."""
        c = compare(self.x_train[:BN_BATCH])
        return {
            "batch_size": c.batch_size,
            "mean": c.mean.tolist(),
            "var_biased": c.var_biased.tolist(),
            "var_unbiased": c.var_unbiased.tolist(),
            "hand_running_var": c.hand_running_var.tolist(),
            "torch_running_var": c.torch_running_var.tolist(),
            "max_out_diff": c.max_out_diff,
            "momentum": 0.1,
        }


def _hist_range(activation: str, values: torch.Tensor) -> tuple[float, float]:
    """The histograms' shared range: the activation's own for sigmoid and tanh, else the
    values' (ReLU/GELU outputs and residual sums are unbounded)."""
    if activation == "sigmoid":
        lo, hi = 0.0, 1.0
    elif activation == "tanh":
        lo, hi = -1.0, 1.0
    else:
        lo, hi = 0.0, 1.0
    if values.numel():
        lo = min(lo, float(values.min()))
        hi = max(hi, float(values.max()))
    return lo, hi
