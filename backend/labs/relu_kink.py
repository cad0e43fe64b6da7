"""Lab `relu-kink`: two lines compose to a line; a ReLU between them makes a kink.

Mode "compose": A: y = a_w·x + a_b and B: z = b_w·y + b_b as a 1→1→1 MLP; torch computes
y, relu(y) and z over a grid, and the server writes the equivalent `if x > …` program from
the four numbers. Nothing trains (max_steps 0); every number is live.

Mode "fit": a 1→k→1 ReLU MLP learns a target curve (sin, a circle arc, |x|, a step) with
Adam; frames carry the fitted polyline, each unit's share of it and each unit's kink.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch.nn import functional as F

from backend.labs import register
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param
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
    lr: float = param(0.01, zh="学习率 (Adam)", en="Learning rate (Adam)", ge=1e-4, le=0.5, scale="log", live=True, show_if=FIT)  # fmt: skip
    steps: int = param(3000, zh="训练步数", en="Steps to train", ge=1, le=20000, show_if=FIT)


@register
class ReluKinkLab(Lab):
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

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.x = torch.linspace(*X_RANGE, X_POINTS)
        if params.mode == "fit":
            cfg = rk.FitConfig(units=params.units, target=params.target)
            self.fx, self.fy = rk.fit_data(cfg)
            self.model = rk.fit_model(cfg, torch.Generator().manual_seed(seed))
            self.opt = torch.optim.Adam(self.model.parameters(), lr=params.lr)

    def max_steps(self) -> int:
        return self.params.steps if self.params.mode == "fit" else 0

    def update_live(self, params: Params) -> None:
        self.params = params
        if params.mode == "fit":
            for g in self.opt.param_groups:
                g["lr"] = params.lr

    def step(self, capture: bool) -> Frame:
        if self.params.mode != "fit":
            return self.snapshot()
        loss = F.mse_loss(self.model(self.fx[:, None])[:, 0], self.fy)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return self._fit_frame(capture)

    def snapshot(self) -> Frame:
        return self._fit_frame(True) if self.params.mode == "fit" else self._compose_frame()

    # -- compose --------------------------------------------------------------------------
    def _cfg(self, relu: bool | None = None) -> rk.KinkConfig:
        p = self.params
        return rk.KinkConfig(p.a_w, p.a_b, p.b_w, p.b_b, p.relu if relu is None else relu)

    def _compose_frame(self) -> Frame:
        cfg = self._cfg()
        curves = rk.compose_curves(cfg, self.x)
        plain = rk.compose_curves(self._cfg(relu=False), self.x)["hook_logits"]
        m, c, flat = rk.pieces(cfg)
        kink = rk.kink(cfg)
        return Frame(
            tensors=[
                TensorOut("layers.0.hook_pre", curves["layers.0.hook_pre"], "f32"),
                TensorOut("layers.0.hook_post", curves["layers.0.hook_post"], "f32"),
                TensorOut("hook_logits", curves["hook_logits"], "f32"),
                TensorOut("without_relu", plain, "f32"),
            ],
            meta={
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
    def _fit_frame(self, capture: bool) -> Frame:
        out, parts = rk.unit_parts(self.model, self.fx)
        loss = float(F.mse_loss(out, self.fy))
        kinks = rk.kinks(self.model)
        inside = (kinks >= self.fx[0]) & (kinks <= self.fx[-1])
        frame = Frame(scalars={"loss": loss, "kinks_inside": float(inside.sum())})
        if not capture:
            return frame
        with torch.no_grad():
            kink_y = self.model(torch.nan_to_num(kinks)[:, None])[:, 0]
        kink_y = torch.where(kinks.isnan(), torch.nan, kink_y)
        frame.tensors = [
            TensorOut("target", self.fy, "f32"),
            TensorOut("hook_logits", out, "f32"),
            TensorOut("units", parts, "f16"),
            TensorOut("kinks", kinks, "f32"),
            TensorOut("kink_y", kink_y, "f32"),
        ]
        frame.meta = {
            "mode": "fit",
            "x_range": [float(self.fx[0]), float(self.fx[-1])],
            "target": self.params.target,
            "units": self.params.units,
            "bias": float(self.model.out.bias.detach()),
        }
        return frame

    def state_dict(self) -> dict:
        if self.params.mode != "fit":
            return {}
        return {"model": self.model.state_dict(), "opt": self.opt.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        if state and self.params.mode == "fit":
            self.model.load_state_dict(state["model"])
            self.opt.load_state_dict(state["opt"])
