"""Lab `logistic`: one neuron with a sigmoid decides "buy or not" from (age, income).

p = σ(θ0 + θ1·x1 + θ2·x2), trained live by full-batch gradient descent on binary
cross-entropy. The view draws the model's p over the plane (a heatmap computed on a grid by
the model itself) with the points, the threshold line, and the confusion matrix, precision,
recall and accuracy at the threshold, all counted here on every point shown. Concentric
circles defeat a straight boundary until x1², x2², x1·x2 are added; unbalanced classes make
accuracy look good next to the "always say no" baseline. Clicked points join the data live.
The trainer (backend/trainer.py) runs the loop; `PointsLab` and `points_field` here also
serve lab `svm` (a linear model trained full batch on 2-D points and the learner's clicks).
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from pydantic import model_validator

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models import logistic
from models.data import points2d

GRID = 64  # boundary heatmap resolution per axis
MAX_POINTS = 100  # clicked points


def points_field() -> Any:
    """The learner's clicked points (x1, x2, class), live."""
    return param(
        [], zh="我加的点", en="My points", widget="hidden", live=True, max_length=MAX_POINTS
    )


def points_valid(self: Any) -> Any:
    """Every clicked point inside the plot, class 0 or 1 (a Params' after-validator)."""
    e = points2d.EXTENT
    for i, (a, b, c) in enumerate(self.points):
        if not (-e <= a <= e and -e <= b <= e):
            raise refuse(
                "err.p_point_outside", "point {i} is outside [{lo}, {hi}]", i=i, lo=-e, hi=e
            )
        if c not in (0, 1):
            raise refuse(
                "err.p_point_class",
                "point {i} has class {c}; use {lo} or {hi}",
                i=i,
                c=c,
                lo=0,
                hi=1,
            )
    return self


class Params(LabParams):
    dataset: Literal["blobs", "circles"] = param(
        "blobs",
        zh="数据",
        en="Data",
        choices={
            "blobs": ("买不买（年龄, 收入）", "Buy or not (age, income)"),
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
        0.5, zh="正类（买）占比", en="Share of positives (buyers)", ge=0.05, le=0.95, step=0.05
    )
    n: int = param(200, zh="样本数", en="Number of points", ge=20, le=400, step=10)
    lr: float = param(
        0.1, zh="学习率", en="Learning rate", ge=1e-3, le=10.0, scale="log", live=True
    )
    threshold: float = param(
        0.5, zh="判定阈值", en="Decision threshold", ge=0.01, le=0.99, step=0.01, live=True
    )
    epochs: int = param(3000, zh="训练步数", en="Steps to train", ge=1, le=20000)
    points: list[tuple[float, float, int]] = points_field()

    _points_valid = model_validator(mode="after")(points_valid)


class PointsLab(TrainingLab):
    """One linear model trained full batch (every point, every step) on 2-D points plus the
    learner's clicks (`points`, live); `epochs` steps. A subclass gives `base_points()` and
    `grad_vector(model)`; `measure()` is its scalars after each step (and at a snapshot,
    with the gradient at rest); `self.grad` is the last update's gradient, for its frame."""

    stream_grad_norms = False  # the gradient is in the frames, coordinate by coordinate

    def base_points(self) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def grad_vector(self, model: torch.nn.Module) -> torch.Tensor:
        raise NotImplementedError

    def measure(self) -> dict[str, float]:
        raise NotImplementedError

    def set_points(self, params: Any) -> None:
        self.x, self.y = points2d.with_points(*self.base, params.points)

    def setup(self) -> None:
        self.base = self.base_points()
        self.set_points(self.params)
        self.axis, self.grid = points2d.grid(GRID)
        self.grad = torch.zeros(0)

    def max_steps(self) -> int:
        return self.params.epochs

    def update_live(self, params: Any) -> None:
        if params.points != self.params.points:
            self.set_points(params)
        super().update_live(params)

    def batch(self, gen: torch.Generator) -> Any:
        return self.x, self.y

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        if batch is not None:
            self.grad = self.grad_vector(arm.model)  # the update's gradient
        return self.measure()

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        self.gradient_at_rest(arm, self.batch(self.data_gen))  # no step: the gradient here
        self.grad = self.grad_vector(arm.model)
        arm.optimizer.zero_grad()
        return self.measure()

    def lab_state(self) -> dict:
        return {"grad": self.grad.clone()}

    def load_lab_state(self, state: dict) -> None:
        if "grad" in state:
            self.grad = state["grad"].clone()


@register
class LogisticLab(PointsLab):
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

    def base_points(self) -> tuple[torch.Tensor, torch.Tensor]:
        p = self.params
        cfg = points2d.PointsConfig(kind=p.dataset, n=p.n, pos_frac=p.pos_frac)
        return points2d.make(cfg, self.seed)

    def arms(self) -> list[ArmSpec]:
        cfg = logistic.LogisticConfig(self.params.features)
        build = lambda: logistic.LogisticRegression(cfg)  # noqa: E731
        return [ArmSpec("logistic", build, OptimConfig("sgd", lr=self.params.lr), self.seed)]

    # -- training (the engine runs the loop: full batch, every point) ---------------------
    def loss(self, arm: Arm, batch) -> torch.Tensor:
        x, y = batch
        return logistic.bce(arm.model(x), y)

    def grad_vector(self, model) -> torch.Tensor:
        return torch.cat([model.linear.bias.grad, model.linear.weight.grad[0]]).clone()

    def measure(self) -> dict[str, float]:
        """Counted on every point shown, after the step, at the threshold."""
        with torch.no_grad():
            logits = self.model(self.x)
            loss = float(logistic.bce(logits, self.y))
            self.p = torch.sigmoid(logits)
        m = self.m = logistic.metrics(self.p, self.y, self.params.threshold)
        return {
            "loss": loss,
            "accuracy": m.accuracy,
            "precision": m.precision,
            "recall": m.recall,
            "f1": m.f1,
            "baseline_accuracy": logistic.always_no(self.y).accuracy,
        }

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict]:
        thr, m, p, grad = self.params.threshold, self.m, self.p, self.grad
        base = logistic.always_no(self.y)
        with torch.no_grad():
            surface = self.model.prob(self.grid).reshape(GRID, GRID)  # [x2, x1]
        theta, names = self.model.theta()
        tensors = [
            TensorOut("boundary", surface, "u8"),
            TensorOut("points", torch.cat([self.x, self.y[:, None]], 1), "f32"),  # [N, 3]
            TensorOut("prob", p, "f32"),
            TensorOut("confusion", m.matrix(), "f32"),  # [[TN, FP], [FN, TP]]
            TensorOut("theta", theta, "f32", names),
            TensorOut("grad", grad, "f32", names),
        ]
        meta = {
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
        return tensors, meta
