"""Lab `regularization`: dropout, weight decay, L1 vs L2 and batch size, each as arms.

The task overfits in seconds: scikit-learn's 8×8 digits with a small stratified training
split (200 images by default) and the rest held out, a 64 → 256 → 256 → 10 ReLU MLP
(models/deep.py's DeepStack, PyTorch's default init), SGD with momentum 0.9. One study at a
time, its arms in lockstep on the same batches from the same seed:

- `dropout`: p ∈ DROPOUTS on the last hidden layer (dropout usually sits on late layers),
  inverted: kept units are scaled by 1/(1 − p) in training, nothing changes in eval mode;
- `weight_decay`: SGD's weight_decay ∈ DECAYS (wd·w added to the gradient);
- `l1_l2`: no penalty, λ₁·Σ|w| and λ₂·Σw² added to the loss (weights only, not biases);
- `batch_size`: batches of BATCHES (each arm takes the first b rows of one shared draw),
  with the learning rate fixed or scaled with the batch (lr·b/BASE_BATCH).

Every EVAL_EVERY updates: accuracy and loss on the whole training split and the held-out
split (eval mode), the gap, and early stopping: each arm's best held-out loss and its
step, and the step at which `patience` evaluations without improvement would have stopped
it (the view marks both on the validation curve). Frame meta per arm: a real activation
(one training example's last hidden layer) in eval mode and under the arm's own dropout
mask in training mode, scaled by 1/(1 − p); weight sparsity.

On the defaults the effect is small: at step 600 the four dropout arms' held-out accuracies lie
within 0.6–1.8 points of each other (seeds 0–2, one thread; 1500 steps: 0.5–1.8; 100 training
images: 1.5–2.6, ordered by p on every seed). The view reads the spread off the run and says
when it is under 5 points, rather than choosing defaults that would only look larger.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import torch
from torch.nn import functional as F

from backend.labs import register
from backend.labs.base import LabParams, param
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.data import digits as dd
from models.deep import DeepConfig, DeepStack, inverted_dropout

EVAL_EVERY = 10
DROPOUTS = (0.0, 0.25, 0.5, 0.75)
DECAYS = (0.0, 5e-4, 5e-3, 5e-2)
BATCHES = (8, 32, 128)
BASE_BATCH = 32  # the learning rate is the learner's at this batch size
N_UNITS = 12  # units of the activation shown under dropout
SPARSE = 1e-3  # |w| below this counts as (nearly) zero
STUDIES = {
    "dropout": ("Dropout 比例", "Dropout rate"),
    "weight_decay": ("权重衰减", "Weight decay"),
    "l1_l2": ("L1 与 L2", "L1 vs L2"),
    "batch_size": ("批大小", "Batch size"),
}


class Params(LabParams):
    study: Literal["dropout", "weight_decay", "l1_l2", "batch_size"] = param(
        "dropout", zh="比较什么", en="Study", choices=STUDIES
    )
    n_train: int = param(200, zh="训练图片数", en="Training images", ge=50, le=1000, step=10)
    width: int = param(256, zh="隐藏层宽度", en="Hidden width", ge=16, le=512, step=16)
    lr: float = param(
        0.05, zh="学习率（SGD 动量 0.9）", en="Learning rate (SGD, momentum 0.9)",
        ge=1e-4, le=1.0, scale="log", live=True,
    )  # fmt: skip
    batch: int = param(32, zh="批大小", en="Batch size", ge=4, le=256, live=True)
    l1: float = param(1e-4, zh="λ₁ (L1)", en="λ₁ (L1)", ge=1e-6, le=1e-1, scale="log",
                      show_if={"study": "l1_l2"})  # fmt: skip
    l2: float = param(1e-3, zh="λ₂ (L2)", en="λ₂ (L2)", ge=1e-6, le=1e-1, scale="log",
                      show_if={"study": "l1_l2"})  # fmt: skip
    scale_lr: bool = param(
        False,
        zh="学习率随批大小线性放大（lr·b/32）",
        en="Scale the learning rate with the batch (lr·b/32)",
        show_if={"study": "batch_size"},
    )
    patience: int = param(
        5, zh="早停的耐心（几次评估不再变好）", en="Early-stopping patience (evaluations)",
        ge=1, le=50, live=True,
    )  # fmt: skip
    steps: int = param(600, zh="训练步数", en="Steps", ge=20, le=5000, live=True)


def arm_settings(p: Params) -> list[dict[str, Any]]:
    """Params -> one dict per arm: label, dropout, weight decay, penalty, batch, lr factor."""
    base = {"dropout": 0.0, "wd": 0.0, "penalty": None, "lam": 0.0, "batch": p.batch, "lr_x": 1.0}
    if p.study == "dropout":
        return [{**base, "label": f"p={d:g}", "dropout": d} for d in DROPOUTS]
    if p.study == "weight_decay":
        return [{**base, "label": f"wd={w:g}", "wd": w} for w in DECAYS]
    if p.study == "l1_l2":
        return [
            {**base, "label": "none"},
            {**base, "label": f"L1 λ={p.l1:g}", "penalty": "l1", "lam": p.l1},
            {**base, "label": f"L2 λ={p.l2:g}", "penalty": "l2", "lam": p.l2},
        ]
    return [
        {**base, "label": f"b={b}", "batch": b, "lr_x": b / BASE_BATCH if p.scale_lr else 1.0}
        for b in BATCHES
    ]


@register
class RegularizationLab(TrainingLab):
    id = "regularization"
    chapter = 4
    order = 5
    title = {"zh": "正则化：dropout、权重衰减、L1/L2、批大小", "en": "Regularization: dropout, weight decay, L1/L2, batch size"}  # fmt: skip
    description = {
        "zh": "一个为过拟合而设的任务（8×8 手写数字，只用 200 张训练），同一数据、同一随机种子上并排比较："
        "dropout 比例、权重衰减、L1 与 L2、批大小（学习率放大或不放大）。看训练与留出集准确率的差距，"
        "以及验证曲线上早停会停在哪里；各变体相差多少由本次训练读出，差得小时页面会说。dropout 通常放在靠后的层，训练时把保留的单元放大 1/(1−p)。",
        "en": "A task built to overfit (8×8 digits, only 200 training images), arms "
        "side by side on the same data and seed: dropout rate, weight decay, L1 vs L2, batch "
        "size with and without learning-rate scaling. Watch the gap between training and "
        "held-out accuracy, and where early stopping would stop on the validation curve; how far apart the arms "
        "are is read off the run, and the page says when it is small. "
        "Dropout usually sits on late layers and scales kept units by 1/(1−p) in training.",
    }
    Params = Params
    eval_every = EVAL_EVERY
    tensors = ("arm.*.grad_norm",)

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        images, labels = dd.load()
        x = images.reshape(-1, 64) / dd.MAX_VALUE  # [N, 64] in 0..1
        train, test = dd.stratified_split(labels, 1 - p.n_train / len(labels), self.seed)
        dev = self.device
        self.x_train, self.y_train = x[train].to(dev), labels[train].to(dev)
        self.x_test, self.y_test = x[test].to(dev), labels[test].to(dev)
        self.settings = arm_settings(p)
        self.best: dict[int, dict[str, Any]] = {}

    def arms(self) -> list[ArmSpec]:
        p = self.params
        out = []
        for s in self.settings:
            cfg = DeepConfig(
                d_in=64,
                width=p.width,
                depth=2,
                d_out=10,
                activation="relu",
                init="default",
                dropout=s["dropout"],
            )
            optim = OptimConfig("momentum", lr=p.lr * s["lr_x"], momentum=0.9, weight_decay=s["wd"])
            out.append(ArmSpec(s["label"], lambda c=cfg: DeepStack(c), optim, self.seed))
        return out

    def max_steps(self) -> int:
        return self.params.steps

    def batch(self, gen: torch.Generator):
        n = max(s["batch"] for s in self.settings)  # one draw; each arm takes its first b
        idx = torch.randint(len(self.x_train), (n,), generator=gen).to(self.device)
        return self.x_train[idx], self.y_train[idx]

    def loss(self, arm: Arm, batch):
        s = self.settings[arm.index]
        x, y = batch[0][: s["batch"]], batch[1][: s["batch"]]
        loss = F.cross_entropy(arm.model(x, arm.generator), y)
        if s["penalty"]:
            ws = [lin.weight for lin in arm.model.linears()]
            if s["penalty"] == "l1":
                loss = loss + s["lam"] * sum(w.abs().sum() for w in ws)
            else:
                loss = loss + s["lam"] * sum((w * w).sum() for w in ws)
        return loss

    @torch.no_grad()
    def evaluate(self, arm: Arm) -> dict[str, float]:
        model = arm.model
        model.eval()
        try:
            lt, lv = model(self.x_train), model(self.x_test)
        finally:
            model.train()
        train_acc = (lt.argmax(1) == self.y_train).float().mean().item()
        val_acc = (lv.argmax(1) == self.y_test).float().mean().item()
        val_loss = F.cross_entropy(lv, self.y_test).item()
        self._early_stop(arm.index, val_loss, val_acc)
        return {
            "train_loss": F.cross_entropy(lt, self.y_train).item(),
            "val_loss": val_loss,
            "train_acc": train_acc,
            "val_acc": val_acc,
            "gap": train_acc - val_acc,
        }

    def _early_stop(self, i: int, val_loss: float, val_acc: float) -> None:
        """Best held-out loss so far and its step; the step at which `patience`
        evaluations without a better one would have stopped the run."""
        b = self.best.setdefault(i, {"step": None, "val_loss": None, "since": 0})
        if not math.isfinite(val_loss):
            return
        if b["val_loss"] is None or val_loss < b["val_loss"]:
            b.update(step=self.t, val_loss=val_loss, val_acc=val_acc, since=0)
            b.pop("stop", None)
        else:
            b["since"] += 1
            if b["since"] >= self.params.patience and "stop" not in b:
                b["stop"] = self.t

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        out = self.evaluate(arm) if self.t == 0 else {}
        out["loss"] = out["train_loss"] if self.t == 0 else arm.last_loss
        return out

    # -- the picture ------------------------------------------------------------------------
    @torch.no_grad()
    def picture(self, arm: Arm):
        model: DeepStack = arm.model
        p = model.cfg.dropout
        ws = torch.cat([lin.weight.flatten() for lin in model.linears()])
        meta: dict[str, Any] = {
            **self.settings[arm.index],
            "sparsity": (ws.abs() < SPARSE).float().mean().item(),
            "weight_l1": ws.abs().sum().item(),
            "weight_l2": ws.pow(2).sum().item(),
            "early": {k: v for k, v in self.best.get(arm.index, {}).items() if k != "since"},
        }
        if p:
            meta["dropout_demo"] = self._dropout_demo(model, p)
        return [arm.grad_norm_tensor()] if arm.grad_norms else [], meta

    def _dropout_demo(self, model: DeepStack, p: float) -> dict[str, Any]:
        """One training example's last hidden activation: eval mode, and one training-mode
        dropout of it (a fixed generator: the arm's own stream is left alone), kept units
        scaled by 1/(1 − p)."""
        was = model.training
        model.eval()
        try:
            h = model.layers[-1](model.layers[0](self.x_train[:1]))[0, :N_UNITS]  # [N_UNITS]
        finally:
            model.train(was)
        g = torch.Generator().manual_seed(0)  # on the CPU: inverted_dropout moves the mask
        dropped = inverted_dropout(h, p, g)
        return {
            "p": p,
            "h": h.tolist(),
            "train": dropped.tolist(),
            "kept": (dropped != 0).tolist(),
            "scale": 1.0 / (1.0 - p),
        }

    def frame_meta(self) -> dict[str, Any]:
        p = self.params
        return {
            "study": p.study,
            "n_train": len(self.y_train),
            "n_test": len(self.y_test),
            "patience": p.patience,
            "eval_every": EVAL_EVERY,
            "base_batch": BASE_BATCH,
            "max_steps": p.steps,
        }

    def lab_state(self) -> dict[str, Any]:
        return {"best": {i: dict(b) for i, b in self.best.items()}}

    def load_lab_state(self, state: dict[str, Any]) -> None:
        self.best = {int(i): dict(b) for i, b in state.get("best", {}).items()}
