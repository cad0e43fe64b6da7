"""Lab `live-stream`: predict a stream's peak viewers, the `linear-regression` lab on one table.

A thin subclass of `LinearRegressionLab`, through the contract its docstring states, with its
own defaults (z-scored inputs, torch's MSE, lr 1e-2, weights N(0, 0.01)) and what the
curriculum adds: the prediction for the unseen stream (180000, 12000, 20, 2), the largest
training error and the MSE every step, and why raw inputs explode: each weight's gradient
and curvature (the Hessian's diagonal) beside the stability limit 2/λmax. Two extra feature
sets: push one-hot encoded, and log(users).
"""

from __future__ import annotations

from typing import Literal

import torch

from backend.labs import register
from backend.labs.base import Frame, LabParams, TensorOut, param
from backend.labs.linear_regression import LinearRegressionLab
from backend.labs.linear_regression import Params as LinearParams
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
            "zscore": ("标准化 (z-score)", "Z-scored"),
            "onehot": ("标准化，推送改为独热编码", "Z-scored, push one-hot"),
            "log_users": ("标准化，用户数取 log", "Z-scored, log(users)"),
        },
    )
    loss: linear.Convention = param(
        "mse",
        zh="损失约定",
        en="Loss convention",
        choices={
            "mse": ("均方误差 (MSELoss)", "MSE (MSELoss)"),
            "half_mse": ("½·均方误差", "½ · MSE"),
        },
    )
    lr: float = param(
        1e-2, zh="学习率", en="Learning rate", ge=1e-12, le=1.0, scale="log", live=True
    )
    batch: Literal["full", "sgd", "minibatch"] = param(
        "full",
        zh="批次",
        en="Batch",
        live=True,
        choices={
            "full": ("全批量", "Full batch"),
            "sgd": ("随机 (每步一个样本)", "SGD (one sample a step)"),
            "minibatch": ("小批量", "Mini-batch"),
        },
    )
    batch_size: int = param(4, zh="小批量大小", en="Mini-batch size", ge=1, le=10, live=True)
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
    epochs: int = param(20000, zh="训练步数", en="Steps to train", ge=1, le=100000)


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

    def __init__(self, params: Params, seed: int, device: torch.device):
        self.variant = params.features
        raw_x, y = live_stream.load()
        x, names = features(raw_x, params.features)
        # Surface axes by name (one-hot has six parameters, past the parent's 0..4 range).
        axes = (_axis_index(names, params.surface_x), _axis_index(names, params.surface_y))
        base = LinearParams(
            dataset="live-stream",
            loss=params.loss,
            features="raw" if params.features == "raw" else "zscore",
            lr=params.lr,
            batch=params.batch,
            batch_size=params.batch_size,
            init=params.init,
            epochs=params.epochs,
        )
        super().__init__(base, seed, device, data=(x, y, names), axes=axes)
        self.params = params  # the parent reads lr, batch, batch_size, loss, epochs from it
        # The unseen stream, through the same features and the same z-score.
        new_raw, _ = features(
            torch.tensor([live_stream.NEW_STREAM], dtype=torch.float32), self.variant
        )
        self.x_new = self.inputs(new_raw)  # [1, F]
        self.pred_new_opt = float(linear.design(self.x_new.double()) @ self.optimum())
        # Curvature of the loss per parameter (the Hessian's diagonal) and its largest
        # eigenvalue: gradient descent is stable only below 2/λmax.
        a = linear.design(self.x.double())  # [N, P]
        scale = 1.0 if params.loss == "half_mse" else 2.0
        hessian = a.T @ a / a.shape[0] * scale  # [P, P]
        self.curv = torch.diagonal(hessian).clone()
        self.lam_max = float(torch.linalg.eigvalsh(hessian)[-1])
        self.prev_loss: float | None = None

    def extend_frame(self, frame: Frame) -> None:
        with torch.no_grad():
            err = self.model(self.x) - self.y
            pred_new = float(self.model(self.x_new)[0])
        loss = frame.scalars["loss"]
        frame.scalars.update(
            {
                "mse": float((err**2).mean()),
                "max_error": float(err.abs().max()),
                "pred_new": pred_new,
            }
        )
        if self.prev_loss and self.prev_loss > 0:
            frame.scalars["growth"] = loss / self.prev_loss  # ~418 per step on raw at lr 1e-9
        self.prev_loss = loss
        if frame.tensors:
            frame.tensors.append(TensorOut("curvature", self.curv, "f32", self.param_labels()))
            lr = self.params.lr
            frame.meta.update(
                {
                    "features": self.variant,
                    "new_stream": list(live_stream.NEW_STREAM),
                    "pred_new_optimum": self.pred_new_opt,
                    "lambda_max": self.lam_max,
                    # Along the top eigenvector the error is multiplied by (1 − lr·λmax) per
                    # step, so the loss by its square: the growth an unstable lr must show.
                    "growth_predicted": (1 - lr * self.lam_max) ** 2,
                }
            )

    def state_dict(self) -> dict:
        return {**super().state_dict(), "prev_loss": self.prev_loss}

    def load_state_dict(self, state: dict) -> None:
        super().load_state_dict(state)
        self.prev_loss = state.get("prev_loss")
