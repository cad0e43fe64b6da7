"""The ffn-moe lab's model facts: SiLU's minimum, the FFN ratio, dead units, routing
records, and DeepSeek-V3's total vs active parameters from its shape-only preset."""

from __future__ import annotations

import math

import pytest
import torch

from models.ffn_moe import (
    FFNMoEConfig,
    activation_curves,
    dead_fraction,
    moe_layers,
    routes,
    silu_minimum,
    top_share,
)
from models.transformer import Transformer, preset


def test_silu_minimum_is_computed_and_is_not_a_zero_one_gate():
    x, y = silu_minimum()
    assert x == pytest.approx(-1.27846, abs=1e-5)
    assert y == pytest.approx(-0.27846, abs=1e-5)
    assert x == pytest.approx(y - 1.0, abs=1e-9)  # at the minimum x·σ(x) = x + 1
    xs, curves = activation_curves()
    assert float(curves[2].min()) < -0.27 and float(curves[2].max()) > 3.9  # below 0, above 1
    assert float(curves[0].min()) == 0.0  # ReLU never negative


def test_ffn_ratio_of_qwen3_is_three():
    cfg = preset("qwen3-0.6b")
    assert (cfg.d_ff, cfg.d_model) == (3072, 1024)
    assert cfg.d_ff / cfg.d_model == 3


def test_deepseek_v3_preset_counts_near_671b_total_37b_active():
    cfg = preset("deepseek-v3")
    assert (cfg.n_experts, cfg.top_k, cfg.shared_expert, cfg.dense_layers) == (256, 8, True, 3)
    total, active = cfg.param_count(), cfg.active_param_count()
    assert abs(total - 671e9) / 671e9 < 0.005  # 671.03B: the MTP module is not counted
    assert abs(active - 37e9) / 37e9 < 0.02  # 37.55B
    # one token passes 8 routed + the shared expert in each of the 58 MoE layers
    per_expert = 3 * 7168 * 2048
    assert total - active == 58 * (256 - 8) * per_expert


def test_every_arm_counts_its_parameters_and_moe_counts_active_ones():
    cfg = FFNMoEConfig(d_vocab=40, shared_expert=True)
    for ffn in ("relu", "gelu", "swiglu", "moe"):
        tc = cfg.transformer(ffn)
        assert tc.param_count() == sum(p.numel() for p in Transformer(tc).parameters()), ffn
    moe = cfg.transformer("moe")
    unused = (moe.n_experts - moe.top_k) * 3 * moe.d_model * moe.expert_ffn
    assert moe.param_count() - moe.active_param_count() == unused  # one MoE layer (first dense)


def test_dead_fraction_counts_units_never_positive():
    torch.manual_seed(0)
    model = Transformer(FFNMoEConfig(d_vocab=10).transformer("relu"))
    x = torch.randint(0, 10, (4, 16))
    before = dead_fraction(model, x)
    assert before[0] < 0.05 and before[1] < 0.05  # random init: nearly every unit fires somewhere
    with torch.no_grad():
        model.blocks[1].mlp.fc.weight[:32].zero_()  # a quarter of layer 1's 128 units: pre = 0
    after = dead_fraction(model, x)
    assert after[0] == before[0]
    assert after[1] >= 0.25 and after[1] - before[1] == pytest.approx(0.25, abs=0.02)


def test_routes_record_each_tokens_top_k_and_load():
    torch.manual_seed(0)
    model = Transformer(FFNMoEConfig(d_vocab=10).transformer("moe"))
    assert [i for i, _ in moe_layers(model)] == [1]  # the first layer stays dense
    x = torch.randint(0, 10, (1, 12))
    chosen, gates, load = routes(model, x)[1]
    assert chosen.shape == gates.shape == (12, 2)
    assert torch.allclose(gates.sum(-1), torch.ones(12))
    counts = torch.bincount(chosen.flatten(), minlength=8).float()
    assert torch.allclose(load, counts / 24)
    assert top_share(load, 2) == pytest.approx(
        float(counts.sort(descending=True).values[:2].sum() / 24)
    )
    assert math.isclose(top_share(torch.full((8,), 1 / 8), 2), 0.25)
