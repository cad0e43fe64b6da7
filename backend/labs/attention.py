"""Lab `attention`: one attention computation, stage by stage, on the learner's own matrices.

`step` reveals the next of seven stages (X → Q,K,V → QKᵀ → ÷√d → mask → softmax → ×V);
the session is `done` at the seventh, and reset starts over. Every field is live: editing a
cell (the view sends `preset: "custom"` with all matrices), changing the mask or tying
W_K = W_Q recomputes the stages reached so far without resetting. Beside the stages: the
√d probe (sampled by torch, seeded) and the multi-head shape chain with torch's own
data_ptr / is_contiguous answers.
"""

from __future__ import annotations

from typing import Annotated, Literal

import torch
from pydantic import Field, model_validator

from backend.labs import register
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param, refuse
from models import attention_steps as steps

Entry = Annotated[float, Field(ge=-steps.MAX_ABS, le=steps.MAX_ABS)]
Row = Annotated[list[Entry], Field(min_length=1, max_length=steps.MAX_DIM)]
Matrix = Annotated[list[Row], Field(min_length=1, max_length=steps.MAX_DIM)]
Token = Annotated[str, Field(min_length=1, max_length=12)]
MaskRow = Annotated[list[bool], Field(min_length=1, max_length=steps.MAX_TOKENS)]

_DEFAULT = steps.PRESETS["causal"]


def _rows(m) -> list[list]:
    return [list(r) for r in m]


class Params(LabParams):
    preset: Literal["scores", "causal", "context", "custom"] = param(
        "causal",
        zh="例子",
        en="Example",
        live=True,
        choices={
            "scores": ("分数 [2, 0, −1] 的例子", "Scores [2, 0, −1]"),
            "causal": ("因果掩码：今天 天气 真 好", "Causal mask: 今天 天气 真 好"),
            "context": ("二维语境：甜苹果 / 苹果手机", "2-D context: 甜苹果 / 苹果手机"),
            "custom": ("我自己的矩阵", "My own matrices"),
        },
    )
    mask: Literal["auto", "none", "causal", "custom"] = param(
        "auto",
        zh="掩码",
        en="Mask",
        live=True,
        choices={
            "auto": ("按例子", "As the example has it"),
            "none": ("不遮挡", "None"),
            "causal": ("因果（只看前面）", "Causal (only the past)"),
            "custom": ("自己点选", "My own (click the cells)"),
        },
    )
    tie_qk: bool = param(False, zh="令 W_K = W_Q", en="Tie W_K = W_Q", live=True)
    d_probe: int = param(
        64,
        zh="维度 d（缩放实验）",
        en="Dimension d (scaling probe)",
        ge=2,
        le=1024,
        scale="log",
        live=True,
    )
    heads: Literal["1", "2", "4", "8"] = param(
        "4",
        zh="头数（形状链）",
        en="Heads (shape chain)",
        live=True,
        choices={h: (f"{h} 个头", f"{h} head{'s' if h != '1' else ''}") for h in "1248"},
    )
    tokens: list[Token] = param(
        list(_DEFAULT.tokens),
        zh="词",
        en="Tokens",
        widget="hidden",
        live=True,
        min_length=1,
        max_length=steps.MAX_TOKENS,
    )
    x: Matrix = param(_rows(_DEFAULT.x), zh="X", en="X", widget="hidden", live=True)
    w_q: Matrix = param(_rows(_DEFAULT.w_q), zh="W_Q", en="W_Q", widget="hidden", live=True)
    w_k: Matrix = param(_rows(_DEFAULT.w_k), zh="W_K", en="W_K", widget="hidden", live=True)
    w_v: Matrix = param(_rows(_DEFAULT.w_v), zh="W_V", en="W_V", widget="hidden", live=True)
    mask_custom: list[MaskRow] = param(
        steps.causal_allowed(4).tolist(),
        zh="自定义掩码",
        en="Custom mask",
        widget="hidden",
        live=True,
        min_length=1,
        max_length=steps.MAX_TOKENS,
    )

    @model_validator(mode="after")
    def _shapes_agree(self) -> Params:
        def rect(name: str, m: list[list]) -> tuple[int, int]:
            if len({len(r) for r in m}) != 1:
                raise refuse("err.p_rows", "{name}: every row needs the same length", name=name)
            return len(m), len(m[0])

        t, d_model = rect("x", self.x)
        if len(self.tokens) != t:
            raise refuse(
                "err.p_labels", "tokens: {n} labels for {t} rows of x", n=len(self.tokens), t=t
            )
        for name in ("w_q", "w_k", "w_v"):
            rows, _ = rect(name, getattr(self, name))
            if rows != d_model:
                raise refuse(
                    "err.p_w_rows",
                    "{name}: needs {d} rows (the width of x), has {rows}",
                    name=name,
                    d=d_model,
                    rows=rows,
                )
        if rect("w_q", self.w_q)[1] != rect("w_k", self.w_k)[1]:
            raise refuse(
                "err.p_wk_cols", "w_k: needs as many columns as w_q (q·k needs equal widths)"
            )
        if self.mask == "custom":
            n = len(steps.PRESETS[self.preset].tokens) if self.preset != "custom" else t
            if rect("mask_custom", self.mask_custom) != (n, n):
                raise refuse(
                    "err.p_mask_cells", "mask_custom: needs {n}×{n} cells, one row per token", n=n
                )
            if not all(any(r) for r in self.mask_custom):
                raise refuse(
                    "err.p_mask_row",
                    "mask_custom: every row must let its token see at least one key",
                )
        return self


