"""Lab `conv`: convolution worked examples, one per step, each computed by torch.

`step` moves to the next example (the session is `done` at the last); the `goto` action
jumps to any. The examples (models/conv_steps.py): cross-correlation of the learner's image
with the learner's kernel (default: the 5×5 image whose columns 0–1 are 1 and the kernel
[[1, 0], [0, −1]]: every output row is [0, 1, 0, 0]); the same with the kernel flipped (the
textbook convolution: [0, −1, 0, 0]); 2×2 average and max pooling; the output size
⌊(n + 2p − k)/s⌋ + 1 against the shape torch returns; two 3×3 layers see 5×5 with 18
weights; a 1×1 conv equals a per-pixel linear layer. Every field is live: editing the image
(drawing on it), the kernel (cells or a preset), stride, padding or the size sliders
recomputes the frame without a reset. Nothing trains (`trains = False`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import torch
from pydantic import Field, model_validator

from backend.labs import register
from backend.labs.base import Frame, Lab, LabInput, LabParams, TensorOut, param, refuse
from models import conv_steps as cs

STAGES = ("correlate", "flip", "avg_pool", "max_pool", "out_size", "receptive", "one_by_one")
MAX_ABS = 10.0

Entry = Annotated[float, Field(ge=-MAX_ABS, le=MAX_ABS)]
ImageRow = Annotated[list[Entry], Field(min_length=1, max_length=cs.MAX_SIDE)]
KernelRow = Annotated[list[Entry], Field(min_length=1, max_length=cs.MAX_KERNEL)]


class Params(LabParams):
    image: list[ImageRow] = param(
        cs.EDGE_IMAGE, zh="图像", en="Image", widget="hidden", live=True, min_length=1,
        max_length=cs.MAX_SIDE,
    )  # fmt: skip
    kernel: list[KernelRow] = param(
        cs.EDGE_KERNEL, zh="卷积核", en="Kernel", widget="hidden", live=True, min_length=1,
        max_length=cs.MAX_KERNEL,
    )  # fmt: skip
    stride: int = param(1, zh="步长", en="Stride", ge=1, le=3, live=True)
    padding: int = param(0, zh="填充", en="Padding", ge=0, le=2, live=True)
    n: int = param(5, zh="输入边长 n（尺寸公式）", en="Input side n (size formula)", ge=1, le=16, live=True)  # fmt: skip
    k: int = param(3, zh="卷积核边长 k", en="Kernel side k", ge=1, le=7, live=True)
    p: int = param(0, zh="填充 p", en="Padding p", ge=0, le=3, live=True)
    s: int = param(1, zh="步长 s", en="Stride s", ge=1, le=4, live=True)

    @model_validator(mode="after")
    def _shapes(self) -> Params:
        if len({len(r) for r in self.image}) != 1:
            raise refuse("err.p_rows", "{name}: every row needs the same length", name="image")
        if any(len(r) != len(self.kernel) for r in self.kernel):
            raise refuse(
                "err.p_square", "{name}: must be square (k rows of k numbers)", name="kernel"
            )
        return self


class Goto(LabInput):
    """Jump to one example."""

    action: Literal["goto"]
    stage: int = Field(ge=0, le=len(STAGES) - 1)


def _playground(p: Params) -> tuple[list[TensorOut], dict[str, Any]]:
    image, kernel = torch.tensor(p.image), torch.tensor(p.kernel)
    out = [TensorOut("image", image), TensorOut("kernel", kernel)]
    out.append(TensorOut("kernel_flipped", torch.flip(kernel, (0, 1))))
    meta: dict[str, Any] = {"stride": p.stride, "padding": p.padding, "error": None}
    try:
        corr = cs.correlate(image, kernel, p.stride, p.padding)
        conv = cs.convolve(image, kernel, p.stride, p.padding)
    except RuntimeError as e:  # kernel larger than the padded image: torch's own words
        meta["error"] = str(e).splitlines()[0]
        return out, meta
    out += [TensorOut("output", corr), TensorOut("convolved", conv)]
    meta["out_shape"] = list(corr.shape)
    meta["formula"] = [
        cs.output_formula(n, len(p.kernel), p.padding, p.stride) for n in image.shape
    ]
    return out, meta


@register
class ConvLab(Lab):
    id = "conv"
    chapter = 4
    order = 2
    title = {"zh": "卷积一步一步算", "en": "Convolution, worked step by step"}
    description = {
        "zh": "卷积核在图像上滑动，每一步都由 torch 算：竖直边缘 [0, 1, 0, 0]，翻转卷积核得到 "
        "[0, −1, 0, 0]（torch 的卷积其实是互相关）；平均池化和最大池化；输出尺寸 "
        "⌊(n+2p−k)/s⌋+1；两层 3×3 看到 5×5 只用 18 个权重；1×1 卷积就是逐像素的线性层。"
        "在图上画画、点卷积核的格子或选预设，输出马上更新。",
        "en": "A kernel slides over an image, every number computed by torch: a vertical edge "
        "gives [0, 1, 0, 0], the flipped kernel [0, −1, 0, 0] (torch's conv is "
        "cross-correlation); average and max pooling; the output size ⌊(n+2p−k)/s⌋+1; two 3×3 "
        "layers see 5×5 with 18 weights; a 1×1 conv is a per-pixel linear layer. Draw on the "
        "image, click kernel cells or pick a preset: the output follows at once.",
    }
    Params = Params
    Actions = Goto
    tensors = (
        "image", "kernel", "kernel_flipped", "output", "convolved", "avg_in", "avg_out",
        "max_in", "max_out", "max_arg", "rf_two", "rf_one", "one_x", "one_conv", "one_linear",
    )  # fmt: skip
    trains = False

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.stage = 0  # index into STAGES: the example shown
        self.avg = cs.pool(cs.AVG_INPUT)
        self.max = cs.pool(cs.MAX_INPUT)
        self.rf = cs.receptive_field()
        self.one = cs.one_by_one(seed=seed)

    def max_steps(self) -> int:
        return len(STAGES) - 1  # example 0 is shown at step 0

    def step(self, capture: bool) -> Frame:
        self.stage = min(len(STAGES) - 1, self.stage + 1)
        return self._frame(capture)

    def snapshot(self) -> Frame:
        return self._frame(True)

    def act(self, action: Goto) -> Any:
        self.stage = action.stage
        yield self._frame(True)

    def _frame(self, capture: bool) -> Frame:
        frame = Frame(scalars={"stage": float(self.stage)})
        if not capture:
            return frame
        p = self.params
        tensors, play = _playground(p)
        size = cs.output_size(p.n, p.k, p.p, p.s)
        one = self.one
        tensors += [
            TensorOut("avg_in", self.avg.input),
            TensorOut("avg_out", self.avg.avg),
            TensorOut("max_in", self.max.input),
            TensorOut("max_out", self.max.max),
            TensorOut("max_arg", self.max.argmax.float()),
            TensorOut("rf_two", self.rf.field),
            TensorOut("rf_one", self.rf.field_5x5),
            TensorOut("one_x", one.x),
            TensorOut("one_conv", one.conv_out),
            TensorOut("one_linear", one.linear_out),
        ]
        frame.tensors = tensors
        frame.meta = {
            "stage": self.stage,
            "stages": list(STAGES),
            "play": play,
            "presets": cs.PRESETS,
            "size": {
                "n": p.n,
                "k": p.k,
                "p": p.p,
                "s": p.s,
                "formula": size.formula,
                "torch": size.torch_side,
                "starts": size.starts,
                "error": size.error,
            },  # fmt: skip
            "rf": {
                "seen": self.rf.side_seen,
                "two_3x3": self.rf.weights_two_3x3,
                "one_5x5": self.rf.weights_one_5x5,
            },
            "one": {
                "max_abs_diff": one.max_abs_diff,
                "conv_params": one.conv_params,
                "linear_params": one.linear_params,
                "shape_in": list(one.x.shape),
                "shape_out": list(one.conv_out.shape),
            },
        }
        return frame

    def state_dict(self) -> dict:
        return {"stage": self.stage}

    def load_state_dict(self, state: dict) -> None:
        self.stage = int(state["stage"])
