"""Lab `linear-regression`: fit a line (or a plane) by gradient descent, watch the loss surface.

Datasets: the two-point example (1,2),(2,3); the live-stream table (4 features, raw or
z-scored); or the learner's own points. The view draws the loss surface over two chosen
parameters with the descent path (the path is the recorded w, b scalars), the closed-form
optimum, per-parameter gradients (autograd's) and the fitted line.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import field_validator

from backend.labs import register
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param
from models import linear
from models.data import live_stream

GRID = 48  # loss-surface resolution per axis
LINE_POINTS = 64
Table = tuple[torch.Tensor, torch.Tensor, list[str]]  # x [N, F] raw, y [N], column names


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
    loss: linear.Convention = param(
        "half_mse",
        zh="损失约定",
        en="Loss convention",
        choices={
            "half_mse": ("½·均方误差", "½ · MSE"),
            "mse": ("均方误差 (MSELoss)", "MSE (MSELoss)"),
        },
    )
    features: Literal["raw", "zscore"] = param(
        "raw",
        zh="输入特征",
        en="Input features",
        choices={"raw": ("原始数值", "Raw numbers"), "zscore": ("标准化 (z-score)", "Z-scored")},
    )
    lr: float = param(
        0.1, zh="学习率", en="Learning rate", ge=1e-12, le=1.0, scale="log", live=True
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
    batch_size: int = param(4, zh="小批量大小", en="Mini-batch size", ge=1, le=50, live=True)
    init: Literal["auto", "zeros", "normal"] = param(
        "auto",
        zh="初始权重",
        en="Initial weights",
        choices={
            "auto": ("按数据 (两点: 0; 直播: N(0,0.01))", "By dataset (0, or N(0, 0.01))"),
            "zeros": ("全零", "Zeros"),
            "normal": ("N(0, 0.01)", "N(0, 0.01)"),
        },
    )
    axis_x: int = param(0, zh="等高线横轴参数", en="Surface x-axis parameter", ge=0, le=4)
    axis_y: int = param(
        4, zh="等高线纵轴参数 (4 = 偏置)", en="Surface y-axis (4 = bias)", ge=0, le=4
    )
    epochs: int = param(20000, zh="训练步数", en="Steps to train", ge=1, le=100000)
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
                raise ValueError(f"point {i} is outside [-100, 100]")
        return points


@register
class LinearRegressionLab(Lab):
    """Subclassing (backend/labs/live_stream.py does), the stated contract:

    - `__init__(params, seed, device, data=, axes=)`: `params` are this lab's Params (they
      choose loss, features, init, lr); `data` is another table, `axes` the surface's two
      parameter indices (the bias is the last). The subclass may then set `self.params` to
      its own Params: every step reads `lr`, `batch`, `batch_size`, `loss` and `epochs`.
    - Read: `model`, `x` (inputs as trained on), `x_raw`, `y`, `names`.
    - Call: `inputs` (raw rows through the same scaling), `optimum`, `param_labels`.
    - Override: `extend_frame` (add figures to each frame), `state_dict`/`load_state_dict`
      (calling the base's).
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

    def __init__(
        self,
        params: Params,
        seed: int,
        device: torch.device,
        data: Table | None = None,
        axes: tuple[int, int] | None = None,
    ):
        """`data` and `axes` are for subclasses (see the class docstring); the registry
        passes neither, and the table and surface axes come from `params`."""
        super().__init__(params, seed, device)
        x, y, names = data or self._table(params)
        self.x_raw, self.y = x, y
        self.x_scale: tuple[torch.Tensor, torch.Tensor] | None = None
        if params.features == "zscore":
            mu, sd = live_stream.zscore_stats(x)
            self.x_scale = (mu, torch.where(sd > 0, sd, torch.ones_like(sd)))
        self.x = self.inputs(x)
        self.names = names
        init = (
            params.init
            if params.init != "auto"
            else ("normal" if params.dataset == "live-stream" else "zeros")
        )
        cfg = linear.LinearConfig(x.shape[1], params.loss, 0.01 if init == "normal" else 0.0)
        self.gen = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        self.model = linear.LinearRegression(cfg)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=params.lr)
        self.w_opt, self.b_opt = linear.closed_form(self.x, y)
        opt_params = self.optimum()
        self.opt_loss = float(
            linear.loss_fn(linear.design(self.x.double()) @ opt_params, y.double(), params.loss)
        )
        self.crit_lr = linear.critical_lr(self.x, params.loss)
        n_par = x.shape[1] + 1
        ax, ay = axes or (params.axis_x, params.axis_y)
        self.ax, self.ay = min(ax, n_par - 1), min(ay, n_par - 1)
        if self.ax == self.ay:
            self.ay = n_par - 1 if self.ax != n_par - 1 else 0
        self.ranges = self._ranges(opt_params)

    @staticmethod
    def _table(p: Params) -> Table:
        if p.dataset == "live-stream":
            x, y = live_stream.load()
            return x, y, list(live_stream.FEATURES)
        pts = [(1.0, 2.0), (2.0, 3.0)] if p.dataset == "two-points" else p.points
        t = torch.tensor(pts, dtype=torch.float32)
        return t[:, :1], t[:, 1], ["x"]

    # -- the contract with subclasses --------------------------------------------------------
    def inputs(self, x_raw: torch.Tensor) -> torch.Tensor:
        """Raw rows [N, F] as the model sees them: z-scored with the training table's mean
        and spread when `features` is "zscore" (so unseen rows go through the same scale)."""
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

    def extend_frame(self, frame: Frame) -> None:
        """Add to every step's frame (scalars; tensors and meta when `frame.tensors` is not
        empty, i.e. the step is captured). The frame already holds the base lab's: `loss`,
        each parameter and its gradient. Nothing here; a subclass's own figures go here."""

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

    def update_live(self, params: Params) -> None:
        self.params = params
        for g in self.opt.param_groups:
            g["lr"] = params.lr

    def _batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        n = self.x.shape[0]
        size = {"full": n, "sgd": 1, "minibatch": min(self.params.batch_size, n)}[self.params.batch]
        if size == n:
            return self.x, self.y
        idx = torch.randperm(n, generator=self.gen)[:size]
        return self.x[idx], self.y[idx]

    def step(self, capture: bool) -> Frame:
        xb, yb = self._batch()
        loss = linear.loss_fn(self.model(xb), yb, self.params.loss)
        self.opt.zero_grad()
        loss.backward()
        grads = torch.cat([self.model.weight.grad, self.model.bias.grad[None]]).clone()
        self.opt.step()
        # The loss reported is on the whole data set, after the step (what the surface shows).
        return self._frame(grads, capture)

    def snapshot(self) -> Frame:
        loss = linear.loss_fn(self.model(self.x), self.y, self.params.loss)
        self.opt.zero_grad()
        loss.backward()
        grads = torch.cat([self.model.weight.grad, self.model.bias.grad[None]]).clone()
        self.opt.zero_grad()
        return self._frame(grads, True)

    def _frame(self, grads: torch.Tensor, capture: bool) -> Frame:
        with torch.no_grad():
            pred = self.model(self.x)
            full_loss = float(linear.loss_fn(pred, self.y, self.params.loss))
        p = self._params_vector()
        labels = self.param_labels()
        scalars = {"loss": full_loss}
        scalars.update({lab: float(v) for lab, v in zip(labels, p, strict=True)})
        scalars.update({f"grad_{lab}": float(g) for lab, g in zip(labels, grads, strict=True)})
        frame = Frame(scalars=scalars)
        if not capture:
            self.extend_frame(frame)
            return frame
        (x0, x1), (y0, y1) = self.ranges
        xs = torch.linspace(x0, x1, GRID, dtype=torch.float64)
        ys = torch.linspace(y0, y1, GRID, dtype=torch.float64)
        surface = linear.loss_surface(self.x, self.y, p, self.ax, self.ay, xs, ys, self.params.loss)
        frame.tensors = [
            TensorOut("weights", p, "f32", labels),
            TensorOut("grad", grads, "f32", labels),
            # log10 keeps the valley visible next to the walls (u8 has 256 levels).
            TensorOut("loss_surface", torch.log10(surface.clamp_min(1e-12)), "u8"),
            TensorOut("prediction", pred, "f32"),
        ]
        if self.x.shape[1] == 1:
            lo, hi = float(self.x.min()), float(self.x.max())
            pad = max(hi - lo, 1.0) * 0.25
            grid = torch.linspace(lo - pad, hi + pad, LINE_POINTS)
            with torch.no_grad():
                frame.tensors.append(TensorOut("line", self.model(grid[:, None]), "f32"))
            frame.meta["line_x"] = [lo - pad, hi + pad]
        frame.meta.update(
            {
                "names": labels,
                "x": self.x_raw.tolist(),
                "y": self.y.tolist(),
                "surface": {
                    "x": labels[self.ax],
                    "y": labels[self.ay],
                    "ranges": self.ranges,
                    "log10": True,
                },
                "optimum": [float(v) for v in self.optimum()],
                "optimum_loss": self.opt_loss,
                "critical_lr": self.crit_lr,
                "lr": self.params.lr,
            }
        )
        self.extend_frame(frame)
        return frame

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "opt": self.opt.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
