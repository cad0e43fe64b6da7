"""Lab `apple`: one weight, found by gradient descent, one torch call at a time.

The learner presses forward / backward / step / zero_grad (sent as `infer` with
{"action": ...}, the lab's declared Actions) and watches x, the loss and x.grad, which is autograd's .grad of a real
float32 tensor. A pressed `step` that moves x is recorded as the run's next step, like a
played one, so the charts, the scrubber and a rejoin show it. Forgetting zero_grad makes .grad accumulate (−18, −36, …). Play runs whole
cycles (forward, backward, step, zero_grad; `forget_zero_grad` skips the last one).

Divergence is honest: nothing caps the loss. Above lr = 2/curvature (2/18 ≈ 0.111 for three
apples) the error is multiplied by |1 − lr·18| > 1 every step, so the float32 loss overflows
to inf and the session moves to `diverged` (at lr 0.12 after about 300 steps, at 0.2 after
about 50). Just above the limit the growth is slow, and the step limit may come first: the
log-scale loss chart and the readout then show it climbing.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import torch

from backend.labs import register
from backend.labs.base import Frame, Lab, LabError, LabInput, LabParams, TensorOut, param
from models import apple

CURVE_POINTS = 121
Action = Literal["forward", "backward", "step", "zero_grad"]
ACTIONS: tuple[str, ...] = Action.__args__  # type: ignore[attr-defined]


class Button(LabInput):
    """The lab's declared Actions: one of the four buttons."""

    action: Action


class Params(LabParams):
    lr: float = param(
        1 / 36, zh="学习率", en="Learning rate", ge=0.001, le=0.25, step=0.001, live=True
    )
    forget_zero_grad: bool = param(
        False, zh="播放时忘记 zero_grad", en="Forget zero_grad while playing", live=True
    )
    x0: float = param(1.0, zh="起始猜测 x", en="First guess x", ge=-10, le=10, step=0.5)
    apples: int = param(3, zh="苹果个数", en="Apples", ge=1, le=10)
    price: float = param(6.0, zh="总价", en="Total price", ge=0, le=60, step=0.5)
    steps: int = param(500, zh="训练步数", en="Steps to train", ge=1, le=5000)


def _finite(v: float) -> bool:
    return math.isfinite(v)


