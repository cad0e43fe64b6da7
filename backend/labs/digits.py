"""Lab `digits`: an MLP learns scikit-learn's 8×8 handwritten digits while the learner watches.

Streams the training loss every step, train/test accuracy on the whole splits every
`eval_every` steps, and in frames: the first layer's weights as 8×8 templates, the confusion
matrix on the test split, misclassified test images, per-layer gradient norms, and the
activations of one test image. `infer` takes the learner's drawing as a 32×32 grey grid,
reduces it to 8×8 counts 0..16 the way the data set was made and answers with the softmax.
Ablations (CURRICULUM.md ch. 3): init randn·0.01 vs Kaiming, hand softmax + NLL vs
CrossEntropyLoss, activation, full batch vs mini-batch.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

import torch
from pydantic import StrictBool, field_validator
from pydantic_core import PydanticCustomError

from backend.labs import register
from backend.labs.base import Frame, LabInput, LabParams, TensorOut, activation_param, param
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models import digits
from models.data import digits as data
from models.hooks import capture

MAX_MISTAKES = 24  # misclassified test images shown at once
HOOKS = ("layers.*.hook_post", "hook_logits")


class Params(LabParams):
    hidden1: int = param(128, zh="第一隐藏层宽度", en="Hidden layer 1 width", ge=8, le=512)
    hidden2: int = param(
        64, zh="第二隐藏层宽度（0 = 只有一层）", en="Hidden layer 2 width (0 = none)", ge=0, le=512
    )
    activation: Literal["relu", "tanh", "sigmoid", "gelu", "silu"] = activation_param(
        "relu", ("relu", "tanh", "sigmoid", "gelu", "silu")
    )
    init: Literal["kaiming", "small", "default", "xavier"] = param(
        "kaiming",
        zh="初始化",
        en="Initialization",
        choices={
            "kaiming": ("Kaiming（何恺明）正态", "Kaiming normal"),
            "small": ("randn·0.01（书中手写版）", "randn·0.01 (the book's hand version)"),
            "default": ("PyTorch 默认", "PyTorch default"),
            "xavier": ("Xavier 正态", "Xavier normal"),
        },
    )
    loss: digits.LossKind = param(
        "ce",
        zh="损失函数",
        en="Loss",
        choices={
            "ce": ("CrossEntropyLoss (log-softmax)", "CrossEntropyLoss (log-softmax)"),
            "hand": ("手写 softmax + 负对数似然", "Hand softmax + NLL"),
        },
    )
    lr: float = param(
        0.1, zh="学习率（SGD）", en="Learning rate (SGD)", ge=1e-4, le=10.0, scale="log", live=True
    )
    batch: Literal["full", "minibatch"] = param(
        "full",
        zh="批次",
        en="Batch",
        live=True,
        choices={
            "full": ("全批量（不随机）", "Full batch (not stochastic)"),
            "minibatch": ("小批量（随机）", "Mini-batch (stochastic)"),
        },
    )
    batch_size: int = param(64, zh="小批量大小", en="Mini-batch size", ge=8, le=512, live=True)
    test_frac: float = param(
        0.2, zh="测试集比例（分层抽样）", en="Test fraction (stratified)", ge=0.1, le=0.5, step=0.05
    )
    eval_every: int = param(
        10, zh="每隔几步测一次准确率", en="Measure accuracy every N steps", ge=1, le=200, live=True
    )
    steps: int = param(2000, zh="训练步数", en="Steps to train", ge=1, le=20000)
    sample: int = param(0, zh="展示第几张测试图", en="Test image shown", ge=0, le=899, live=True)
    templates: Literal["weights", "change"] = param(
        "weights",
        zh="模板显示",
        en="Templates show",
        live=True,
        widget="hidden",  # a select beside the templates sets it
        choices={
            "weights": ("权重本身", "The weights"),
            "change": ("相对第 0 步的变化", "Change since step 0"),
        },
    )


class DrawingInput(LabInput):
    """The learner's drawing: a 32×32 grey grid (0..1), fitted to its box unless `fit` is
    false. The whole image is checked at once: an error names `input.image`."""

    image: Any
    fit: StrictBool = True

    @field_validator("image", mode="before")
    @classmethod
    def _grid(cls, image: Any) -> torch.Tensor:
        return parse_drawing(image)


@lru_cache(maxsize=1)
def book_param_count() -> tuple[int, int]:
    """(all, weights) of the book's 784→512→256→10, counted from a built torch model."""
    return digits.param_count(digits.book_model())


