"""Lab `logistic`: one neuron with a sigmoid decides "buy or not" from (age, income).

p = σ(θ0 + θ1·x1 + θ2·x2), trained live by full-batch gradient descent on binary
cross-entropy. The view draws the model's p over the plane (a heatmap computed on a grid by
the model itself) with the points, the threshold line, and the confusion matrix, precision,
recall and accuracy at the threshold, all counted here on every point shown. Concentric
circles defeat a straight boundary until x1², x2², x1·x2 are added; unbalanced classes make
accuracy look good next to the "always say no" baseline. Clicked points join the data live.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import model_validator

from backend.labs import register
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param
from models import logistic
from models.data import points2d

GRID = 64  # boundary heatmap resolution per axis
MAX_POINTS = 100  # clicked points


class Params(LabParams):
    dataset: Literal["blobs", "circles"] = param(
        "blobs",
        zh="数据",
        en="Data",
        choices={
            "blobs": ("买不买 (年龄, 收入)", "Buy or not (age, income)"),
            "circles": ("同心圆", "Concentric circles"),
        },
    )
    features: logistic.Features = param(
        "linear",
        zh="输入特征",
        en="Input features",
        choices={
            "linear": ("x1, x2", "x1, x2"),
            "quadratic": ("x1, x2, x1², x2², x1·x2", "x1, x2, x1², x2², x1·x2"),
        },
    )
    pos_frac: float = param(
        0.5, zh="正类 (买) 占比", en="Share of positives (buyers)", ge=0.05, le=0.95, step=0.05
    )
    n: int = param(200, zh="样本数", en="Number of points", ge=20, le=400, step=10)
    lr: float = param(
        0.1, zh="学习率", en="Learning rate", ge=1e-3, le=10.0, scale="log", live=True
    )
    threshold: float = param(
        0.5, zh="判定阈值", en="Decision threshold", ge=0.01, le=0.99, step=0.01, live=True
    )
    epochs: int = param(3000, zh="训练步数", en="Steps to train", ge=1, le=20000)
    points: list[tuple[float, float, int]] = param(
        [],
        zh="我加的点",
        en="My points",
        widget="hidden",
        live=True,
        max_length=MAX_POINTS,
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
class LogisticLab(Lab):
    id = "logistic"
    chapter = 2
    order = 1
    title = {"zh": "逻辑回归：买还是不买", "en": "Logistic regression: buy or not"}
    description = {
        "zh": "一个带 sigmoid 的神经元用交叉熵训练出决策边界。拖动阈值看查准率、查全率和混淆矩阵；"
        "同心圆要加上平方项才能分开；类别不平衡时准确率会骗人。点击图中加点。",
        "en": "One neuron with a sigmoid, trained by cross-entropy, draws a decision boundary. "
        "Move the threshold to trade precision for recall; concentric circles need squared "
        "features; unbalanced classes make accuracy lie. Click the plot to add points.",
    }
    Params = Params
    tensors = ("boundary", "points", "prob", "confusion", "theta", "grad")

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        cfg = points2d.PointsConfig(kind=params.dataset, n=params.n, pos_frac=params.pos_frac)
        self.base = points2d.make(cfg, seed)
        self.x, self.y = points2d.with_points(*self.base, params.points)
        self.model = logistic.LogisticRegression(logistic.LogisticConfig(params.features))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=params.lr)
        self.axis, self.grid = points2d.grid(GRID)

    def max_steps(self) -> int:
        return self.params.epochs

    def update_live(self, params: Params) -> None:
        if params.points != self.params.points:
            self.x, self.y = points2d.with_points(*self.base, params.points)
        self.params = params
        for g in self.opt.param_groups:
            g["lr"] = params.lr

    def _grad(self, step: bool) -> torch.Tensor:
        loss = logistic.bce(self.model(self.x), self.y)
        self.opt.zero_grad()
        loss.backward()
        grad = torch.cat([self.model.linear.bias.grad, self.model.linear.weight.grad[0]]).clone()
        if step:
            self.opt.step()
        self.opt.zero_grad()
        return grad

    def step(self, capture: bool) -> Frame:
        return self._frame(self._grad(step=True), capture)

    def snapshot(self) -> Frame:
        return self._frame(self._grad(step=False), True)

    def _frame(self, grad: torch.Tensor, capture: bool) -> Frame:
        thr = self.params.threshold
        with torch.no_grad():
            logits = self.model(self.x)
            loss = float(logistic.bce(logits, self.y))
            p = torch.sigmoid(logits)
        m = logistic.metrics(p, self.y, thr)
        base = logistic.always_no(self.y)
        frame = Frame(
            scalars={
                "loss": loss,
                "accuracy": m.accuracy,
                "precision": m.precision,
                "recall": m.recall,
                "f1": m.f1,
                "baseline_accuracy": base.accuracy,
            }
        )
        if not capture:
            return frame
        with torch.no_grad():
            surface = self.model.prob(self.grid).reshape(GRID, GRID)  # [x2, x1]
        theta, names = self.model.theta()
        frame.tensors = [
            TensorOut("boundary", surface, "u8"),
            TensorOut("points", torch.cat([self.x, self.y[:, None]], 1), "f32"),  # [N, 3]
            TensorOut("prob", p, "f32"),
            TensorOut("confusion", m.matrix(), "f32"),  # [[TN, FP], [FN, TP]]
            TensorOut("theta", theta, "f32", names),
            TensorOut("grad", grad, "f32", names),
        ]
        frame.meta = {
            "extent": points2d.EXTENT,
            "threshold": thr,
            "n_user": len(self.params.points),
            "counts": {"tp": m.tp, "fp": m.fp, "fn": m.fn, "tn": m.tn},
            "baseline": {
                "accuracy": base.accuracy,
                "precision": base.precision,
                "recall": base.recall,
            },
            "positives": int(self.y.sum()),
            "n": int(self.y.numel()),
        }
        return frame

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "opt": self.opt.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