@register
class AppleLab(Lab):
    id = "apple"
    chapter = 1
    order = 1
    title = {"zh": "一个苹果多少钱：一个权重的梯度下降", "en": "The price of an apple: one weight"}
    description = {
        "zh": "3 个苹果 6 元，一个多少钱？亲手按下 forward、backward、step、zero_grad，"
        "看切线的斜率就是梯度；学习率超过 2/18 就发散，忘了 zero_grad 梯度就会累加。",
        "en": "3 apples cost 6: what does one cost? Press forward, backward, step and "
        "zero_grad yourself and see the gradient as the tangent's slope; above lr 2/18 it "
        "diverges, and forgetting zero_grad makes gradients pile up.",
    }
    Params = Params
    Actions = Button
    tensors = ("curve", "tangent")

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.cfg = apple.AppleConfig(float(params.apples), float(params.price), float(params.x0))
        # One scalar weight: the CPU is the right device whatever the session offers.
        self.model = apple.Apple(self.cfg)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=params.lr)
        self.graph: torch.Tensor | None = None  # the loss of the last forward, graph attached
        self.grad_used: float | None = None  # the .grad the last optimizer step used
        self.curv = apple.curvature(self.model)
        self.opt_x = apple.optimum(self.cfg)

    def max_steps(self) -> int:
        return self.params.steps

    def update_live(self, params: Params) -> None:
        self.params = params
        for g in self.opt.param_groups:
            g["lr"] = params.lr

    # -- play: one whole training iteration -------------------------------------------------
    def step(self, capture: bool) -> Frame:
        loss = self.model.loss()  # forward
        loss.backward()  # backward: adds dL/dx into x.grad
        self.grad_used = float(self.model.x.grad)
        self.opt.step()  # x -= lr · x.grad
        if not self.params.forget_zero_grad:
            self.opt.zero_grad()  # x.grad = None
        self.graph = None
        return self._frame(capture, {"action": "cycle"})

    def snapshot(self) -> Frame:
        return self._frame(True, {"action": None})

    # -- the four buttons ------------------------------------------------------------------
    def act(self, button: Button):
        action = button.action
        note = None
        if action == "forward":
            self.graph = self.model.loss()
        elif action == "backward":
            if self.graph is None:
                raise LabError(
                    "press forward first: backward needs the graph of a forward pass "
                    "(torch frees it after each backward, and a step changes x)",
                    field="input.action",
                )
            self.graph.backward()
            self.graph = None
        elif action == "step":
            if self.model.x.grad is None:
                note = "no_grad"  # SGD skips a parameter whose .grad is None
            self.grad_used = None if note else float(self.model.x.grad)
            self.opt.step()
            self.graph = None
        else:
            self.opt.zero_grad()
        frame = self._frame(True, {"action": action, "note": note})
        # A step that moved x is a training step taken by hand: the session records it as
        # the run's next step (timeline, scrubber, rejoin). The other buttons leave x alone.
        frame.advanced = action == "step" and note is None
        yield frame

    # -- the picture -----------------------------------------------------------------------
    def _frame(self, capture: bool, meta: dict[str, Any]) -> Frame:
        x = float(self.model.x.detach())
        with torch.no_grad():
            pred = float(self.model())
            loss = float(self.model.loss())
        g = self.model.x.grad
        scalars = {"loss": loss, "x": x, "pred": pred, "lr": self.params.lr}
        slope = apple.slope(self.model) if _finite(loss) else math.nan
        scalars["slope"] = slope
        if g is not None:
            scalars["grad"] = float(g)
        if self.grad_used is not None and meta.get("action") in ("cycle", "step"):
            scalars["grad_used"] = self.grad_used
        frame = Frame(scalars=scalars)
        # The frame where the loss blows up is always drawn in full: it ends the run.
        if not capture and _finite(loss):
            return frame
        lo, hi = self._range(x)
        xs = torch.linspace(lo, hi, CURVE_POINTS)
        frame.tensors = [TensorOut("curve", apple.curve(self.cfg, xs), "f32")]
        if _finite(loss) and _finite(slope):
            w = (hi - lo) / 6
            tangent = torch.tensor([x - w, loss - slope * w, x + w, loss + slope * w])
            frame.tensors.append(TensorOut("tangent", tangent, "f32", ["x0", "y0", "x1", "y1"]))
        frame.meta = {
            **meta,
            "curve_x": [lo, hi],
            "optimum": self.opt_x,
            "curvature": self.curv,
            "critical_lr": 2.0 / self.curv,
            "one_step_lr": 1.0 / self.curv,
            "apples": self.cfg.apples,
            "price": self.cfg.price,
            "grad_none": g is None,
            "has_graph": self.graph is not None,
            "grad_used": self.grad_used,
            # x is the optimum to the last bit: the float32 error is exactly 0, so x.grad is
            # 0 and no lr moves it (0 · |1 − lr·curvature| = 0): above 2/curvature nothing
            # diverges from here; the view says so and points to reset.
            "exact_optimum": _finite(loss) and loss == 0.0,
        }
        return frame

    def _range(self, x: float) -> tuple[float, float]:
        """x-range of the curve: the optimum, the start and the current x, with a margin."""
        c = self.opt_x
        half = max(abs(self.cfg.x0 - c), 1.0)
        if _finite(x):
            half = max(half, abs(x - c))
        half *= 1.3
        return c - half, c + half

    # -- persistence -----------------------------------------------------------------------
    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "opt": self.opt.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.graph = None
