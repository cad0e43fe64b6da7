"""Lab `cnn`: a small CNN learns the 8×8 digits beside an MLP of about its parameter count.

Two arms on the trainer (three with the stem ablation: the same CNN with ImageNet
ResNet's 7×7 stride-2 first conv, which on 8×8 digits halves the resolution before anything
is learned), same batches, same seed: the CNN (models/cnn.py: 3×3 conv → ReLU
→ 2×2 max pool, twice, then a linear head) and a one-hidden-layer MLP whose hidden width
makes its parameter count closest to the CNN's (both counts from the built models, shown).
Streams loss every step and train/test accuracy on the whole splits every `eval_every`
steps (the gap is the overfitting). Frames: each conv block's feature maps for the test
image shown, the learned kernels, each arm's confusion matrix on the whole test split and
softmax for that image. Augmentation (whole-pixel shifts, small rotations) is drawn from
the data generator, so a fork sees the same batches. `infer` takes a drawing (the digits
lab's 32×32 pad, reduced to 8×8 counts the same way) and answers with every arm's softmax
and the CNN's feature maps of that drawing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch
from torch.nn import functional as F

from backend.labs import register
from backend.labs.base import Frame, LabParams, TensorOut, param
from backend.labs.digits import DrawingInput
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models import cnn
from models.data import digits as data
from models.digits import confusion
from models.hooks import capture

SCALE = 16.0  # pixel counts 0..16 -> 0..1


class Params(LabParams):
    channels1: int = param(8, zh="第一层卷积的通道数", en="Conv 1 channels", ge=1, le=32)
    channels2: int = param(
        16, zh="第二层卷积的通道数（0 = 只有一层）", en="Conv 2 channels (0 = none)", ge=0, le=64
    )
    compare_mlp: bool = param(
        True, zh="旁边训练一个参数量相近的 MLP", en="Train an MLP of similar size beside it"
    )
    compare_stem: bool = param(
        False,
        zh="再加一个 CNN：开头换成 ImageNet 式 stem（7×7 卷积，步长 2）",
        en="Add a CNN with ImageNet's 7×7 stride-2 stem",
    )
    augment: bool = param(
        False,
        zh="数据增强（平移、小角度旋转）",
        en="Augmentation (shifts, small rotations)",
        live=True,
    )
    shift: int = param(1, zh="最大平移（像素）", en="Largest shift (pixels)", ge=0, le=2, live=True)
    degrees: float = param(
        10.0, zh="最大旋转角度（度）", en="Largest rotation (degrees)", ge=0, le=30, live=True
    )
    lr: float = param(
        1e-2,
        zh="学习率（Adam）",
        en="Learning rate (Adam)",
        ge=1e-4,
        le=0.1,
        scale="log",
        live=True,
    )
    batch_size: int = param(64, zh="小批量大小", en="Mini-batch size", ge=8, le=512, live=True)
    test_frac: float = param(
        0.2, zh="测试集比例（分层抽样）", en="Test fraction (stratified)", ge=0.1, le=0.5, step=0.05
    )
    eval_every: int = param(
        10, zh="每隔几步测一次准确率", en="Measure accuracy every N steps", ge=1, le=200, live=True
    )
    steps: int = param(1000, zh="训练步数", en="Steps to train", ge=1, le=20000)
    sample: int = param(0, zh="展示第几张测试图", en="Test image shown", ge=0, le=899, live=True)


def cnn_config(p: Params) -> cnn.CNNConfig:
    return cnn.CNNConfig(channels=(p.channels1,) + ((p.channels2,) if p.channels2 else ()))


def is_cnn(arm: Arm) -> bool:
    return isinstance(arm.model, cnn.CNN)


@register
class CNNLab(TrainingLab):
    id = "cnn"
    chapter = 4
    order = 3
    title = {"zh": "卷积网络认手写数字", "en": "A CNN reads handwritten digits"}
    description = {
        "zh": "一个小卷积网络学认 8×8 手写数字，旁边是参数量相近的 MLP：看每层卷积的特征图和"
        "学到的卷积核、整个测试集上的混淆矩阵、训练/测试准确率之差；开关数据增强；"
        "再写一个数字，看它的特征图和 softmax。",
        "en": "A small CNN learns the 8×8 digits beside an MLP of about the same parameter "
        "count: every conv layer's feature maps and learned kernels, the confusion matrix on "
        "the whole test split, the train/test gap; augmentation on or off; then draw a digit "
        "and watch its feature maps and softmax.",
    }
    Params = Params
    Input = DrawingInput
    tensors = (
        "input",
        "arm.0.input",
        "convs.*.hook_post",
        "convs.*.kernels",
        "probs",
        "confusion",
        "templates",
        "grad_norm",
        "bitmap",
        "arm.*.convs.*.hook_post",
        "arm.*.convs.*.kernels",
        "arm.*.probs",
        "arm.*.confusion",
        "arm.*.templates",
        "arm.*.grad_norm",
    )

    def setup(self) -> None:
        p = self.params
        self.cfg = cnn_config(p)
        self.mlp_cfg = cnn.mlp_like(self.cfg)
        images, labels = data.load()
        train_idx, test_idx = data.stratified_split(labels, p.test_frac, self.seed)
        self.test_images = images[test_idx]  # [n_test, 8, 8], counts 0..16
        self.x_train = (images[train_idx] / SCALE).to(self.device)  # [n_train, 8, 8]
        self.y_train = labels[train_idx].to(self.device)
        self.x_test = (self.test_images / SCALE).to(self.device)  # [n_test, 8, 8]
        self.y_test = labels[test_idx].to(self.device)

    def arms(self) -> list[ArmSpec]:
        p = self.params
        optim = OptimConfig("adam", lr=p.lr)
        cfg, mlp_cfg = self.cfg, self.mlp_cfg
        ch = "→".join(str(c) for c in cfg.channels)
        arms = [
            ArmSpec(
                "CNN",
                lambda: cnn.CNN(cfg),
                optim,
                self.seed,
                {"zh": f"CNN（{ch} 通道）", "en": f"CNN ({ch} channels)"},
            )
        ]
        if p.compare_stem:
            stem_cfg = replace(cfg, stem="7x7s2")
            arms.append(
                ArmSpec(
                    "CNN 7×7/2",
                    lambda: cnn.CNN(stem_cfg),
                    optim,
                    self.seed,
                    {"zh": "CNN（7×7 步长 2 开头）", "en": "CNN (7×7 stride-2 stem)"},
                )
            )
        if p.compare_mlp:
            h = mlp_cfg.hidden[0]
            arms.append(
                ArmSpec(
                    "MLP",
                    lambda: cnn.build_mlp(mlp_cfg),
                    optim,
                    self.seed,
                    {"zh": f"MLP（64→{h}→10）", "en": f"MLP (64→{h}→10)"},
                )
            )
        return arms

    @classmethod
    def estimate_mb(cls, params: Params) -> tuple[float, str | None]:
        c1, c2 = params.channels1, params.channels2 or 1
        acts = 1800 * (c1 * 64 + c2 * 16) * 3  # the whole train split through both blocks
        return 4 * acts / 2**20 + 4.0, "channels2"

    def max_steps(self) -> int:
        return self.params.steps

    @property
    def eval_every(self) -> int:  # type: ignore[override]
        return self.params.eval_every

    # -- training (the engine runs the loop) ----------------------------------------------
    def batch(self, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        p = self.params
        idx = torch.randint(
            0, len(self.y_train), (min(p.batch_size, len(self.y_train)),), generator=gen
        )
        idx = idx.to(self.device)
        xb = self.x_train[idx]  # [B, 8, 8]
        if p.augment:
            xb = cnn.augment(xb.cpu(), gen, p.shift, p.degrees).to(self.device)
        return xb, self.y_train[idx]

    @staticmethod
    def _logits(arm: Arm, x: torch.Tensor) -> torch.Tensor:
        return arm.model(x if is_cnn(arm) else x.flatten(1))  # the MLP sees [B, 64]

    def loss(self, arm: Arm, batch) -> torch.Tensor:
        xb, yb = batch
        return F.cross_entropy(self._logits(arm, xb), yb)

    @torch.no_grad()
    def _split(
        self, arm: Arm, x: torch.Tensor, y: torch.Tensor
    ) -> tuple[float, float, torch.Tensor]:
        logits = self._logits(arm, x)
        preds = logits.argmax(dim=1)
        return float(F.cross_entropy(logits, y)), float((preds == y).float().mean()), preds

    def evaluate(self, arm: Arm) -> dict[str, float]:
        _, train_acc, _ = self._split(arm, self.x_train, self.y_train)
        test_loss, test_acc, _ = self._split(arm, self.x_test, self.y_test)
        return {
            "train_acc": train_acc,
            "test_acc": test_acc,
            "gap": train_acc - test_acc,
            "test_loss": test_loss,
        }

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        loss, _, _ = self._split(arm, self.x_train, self.y_train)
        return {"loss": loss, **self.evaluate(arm)}

    # -- pictures -------------------------------------------------------------------------
    def _forward_one(self, arm: Arm, x: torch.Tensor) -> tuple[list[TensorOut], torch.Tensor]:
        """One image [8, 8]: the softmax and, for the CNN, every block's feature maps."""
        with torch.no_grad(), capture(arm.model, "convs.*.hook_post") as store:
            probs = torch.softmax(self._logits(arm, x[None])[0], dim=0)  # [10]
        outs = [TensorOut(name, store[name][0], "f32") for name in sorted(store)]  # [C, H, W]
        return [*outs, TensorOut("probs", probs, "f32")], probs

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        _, test_acc, preds = self._split(arm, self.x_test, self.y_test)
        i = self.params.sample % len(self.y_test)
        outs, probs = self._forward_one(arm, self.x_test[i])
        outs.append(TensorOut("confusion", confusion(preds, self.y_test).float(), "f32"))
        if arm.index == 0:  # the test image itself: every arm shares it, it travels once
            # (the trainer has no hook for tensors all arms share: it rides on arm 0's)
            outs.append(TensorOut("input", self.test_images[i], "f32"))  # [8, 8], 0..16
        if is_cnn(arm):
            for b in range(len(arm.model.convs)):
                w = arm.model.kernels(b)  # [C_out, C_in, k, k]
                outs.append(TensorOut(f"convs.{b}.kernels", w, "f32"))
        else:
            w = arm.model.layers[0].linear.weight.detach()  # [h, 64]
            outs.append(TensorOut("templates", w.reshape(-1, data.SIDE, data.SIDE), "f32"))
        if arm.grad_norms:
            outs.append(arm.grad_norm_tensor())
        params = sum(p.numel() for p in arm.model.parameters())
        return outs, {
            "kind": "cnn" if is_cnn(arm) else "mlp",
            "params": params,
            "pred": int(probs.argmax()),
            "n_wrong": int((preds != self.y_test).sum()),
            "test_acc_now": test_acc,
        }

    def frame_meta(self) -> dict[str, Any]:
        i = self.params.sample % len(self.y_test)
        return {
            "sample": {"index": i, "label": int(self.y_test[i])},
            "split": {"train": len(self.y_train), "test": len(self.y_test)},
            "channels": list(self.cfg.channels),
            "sides": list(self.cfg.sides),
            "mlp_hidden": list(self.mlp_cfg.hidden),
        }

    # -- the learner's drawing ------------------------------------------------------------
    def answer(self, inp: DrawingInput) -> Any:
        bitmap, counts = data.from_drawing(inp.image, inp.fit)
        x = (counts / SCALE).to(self.device)  # [8, 8]
        tensors = [TensorOut("bitmap", bitmap.float(), "u8"), TensorOut("input", counts, "f32")]
        preds = []
        for arm in self.arm_list:
            outs, probs = self._forward_one(arm, x)
            for o in outs:
                o.name = arm.prefix + o.name
            tensors += outs
            preds.append(int(probs.argmax()))
        yield Frame(tensors=tensors, meta={"preds": preds, "empty": not bool(bitmap.any())})
