"""Lab `optimizers`: SGD, momentum, RMSProp, Adam and Adam without bias correction race.

Five arms of the trainer (backend/trainer.py), one per optimizer, step in lockstep from the
same start: on the elongated valley or Rosenbrock (models/optim_surfaces.py: the 2-D point
is the only parameter) or on a small MLP's real cross-entropy over a playground data set
(models/mlp.py, models/data/playground.py; every arm starts from the same weights). Each arm
has its own learning rate (a fair race tunes each optimizer) and its own β's: momentum's β1,
RMSProp's β2 (torch's `alpha`), Adam's β1 and β2. `lr_mode` picks the learning rates: tuned
for the surface, torch's own defaults (read from torch), or the learner's.

Scalars per arm (`arm.<i>.`): `loss` (f at the point after the step; the MLP: the whole
training set's loss after the step), `x`, `y` (the point: the view draws the paths from
them), `step` (the largest coordinate change |Δθ|∞ of this update), `step_lr` (step / lr:
≈ 1 on Adam's first step, ≈ 3.16 without bias correction), `lr`, `grad_norm.<stage>`.
Frames carry the contour picture `surface` (log10(f + 0.01) on a grid, u8) or, for the MLP,
the training points `points` and each arm's `arm.<i>.boundary` (P(class 1) on a grid).
Each arm's frame meta has its optimizer's numbers and its first step.

Noise: on a surface, a noisy gradient ∇f + ξ, ξ ~ N(0, σ²) drawn once a step for every arm;
on the MLP, mini-batches of `batch_size` instead of the whole training split.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Literal

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, dataset_param, param
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models import optim_surfaces as surf
from models.data import playground as pg
from models.mlp import MLP, MLPConfig

GRID = 64  # contour picture, per axis
BOUNDARY_GRID = 32  # MLP boundary picture, per axis
LOG_OFFSET = 0.01  # the contour shows log10(f + LOG_OFFSET): both minima are f = 0
HIDDEN = (8, 8)

OPTIMIZERS = ("sgd", "momentum", "rmsprop", "adam", "adam_no_bias")
LABELS = {
    "sgd": "SGD",
    "momentum": "Momentum",
    "rmsprop": "RMSProp",
    "adam": "Adam",
    "adam_no_bias": "Adam (no bias corr.)",
}
TITLES = {
    "sgd": {"zh": "SGD", "en": "SGD"},
    "momentum": {"zh": "动量", "en": "Momentum"},
    "rmsprop": {"zh": "RMSProp", "en": "RMSProp"},
    "adam": {"zh": "Adam", "en": "Adam"},
    "adam_no_bias": {"zh": "Adam（无偏差修正）", "en": "Adam without bias correction"},
}
# Learning rates each optimizer does well with on each surface (measured: every arm gets
# near the minimum within about 1,000 steps; SGD sits just under the valley's 2/λmax = 0.1,
# where it zigzags across the narrow direction).
TUNED: dict[str, dict[str, float]] = {
    "valley": {"sgd": 0.09, "momentum": 0.02, "rmsprop": 0.03, "adam": 0.1, "adam_no_bias": 0.1},
    "rosenbrock": {
        "sgd": 0.002,
        "momentum": 0.002,
        "rmsprop": 0.003,
        "adam": 0.1,
        "adam_no_bias": 0.1,
    },
    "mlp": {"sgd": 0.3, "momentum": 0.03, "rmsprop": 0.003, "adam": 0.01, "adam_no_bias": 0.01},
}
TORCH_CLASSES = {
    "sgd": torch.optim.SGD,
    "momentum": torch.optim.SGD,
    "rmsprop": torch.optim.RMSprop,
    "adam": torch.optim.Adam,
    "adam_no_bias": torch.optim.Adam,  # torch has none: its Adam's defaults
}


@functools.cache
def torch_defaults() -> dict[str, dict[str, Any]]:
    """Each torch optimizer class's own defaults, read from torch (not written down here).
    On first use, not at import: an optimizer's first construction imports torch._dynamo,
    ~1.7 s that the server's start would wait for (the warm-up does it in the background)."""
    p = [nn.Parameter(torch.zeros(1))]
    out = {}
    for name, cls in (("SGD", torch.optim.SGD), ("RMSprop", torch.optim.RMSprop)):
        out[name] = cls(p).defaults
    out["Adam"] = torch.optim.Adam(p).defaults
    keep = ("lr", "betas", "eps", "alpha", "momentum")
    return {
        n: {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items() if k in keep}
        for n, d in out.items()
    }


