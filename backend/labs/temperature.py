"""Lab `temperature`: tomorrow from the last two days, ŷ = (A·t₋₂ + B·t₋₁) / C.

Trained by full-batch gradient descent on the training split of a generated seasonal series,
from the averaging rule A = B = 1, C = 2. The view shows two valleys: loss over (C, A) with
B/C held (every ray from the origin is a level line: only A/C and B/C are identifiable) and
loss over the identifiable plane (A/C, B/C). The split is in time order or shuffled; train,
validation and test losses are computed on their whole splits every step, beside the loss
on the last 15 % of days (the real future), so a shuffled validation that looks too good
shows itself. The trainer (backend/trainer.py) runs the loop.
"""

from __future__ import annotations

from typing import Literal

import torch

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, param
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models import temperature as tm
from models.data import temperature as data

GRID = 48
RATIO_RANGE = ((-0.5, 1.5), (-0.5, 1.5))  # (a, b) = (A/C, B/C)
VALLEY_RANGE = ((0.1, 4.0), (-1.0, 3.0))  # (C, A)
SPLIT_CODE = {"train": 0, "val": 1, "test": 2}


class Params(LabParams):
    split: Literal["time", "shuffled"] = param(
        "time",
        zh="训练/验证/测试的划分",
        en="Train / validation / test split",
        choices={
            "time": ("按时间顺序（测试集是未来）", "In time order (test is the future)"),
            "shuffled": ("随机打乱（泄漏）", "Shuffled (leaks the future)"),
        },
    )
    lr: float = param(
        0.005, zh="学习率", en="Learning rate", ge=1e-5, le=0.05, scale="log", live=True
    )
    train_c: bool = param(True, zh="C 也参与训练", en="Train C too", live=True)
    epochs: int = param(1000, zh="训练步数", en="Steps to train", ge=1, le=20000)


