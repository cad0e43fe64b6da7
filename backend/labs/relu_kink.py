"""Lab `relu-kink`: two lines compose to a line; a ReLU between them makes a kink.

Mode "compose": A: y = a_w·x + a_b and B: z = b_w·y + b_b as a 1→1→1 MLP; torch computes
y, relu(y) and z over a grid, and the server writes the equivalent `if x > …` program from
the four numbers. Nothing trains (max_steps 0); every number is live.

Mode "fit": a 1→k→1 ReLU MLP learns a target curve (sin, a circle arc, |x|, a step) with
Adam; frames carry the fitted polyline, each unit's share of it and each unit's kink. The
trainer (backend/trainer.py) runs the loop; in "compose" mode its one arm (the fit model,
built but never stepped) is only there because a TrainingLab has one, and the picture is the
composition's.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch.nn import functional as F

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, param
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models import relu_kink as rk

X_RANGE = (-10.0, 20.0)  # the default kink (x = 5) sits in the middle
X_POINTS = 301  # step 0.1, so x = 5 is a grid point


COMPOSE = {"mode": "compose"}  # the form shows these fields only in this mode
FIT = {"mode": "fit"}


class Params(LabParams):
    mode: Literal["compose", "fit"] = param(
        "compose",
        zh="模式",
        en="Mode",
        choices={
            "compose": ("两条直线 + ReLU", "Two lines + a ReLU"),
            "fit": ("很多 ReLU 拟合曲线", "Many ReLUs fit a curve"),
        },
    )
    a_w: float = param(
        2.0, zh="A 的斜率", en="A: slope", ge=-10, le=10, step=0.5, live=True, show_if=COMPOSE
    )
    a_b: float = param(
        -10.0, zh="A 的截距", en="A: intercept", ge=-30, le=30, step=0.5, live=True, show_if=COMPOSE
    )
    b_w: float = param(
        3.0, zh="B 的斜率", en="B: slope", ge=-10, le=10, step=0.5, live=True, show_if=COMPOSE
    )
    b_b: float = param(
        7.0, zh="B 的截距", en="B: intercept", ge=-30, le=30, step=0.5, live=True, show_if=COMPOSE
    )
    relu: bool = param(
        True, zh="A 与 B 之间加 ReLU", en="ReLU between A and B", live=True, show_if=COMPOSE
    )
    target: rk.Target = param(
        "sin",
        show_if=FIT,
        zh="要拟合的曲线",
        en="Curve to fit",
        choices={
            "sin": ("sin(πx)", "sin(πx)"),
            "arc": ("圆弧 √(1−x²)（刘徽割圆）", "Circle arc √(1−x²) (Liu Hui)"),
            "abs": ("|x|", "|x|"),
            "step": ("台阶", "A step"),
        },
    )
    units: int = param(
        8, zh="隐藏 ReLU 单元数 k", en="Hidden ReLU units k", ge=1, le=64, show_if=FIT
    )
    lr: float = param(0.01, zh="学习率（Adam）", en="Learning rate (Adam)", ge=1e-4, le=0.5, scale="log", live=True, show_if=FIT)  # fmt: skip
    steps: int = param(3000, zh="训练步数", en="Steps to train", ge=1, le=20000, show_if=FIT)


@register
class ReluKinkLab(TrainingLab):
    id = "relu-kink"
    chapter = 3
    order = 1
    title = {"zh": "ReLU 的拐点：从两条直线到任意曲线", "en": "The ReLU kink: from two lines to any curve"}  # fmt: skip
    description = {
        "zh": "y=2x−10 接 z=3y+7 还是一条直线 6x−23；中间加一个 ReLU，就在 x=5 折出一个拐点，"
        "等价于一段 if 程序。更多 ReLU 单元拼成折线，能逼近任何曲线。",
        "en": "y = 2x − 10 then z = 3y + 7 is still one line, 6x − 23; a ReLU between them bends "
        "it at x = 5, the same as an if-program. More ReLU units make a polyline that can "
        "follow any curve.",
    }
    Params = Params
    plays = FIT  # compose mode has nothing to step (max_steps 0); fit mode trains
    tensors = (
        "layers.0.hook_pre",
        "layers.0.hook_post",
        "hook_logits",
        "without_relu",
        "target",
        "units",
        "kinks",
        "kink_y",
    )

    stream_grad_norms = False  # not this lab's subject

    def setup(self) -> None:
        self.x = torch.linspace(*X_RANGE, X_POINTS)
        self.fit_cfg = rk.FitConfig(units=self.params.units, target=self.params.target)
        if self.params.mode == "fit":
            self.fx, self.fy = rk.fit_data(self.fit_cfg)

    def arms(self) -> list[ArmSpec]:
        def build() -> torch.nn.Module:
            return rk.fit_model(self.fit_cfg, torch.Generator().manual_seed(self.seed))

        return [ArmSpec("fit", build, OptimConfig("adam", lr=self.params.lr), self.seed)]

    def max_steps(self) -> int:
        return self.params.steps if self.params.mode == "fit" else 0

    def batch(self, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor] | None:
        return (self.fx, self.fy) if self.params.mode == "fit" else None

    def loss(self, arm: Arm, batch) -> torch.Tensor:
        fx, fy = batch
        return F.mse_loss(arm.model(fx[:, None])[:, 0], fy)

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        if self.params.mode != "fit":
            return {}
        out, self.parts = rk.unit_parts(arm.model, self.fx)
        self.out = out
        self.kinks = kinks = rk.kinks(arm.model)
        inside = (kinks >= self.fx[0]) & (kinks <= self.fx[-1])
        return {"loss": float(F.mse_loss(out, self.fy)), "kinks_inside": float(inside.sum())}

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict]:
        return self._fit_picture(arm) if self.params.mode == "fit" else self._compose_picture()

    # -- compose --------------------------------------------------------------------------
    def _cfg(self, relu: bool | None = None) -> rk.KinkConfig:
        p = self.params
        return rk.KinkConfig(p.a_w, p.a_b, p.b_w, p.b_b, p.relu if relu is None else relu)

    def _compose_picture(self) -> tuple[list[TensorOut], dict]:
        cfg = self._cfg()
        curves = rk.compose_curves(cfg, self.x)
        plain = rk.compose_curves(self._cfg(relu=False), self.x)["hook_logits"]
        m, c, flat = rk.pieces(cfg)
        kink = rk.kink(cfg)
        return (
            [
                TensorOut("layers.0.hook_pre", curves["layers.0.hook_pre"], "f32"),
                TensorOut("layers.0.hook_post", curves["layers.0.hook_post"], "f32"),
                TensorOut("hook_logits", curves["hook_logits"], "f32"),
                TensorOut("without_relu", plain, "f32"),
            ],
            {
                "mode": "compose",
                "x_range": list(X_RANGE),
                "relu": cfg.relu,
                "kink": kink,
                "program": rk.program(cfg),
                "a": f"y = {rk.line(cfg.a_w, cfg.a_b)}",
                "b": f"z = {rk.line(cfg.b_w, cfg.b_b, 'y')}",
                "composed": f"z = {rk.line(m, c)}",
                "flat": flat,
            },
        )

    # -- fit ------------------------------------------------------------------------------
    def _fit_picture(self, arm: Arm) -> tuple[list[TensorOut], dict]:
        model, kinks = arm.model, self.kinks
        with torch.no_grad():
            kink_y = model(torch.nan_to_num(kinks)[:, None])[:, 0]
        kink_y = torch.where(kinks.isnan(), torch.nan, kink_y)
        tensors = [
            TensorOut("target", self.fy, "f32"),
            TensorOut("hook_logits", self.out, "f32"),
            TensorOut("units", self.parts, "f16"),
            TensorOut("kinks", kinks, "f32"),
            TensorOut("kink_y", kink_y, "f32"),
        ]
        meta = {
            "mode": "fit",
            "x_range": [float(self.fx[0]), float(self.fx[-1])],
            "target": self.params.target,
            "units": self.params.units,
            "bias": float(model.out.bias.detach()),
        }
        return tensors, meta