def _lr(lo: float = 1e-5, hi: float = 3.0, default: float = 0.1, *, zh: str, en: str):
    return param(default, zh=zh, en=en, ge=lo, le=hi, scale="log", live=True, widget="hidden")


def _beta(default: float, *, zh: str, en: str):
    return param(default, zh=zh, en=en, ge=0.0, le=0.9999, live=True, widget="hidden")


class Params(LabParams):
    surface: Literal["valley", "rosenbrock", "mlp"] = param(
        "valley",
        zh="损失曲面",
        en="Loss surface",
        choices={
            "valley": ("狭长山谷 0.1x² + 10y²", "Elongated valley 0.1x² + 10y²"),
            "rosenbrock": ("Rosenbrock 香蕉谷", "Rosenbrock's banana valley"),
            "mlp": ("小 MLP 的真实损失", "A small MLP's real loss"),
        },
    )
    dataset: pg.Kind = dataset_param(show_if={"surface": "mlp"})
    lr_mode: Literal["tuned", "torch", "custom"] = param(
        "tuned",
        zh="学习率",
        en="Learning rates",
        live=True,
        choices={
            "tuned": ("为这个曲面调好的（各自一个）", "Tuned for this surface (each its own)"),
            "torch": ("torch 的默认值", "torch's defaults"),
            "custom": ("我自己设（见各选手一栏）", "My own (in the race card)"),
        },
    )
    sgd_lr: float = _lr(default=0.09, zh="SGD 学习率", en="SGD learning rate")
    momentum_lr: float = _lr(default=0.02, zh="动量法的学习率", en="Momentum learning rate")
    momentum_beta1: float = _beta(0.9, zh="动量 β1", en="Momentum β1")
    rmsprop_lr: float = _lr(default=0.03, zh="RMSProp 学习率", en="RMSProp learning rate")
    rmsprop_beta2: float = _beta(0.99, zh="RMSProp β2 (alpha)", en="RMSProp β2 (alpha)")
    adam_lr: float = _lr(default=0.1, zh="Adam 学习率", en="Adam learning rate")
    adam_beta1: float = _beta(0.9, zh="Adam β1", en="Adam β1")
    adam_beta2: float = _beta(0.999, zh="Adam β2", en="Adam β2")
    adam_no_bias_lr: float = _lr(
        default=0.1, zh="Adam（无偏差修正）学习率", en="Adam (no bias corr.) learning rate"
    )
    adam_no_bias_beta1: float = _beta(0.9, zh="Adam（无偏差修正）β1", en="Adam (no bias corr.) β1")
    adam_no_bias_beta2: float = _beta(
        0.999, zh="Adam（无偏差修正）β2", en="Adam (no bias corr.) β2"
    )
    noise: bool = param(
        False, zh="小批量噪声（随机梯度）", en="Mini-batch noise (stochastic gradients)", live=True
    )
    noise_sigma: float = param(
        2.0,
        zh="梯度噪声 σ",
        en="Gradient noise σ",
        ge=0.0,
        le=100.0,
        live=True,
        show_if={"noise": True, "surface": ["valley", "rosenbrock"]},
    )
    batch_size: int = param(
        16,
        zh="小批量大小",
        en="Mini-batch size",
        ge=1,
        le=250,
        live=True,
        show_if={"noise": True, "surface": "mlp"},
    )
    steps: int = param(2000, zh="训练步数", en="Steps to train", ge=1, le=20000)