@register
class TemperatureLab(TrainingLab):
    id = "temperature"
    chapter = 1
    order = 4
    title = {"zh": "用前两天预测明天的气温", "en": "Tomorrow's temperature from the last two days"}
    description = {
        "zh": "ŷ = (A·t₋₂ + B·t₋₁)/C，从取平均 A=B=1、C=2 出发。A、B、C 同乘一个数预测不变："
        "只有 A/C 和 B/C 能被确定。再看按时间划分和随机打乱的验证集差在哪里。",
        "en": "ŷ = (A·t₋₂ + B·t₋₁)/C, starting from the average A = B = 1, C = 2. Scaling A, B "
        "and C together changes nothing: only A/C and B/C can be learned. Then compare a "
        "time-ordered split with a shuffled one.",
    }
    Params = Params
    tensors = ("ratio_surface", "valley", "series", "prediction", "split", "hessian_eig")

    stream_grad_norms = False  # each of A, B, C has its gradient as a scalar

    def setup(self) -> None:
        params, seed = self.params, self.seed
        self.cfg = data.SeriesConfig()
        # A few thousand numbers: the CPU is the right device whatever the session offers.
        self.series = data.generate(self.cfg, seed)
        self.x, self.y = data.windows(self.series)
        n = self.y.shape[0]
        self.idx = data.split(n, params.split, self.cfg, seed)
        self.idx["future"] = data.future(n, self.cfg)
        self.split_codes = torch.zeros(n)
        for name, code in SPLIT_CODE.items():
            self.split_codes[self.idx[name]] = code
        tr = self.idx["train"]
        self.x_tr, self.y_tr = self.x[tr], self.y[tr]
        self.ab_opt = tm.closed_form_ratios(self.x_tr, self.y_tr)
        self.opt_loss = float(
            tm.ratio_surface(self.x_tr.double(), self.y_tr, self.ab_opt[:1], self.ab_opt[1:])[0, 0]
        )

    def arms(self) -> list[ArmSpec]:
        return [ArmSpec("two-day", tm.TwoDay, OptimConfig("sgd", lr=self.params.lr), self.seed)]

    def built(self) -> None:
        self._freeze_c()

    def _freeze_c(self) -> None:
        # Not training C: no gradient for it, and SGD leaves a parameter without one alone.
        self.model.C.requires_grad_(self.params.train_c)

    def max_steps(self) -> int:
        return self.params.epochs

    def update_live(self, params: Params) -> None:
        super().update_live(params)
        self._freeze_c()

    def batch(self, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x_tr, self.y_tr

    def loss(self, arm: Arm, batch) -> torch.Tensor:
        x, y = batch
        return tm.mse(arm.model(x), y)

    def _grads(self) -> torch.Tensor:
        return torch.stack(
            [p.grad if p.grad is not None else torch.zeros(()) for p in self.model.parameters()]
        )

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        return self._scalars(self._grads())  # losses after the step: the state the view shows

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        self.gradient_at_rest(arm, self.batch(self.data_gen))
        grads = self._grads()
        arm.optimizer.zero_grad()
        return self._scalars(grads)

    def _scalars(self, grads: torch.Tensor) -> dict[str, float]:
        abc = self.model.vector()
        A, B, C = (float(v) for v in abc)
        with torch.no_grad():
            pred = self.pred = self.model(self.x)
            err2 = (pred - self.y) ** 2
            losses = {k: float(err2[i].mean()) for k, i in self.idx.items()}
            scaled = float(tm.loss_at(self.x_tr, self.y_tr, 2 * abc))
        return {
            "loss": losses["train"],
            "val_loss": losses["val"],
            "test_loss": losses["test"],
            "future_loss": losses["future"],
            "loss_scaled": scaled,  # the loss at 2·(A, B, C): equal, up to rounding
            "A": A,
            "B": B,
            "C": C,
            "a": A / C if C else float("nan"),
            "b": B / C if C else float("nan"),
            "grad_A": float(grads[0]),
            "grad_B": float(grads[1]),
            "grad_C": float(grads[2]),
        }

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict]:
        abc = self.model.vector()
        A, B, C = (float(v) for v in abc)
        finite = bool(torch.isfinite(abc).all()) and C != 0
        if not finite:
            return [], {}
        pred = self.pred
        (a0, a1), (b0, b1) = RATIO_RANGE
        ratio = tm.ratio_surface(
            self.x_tr,
            self.y_tr,
            torch.linspace(a0, a1, GRID),
            torch.linspace(b0, b1, GRID),
        )
        (c0, c1), (v0, v1) = VALLEY_RANGE
        b_now = B / C
        valley = tm.valley_surface(
            self.x_tr,
            self.y_tr,
            torch.linspace(c0, c1, GRID),
            torch.linspace(v0, v1, GRID),
            b_now,
        )
        eig = torch.linalg.eigvalsh(tm.hessian(self.x_tr, self.y_tr, abc))
        tensors = [
            # log10 keeps the valley floor visible next to the walls (u8 has 256 levels).
            TensorOut("ratio_surface", torch.log10(ratio.clamp_min(1e-6)), "u8"),
            TensorOut("valley", torch.log10(valley.clamp_min(1e-6)), "u8"),
            TensorOut("series", self.series, "f32"),
            TensorOut("prediction", pred, "f32"),
            TensorOut("split", self.split_codes, "u8"),
            TensorOut("hessian_eig", eig, "f32", ["λ1", "λ2", "λ3"]),
        ]
        lam = float(eig[-1])
        meta = {
            "ratio_ranges": [list(RATIO_RANGE[0]), list(RATIO_RANGE[1])],
            "valley_ranges": [list(VALLEY_RANGE[0]), list(VALLEY_RANGE[1])],
            "valley_b": b_now,
            "valley_slope": tm.best_a_given_b(self.x_tr, self.y_tr, b_now),
            "optimum": [float(v) for v in self.ab_opt],
            "optimum_loss": self.opt_loss,
            "critical_lr": 2.0 / lam if lam > 0 else None,
            "split_mode": self.params.split,
            "sizes": {k: int(v.numel()) for k, v in self.idx.items()},
        }
        return tensors, meta