@register
class DigitsLab(TrainingLab):
    id = "digits"
    chapter = 3
    order = 4
    title = {"zh": "手写数字：多层感知机", "en": "Handwritten digits with an MLP"}
    description = {
        "zh": "一个 64→128→64→10 的网络学认 8×8 手写数字：看第一层权重长成数字模板、混淆矩阵、"
        "各层梯度；对比初始化、损失写法、激活函数和批次大小；再亲手写一个数字给它认。",
        "en": "A 64→128→64→10 network learns 8×8 handwritten digits: watch the first layer's "
        "weights become templates, the confusion matrix and per-layer gradients; compare init, "
        "loss, activation and batch size; then draw a digit for it to read.",
    }
    Params = Params
    tensors = (
        "templates",
        "input",
        "layers.0.hook_post",
        "layers.1.hook_post",
        "hook_logits",
        "probs",
        "grad_norm",
        "confusion",
        "mistakes",
        "bitmap",
    )

    Input = DrawingInput

    def setup(self) -> None:
        params = self.params
        hidden = (params.hidden1,) + ((params.hidden2,) if params.hidden2 else ())
        self.cfg = digits.DigitsConfig(
            hidden=hidden, activation=params.activation, init=params.init, loss=params.loss
        )
        images, labels = data.load()
        train_idx, test_idx = data.stratified_split(labels, params.test_frac, self.seed)
        self.test_images = images[test_idx]  # [n_test, 8, 8], counts 0..16
        self.x_train = digits.prepare(images[train_idx], self.cfg).to(self.device)  # [n_train, 64]
        self.y_train = labels[train_idx].to(self.device)
        self.x_test = digits.prepare(self.test_images, self.cfg).to(self.device)  # [n_test, 64]
        self.y_test = labels[test_idx].to(self.device)
        self.order: torch.Tensor | None = None  # this epoch's shuffle (mini-batch), drawn lazily
        self.cursor = 0  # position in the current epoch's shuffled order (mini-batch)

    def arms(self) -> list[ArmSpec]:
        cfg = self.cfg
        return [ArmSpec("mlp", lambda: digits.build(cfg), OptimConfig("sgd", lr=self.params.lr), self.seed)]  # fmt: skip

    def built(self) -> None:
        # The first layer at step 0: "change since step 0" subtracts it, because Kaiming's
        # starting noise is larger than what 2,000 steps of SGD write on top of it.
        self.w0 = self.model.layers[0].linear.weight.detach().clone()

    # -- limits ---------------------------------------------------------------------------
    @classmethod
    def estimate_mb(cls, params: Params) -> tuple[float, str | None]:
        h1, h2 = params.hidden1, params.hidden2
        n = 65 * h1 + (h1 + 1) * h2 + (h2 or h1) * 10 + 10
        acts = 1800 * (h1 + h2 + 10) * 3  # forward + backward over the whole data set
        return (4 * (3 * n + acts)) / 2**20 + 2.0, "hidden1"

    def max_steps(self) -> int:
        return self.params.steps

    @property
    def eval_every(self) -> int:  # type: ignore[override]
        return self.params.eval_every  # both accuracies, on the whole splits

    # -- training (the engine runs the loop: backend/trainer.py) --------------------------
    def batch(self, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        n = len(self.y_train)
        size = min(self.params.batch_size, n)
        if self.params.batch == "full" or size >= n:
            return self.x_train, self.y_train
        if self.order is None or self.cursor + size > n:  # a new epoch: every sample once
            self.order = torch.randperm(n, generator=gen)
            self.cursor = 0
        idx = self.order[self.cursor : self.cursor + size].to(self.device)
        self.cursor += size
        return self.x_train[idx], self.y_train[idx]

    def loss(self, arm: Arm, batch) -> torch.Tensor:
        xb, yb = batch
        return digits.loss_fn(arm.model(xb), yb, self.cfg.loss)

    def evaluate(self, arm: Arm) -> dict[str, float]:
        return self._accuracy()

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        """The state now: full training loss, both accuracies, and its gradient (no step)."""
        loss = self.gradient_at_rest(arm, (self.x_train, self.y_train))
        arm.optimizer.zero_grad()
        return {"loss": loss.item(), **self._accuracy()}

    def _accuracy(self) -> dict[str, float]:
        _, train_acc, _ = digits.evaluate(self.model, self.x_train, self.y_train, self.cfg.loss)
        test_loss, test_acc, _ = digits.evaluate(
            self.model, self.x_test, self.y_test, self.cfg.loss
        )
        return {"train_acc": train_acc, "test_acc": test_acc, "test_loss": test_loss}

    # -- pictures -------------------------------------------------------------------------
    def _forward_one(self, x: torch.Tensor) -> tuple[list[TensorOut], torch.Tensor]:
        """Activations of every layer and the softmax for one input [64]."""
        with torch.no_grad(), capture(self.model, HOOKS) as store:
            logits = self.model(x[None])[0]  # [10]
        probs = torch.softmax(logits, dim=0)
        outs = [
            TensorOut(f"layers.{i}.hook_post", store[f"layers.{i}.hook_post"][0], "f32")
            for i in range(len(self.model.layers))
        ]
        outs += [TensorOut("hook_logits", logits, "f32"), TensorOut("probs", probs, "f32")]
        return outs, probs

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        _, test_acc, preds = digits.evaluate(self.model, self.x_test, self.y_test, self.cfg.loss)
        wrong = torch.nonzero(preds != self.y_test).flatten()[:MAX_MISTAKES]
        i = self.params.sample % len(self.y_test)
        acts, probs = self._forward_one(self.x_test[i])
        w = self.model.layers[0].linear.weight.detach()  # [hidden1, 64]
        if self.params.templates == "change":
            w = w - self.w0
        tensors = [
            # One shared range for all templates: their sizes compare honestly.
            TensorOut("templates", w.reshape(-1, data.SIDE, data.SIDE), "u8"),  # [h1, 8, 8]
            TensorOut("input", self.test_images[i], "f32"),  # [8, 8], 0..16
            *acts,
            *([arm.grad_norm_tensor()] if arm.grad_norms else []),
            TensorOut("confusion", digits.confusion(preds, self.y_test).float(), "f32"),
            TensorOut("mistakes", self.test_images[wrong.cpu()], "u8"),  # [k, 8, 8]
        ]
        total, weights = digits.param_count(self.model)
        book_total, book_weights = book_param_count()
        return tensors, (
            {
                "sample": {
                    "index": i,
                    "label": int(self.y_test[i]),
                    "pred": int(probs.argmax()),
                },
                "mistakes": [
                    {"index": int(j), "label": int(self.y_test[j]), "pred": int(preds[j])}
                    for j in wrong
                ],
                "n_wrong": int((preds != self.y_test).sum()),
                "now": {"test_acc": test_acc},  # meta is JSON: no loss here, it may be inf
                "split": {"train": len(self.y_train), "test": len(self.y_test)},
                "shape": [self.cfg.d_in, *self.cfg.hidden, digits.N_CLASSES],
                "params": {"total": total, "weights": weights},
                "book": {
                    "shape": [784, 512, 256, 10],
                    "total": book_total,
                    "weights": book_weights,
                },
            }
        )

    # -- the learner's drawing ------------------------------------------------------------
    def answer(self, inp: DrawingInput) -> Any:
        bitmap, counts = data.from_drawing(inp.image, inp.fit)
        x = digits.prepare(counts[None], self.cfg)[0].to(self.device)  # [64]
        acts, probs = self._forward_one(x)
        frame = Frame(
            tensors=[
                TensorOut("bitmap", bitmap.float(), "u8"),  # [32, 32] what was counted
                TensorOut("input", counts, "f32"),  # [8, 8], 0..16
                *acts,
            ],
            meta={"pred": int(probs.argmax()), "empty": not bool(bitmap.any())},
        )
        yield frame

    # -- persistence (the engine saves the model, optimizer and the data generator) ---------
    def lab_state(self) -> dict:
        order = None if self.order is None else self.order.clone()
        return {"order": order, "cursor": self.cursor, "w0": self.w0.clone()}

    def load_lab_state(self, state: dict) -> None:
        self.order = None if state.get("order") is None else state["order"].clone()
        self.cursor = state.get("cursor", 0)
        if "w0" in state:
            self.w0 = state["w0"].clone()


def parse_drawing(image: Any) -> torch.Tensor:
    """The input field `image`: exactly 32 rows of 32 numbers in [0, 1] -> [32, 32]."""
    n = data.BITMAP
    if not isinstance(image, list) or len(image) != n:
        raise _bad(f"image must be a list of {n} rows of {n} numbers in [0, 1]")
    for r, row in enumerate(image):
        if not isinstance(row, list) or len(row) != n:
            raise _bad(f"image row {r} must be a list of {n} numbers")
        for v in row:
            # bool is an int in Python; a drawing has no true/false pixels.
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise _bad(f"image row {r} has a value outside [0, 1]: {v!r}")
    return torch.tensor(image, dtype=torch.float32)  # [32, 32]


def _bad(message: str) -> PydanticCustomError:
    return PydanticCustomError("drawing", message.replace("{", "{{").replace("}", "}}"))