def optim_configs(p: Params) -> dict[str, OptimConfig]:
    """Each arm's optimizer config from the params (its lr from `lr_mode`)."""
    if p.lr_mode == "tuned":
        lrs = TUNED[p.surface]
    elif p.lr_mode == "torch":
        lrs = {
            k: TORCH_CLASSES[k]([nn.Parameter(torch.zeros(1))]).defaults["lr"] for k in OPTIMIZERS
        }
    else:
        lrs = {k: getattr(p, f"{k}_lr") for k in OPTIMIZERS}
    return {
        "sgd": OptimConfig("sgd", lr=lrs["sgd"]),
        "momentum": OptimConfig("momentum", lr=lrs["momentum"], momentum=p.momentum_beta1),
        "rmsprop": OptimConfig("rmsprop", lr=lrs["rmsprop"], alpha=p.rmsprop_beta2),
        "adam": OptimConfig("adam", lr=lrs["adam"], betas=(p.adam_beta1, p.adam_beta2)),
        "adam_no_bias": OptimConfig(
            "adam_no_bias",
            lr=lrs["adam_no_bias"],
            betas=(p.adam_no_bias_beta1, p.adam_no_bias_beta2),
        ),
    }


def _optim_meta(c: OptimConfig) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": c.kind, "lr": c.lr}
    if c.kind == "momentum":
        out["beta1"] = c.momentum
    elif c.kind == "rmsprop":
        out.update(beta2=c.alpha, eps=c.eps)
    elif c.kind != "sgd":
        out.update(beta1=c.betas[0], beta2=c.betas[1], eps=c.eps)
    return out


