"""The transformer lab's fact panels, apart from training: the warm-up curve, both
label-smoothing conventions on K = 4, LayerNorm against BatchNorm on the padded batch, and
the text's two 63-million-parameter models counted from their configs."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from models.label_smoothing import smoothed_ce, smoothed_targets
from models.padded_norms import compare_norms
from models.transformer.encoder_decoder import noam_lr, scale_reference

CURVE_POINTS = 120
RECIPE = {"d_model": 512, "warmup": 4000, "steps": 20_000}
# What the text reports of its two models (measurements, not computable here): hours on one
# RTX 5090 and the validation loss, which is label-smoothed.
REPORTED = {"hand": {"hours": 22, "val_loss": 2.8955}, "torch_qk": {"val_loss": 2.8777}}
LS_EXAMPLE = (2.0, 0.5, 0.3, -1.0)  # 4-class logits for the smoothing table, target 0


def lr_curve(d: int, warmup: int, steps: int, factor: float = 1.0) -> dict[str, list[float]]:
    s = torch.unique(torch.linspace(1, steps, CURVE_POINTS).round().long())
    s = torch.unique(torch.cat([s, torch.tensor([min(warmup, steps)])]))  # the peak itself
    return {"steps": s.tolist(), "lr": (factor * noam_lr(s, d, warmup)).tolist()}


def static_facts() -> dict[str, Any]:
    """What does not change with training: both smoothing conventions on K = 4, the padded
    batch's norms, the text's two models counted from their configs."""
    t = torch.tensor([0])
    logits = torch.tensor([LS_EXAMPLE], dtype=torch.float64)
    smooth = {}
    for conv in ("others", "uniform"):
        q = smoothed_targets(t, 4, 0.1, conv)[0]
        smooth[conv] = {"q": q.tolist(), "ce": float(smoothed_ce(logits, t, 0.1, conv))}
    smooth["torch_ce"] = float(F.cross_entropy(logits, t, label_smoothing=0.1))
    smooth["plain_ce"] = float(F.cross_entropy(logits, t))
    smooth["logits"] = list(LS_EXAMPLE)
    norms = compare_norms()
    as_list = {k: (v.tolist() if isinstance(v, torch.Tensor) else v) for k, v in norms.items()}
    hand, qk = scale_reference(False), scale_reference(True)
    enc = hand.encoder
    scale = {
        "n_layers": enc.n_layers,
        "d_model": enc.d_model,
        "n_heads": enc.n_heads,
        "d_head": enc.d_head,
        "d_ff": enc.d_ff,
        "vocab": enc.d_vocab,
        "attention_modules": hand.attention_modules(),
        "hand": {"params": hand.param_count(), **REPORTED["hand"]},
        "torch_qk": {"params": qk.param_count(), **REPORTED["torch_qk"]},
        "qk_extra": qk.param_count() - hand.param_count(),
    }
    for m in ("hand", "torch_qk"):
        scale[m]["ppl_smoothed"] = math.exp(scale[m]["val_loss"])  # e^(label-smoothed loss)
    recipe = lr_curve(RECIPE["d_model"], RECIPE["warmup"], RECIPE["steps"])
    recipe["peak"] = noam_lr(RECIPE["warmup"], RECIPE["d_model"], RECIPE["warmup"])
    return {"smoothing": smooth, "norms": as_list, "scale": scale, "recipe": {**RECIPE, **recipe}}
