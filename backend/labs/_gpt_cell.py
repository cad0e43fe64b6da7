"""The `gpt` lab's drill-down: one attention-map cell's arithmetic from the live model.

An `infer` whose input is `{"cell": {layer, head, query, key}}` (no prompt) asks for the
numbers behind pattern[layer][head, query, key] of the fixed example the frames draw: q_i
and k_j of that head, q·k, ÷√d_head, the causal mask and the softmax over row `query`.
They come from the model as it is now (step `step` in the answer), not from a recorded
frame: the timeline keeps frames, not weights (docs/learner-tools.md).
"""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field, ValidationInfo, field_validator

from backend.labs._gpt_frames import _example
from backend.labs.base import Frame, LabInput, refuse
from models.attention_cell import attention_cell

N_SHOWN = 8  # entries of q and k printed; the dot is over all of them


def _bound(info: ValidationInfo, name: str) -> int | None:
    """The exclusive upper bound of a cell coordinate for the lab's model and example."""
    lab = (info.context or {}).get("lab")
    if lab is None or getattr(lab, "model", None) is None:
        return None
    cfg = lab.model.cfg
    T = len(lab.source.example_x)
    return {"layer": cfg.n_layers, "head": cfg.n_heads, "query": T, "key": T}[name]


class CellRef(LabInput):
    """Which cell: layer and head of the map, query row and key column of the example."""

    layer: int = Field(ge=0)
    head: int = Field(ge=0)
    query: int = Field(ge=0)
    key: int = Field(ge=0)

    @field_validator("layer", "head", "query", "key")
    @classmethod
    def _inside_model(cls, v: int, info: ValidationInfo) -> int:
        top = _bound(info, info.field_name)
        if top is not None and v >= top:
            what = {"layer": "layers", "head": "heads", "query": "tokens", "key": "tokens"}
            raise refuse(
                f"err.p_cell_{what[info.field_name]}",
                "{v} is out of range: the model has {top} " + what[info.field_name],
                v=v,
                top=top,
            )
        return v


class CellInput(LabInput):
    """`infer` input for the drill-down (the gpt lab's `infer` with a `cell`)."""

    cell: CellRef


def cell_frame(lab: Any, inp: CellInput) -> Frame:
    """The arithmetic of one cell as a frame's meta (small: one row of numbers)."""
    c = inp.cell
    ex = _example(lab.source)
    a = attention_cell(lab.model, ex.x, c.layer, c.head, c.query, c.key)
    finite = [None if not torch.isfinite(s) else float(s) for s in a.row_scores]
    return Frame(
        meta={
            "cell": {
                "layer": c.layer,
                "head": c.head,
                "query": c.query,
                "key": c.key,
                "step": lab.t,
                "query_token": ex.meta["tokens"][c.query],
                "key_token": ex.meta["tokens"][c.key],
                "d_head": a.d_head,
                "q": a.q[:N_SHOWN].tolist(),
                "k": a.k[:N_SHOWN].tolist(),
                "dot": a.dot,
                "sqrt_d": a.d_head**0.5,
                "scaled": a.scaled,
                "score": a.score,
                "masked": a.masked,
                "causal": bool(lab.model.cfg.causal),
                "row_scores": finite,  # None where the mask hid the key (−∞)
                "row_softmax": a.row_softmax.tolist(),
                "weight": a.weight,
            },
            "last": True,
        }
    )
