"""Lab `svm`: the maximum-margin line, trained live by (sub)gradient descent.

Objective ½‖w‖² + C·Σ hinge(y·f(x)) on 2-D points (seeded, plus the learner's clicks). The
view draws f on a grid (the model's own output, clipped to ±CLIP so u8 keeps the lines
f = −1, 0, +1 sharp), the points, and the support vectors (decided here: on or inside the
margin). C is live: larger C, fewer violations, narrower margin. The trained loss switches
live between hinge, logistic and squared; a panel plots the three as functions of the
margin y·f(x) with every point placed on the current one.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import model_validator

from backend.labs import register
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param
from models import svm
from models.data import points2d

GRID = 64
CLIP = 3.0  # f is clipped to ±CLIP for the heatmap: the margin lines sit at ±1
MARGIN_RANGE = (-3.0, 3.0)  # x-axis of the loss-curve panel
CURVE = 121
MAX_POINTS = 100

DATASETS = {
    # centre, std of the two blobs (see models/data/points2d.py)
    "overlap": (1.2, 0.7),
    "separable": (1.5, 0.45),
}


class Params(LabParams):
    dataset: Literal["overlap", "separable"] = param(
        "overlap",
        zh="数据",
        en="Data",
        choices={
            "overlap": ("两团点, 略有重叠", "Two blobs, overlapping a little"),
            "separable": ("两团点, 可以分开", "Two blobs, separable"),
        },
    )
    n: int = param(40, zh="样本数", en="Number of points", ge=10, le=200, step=2)
    loss: svm.Loss = param(
        "hinge",
        zh="训练用的损失",
        en="Loss being trained",
        live=True,
        choices={
            "hinge": ("合页损失 (SVM)", "Hinge (SVM)"),
            "logistic": ("逻辑损失", "Logistic"),
            "squared": ("平方损失", "Squared"),
        },
    )
    C: float = param(
        1.0, zh="C (惩罚系数)", en="C (penalty)", ge=1e-3, le=1e3, scale="log", live=True
    )
    lr: float = param(0.1, zh="学习率", en="Learning rate", ge=1e-3, le=2.0, scale="log", live=True)
    epochs: int = param(3000, zh="训练步数", en="Steps to train", ge=1, le=20000)
    points: list[tuple[float, float, int]] = param(
        [], zh="我加的点", en="My points", widget="hidden", live=True, max_length=MAX_POINTS
    )

    @model_validator(mode="after")
    def _points_valid(self) -> Params:
        e = points2d.EXTENT
        for i, (a, b, c) in enumerate(self.points):
            if not (-e <= a <= e and -e <= b <= e):
                raise ValueError(f"point {i} is outside [-{e:g}, {e:g}]")
            if c not in (0, 1):
                raise ValueError(f"point {i} has class {c}; use 0 or 1")
        return self


@register
class SVMLab(Lab):
    id = "svm"
    chapter = 2
    order = 3
    title = {"zh": "支持向量机：最大间隔", "en": "Support vector machine: the widest margin"}
    description = {
        "zh": "目标 ½‖w‖² + C·Σ 合页损失，用次梯度下降训练。C 越大，间隔越窄；支持向量是落在间隔上"
        "或间隔内的点。换成逻辑损失或平方损失比一比。点击图中加点。",
        "en": "Objective ½‖w‖² + C·Σ hinge, trained by subgradient descent. Larger C, narrower "
        "margin; the support vectors are the points on or inside the margin. Switch to the "
        "logistic or squared loss to compare. Click the plot to add points.",
    }
    Params = Params
    tensors = (
        "boundary",
        "points",
        "margins",
        "support",
        "point_loss",
        "loss_curves",
        "weights",
        "grad",
    )

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        centre, std = DATASETS[params.dataset]
        cfg = points2d.PointsConfig(kind="blobs", n=params.n, centre=centre, std=std)
        self.base = points2d.make(cfg, seed)
        self._set_data(params)
        self.model = svm.LinearSVM(svm.SVMConfig())
        # Momentum carries the slow shrinking of ‖w‖ at large C (see svm.step_size).
        self.opt = torch.optim.SGD(self.model.parameters(), lr=self._eta(params), momentum=0.9)
        self.axis, self.grid = points2d.grid(GRID)
        m = torch.linspace(*MARGIN_RANGE, CURVE)
        self.curves, self.curve_names = svm.loss_curves(m)

    def _set_data(self, params: Params) -> None:
        self.x, y01 = points2d.with_points(*self.base, params.points)
        self.y01 = y01
        self.y = y01 * 2 - 1  # ±1

    def _eta(self, params: Params) -> float:
        return svm.step_size(params.lr, params.C, self.x.shape[0])

    def max_steps(self) -> int:
        return self.params.epochs

    def update_live(self, params: Params) -> None:
        if params.points != self.params.points:
            self._set_data(params)
        self.params = params
        for g in self.opt.param_groups:
            g["lr"] = self._eta(params)

    def _grad(self, step: bool) -> torch.Tensor:
        p = self.params
        loss = svm.objective(self.model, self.x, self.y, p.C, p.loss)
        self.opt.zero_grad()
        loss.backward()
        grad = torch.cat([self.model.w.grad, self.model.b.grad[None]]).clone()
        if step:
            self.opt.step()
        self.opt.zero_grad()
        return grad

    def step(self, capture: bool) -> Frame:
        return self._frame(self._grad(step=True), capture)

    def snapshot(self) -> Frame:
        return self._frame(self._grad(step=False), True)

    def _frame(self, grad: torch.Tensor, capture: bool) -> Frame:
        p = self.params
        with torch.no_grad():
            f = self.model(self.x)
            margins = self.y * f
            point_loss = svm.margin_loss(margins, p.loss)
            reg = 0.5 * float((self.model.w * self.model.w).sum())
            data = float(point_loss.sum())
        support = svm.support_mask(margins, self.model.cfg.sv_tol)
        w1, w2 = (float(v) for v in self.model.w.detach())
        b = float(self.model.b.detach())
        frame = Frame(
            scalars={
                "loss": reg + p.C * data,
                "reg": reg,
                "data_loss": data,
                "margin_width": self.model.margin_width(),
                "accuracy": float(((f > 0).float() == self.y01).float().mean()),
                "n_support": float(support.sum()),
                "w1": w1,
                "w2": w2,
                "b": b,
            }
        )
        if not capture:
            return frame
        with torch.no_grad():
            surface = self.model(self.grid).reshape(GRID, GRID).clamp(-CLIP, CLIP)  # [x2, x1]
        labels = ["w1", "w2", "b"]
        frame.tensors = [
            TensorOut("boundary", surface, "u8"),
            TensorOut("points", torch.cat([self.x, self.y01[:, None]], 1), "f32"),  # [N, 3]
            TensorOut("margins", margins, "f32"),
            TensorOut("support", support.float(), "f32"),
            TensorOut("point_loss", point_loss, "f32"),
            TensorOut("loss_curves", self.curves, "f32", self.curve_names),  # [4, CURVE]
            TensorOut("weights", torch.tensor([w1, w2, b]), "f32", labels),
            TensorOut("grad", grad, "f32", labels),
        ]
        frame.meta = {
            "extent": points2d.EXTENT,
            "clip": CLIP,
            "w": [w1, w2],
            "b": b,
            "loss": p.loss,
            "C": p.C,
            "margin_range": list(MARGIN_RANGE),
            "n_user": len(p.points),
        }
        return frame

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "opt": self.opt.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
