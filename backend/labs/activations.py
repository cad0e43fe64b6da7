"""Lab `activations`: ReLU, sigmoid, tanh, GELU and SiLU, each with its slope from autograd.

Nothing trains: a step (or a change of params) recomputes the curves on a grid that holds
x = 0 exactly, and the readouts (max f', the extremes, f and f' at 0 and at a probe point).
The extremes come from a fixed fine grid on [-10, 10], whatever range is shown.
"""

from __future__ import annotations

import torch

from backend.labs import register
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param
from models import activations as act

HALF = 200  # the curves have 2·HALF + 1 points
STAT_KEYS = ("max_df", "argmax_df", "argmax_df_last", "min_f", "argmin_f", "f0", "df0")


class Params(LabParams):
    relu: bool = param(True, zh="ReLU", en="ReLU", live=True)
    sigmoid: bool = param(True, zh="Sigmoid", en="Sigmoid", live=True)
    tanh: bool = param(True, zh="Tanh", en="Tanh", live=True)
    gelu: bool = param(True, zh="GELU", en="GELU", live=True)
    silu: bool = param(True, zh="SiLU (Swish)", en="SiLU (Swish)", live=True)
    extent: float = param(5.0, zh="横轴范围 ±", en="x range ±", ge=1, le=10, step=0.5, live=True)
    probe: float = param(0.0, zh="探针 x", en="Probe at x", ge=-10, le=10, step=0.1, live=True)


@register
class ActivationsLab(Lab):
    id = "activations"
    chapter = 3
    order = 2
    title = {"zh": "激活函数与它们的导数", "en": "Activation functions and their slopes"}
    description = {
        "zh": "ReLU、Sigmoid、Tanh、GELU、SiLU 与 autograd 算出的导数：sigmoid′ 最大 0.25，"
        "tanh′ 最大 1，ReLU′ 激活时为 1、否则为 0（PyTorch 在 0 处取 0），SiLU 会低到 −0.278。",
        "en": "ReLU, sigmoid, tanh, GELU and SiLU with autograd's slopes: sigmoid′ peaks at "
        "0.25, tanh′ at 1, ReLU′ is 1 when active and 0 otherwise (PyTorch says 0 at 0), and "
        "SiLU dips to −0.278.",
    }
    Params = Params
    tensors = ("f", "df", "probe", *STAT_KEYS)
    trains = False
    plays = False  # every param is live: a step would redraw the same curves

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.stats = {name: act.stats(name) for name in act.NAMES}

    def max_steps(self) -> int:
        return 1  # one step recomputes the picture; there is nothing to train

    def step(self, capture: bool) -> Frame:
        return self.snapshot()

    def snapshot(self) -> Frame:
        p = self.params
        names = [n for n in act.NAMES if getattr(p, n)]
        x = act.grid(p.extent, HALF)
        probe = torch.tensor([p.probe], dtype=torch.float64)
        fs, dfs, at = [], [], []
        for n in names:
            f, df = act.value_and_slope(n, x)
            pf, pdf = act.value_and_slope(n, probe)
            fs.append(f)
            dfs.append(df)
            at.append(torch.cat([pf, pdf]))
        empty = torch.zeros(0, 2 * HALF + 1)
        tensors = [
            TensorOut("f", torch.stack(fs) if names else empty, "f32", names),  # [A, N]
            TensorOut("df", torch.stack(dfs) if names else empty, "f32", names),  # [A, N]
            # [A, 2]: f and f' at the probe x
            TensorOut("probe", torch.stack(at) if names else torch.zeros(0, 2), "f32", names),
        ]
        for key in STAT_KEYS:
            vals = torch.tensor([self.stats[n][key] for n in names], dtype=torch.float64)
            tensors.append(TensorOut(key, vals, "f32", names))
        return Frame(
            tensors=tensors,
            meta={"x_range": [-p.extent, p.extent], "probe": p.probe, "stats_range": [-10, 10]},
        )
