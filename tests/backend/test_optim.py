"""The optimizer configs (backend/optim.py): each kind is torch's optimizer with its settings,
a live change keeps the state, and Adam without bias correction is Adam without it (its first
step 3.16 x lr)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from backend.optim import AdamNoBias, OptimConfig


def _first_step(kind: str, lr: float = 0.1) -> torch.Tensor:
    p = nn.Parameter(torch.zeros(3))
    opt = OptimConfig(kind, lr=lr).build([p])
    p.grad = torch.tensor([1.0, -2.0, 0.5])
    opt.step()
    return p.detach()


def test_adam_without_bias_correction_first_steps_3_16_lr():
    step = _first_step("adam_no_bias")
    assert step.abs().tolist() == pytest.approx([0.1 * 0.1 / math.sqrt(0.001)] * 3, rel=1e-5)
    assert step.abs().tolist() == pytest.approx([0.3162] * 3, rel=1e-3)
    assert _first_step("adam").abs().tolist() == pytest.approx([0.1] * 3, rel=1e-5)


def test_adam_without_bias_correction_is_adam_without_its_correction():
    torch.manual_seed(0)
    a, b = nn.Parameter(torch.randn(5)), nn.Parameter(torch.randn(5))
    b.data.copy_(a.data)
    ours = AdamNoBias([a], lr=0.01)
    ref = torch.optim.Adam([b], lr=0.01)
    for t in range(1, 6):
        g = torch.randn(5)
        a.grad, b.grad = g.clone(), g.clone()
        m_b, v_b = (ref.state[b]["exp_avg"].clone(), ref.state[b]["exp_avg_sq"].clone()) if t > 1 else (torch.zeros(5), torch.zeros(5))  # fmt: skip
        before = a.detach().clone()
        ours.step()
        ref.step()
        m = 0.9 * m_b + 0.1 * g
        v = 0.999 * v_b + 0.001 * g * g
        assert torch.allclose(a.detach(), before - 0.01 * m / (v.sqrt() + 1e-8), atol=1e-7)


@pytest.mark.parametrize(
    ("kind", "cls", "extra"),
    [
        ("sgd", torch.optim.SGD, {"momentum": 0}),
        ("momentum", torch.optim.SGD, {"momentum": 0.9, "nesterov": False}),
        ("nesterov", torch.optim.SGD, {"momentum": 0.9, "nesterov": True}),
        ("rmsprop", torch.optim.RMSprop, {"alpha": 0.99, "eps": 1e-8}),
        ("adam", torch.optim.Adam, {"betas": (0.9, 0.999), "eps": 1e-8}),
        ("adamw", torch.optim.AdamW, {"betas": (0.9, 0.999), "weight_decay": 0.0}),
    ],
)
def test_each_kind_builds_torchs_optimizer_with_its_settings(kind, cls, extra):
    opt = OptimConfig(kind, lr=0.01).build([nn.Parameter(torch.zeros(2))])
    assert type(opt) is cls and opt.defaults["lr"] == 0.01
    assert {k: opt.defaults[k] for k in extra} == extra


def test_apply_changes_the_numbers_and_keeps_the_state():
    p = nn.Parameter(torch.zeros(2))
    cfg = OptimConfig("adam", lr=0.01)
    opt = cfg.build([p])
    p.grad = torch.ones(2)
    opt.step()
    OptimConfig("adam", lr=0.5, betas=(0.8, 0.99)).apply(opt)
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["betas"] == (0.8, 0.99)
    assert int(opt.state[p]["step"]) == 1


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown optimizer"):
        OptimConfig("lion")  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["sgd", "momentum", "nesterov", "rmsprop", "adam", "adamw"])
def test_each_kind_steps_exactly_as_torchs_per_parameter_loop(kind):
    """The configs build torch's multi-tensor (foreach) path, faster on the CPU: it must give
    the same numbers as the default loop over parameters. To float rounding, not bit for bit:
    the two paths are different kernels (a fused multi-tensor op, a loop of per-tensor ops)
    and torch promises the same update, not the same rounding."""
    torch.manual_seed(0)
    ours = [nn.Parameter(torch.randn(4, 3)), nn.Parameter(torch.randn(7))]
    ref = [nn.Parameter(p.detach().clone()) for p in ours]
    cfg = OptimConfig(kind, lr=0.05, weight_decay=0.01)
    opt = cfg.build(ours)
    assert all(g["foreach"] for g in opt.param_groups)
    settings = {k: v for k, v in opt.defaults.items() if k != "decoupled_weight_decay"}
    loop = type(opt)(ref, **{**settings, "foreach": False})
    for _ in range(5):
        for a, b in zip(ours, ref, strict=True):
            a.grad = torch.randn_like(a)
            b.grad = a.grad.clone()
        opt.step()
        loop.step()
    for a, b in zip(ours, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