def _inputs(p: Params):
    """(tokens, x, w_q, w_k, w_v, allowed, mask kind, focus row) for the current params."""
    if p.preset == "custom":
        tokens = list(p.tokens)
        x, w_q, w_k, w_v = (
            torch.tensor(m, dtype=torch.float32) for m in (p.x, p.w_q, p.w_k, p.w_v)
        )
        kind = "none" if p.mask == "auto" else p.mask
        custom = None
    else:
        pre = steps.PRESETS[p.preset]
        tokens = list(pre.tokens)
        x, w_q, w_k, w_v, _ = steps.preset_tensors(p.preset)
        kind = pre.mask if p.mask == "auto" else p.mask
        custom = torch.tensor(pre.allowed) if p.mask == "auto" and pre.allowed else None
    if kind == "custom" and custom is None:
        custom = torch.tensor(p.mask_custom)
    allowed = steps.allowed_for(kind, len(tokens), custom)
    return tokens, x, w_q, w_k, w_v, allowed, kind


@register
class AttentionLab(Lab):
    id = "attention"
    chapter = 6
    order = 2
    title = {"zh": "一步一步算注意力", "en": "Attention, one stage at a time"}
    description = {
        "zh": "X → Q、K、V → QKᵀ → ÷√d → 掩码 → softmax → ×V：按“单步”一次走一段，每段都是一张带形状的"
        "矩阵。点格子改数字，试试因果掩码、令 W_K = W_Q，看 √d 为什么要除，多头的 view 和 "
        "transpose 又复制了什么。",
        "en": "X → Q, K, V → QKᵀ → ÷√d → mask → softmax → ×V: press step to reveal one stage at a "
        "time, each a matrix with its shape. Click cells to change numbers, try the causal mask "
        "and W_K = W_Q, see why scores are divided by √d, and which multi-head reshapes copy "
        "memory.",
    }
    Params = Params
    tensors = (
        "x", "w_q", "w_k", "w_v", "q", "k", "v", "scores", "scaled", "allowed", "masked",
        "weights", "out", "residual", "probe_sweep",
    )  # fmt: skip
    trains = False

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.stage = 1  # 1..7: the stages shown so far
        self.sweep = steps.probe_sweep(seed)
        self._probe_cache: dict[int, steps.Probe] = {}
        self._chain_cache: dict[int, steps.Chain] = {}

    def max_steps(self) -> int:
        return len(steps.STAGES) - 1  # stage 1 is shown at step 0

    def step(self, capture: bool) -> Frame:
        self.stage = min(len(steps.STAGES), self.stage + 1)
        return self._frame(capture)

    def snapshot(self) -> Frame:
        return self._frame(True)

    def _probe(self, d: int) -> steps.Probe:
        if d not in self._probe_cache:
            g = torch.Generator().manual_seed(self.seed * 7919 + d)
            self._probe_cache[d] = steps.scale_probe(d, generator=g)
        return self._probe_cache[d]

    def _chain(self, heads: int) -> steps.Chain:
        if heads not in self._chain_cache:
            self._chain_cache[heads] = steps.head_chain(2, 5, 8, heads, seed=self.seed)
        return self._chain_cache[heads]

    def _frame(self, capture: bool) -> Frame:
        p = self.params
        frame = Frame(scalars={"stage": float(self.stage)})
        if not capture:
            return frame
        tokens, x, w_q, w_k, w_v, allowed, kind = _inputs(p)
        s = steps.run(x, w_q, w_k, w_v, allowed, tie_qk=p.tie_qk)
        reached = {name: i + 1 <= self.stage for i, name in enumerate(steps.STAGES)}
        out = [
            TensorOut("x", s.x),
            TensorOut("w_q", w_q),
            TensorOut("w_k", w_q if p.tie_qk else w_k),
            TensorOut("w_v", w_v),
        ]
        if reached["qkv"]:
            out += [TensorOut("q", s.q), TensorOut("k", s.k), TensorOut("v", s.v)]
        if reached["scores"]:
            out.append(TensorOut("scores", s.scores))
        if reached["scaled"]:
            out.append(TensorOut("scaled", s.scaled))
        if reached["masked"]:
            out += [TensorOut("allowed", s.allowed.float()), TensorOut("masked", s.masked)]
        if reached["weights"]:
            out.append(TensorOut("weights", s.weights))
        if reached["out"]:
            out.append(TensorOut("out", s.out))
            if s.residual is not None:
                out.append(TensorOut("residual", s.residual))
        sweep = torch.tensor(
            [[q.var_raw, q.var_scaled, q.entropy_raw, q.entropy_scaled] for q in self.sweep]
        )  # [n_d, 4]
        out.append(
            TensorOut("probe_sweep", sweep, "f32", ["var_raw", "var_scaled", "H_raw", "H_scaled"])
        )
        frame.tensors = out
        probe = self._probe(p.d_probe)
        chain = self._chain(int(p.heads))
        frame.meta = {
            "stage": self.stage,
            "stages": list(steps.STAGES),
            "tokens": tokens,
            "preset": p.preset,
            "mask_kind": kind,
            "allowed": s.allowed.tolist(),
            "tie_qk": p.tie_qk,
            "focus_row": 0 if p.preset == "scores" else None,
            **s.extras,
            "probe": {
                "d": probe.d,
                "var_raw": probe.var_raw,
                "var_scaled": probe.var_scaled,
                "entropy_raw": probe.entropy_raw,
                "entropy_scaled": probe.entropy_scaled,
                "entropy_max": probe.entropy_max,
            },
            "probe_ds": list(steps.PROBE_DS),
            "chain": {
                "heads": int(p.heads),
                "steps": [
                    {
                        "code": c.code,
                        "shape": list(c.shape),
                        "same_memory": c.same_memory,
                        "contiguous": c.contiguous,
                    }
                    for c in chain.steps
                ],
                "view_error": chain.view_error,
                "sdpa_error": chain.sdpa_error,
            },
        }
        return frame

    def state_dict(self) -> dict:
        return {"stage": self.stage}

    def load_state_dict(self, state: dict) -> None:
        self.stage = int(state["stage"])
