"""Lab `live-stream`: predict a stream's peak viewers, the `linear-regression` lab on one table.

A thin subclass of `LinearRegressionLab`, through the hooks its docstring states, with its
own Params (built from the same field functions) and defaults (z-scored inputs, torch's MSE, lr 1e-2, weights N(0, 0.01)) and what the
curriculum adds: the prediction for the unseen stream (180000, 12000, 20, 2), the largest
training error and the MSE every step, and why raw inputs explode: each weight's gradient
and curvature (the Hessian's diagonal) beside the stability limit 2/λmax. Two extra feature
sets: push one-hot encoded, and log(users).
"""

from __future__ import annotations

from typing import Any, Literal

import torch

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, param
from backend.labs.linear_regression import (
    Batch,
    LinearRegressionLab,
    Table,
    batch_field,
    batch_size_field,
    epochs_field,
    loss_field,
    lr_field,
)
from models import linear
from models.data import live_stream

Features = Literal["raw", "zscore", "onehot", "log_users"]
Axis = Literal["users", "reservations", "hour", "push", "bias"]
AXIS_CHOICES = {
    "users": ("总用户数（或 log）", "Users (or log users)"),
    "reservations": ("预约人数", "Reservations"),
    "hour": ("开播时刻", "Hour"),
    "push": ("推送（或 app 推送）", "Push (or push = app)"),
    "bias": ("偏置", "Bias"),
}


class Params(LabParams):
    features: Features = param(
        "zscore",
        zh="输入特征",
        en="Input features",
        choices={
            "raw": ("原始数值", "Raw numbers"),
            "zscore": ("标准化（z-score）", "Z-scored"),
            "onehot": ("标准化，推送改为独热编码", "Z-scored, push one-hot"),
            "log_users": ("标准化，用户数取 log", "Z-scored, log(users)"),
        },
    )
    loss: linear.Convention = loss_field("mse")
    lr: float = lr_field(1e-2)
    batch: Batch = batch_field()
    batch_size: int = batch_size_field(10)
    init: Literal["normal", "zeros"] = param(
        "normal",
        zh="初始权重",
        en="Initial weights",
        choices={"normal": ("N(0, 0.01)", "N(0, 0.01)"), "zeros": ("全零", "Zeros")},
    )
    surface_x: Axis = param("users", zh="等高线横轴", en="Surface x-axis", choices=AXIS_CHOICES)
    surface_y: Axis = param(
        "reservations", zh="等高线纵轴", en="Surface y-axis", choices=AXIS_CHOICES
    )
    epochs: int = epochs_field()


def features(x: torch.Tensor, kind: Features) -> tuple[torch.Tensor, list[str]]:
    """The raw table's columns for a feature set (before z-scoring): ([N, F], names)."""
    users, res, hour, push = x.unbind(-1)
    if kind == "onehot":  # push 0 (none) is the baseline; app and SMS get their own weight
        cols = [users, res, hour, (push == 1).to(x.dtype), (push == 2).to(x.dtype)]
        return torch.stack(cols, -1), ["users", "reservations", "hour", "push_app", "push_sms"]
    if kind == "log_users":
        return torch.stack([users.log(), res, hour, push], -1), [
            "log_users",
            "reservations",
            "hour",
            "push",
        ]
    return x, list(live_stream.FEATURES)


def _axis_index(names: list[str], axis: str) -> int:
    if axis == "bias":
        return len(names)
    return next(i for i, n in enumerate(names) if n.endswith(axis) or n.startswith(axis))


@register
class LiveStreamLab(LinearRegressionLab):
    id = "live-stream"
    chapter = 1
    order = 3
    title = {"zh": "直播峰值人数预测", "en": "Predicting a live stream's peak viewers"}
    description = {
        "zh": "由总用户数、预约人数、开播时刻和推送方式预测直播峰值人数。原始数值让学习率 1e-9 也会爆炸，"
        "标准化之后 2 万步收敛；看每个权重的梯度和曲率，找到真正的原因。",
        "en": "Peak viewers from users, reservations, hour and push. On raw numbers even lr 1e-9 "
        "explodes; z-scored, it converges in 20,000 steps. Each weight's gradient and curvature "
        "show the real reason.",
    }
    Params = Params
    tensors = (*LinearRegressionLab.tensors, "curvature")
    # 20,000 full-batch steps of four weights: at 100 a second the convergence the lab is
    # about would take minutes; the server still caps it at Settings.max_steps_per_s.
    play_speed = 2000

    # -- the parent's hooks ------------------------------------------------------------------
    def table(self) -> Table:
        raw_x, y = live_stream.load()
        x, names = features(raw_x, self.params.features)
        return x, y, names

    def zscored(self) -> bool:
        return self.params.features != "raw"

    def init_std(self) -> float:
        return 0.01 if self.params.init == "normal" else 0.0

    def surface_axes(self) -> tuple[int, int]:
        # By name: one-hot has six parameters, past the parent's 0..4 range.
        p = self.params
        return _axis_index(self.names, p.surface_x), _axis_index(self.names, p.surface_y)

    def setup(self) -> None:
        self.prev_loss: float | None = None
        super().setup()
        self.variant = self.params.features
        # The unseen stream, through the same features and the same z-score.
        new_raw, _ = features(
            torch.tensor([live_stream.NEW_STREAM], dtype=torch.float32), self.variant
        )
        self.x_new = self.inputs(new_raw)  # [1, F]
        self.pred_new_opt = float(linear.design(self.x_new.double()) @ self.optimum())
        # Curvature of the loss per parameter (the Hessian's diagonal) and its largest
        # eigenvalue: gradient descent is stable only below 2/λmax.
        a = linear.design(self.x.double())  # [N, P]
        scale = 1.0 if self.params.loss == "half_mse" else 2.0
        hessian = a.T @ a / a.shape[0] * scale  # [P, P]
        self.curv = torch.diagonal(hessian).clone()
        self.lam_max = float(torch.linalg.eigvalsh(hessian)[-1])

    def more_scalars(self, scalars: dict[str, float]) -> dict[str, float]:
        with torch.no_grad():
            err = self.pred - self.y  # the whole table's prediction, made by _scalars just now
            mse, max_error, pred_new = torch.stack(
                [(err**2).mean(), err.abs().max(), self.model(self.x_new)[0]]
            ).tolist()
        loss = scalars["loss"]
        out = {"mse": mse, "max_error": max_error, "pred_new": pred_new}
        if self.prev_loss and self.prev_loss > 0:
            out["growth"] = loss / self.prev_loss  # ~418 per step on raw at lr 1e-9
        self.prev_loss = loss
        return out

    def more_picture(self) -> tuple[list[TensorOut], dict[str, Any]]:
        lr = self.params.lr
        meta = {
            "features": self.variant,
            "new_stream": list(live_stream.NEW_STREAM),
            "pred_new_optimum": self.pred_new_opt,
            "lambda_max": self.lam_max,
            # Along the top eigenvector the error is multiplied by (1 − lr·λmax) per
            # step, so the loss by its square: the growth an unstable lr must show.
            "growth_predicted": (1 - lr * self.lam_max) ** 2,
        }
        return [TensorOut("curvature", self.curv, "f32", self.param_labels())], meta

    def lab_state(self) -> dict:
        return {**super().lab_state(), "prev_loss": self.prev_loss}

    def load_lab_state(self, state: dict) -> None:
        super().load_lab_state(state)
        self.prev_loss = state.get("prev_loss")