@register
class OptimizersLab(TrainingLab):
    id = "optimizers"
    chapter = 4
    order = 1
    title = {
        "zh": "优化器赛跑：SGD、动量、RMSProp、Adam",
        "en": "Optimizer race: SGD, momentum, RMSProp, Adam",
    }
    description = {
        "zh": "五个优化器从同一起点出发，在狭长山谷、Rosenbrock 香蕉谷和一个小 MLP 的真实损失上赛跑，"
        "各自一个学习率和 β。看路径画在等高线上；看没有偏差修正的 Adam 第一步就迈出 3.16 倍学习率。",
        "en": "Five optimizers start from the same point and race on an elongated valley, on "
        "Rosenbrock's banana and on a small MLP's real loss, each with its own learning rate "
        "and β's: their paths on the contour, and Adam without bias correction lurching 3.16 "
        "learning rates on its very first step.",
    }
    Params = Params
    stream_lr = True
    stream_update_size = True  # the engine measures |Δθ|∞ of each update: scalar `step`
    tensors = ("surface", "points", "arm.*.boundary")

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        self.is_mlp = p.surface == "mlp"
        self.first: dict[int, tuple[float, float]] = {}  # arm -> (|Δθ|∞, ratio to lr) at t = 1
        self.last: dict[int, tuple[float, float]] = {}  # the same, of the latest update
        if self.is_mlp:
            split = pg.make(pg.PlaygroundConfig(p.dataset, noise=0.1), self.seed)
            self.x = split.x_train.to(self.device)  # [N, 2]
            self.y = split.y_train.to(self.device)  # [N]
            axis, pts = pg.grid(BOUNDARY_GRID)
            self.grid_pts = pts.to(self.device)  # [G*G, 2]
            self.grid_axis = axis
        else:
            self.cfg = surf.SurfaceConfig(p.surface)
            xs, ys, z = surf.grid(self.cfg, GRID)
            self.contour = torch.log10(z + LOG_OFFSET)  # [G, G], row i is y = ys[i]

    def arms(self) -> list[ArmSpec]:
        cfgs = optim_configs(self.params)
        build = self._build_mlp if self.is_mlp else self._build_surface
        return [ArmSpec(LABELS[k], build, cfgs[k], self.seed, TITLES[k]) for k in OPTIMIZERS]

    def _build_surface(self) -> nn.Module:
        return surf.Surface(self.cfg)

    def _build_mlp(self) -> nn.Module:
        return MLP(MLPConfig(2, HIDDEN, 2, "tanh"))

    def max_steps(self) -> int:
        return self.params.steps

    def batch(self, gen: torch.Generator) -> dict[str, Tensor | None]:
        p = self.params
        if self.is_mlp:
            if not p.noise or p.batch_size >= len(self.x):
                return {"x": self.x, "y": self.y}
            idx = torch.randperm(len(self.x), generator=gen)[: p.batch_size]
            return {"x": self.x[idx], "y": self.y[idx]}
        xi = surf.gradient_noise(p.noise_sigma, gen) if p.noise else None
        return {"xi": xi}

    def loss(self, arm: Arm, batch: dict[str, Tensor | None]) -> Tensor:
        if self.is_mlp:
            return F.cross_entropy(arm.model(batch["x"]), batch["y"])
        return arm.model.noisy_loss(batch["xi"])

    def arm_scalars(self, arm: Arm, batch: Any, out: Any) -> dict[str, float]:
        with torch.no_grad():
            scalars = self._measure(arm)
            if batch is not None:  # the engine measured this update (stream_update_size)
                lr = arm.optimizer.param_groups[0]["lr"]  # what this update used
                step = arm.update_max
                self.last[arm.index] = (step, step / lr if lr > 0 else math.nan)
                if self.t == 1:
                    self.first[arm.index] = self.last[arm.index]
            if arm.index in self.last:  # a snapshot (pause, live change): the last update's
                scalars["step"], scalars["step_lr"] = self.last[arm.index]
        return scalars

    def _measure(self, arm: Arm) -> dict[str, float]:
        if self.is_mlp:
            logits = arm.model(self.x)
            return {
                "loss": float(F.cross_entropy(logits, self.y)),
                "acc": float((logits.argmax(-1) == self.y).float().mean()),
            }
        x, y = arm.model.point.tolist()
        return {"loss": float(arm.model()), "x": x, "y": y}

    # -- the picture ------------------------------------------------------------------------
    @torch.no_grad()
    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        meta = _optim_meta(arm.spec.optim)
        first = self.first.get(arm.index)
        meta["first_step"] = first[0] if first else None
        meta["first_step_lr"] = first[1] if first else None
        if not self.is_mlp:
            return [], meta
        probs = arm.model(self.grid_pts).softmax(-1)[:, 1]  # [G*G]
        g = BOUNDARY_GRID
        return [TensorOut("boundary", probs.view(g, g), "u8")], meta  # [G, G]

    def frame_meta(self) -> dict[str, Any]:
        p = self.params
        meta: dict[str, Any] = {
            "surface": p.surface,
            "lr_mode": p.lr_mode,
            "noise": p.noise,
            "t": self.t,
            "max_steps": p.steps,
            "torch_defaults": torch_defaults(),
            "tuned": TUNED[p.surface],
        }
        if self.is_mlp:
            meta["boundary"] = {"extent": pg.EXTENT, "grid": BOUNDARY_GRID}
            meta["batch"] = min(p.batch_size, len(self.x)) if p.noise else len(self.x)
        else:
            meta.update(
                extent=surf.EXTENT[p.surface],
                minimum=surf.MINIMUM[p.surface],
                start=surf.START[p.surface],
                log_offset=LOG_OFFSET,
                noise_sigma=p.noise_sigma,
            )
        return meta

    def shared_picture(self) -> list[TensorOut]:
        """The pictures every arm shares, one copy a frame: the contour or the MLP's points."""
        if self.is_mlp:
            pts = torch.cat([self.x.cpu(), self.y.cpu().float()[:, None]], 1)  # [N, 3]
            return [TensorOut("points", pts, "f32")]
        return [TensorOut("surface", self.contour, "u8")]

    # -- persistence ----------------------------------------------------------------------
    def lab_state(self) -> dict[str, Any]:
        return {
            "first": {str(k): list(v) for k, v in self.first.items()},
            "last": {str(k): list(v) for k, v in self.last.items()},
        }

    def load_lab_state(self, state: dict[str, Any]) -> None:
        self.first = {int(k): (v[0], v[1]) for k, v in state.get("first", {}).items()}
        self.last = {int(k): (v[0], v[1]) for k, v in state.get("last", {}).items()}
