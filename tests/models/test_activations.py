"""activations: sigmoid' ≤ 0.25, tanh' ≤ 1, ReLU' is 1 or 0 (0 at 0 in PyTorch), SiLU dips to −0.278."""

import pytest
import torch

from models import activations as act


@pytest.fixture(scope="module")
def stats():
    return {name: act.stats(name) for name in act.NAMES}


def test_sigmoid_slope_peaks_at_a_quarter(stats):
    s = stats["sigmoid"]
    assert s["max_df"] == pytest.approx(0.25, abs=1e-12) and s["argmax_df"] == 0.0
    assert s["f0"] == 0.5 and s["df0"] == 0.25


def test_tanh_slope_peaks_at_one(stats):
    s = stats["tanh"]
    assert s["max_df"] == pytest.approx(1.0, abs=1e-12) and s["argmax_df"] == 0.0
    assert s["df0"] == 1.0


def test_relu_slope_is_one_when_active_zero_otherwise_and_zero_at_zero(stats):
    x = act.grid(5.0, 500)
    _, df = act.value_and_slope("relu", x)
    assert (df[x > 0] == 1).all() and (df[x < 0] == 0).all()
    assert df[x == 0].tolist() == [0.0]  # PyTorch's choice where there is no derivative
    s = stats["relu"]
    assert s["df0"] == 0.0 and s["f0"] == 0.0
    assert s["max_df"] == 1.0 and s["argmax_df"] > 0 and s["argmax_df_last"] == 10.0


def test_silu_is_not_a_gate_it_dips_to_minus_0_278(stats):
    s = stats["silu"]
    assert s["min_f"] == pytest.approx(-0.2785, abs=5e-4)
    assert s["argmin_f"] == pytest.approx(-1.2785, abs=1e-3)
    assert s["df0"] == 0.5


def test_gelu_dips_too_and_both_smooth_units_have_slopes_above_one(stats):
    assert stats["gelu"]["min_f"] == pytest.approx(-0.17, abs=1e-3)
    assert stats["gelu"]["max_df"] > 1 and stats["silu"]["max_df"] > 1


def test_autograd_slope_matches_the_formula():
    x = act.grid(6.0, 300)
    f, df = act.value_and_slope("sigmoid", x)
    assert torch.allclose(df, f * (1 - f))
    t, dt = act.value_and_slope("tanh", x)
    assert torch.allclose(dt, 1 - t * t)


def test_grid_holds_zero_exactly():
    x = act.grid(5.0, 200)
    assert x.shape == (401,) and x[200] == 0.0 and x[0] == -5.0 and x[-1] == 5.0
