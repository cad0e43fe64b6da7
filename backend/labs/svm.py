"""Lab `svm`: the maximum-margin line, trained live by (sub)gradient descent.

Objective ½‖w‖² + C·Σ hinge(y·f(x)) on 2-D points (seeded, plus the learner's clicks). The
view draws f on a grid (the model's own output, clipped to ±CLIP so u8 keeps the lines
f = −1, 0, +1 sharp), the points, and the support vectors (decided here: on or inside the
margin). C is live: larger C, fewer violations, narrower margin. The trained loss switches
live between hinge, logistic and squared; a panel plots the three as functions of the
margin y·f(x) with every point placed on the current one. The trainer (backend/trainer.py)
runs the loop; the clicked points and the full-batch loop are logistic's (`PointsLab`).
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import model_validator

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, param
from backend.labs.logistic import PointsLab, points_field, points_valid
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec
from models import svm
from models.data import points2d

GRID = 64
CLIP = 3.0  # f is clipped to ±CLIP for the heatmap: the margin lines sit at ±1
MARGIN_RANGE = (-3.0, 3.0)  # x-axis of the loss-curve panel
CURVE = 121

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
            "hinge": ("合页损失（SVM）", "Hinge (SVM)"),
            "logistic": ("逻辑损失", "Logistic"),
            "squared": ("平方损失", "Squared"),
        },
    )
    C: float = param(
        1.0, zh="C（惩罚系数）", en="C (penalty)", ge=1e-3, le=1e3, scale="log", live=True
    )
    lr: float = param(0.1, zh="学习率", en="Learning rate", ge=1e-3, le=2.0, scale="log", live=True)
    epochs: int = param(3000, zh="训练步数", en="Steps to train", ge=1, le=20000)
    points: list[tuple[float, float, int]] = points_field()

    _points_valid = model_validator(mode="after")(points_valid)


@register
class SVMLab(PointsLab):
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

    def base_points(self) -> tuple[torch.Tensor, torch.Tensor]:
        p = self.params
        centre, std = DATASETS[p.dataset]
        cfg = points2d.PointsConfig(kind="blobs", n=p.n, centre=centre, std=std)
        return points2d.make(cfg, self.seed)

    def set_points(self, params: Params) -> None:
        super().set_points(params)
        self.y01 = self.y
        self.sign = self.y * 2 - 1  # ±1

    def setup(self) -> None:
        super().setup()
        m = torch.linspace(*MARGIN_RANGE, CURVE)
        self.curves, self.curve_names = svm.loss_curves(m)

    def arms(self) -> list[ArmSpec]:
        p = self.params
        # Momentum carries the slow shrinking of ‖w‖ at large C (see svm.step_size).
        eta = svm.step_size(p.lr, p.C, self.x.shape[0])
        optim = OptimConfig("momentum", lr=eta, momentum=0.9)
        return [ArmSpec("svm", lambda: svm.LinearSVM(svm.SVMConfig()), optim, self.seed)]

    def loss(self, arm: Arm, batch) -> torch.Tensor:
        p = self.params
        return svm.objective(arm.model, self.x, self.sign, p.C, p.loss)

    def grad_vector(self, model) -> torch.Tensor:
        return torch.cat([model.w.grad, model.b.grad[None]]).clone()

    def measure(self) -> dict[str, float]:
        p, model = self.params, self.model
        with torch.no_grad():
            f = self.f = model(self.x)
            margins = self.margins = self.sign * f
            point_loss = self.point_loss = svm.margin_loss(margins, p.loss)
            reg = 0.5 * float((model.w * model.w).sum())
            data = float(point_loss.sum())
        support = self.support = svm.support_mask(margins, model.cfg.sv_tol)
        w1, w2 = (float(v) for v in model.w.detach())
        return {
            "loss": reg + p.C * data,
            "reg": reg,
            "data_loss": data,
            "margin_width": model.margin_width(),
            "accuracy": float(((f > 0).float() == self.y01).float().mean()),
            "n_support": float(support.sum()),
            "w1": w1,
            "w2": w2,
            "b": float(model.b.detach()),
        }

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict]:
        p, model = self.params, arm.model
        w1, w2 = (float(v) for v in model.w.detach())
        b = float(model.b.detach())
        with torch.no_grad():
            surface = model(self.grid).reshape(GRID, GRID).clamp(-CLIP, CLIP)  # [x2, x1]
        labels = ["w1", "w2", "b"]
        tensors = [
            TensorOut("boundary", surface, "u8"),
            TensorOut("points", torch.cat([self.x, self.y01[:, None]], 1), "f32"),  # [N, 3]
            TensorOut("margins", self.margins, "f32"),
            TensorOut("support", self.support.float(), "f32"),
            TensorOut("point_loss", self.point_loss, "f32"),
            TensorOut("loss_curves", self.curves, "f32", self.curve_names),  # [4, CURVE]
            TensorOut("weights", torch.tensor([w1, w2, b]), "f32", labels),
            TensorOut("grad", self.grad, "f32", labels),
        ]
        meta = {
            "extent": points2d.EXTENT,
            "clip": CLIP,
            "w": [w1, w2],
            "b": b,
            "loss": p.loss,
            "C": p.C,
            "margin_range": list(MARGIN_RANGE),
            "n_user": len(p.points),
        }
        return tensors, meta
