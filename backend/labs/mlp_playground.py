"""Lab `mlp-playground`: TensorFlow Playground, with true cross-entropy and more classes.

Data: playground's circle / xor / gauss / spiral (models/data/playground.py), or only the
learner's own points; the learner's points are added to the training split. Inputs: any of
x1, x2, x1², x2², x1·x2, sin x1, sin x2. Model: models/mlp.py with up to 6 hidden layers of
up to 8 units. Loss: binary cross-entropy on one logit for 2 classes, softmax cross-entropy
for more (playground itself uses squared error on a tanh). L1/L2 on the weights (not the
biases) as playground does. One step is one SGD update on a mini-batch; the batches walk a
fresh shuffle of the training split each epoch.

Frames carry every neuron's output over the input grid (`layers.{i}.hook_post`, captured
with models/hooks.py), the class probabilities there (`boundary`), the weights and biases
(`weights.{i}`, `biases.{i}`, i = len(hidden) is the output layer), per-layer gradient norms
and the points. The declared Actions {"action": "set_weight" | "set_bias", ...} edit one
parameter. The trainer (backend/trainer.py) runs the loop; a fork keeps the shuffle.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import torch
from pydantic import Field, StrictInt, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError
from torch import Tensor
from torch.nn import functional as F

from backend.labs import register
from backend.labs.base import LabInput, LabParams, TensorOut, dataset_param, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.data import playground as pg
from models.hooks import capture
from models.mlp import MLP, MLPConfig, layer_grad_norms

GRID = 48  # pictures are GRID × GRID over [-6, 6]²
MAX_LAYERS, MAX_WIDTH, MAX_CLASSES = 6, 8, 5
WEIGHT_LIMIT = 10.0  # a weight or bias set by hand stays in [-10, 10]
FEATURE_LABELS = {
    "x1": ("X₁", "X₁"),
    "x2": ("X₂", "X₂"),
    "x1sq": ("X₁²", "X₁²"),
    "x2sq": ("X₂²", "X₂²"),
    "x1x2": ("X₁·X₂", "X₁·X₂"),
    "sinx1": ("sin(X₁)", "sin(X₁)"),
    "sinx2": ("sin(X₂)", "sin(X₂)"),
}

Width = Annotated[int, Field(ge=1, le=MAX_WIDTH)]
Point = tuple[float, float, int]


class Params(LabParams):
    dataset: Literal["circle", "xor", "gauss", "spiral", "custom"] = dataset_param(
        {"custom": ("只用我画的点", "Only my points")}
    )
    classes: int = param(2, zh="类别数", en="Classes", ge=2, le=MAX_CLASSES)
    noise: int = param(0, zh="噪声（%）", en="Noise (%)", ge=0, le=50, step=5)
    train_pct: int = param(50, zh="训练集比例（%）", en="Training share (%)", ge=10, le=90, step=10)
    n_points: int = param(500, zh="点数", en="Points", ge=100, le=1000, step=50)
    x1: bool = param(True, zh="输入 X₁", en="Input X₁")
    x2: bool = param(True, zh="输入 X₂", en="Input X₂")
    x1sq: bool = param(False, zh="输入 X₁²", en="Input X₁²")
    x2sq: bool = param(False, zh="输入 X₂²", en="Input X₂²")
    x1x2: bool = param(False, zh="输入 X₁·X₂", en="Input X₁·X₂")
    sinx1: bool = param(False, zh="输入 sin(X₁)", en="Input sin(X₁)")
    sinx2: bool = param(False, zh="输入 sin(X₂)", en="Input sin(X₂)")
    hidden: list[Width] = param(
        [4, 2], zh="隐藏层宽度", en="Hidden layer widths", widget="hidden", max_length=MAX_LAYERS
    )
    activation: Literal["tanh", "relu", "sigmoid", "linear", "gelu", "silu"] = param(
        "tanh",
        zh="激活函数",
        en="Activation",
        choices={
            "tanh": ("Tanh", "Tanh"),
            "relu": ("ReLU", "ReLU"),
            "sigmoid": ("Sigmoid", "Sigmoid"),
            "linear": ("线性（无激活）", "Linear (none)"),
            "gelu": ("GELU", "GELU"),
            "silu": ("SiLU", "SiLU"),
        },
    )
    lr: float = param(0.03, zh="学习率", en="Learning rate", ge=1e-5, le=10, scale="log", live=True)
    batch_size: int = param(10, zh="批大小", en="Batch size", ge=1, le=30, live=True)
    regularization: Literal["none", "l1", "l2"] = param(
        "none",
        zh="正则化",
        en="Regularization",
        live=True,
        choices={"none": ("无", "None"), "l1": ("L1", "L1"), "l2": ("L2", "L2")},
    )
    reg_rate: float = param(
        0.001, zh="正则化强度", en="Regularization rate", ge=1e-5, le=10, scale="log", live=True
    )
    show_test: bool = param(False, zh="显示测试数据", en="Show test data", live=True)
    discretize: bool = param(False, zh="输出离散化", en="Discretize output", live=True)
    points: list[Point] = param(
        [], zh="我画的点", en="My points", widget="hidden", max_length=200, live=True
    )

    @model_validator(mode="after")
    def _check(self) -> Params:
        if not any(getattr(self, f) for f in pg.FEATURES):
            raise refuse("err.p_no_feature", "choose at least one input feature")
        for i, (a, b, c) in enumerate(self.points):
            if not (-pg.EXTENT <= a <= pg.EXTENT and -pg.EXTENT <= b <= pg.EXTENT):
                raise refuse(
                    "err.p_point_outside",
                    "point {i} is outside [{lo}, {hi}]",
                    i=i,
                    lo=-pg.EXTENT,
                    hi=pg.EXTENT,
                )
            if not 0 <= c < MAX_CLASSES:
                raise refuse(
                    "err.p_point_class",
                    "point {i} has class {c}, not {lo}..{hi}",
                    i=i,
                    c=c,
                    lo=0,
                    hi=MAX_CLASSES - 1,
                )
        return self


def _check_range(v: int, lo: int, hi: int) -> int:
    if not lo <= v <= hi:
        raise PydanticCustomError(
            "out_of_range", "must be an integer in [{lo}, {hi}]", {"lo": lo, "hi": hi}
        )
    return v


class _Edit(LabInput):
    """One parameter set by hand: layer `layer` (len(hidden) is the output layer), unit `i`."""

    layer: StrictInt
    i: StrictInt
    value: float

    @field_validator("layer")
    @classmethod
    def _layer_exists(cls, layer: int, info: ValidationInfo) -> int:
        lab = (info.context or {}).get("lab")
        return _check_range(layer, 0, len(lab.model.linears()) - 1) if lab else layer

    @field_validator("i")
    @classmethod
    def _unit_exists(cls, i: int, info: ValidationInfo) -> int:
        lin = _linear(info)
        return _check_range(i, 0, lin.out_features - 1) if lin is not None else i

    @field_validator("value", mode="before")
    @classmethod
    def _not_bool(cls, v: Any) -> Any:
        if isinstance(v, bool):  # a bool is an int in Python; a weight is not true/false
            raise PydanticCustomError("float_type", "value must be a finite number")
        return v

    @field_validator("value")
    @classmethod
    def _in_range(cls, v: float) -> float:
        if abs(v) > WEIGHT_LIMIT:
            raise PydanticCustomError(
                "mlp-playground.err_range",
                "value must lie in [-{limit}, {limit}]",
                {"limit": f"{WEIGHT_LIMIT:g}"},
            )
        return v


def _linear(info: ValidationInfo):
    lab, layer = (info.context or {}).get("lab"), info.data.get("layer")
    return lab.model.linears()[layer] if lab is not None and layer is not None else None


class SetBias(_Edit):
    action: Literal["set_bias"]


class SetWeight(_Edit):
    action: Literal["set_weight"]
    j: StrictInt  # the input unit

    @field_validator("j")
    @classmethod
    def _input_exists(cls, j: int, info: ValidationInfo) -> int:
        lin = _linear(info)
        return _check_range(j, 0, lin.in_features - 1) if lin is not None else j


@register
class MLPPlaygroundLab(TrainingLab):
    # One step is one mini-batch of 10 (25 make an epoch): at 100 a second the first second
    # barely moves the loss (0.680 -> 0.671); TensorFlow Playground shows an epoch a frame.
    # The server's cap: as many as this machine can take, up to 2,000 (~80 epochs) a second.
    play_speed = 2000
    id = "mlp-playground"
    chapter = 3
    order = 3
    title = {"zh": "MLP 游乐场", "en": "MLP playground"}
    description = {
        "zh": "TensorFlow Playground 的全部玩法：数据集、输入特征、层数与宽度、激活、正则化、"
        "每个神经元的输出图、可点击修改的权重；再加上真正的交叉熵、多分类、逐层梯度范数，和你自己画的点。",
        "en": "Everything TensorFlow Playground does — data sets, input features, depth and "
        "width, activation, regularization, every neuron's map, weights you can click and edit — "
        "plus true cross-entropy, more than two classes, per-layer gradient norms and your own points.",
    }
    Params = Params
    tensors = (
        "inputs",
        *(f"layers.{i}.hook_post" for i in range(MAX_LAYERS)),
        "boundary",
        *(f"{w}.{i}" for w in ("weights", "biases") for i in range(MAX_LAYERS + 1)),
        "grad_norm",
        "train_points",
        "test_points",
    )

    Actions = Annotated[SetWeight | SetBias, Field(discriminator="action")]

    def setup(self) -> None:
        params = self.params
        self.k = params.classes
        self.features = [f for f in pg.FEATURES if getattr(params, f)]
        if params.dataset != "custom":
            cfg = pg.PlaygroundConfig(
                params.dataset, params.n_points, params.noise / 100, self.k, params.train_pct / 100
            )
            self.split = pg.make(cfg, self.seed)
        else:
            empty = torch.zeros(0, 2)
            self.split = pg.Split(
                empty, torch.zeros(0, dtype=torch.long), empty, empty[:, 0].long()
            )
        _, grid_xy = pg.grid(GRID)
        self.grid_in = self._feats(grid_xy)  # [G*G, F]
        self._set_points(params.points)

    def arms(self) -> list[ArmSpec]:
        p = self.params
        cfg = MLPConfig(
            d_in=len(self.features),
            hidden=tuple(p.hidden),
            d_out=1 if self.k == 2 else self.k,
            activation=p.activation,
        )
        # the same seed, the same first weights; one SGD update per mini-batch
        return [ArmSpec("mlp", lambda: MLP(cfg), OptimConfig("sgd", lr=p.lr), self.seed)]

    def data_generator(self) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed + 1)  # the shuffles of the batches

    # -- data -----------------------------------------------------------------------------
    def _feats(self, xy: Tensor) -> Tensor:
        return pg.featurize(xy, self.features).to(self.device)

    def _set_points(self, points: list[Point]) -> None:
        """The training split plus the learner's points (those of a class this model has)."""
        mine = [p for p in points if p[2] < self.k]
        x, y = self.split.x_train, self.split.y_train
        if mine:
            t = torch.tensor([p[:2] for p in mine], dtype=torch.float32)
            x = torch.cat([x, t])
            y = torch.cat([y, torch.tensor([p[2] for p in mine])])
        self.x_train, self.y_train = x, y
        self.f_train, self.t_train = self._feats(x), y.to(self.device)
        self.f_test, self.t_test = self._feats(self.split.x_test), self.split.y_test.to(self.device)
        self.n_mine = len(mine)
        self.order = torch.zeros(0, dtype=torch.long)
        self.cursor = 0

    def batch(self, gen: torch.Generator) -> Tensor | None:
        """The next mini-batch's indices: the batches walk a fresh shuffle each epoch.
        None with no training points ("only my points" before any is drawn)."""
        n, size = len(self.t_train), min(self.params.batch_size, len(self.t_train))
        if not n:
            return None
        if self.cursor + size > len(self.order):
            self.order = torch.randperm(n, generator=gen)
            self.cursor = 0
        idx = self.order[self.cursor : self.cursor + size]
        self.cursor += size
        return idx

    # -- loss -----------------------------------------------------------------------------
    def _loss(self, logits: Tensor, y: Tensor) -> Tensor:
        if self.k == 2:
            return F.binary_cross_entropy_with_logits(logits[:, 0], y.float())
        return F.cross_entropy(logits, y)

    def _penalty(self) -> Tensor:
        kind = self.params.regularization
        ws = [lin.weight for lin in self.model.linears()]
        if kind == "l1":
            return self.params.reg_rate * sum(w.abs().sum() for w in ws)
        if kind == "l2":
            return self.params.reg_rate * sum((w * w).sum() for w in ws) / 2
        return torch.zeros((), device=self.device)

    def loss(self, arm: Arm, idx: Tensor) -> Tensor:
        return self._loss(arm.model(self.f_train[idx]), self.t_train[idx]) + self._penalty()

    def _probs(self, logits: Tensor) -> Tensor:
        if self.k == 2:
            p1 = torch.sigmoid(logits[:, 0])
            return torch.stack([1 - p1, p1], 1)  # [N, 2]
        return logits.softmax(1)  # [N, K]

    def _measure(self, f: Tensor, y: Tensor) -> tuple[float, float]:
        logits = self.model(f)
        acc = (self._probs(logits).argmax(1) == y).float().mean()
        return float(self._loss(logits, y)), float(acc)

    def arm_scalars(self, arm: Arm, batch: Any, out: Any) -> dict[str, float]:
        """Measured on the whole splits after the step (the loss replaces the batch's)."""
        scalars: dict[str, float] = {}
        with torch.no_grad():
            if len(self.t_train):
                scalars["loss"], scalars["train_acc"] = self._measure(self.f_train, self.t_train)
                scalars["epoch"] = self.t * self.params.batch_size / len(self.t_train)
            if len(self.t_test):
                scalars["test_loss"], scalars["test_acc"] = self._measure(self.f_test, self.t_test)
            if self.params.regularization != "none":
                scalars["reg"] = float(self._penalty())
        return scalars

    # -- the lab contract -----------------------------------------------------------------
    def update_live(self, params: Params) -> None:
        old = self.params
        super().update_live(params)  # the learning rate
        if params.points != old.points:
            self._set_points(params.points)

    def act(self, action: SetWeight | SetBias):
        """An edited weight or bias (bounds checked by the declared Actions)."""
        lin = self.model.linears()[action.layer]
        with torch.no_grad():
            if isinstance(action, SetWeight):
                lin.weight[action.i, action.j] = action.value
            else:
                lin.bias[action.i] = action.value
        frame = self.snapshot()
        frame.advanced = True  # an edited weight is part of the run: recorded as its next step
        yield frame

    @classmethod
    def estimate_mb(cls, params: Params) -> tuple[float, str | None]:
        return 4.0, None  # at most 6×8 units: tiny; the pictures dominate (≈140 KB a frame)

    def lab_state(self) -> dict:
        """The epoch's shuffle and the position in it: a fork walks the same batches."""
        return {"order": self.order.clone(), "cursor": self.cursor}

    def load_lab_state(self, state: dict) -> None:
        if "order" in state:
            self.order, self.cursor = state["order"].clone(), state["cursor"]
        if "updates" in state:  # a run saved before the trainer
            self.t = state["updates"]

    # -- the frame ------------------------------------------------------------------------
    def frame_meta(self) -> dict[str, Any]:
        return {
            "extent": pg.EXTENT,
            "classes": self.k,
            "features": self.features,
            "hidden": list(self.params.hidden),
            "activation": self.params.activation,
            "n_train": len(self.t_train),
            "n_test": len(self.t_test),
            "n_mine": self.n_mine,
            "weight_limit": WEIGHT_LIMIT,
        }

    def picture(self, arm: Arm) -> list[TensorOut]:
        return self._pictures()

    def _pictures(self) -> list[TensorOut]:
        g = GRID
        with torch.no_grad(), capture(self.model, "layers.*.hook_post") as store:
            probs = self._probs(self.model(self.grid_in))  # [G*G, K]
        # Each input map is scaled to [-1, 1] by its own largest |value| (x1² reaches 36).
        inputs = self.grid_in.T / self.grid_in.abs().amax(0).clamp_min(1e-12)[:, None]
        out = [TensorOut("inputs", inputs.reshape(-1, g, g), "u8", self.features)]  # [F, G, G]
        for i in range(len(self.model.layers)):
            h = store[f"layers.{i}.hook_post"]  # [G*G, width]
            out.append(TensorOut(f"layers.{i}.hook_post", h.T.reshape(-1, g, g), "u8"))
        out.append(TensorOut("boundary", probs.T.reshape(-1, g, g), "u8"))  # [K, G, G]
        for i, lin in enumerate(self.model.linears()):
            out.append(TensorOut(f"weights.{i}", lin.weight.detach(), "f32"))  # [out, in]
            out.append(TensorOut(f"biases.{i}", lin.bias.detach(), "f32"))  # [out]
        if self.model.out.weight.grad is not None:  # the last update's gradient
            norms, labels = layer_grad_norms(self.model)
            out.append(TensorOut("grad_norm", norms, "f32", labels))
        for name, x, y in (
            ("train_points", self.x_train, self.y_train),
            ("test_points", self.split.x_test, self.split.y_test),
        ):
            out.append(TensorOut(name, torch.cat([x, y[:, None].float()], 1), "f32"))  # [N, 3]
        return out
