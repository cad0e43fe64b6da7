"""Lab `softmax-ce`: from logits to probabilities to a loss, and where naive code breaks.

Nothing trains here: every param is live, and each change recomputes the picture with torch
in float32. The learner moves up to ten logits and sees softmax beside "square and
normalize", the naive exp overflowing to inf/nan above ≈ 88.7 while the max-subtracted
version stays finite, the cross-entropy −ln p of the right class, the curriculum's 5×10
prediction table and its mean CE, a product of likelihoods underflowing to 0 while the sum
of logs stays finite, and the gradients of MSE and BCE after a sigmoid (autograd's).
"""

from __future__ import annotations

import torch
from pydantic import model_validator

from backend.labs import register
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param, refuse
from models import softmax

CURVE = 201  # points on the −ln p and gradient curves
P_RANGE = (0.005, 1.0)
Z_RANGE = (-10.0, 10.0)
LOGIT_LIMIT = 200.0  # far enough past 88.7 to overflow, small enough to type


class Params(LabParams):
    logits: list[float] = param(
        [2.0, 1.0, 0.1, -3.0],
        zh="logits",
        en="Logits",
        widget="hidden",
        live=True,
        min_length=2,
        max_length=10,
    )
    # Chosen in the view, one radio per logit (the form's 0..9 slider ran past 4 logits); the
    # validator below still refuses a class past the last logit.
    target: int = param(0, zh="正确类别", en="Right class", ge=0, le=9, live=True, widget="hidden")
    n_samples: int = param(
        100, zh="样本数（似然连乘）", en="Samples (likelihood product)", ge=1, le=1000, live=True
    )
    y_true: int = param(
        1, zh="sigmoid 的真实标签 y", en="Sigmoid's true label y", ge=0, le=1, live=True
    )

    @model_validator(mode="after")
    def _check(self) -> Params:
        for i, z in enumerate(self.logits):
            if not -LOGIT_LIMIT <= z <= LOGIT_LIMIT:
                raise refuse(
                    "err.p_logit_outside",
                    "logit {i} is outside [{lo}, {hi}]",
                    i=i,
                    lo=-LOGIT_LIMIT,
                    hi=LOGIT_LIMIT,
                )
        if self.target >= len(self.logits):
            raise refuse(
                "err.p_target",
                "right class {target} but only {n} logits",
                target=self.target,
                n=len(self.logits),
            )
        return self


@register
class SoftmaxCELab(Lab):
    id = "softmax-ce"
    chapter = 2
    order = 2
    title = {"zh": "Softmax 与交叉熵", "en": "Softmax and cross-entropy"}
    description = {
        "zh": "拖动 logits 看 softmax 和“平方再归一化”的区别；朴素 exp 在 float32 里大于约 88.7 "
        "就溢出，先减最大值就不会；交叉熵 −ln p；许多似然连乘会下溢成 0，取对数相加不会；"
        "sigmoid 后用 MSE 梯度会消失，BCE 不会。",
        "en": "Move the logits and compare softmax with 'square and normalize'; naive exp "
        "overflows in float32 above ≈ 88.7 while subtracting the max does not; cross-entropy "
        "is −ln p; a product of many likelihoods underflows to 0 while the sum of logs does "
        "not; after a sigmoid, MSE's gradient vanishes and BCE's does not.",
    }
    Params = Params
    trains = False
    plays = False  # every param is live: a step would redraw the same picture
    tensors = (
        "logits",
        "softmax",
        "square_norm",
        "exp_naive",
        "softmax_naive",
        "ce_examples",
        "ce_curve",
        "table",
        "table_ce",
        "lik_product",
        "lik_logsum",
        "grad_mse",
        "grad_bce",
    )

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        # Fixed parts of the picture, computed once.
        self.table, self.picks, self.per_ce, self.mean_ce = softmax.table_ce()
        self.ce_ex = softmax.ce_of_prob(torch.tensor(softmax.CE_EXAMPLES))
        p_axis = torch.linspace(*P_RANGE, CURVE)
        self.ce_curve = softmax.ce_of_prob(p_axis)
        self.z_axis = torch.linspace(*Z_RANGE, CURVE)

    def max_steps(self) -> int:
        return 1  # a step only recomputes the picture; params apply live

    def step(self, capture: bool) -> Frame:
        return self.snapshot()

    def snapshot(self) -> Frame:
        p = self.params
        z = torch.tensor(p.logits, dtype=torch.float32)  # [K]
        names = [str(i) for i in range(z.numel())]
        probs = softmax.softmax_stable(z)
        exp_naive = torch.exp(z)
        naive = softmax.softmax_naive(z)
        prod, logsum = softmax.likelihood_chain(self.picks, p.n_samples)
        under = softmax.first_zero(prod)
        g_mse, g_bce = softmax.sigmoid_loss_grads(self.z_axis, float(p.y_true))
        scalars = {
            "loss": float(softmax.cross_entropy(z, p.target)),
            "p_target": float(probs[p.target]),
            "ce_p09": float(self.ce_ex[0]),
            "ce_p03": float(self.ce_ex[1]),
            "ce_p001": float(self.ce_ex[2]),
            "table_mean_ce": float(self.mean_ce),
            "product": float(prod[-1]),
            "log_sum": float(logsum[-1]),
            "naive_bad": float((~torch.isfinite(naive)).sum()),
        }
        labels_ex = [f"p={v:g}" for v in softmax.CE_EXAMPLES]
        row_names = [f"#{i + 1}" for i in range(len(softmax.LABELS))]
        tensors = [
            TensorOut("logits", z, "f32", names),
            TensorOut("softmax", probs, "f32", names),
            TensorOut("square_norm", softmax.square_normalize(z), "f32", names),
            TensorOut("exp_naive", exp_naive, "f32", names),
            TensorOut("softmax_naive", naive, "f32", names),
            TensorOut("ce_examples", self.ce_ex, "f32", labels_ex),
            TensorOut("ce_curve", self.ce_curve, "f32"),
            TensorOut("table", self.table, "f32"),  # [5, 10]
            TensorOut("table_ce", torch.stack([self.picks, self.per_ce]), "f32"),  # [2, 5]
            TensorOut("lik_product", prod, "f32"),
            TensorOut("lik_logsum", logsum, "f32"),
            TensorOut("grad_mse", g_mse, "f32"),
            TensorOut("grad_bce", g_bce, "f32"),
        ]
        meta = {
            "target": p.target,
            "exp_overflow": softmax.EXP_OVERFLOW,
            "ce_examples": list(softmax.CE_EXAMPLES),
            "table_labels": list(softmax.LABELS),
            "table_rows": row_names,
            "underflow_at": under,
            "p_range": list(P_RANGE),
            "z_range": list(Z_RANGE),
            "y_true": p.y_true,
        }
        return Frame(scalars=scalars, tensors=tensors, meta=meta)
