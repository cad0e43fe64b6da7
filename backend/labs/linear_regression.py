"""Lab `linear-regression`: fit a line (or a plane) by gradient descent, watch the loss surface.

Datasets: the two-point example (1,2),(2,3); the live-stream table (4 features, raw or
z-scored); or the learner's own points. The view draws the loss surface over two chosen
parameters with the descent path (the path is the recorded w, b scalars), the closed-form
optimum, per-parameter gradients (autograd's) and the fitted line. The trainer
(backend/trainer.py) runs the loop; this lab says the table, the loss convention (½·MSE or
MSE), the batch (full, one sample, mini-batch) and the picture. `live-stream` subclasses it
through the hooks its class docstring lists, and builds its Params from the same fields.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import torch
from pydantic import field_validator

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models import linear
from models.data import live_stream

GRID = 48  # loss-surface resolution per axis
LINE_POINTS = 64
Table = tuple[torch.Tensor, torch.Tensor, list[str]]  # x [N, F] raw, y [N], column names


Batch = Literal["full", "sgd", "minibatch"]
LOSS_CHOICES = {
    "half_mse": ("½·均方误差", "½ · MSE"),
    "mse": ("均方误差（MSELoss）", "MSE (MSELoss)"),
}


# The descent's fields, shared with live-stream's Params (each lab its own defaults).
def loss_field(default: str) -> Any:
    choices = {default: LOSS_CHOICES[default], **LOSS_CHOICES}  # the default listed first
    return param(default, zh="损失约定", en="Loss convention", choices=choices)


def lr_field(default: float) -> Any:
    return param(default, zh="学习率", en="Learning rate", ge=1e-12, le=1.0, scale="log", live=True)  # fmt: skip


def batch_field() -> Any:
    return param(
        "full",
        zh="批次",
        en="Batch",
        live=True,
        choices={
            "full": ("全批量", "Full batch"),
            "sgd": ("随机（每步一个样本）", "SGD (one sample a step)"),
            "minibatch": ("小批量", "Mini-batch"),
        },
    )


def batch_size_field(most: int) -> Any:
    return param(4, zh="小批量大小", en="Mini-batch size", ge=1, le=most, live=True)


def epochs_field() -> Any:
    return param(20000, zh="训练步数", en="Steps to train", ge=1, le=100000)


class Params(LabParams):
    dataset: Literal["two-points", "live-stream", "custom"] = param(
        "two-points",
        zh="数据",
        en="Data",
        choices={
            "two-points": ("两个点 (1,2),(2,3)", "Two points (1,2),(2,3)"),
            "live-stream": ("直播峰值人数表", "Live-stream peak viewers"),
            "custom": ("我自己的点", "My own points"),
        },
    )
    loss: linear.Convention = loss_field("half_mse")
    features: Literal["raw", "zscore"] = param(
        "raw",
        zh="输入特征",
        en="Input features",
        choices={"raw": ("原始数值", "Raw numbers"), "zscore": ("标准化（z-score）", "Z-scored")},
    )
    lr: float = lr_field(0.1)
    batch: Batch = batch_field()
    batch_size: int = batch_size_field(50)
    init: Literal["auto", "zeros", "normal"] = param(
        "auto",
        zh="初始权重",
        en="Initial weights",
        choices={
            "auto": ("按数据（两点: 0; 直播: N(0,0.01)）", "By dataset (0, or N(0, 0.01))"),
            "zeros": ("全零", "Zeros"),
            "normal": ("N(0, 0.01)", "N(0, 0.01)"),
        },
    )
    axis_x: int = param(0, zh="等高线横轴参数", en="Surface x-axis parameter", ge=0, le=4)
    axis_y: int = param(
        4, zh="等高线纵轴参数（4 = 偏置）", en="Surface y-axis (4 = bias)", ge=0, le=4
    )
    epochs: int = epochs_field()
    points: list[tuple[float, float]] = param(
        [(1.0, 2.0), (2.0, 3.0), (3.0, 3.5)],
        zh="我的点",
        en="My points",
        widget="hidden",
        min_length=1,
        max_length=50,
    )

    @field_validator("points")
    @classmethod
    def _points_in_range(cls, points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        for i, (px, py) in enumerate(points):
            if not (-100 <= px <= 100 and -100 <= py <= 100):
                raise refuse(
                    "err.p_point_outside", "point {i} is outside [{lo}, {hi}]", i=i, lo=-100, hi=100
                )
        return points


@register
class LinearRegressionLab(TrainingLab):
    """Subclassing (backend/labs/live_stream.py does), the stated contract:

    - Params: the subclass's own, with at least `loss`, `lr`, `batch`, `batch_size`,
      `epochs` (build them from this module's `*_field` functions).
    - Override: `table()` (x [N, F] raw, y [N], column names), `zscored()`, `init_std()`,
      `surface_axes()` (the surface's two parameter indices; the bias is the last),
      `more_scalars(scalars)` (added to every step's and snapshot's), `more_picture()`
      (tensors and meta added to every sent frame), `lab_state`/`load_lab_state`.
    - Read: `model`, `x` (inputs as trained on), `x_raw`, `y`, `names`.
    - Call: `inputs` (raw rows through the same scaling), `optimum`, `param_labels`.
    """

    id = "linear-regression"
    chapter = 1
    order = 2
    title = {"zh": "线性回归：梯度下降拟合直线", "en": "Linear regression by gradient descent"}
    description = {
        "zh": "两个点、直播人数表或你自己的点：看损失曲面上的下降路径，对比闭式最优解，学习率太大就发散。",
        "en": "Two points, a live-stream table or your own points: watch the descent path on the "
        "loss surface beside the closed-form optimum, and see a too-large learning rate diverge.",
    }
    Params = Params
    tensors = ("weights", "grad", "loss_surface", "prediction", "line")
    stream_grad_norms = False  # every parameter's gradient is a scalar of its own

    # -- the hooks a subclass overrides ---------------------------------------------------
    def table(self) -> Table:
        p = self.params
        if p.dataset == "live-stream":
            x, y = live_stream.load()
            return x, y, list(live_stream.FEATURES)
        pts = [(1.0, 2.0), (2.0, 3.0)] if p.dataset == "two-points" else p.points
        t = torch.tensor(pts, dtype=torch.float32)
        return t[:, :1], t[:, 1], ["x"]

    def zscored(self) -> bool:
        return self.params.features == "zscore"

    def init_std(self) -> float:
        """The initial weights' spread (0: zeros); "auto": N(0, 0.01) on the live table."""
        p = self.params
        init = p.init if p.init != "auto" else ("normal" if p.dataset == "live-stream" else "zeros")
        return 0.01 if init == "normal" else 0.0

    def surface_axes(self) -> tuple[int, int]:
        return self.params.axis_x, self.params.axis_y

    def more_scalars(self, scalars: dict[str, float]) -> dict[str, float]:
        """Scalars added to every step's (and snapshot's) after the base lab's: `loss`
        (the whole table's, after the step), each parameter and its gradient."""
        return {}

    def more_picture(self) -> tuple[list[TensorOut], dict[str, Any]]:
        """Tensors and meta added to every sent frame."""
        return [], {}

    # -- the lab --------------------------------------------------------------------------
    def setup(self) -> None:
        x, y, names = self.table()
        self.x_raw, self.y = x, y
        self.x_scale: tuple[torch.Tensor, torch.Tensor] | None = None
        if self.zscored():
            mu, sd = live_stream.zscore_stats(x)
            self.x_scale = (mu, torch.where(sd > 0, sd, torch.ones_like(sd)))
        self.x = self.inputs(x)
        self.names = names
        self.w_opt, self.b_opt = linear.closed_form(self.x, y)
        conv = self.params.loss
        self.opt_loss = float(
            linear.loss_fn(linear.design(self.x.double()) @ self.optimum(), y.double(), conv)
        )
        self.crit_lr = linear.critical_lr(self.x, conv)
        n_par = x.shape[1] + 1
        ax, ay = self.surface_axes()
        self.ax, self.ay = min(ax, n_par - 1), min(ay, n_par - 1)
        if self.ax == self.ay:
            self.ay = n_par - 1 if self.ax != n_par - 1 else 0
        self.grads = torch.zeros(n_par)  # the last gradient, per parameter

    def arms(self) -> list[ArmSpec]:
        cfg = linear.LinearConfig(self.x.shape[1], self.params.loss, self.init_std())
        build = lambda: linear.LinearRegression(cfg)  # noqa: E731
        return [ArmSpec("linear", build, OptimConfig("sgd", lr=self.params.lr), self.seed)]

    def built(self) -> None:
        self.ranges = self._ranges(self.optimum())

    def _cover(self, p: torch.Tensor) -> None:
        """Widen the surface's ranges to hold the point p (every step's: the path drawn on the
        surface is every step's parameters, which may swing past the box of the start and the
        optimum). Only ever wider, by a margin, and only for finite values."""
        if getattr(self, "ranges", None) is None:
            return  # before the model is built: `built` sets the first ranges
        for axis, i in enumerate((self.ax, self.ay)):
            v = float(p[i])
            lo, hi = self.ranges[axis]
            if not math.isfinite(v) or lo <= v <= hi:
                continue
            pad = 0.1 * (hi - lo)
            self.ranges[axis] = [min(lo, v - pad), max(hi, v + pad)]

    # -- the contract with subclasses --------------------------------------------------------
    def inputs(self, x_raw: torch.Tensor) -> torch.Tensor:
        """Raw rows [N, F] as the model sees them: z-scored with the training table's mean
        and spread when the lab is `zscored()` (so unseen rows go through the same scale)."""
        if self.x_scale is None:
            return x_raw
        mu, sd = self.x_scale
        return (x_raw - mu) / sd

    def optimum(self) -> torch.Tensor:
        """The closed-form optimum [w..., b] (float64) on the inputs as trained on."""
        return torch.cat([self.w_opt, self.b_opt[None]])

    def param_labels(self) -> list[str]:
        """One label a parameter, the bias last: w_<column>..., b."""
        return [f"w_{n}" for n in self.names] + ["b"]

    def _ranges(self, opt_params: torch.Tensor) -> list[list[float]]:
        start = self._params_vector().double()
        out = []
        for i in (self.ax, self.ay):
            c, s = float(opt_params[i]), float(start[i])
            half = max(abs(c - s) * 1.3, abs(c) * 0.5, 1.0)
            mid = (c + s) / 2
            out.append([mid - half, mid + half])
        return out

    def _params_vector(self) -> torch.Tensor:
        return torch.cat([self.model.weight.detach(), self.model.bias.detach()[None]])

    def max_steps(self) -> int:
        return self.params.epochs

    # -- training (the engine runs the loop: backend/trainer.py) --------------------------
    def batch(self, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        n = self.x.shape[0]
        size = {"full": n, "sgd": 1, "minibatch": min(self.params.batch_size, n)}[self.params.batch]
        if size == n:
            return self.x, self.y
        idx = torch.randperm(n, generator=gen)[:size]
        return self.x[idx], self.y[idx]

    def loss(self, arm: Arm, batch) -> torch.Tensor:
        xb, yb = batch
        return linear.loss_fn(arm.model(xb), yb, self.params.loss)

    def _grad_vector(self, model) -> torch.Tensor:
        return torch.cat([model.weight.grad, model.bias.grad[None]]).clone()

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        if batch is not None:  # the update's gradient (on its batch)
            self.grads = self._grad_vector(arm.model)
        return self._scalars()

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        """No step: the whole table's gradient at the current weights."""
        self.gradient_at_rest(arm, (self.x, self.y))
        self.grads = self._grad_vector(arm.model)
        arm.optimizer.zero_grad()
        return self._scalars()

    def _scalars(self) -> dict[str, float]:
        # The loss reported is on the whole data set, after the step (what the surface shows).
        with torch.no_grad():
            self.pred = self.model(self.x)
            full_loss = float(linear.loss_fn(self.pred, self.y, self.params.loss))
        p = self._params_vector()
        self._cover(p)
        labels = self.param_labels()
        scalars = {"loss": full_loss}
        scalars.update({lab: float(v) for lab, v in zip(labels, p, strict=True)})
        scalars.update({f"grad_{lab}": float(g) for lab, g in zip(labels, self.grads, strict=True)})
        scalars.update(self.more_scalars(scalars))
        return scalars

    # -- the picture ----------------------------------------------------------------------
    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        p = self._params_vector()
        labels = self.param_labels()
        (x0, x1), (y0, y1) = self.ranges
        xs = torch.linspace(x0, x1, GRID, dtype=torch.float64)
        ys = torch.linspace(y0, y1, GRID, dtype=torch.float64)
        surface = linear.loss_surface(self.x, self.y, p, self.ax, self.ay, xs, ys, self.params.loss)
        tensors = [
            TensorOut("weights", p, "f32", labels),
            TensorOut("grad", self.grads, "f32", labels),
            # log10 keeps the valley visible next to the walls (u8 has 256 levels).
            TensorOut("loss_surface", torch.log10(surface.clamp_min(1e-12)), "u8"),
            TensorOut("prediction", self.pred, "f32"),
        ]
        meta: dict[str, Any] = {}
        if self.x.shape[1] == 1:
            lo, hi = float(self.x.min()), float(self.x.max())
            pad = max(hi - lo, 1.0) * 0.25
            grid = torch.linspace(lo - pad, hi + pad, LINE_POINTS)
            with torch.no_grad():
                tensors.append(TensorOut("line", self.model(grid[:, None]), "f32"))
            meta["line_x"] = [lo - pad, hi + pad]
        meta.update(
            {
                "names": labels,
                "x": self.x_raw.tolist(),
                "y": self.y.tolist(),
                "surface": {
                    "x": labels[self.ax],
                    "y": labels[self.ay],
                    "ranges": [list(r) for r in self.ranges],
                    "log10": True,
                },
                "optimum": [float(v) for v in self.optimum()],
                "optimum_loss": self.opt_loss,
                "critical_lr": self.crit_lr,
                "lr": self.params.lr,
            }
        )
        more_t, more_m = self.more_picture()
        return tensors + more_t, {**meta, **more_m}

    def lab_state(self) -> dict[str, Any]:
        return {"grads": self.grads.clone(), "ranges": [list(r) for r in self.ranges]}

    def load_lab_state(self, state: dict[str, Any]) -> None:
        if "grads" in state:
            self.grads = state["grads"].clone()
        if "ranges" in state:  # the surface as widened by the path so far
            self.ranges = [list(r) for r in state["ranges"]]
