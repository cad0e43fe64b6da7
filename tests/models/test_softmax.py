"""Softmax and cross-entropy (ch. 2 `softmax-ce`): the curriculum's numbers, in float32."""

from __future__ import annotations

import math

import pytest
import torch

from models import softmax


def test_cross_entropy_of_the_right_class():
    ce = softmax.ce_of_prob(torch.tensor(softmax.CE_EXAMPLES))
    assert [round(float(v), 3) for v in ce] == [0.105, 1.204, 4.605]
    # The same through torch's cross_entropy from logits whose softmax gives p = 0.9.
    z = torch.log(torch.tensor([0.9, 0.05, 0.05]))
    assert round(float(softmax.cross_entropy(z, 0)), 3) == 0.105


def test_prediction_table():
    table, picks, per, mean = softmax.table_ce()
    assert table.shape == (5, 10)
    assert softmax.LABELS == (2, 9, 5, 8, 7)
    assert [round(float(p), 3) for p in picks] == [0.178, 0.202, 0.129, 0.236, 0.221]
    expected = [-math.log(p) for p in (0.178, 0.202, 0.129, 0.236, 0.221)]
    assert per.tolist() == pytest.approx(expected, abs=1e-5)
    assert float(mean) == pytest.approx(sum(expected) / 5, abs=1e-5)
    assert round(float(mean), 3) == 1.665


def test_square_and_normalize_favours_a_negative_logit():
    z = torch.tensor([2.0, 1.0, 0.1, -3.0])
    sq, sm = softmax.square_normalize(z), softmax.softmax_stable(z)
    assert float(sq.sum()) == pytest.approx(1.0) and float(sm.sum()) == pytest.approx(1.0)
    assert int(sq.argmax()) == 3 and float(sq[3]) > 0.6  # −3 gets the largest share
    assert int(sm.argmax()) == 0 and float(sm[3]) < 0.01


def test_naive_exp_overflows_above_88_7_in_float32():
    assert abs(softmax.EXP_OVERFLOW - 88.7228) < 1e-4
    assert torch.isfinite(torch.exp(torch.tensor(88.72)))
    assert torch.isinf(torch.exp(torch.tensor(88.73)))
    assert torch.isfinite(softmax.softmax_naive(torch.tensor([88.0, 1.0, 0.0]))).all()
    bad = softmax.softmax_naive(torch.tensor([90.0, 1.0, 0.0]))
    assert torch.isnan(bad[0])  # inf / inf
    good = softmax.softmax_stable(torch.tensor([90.0, 1.0, 0.0]))
    assert torch.isfinite(good).all() and float(good[0]) == pytest.approx(1.0)
    # Very negative logits underflow the other way: 0 / 0.
    assert torch.isnan(softmax.softmax_naive(torch.tensor([-110.0, -120.0]))).all()
    assert float(softmax.softmax_stable(torch.tensor([-110.0, -120.0]))[0]) == pytest.approx(
        1 / (1 + math.exp(-10))
    )


def test_stable_matches_torch_softmax():
    z = torch.tensor([3.0, -1.0, 0.5, 7.0])
    assert torch.allclose(softmax.softmax_stable(z), torch.softmax(z, -1))
    assert torch.allclose(softmax.softmax_naive(z), torch.softmax(z, -1))


def test_product_of_likelihoods_underflows_sum_of_logs_does_not():
    _, picks, _, _ = softmax.table_ce()
    prod, logsum = softmax.likelihood_chain(picks, 200)
    assert prod.dtype == torch.float32 and prod.shape == (200,)
    k = softmax.first_zero(prod)
    assert k is not None and 30 < k < 100
    assert float(prod[k - 2]) > 0 and torch.all(prod[k - 1 :] == 0)
    assert torch.isfinite(logsum).all()
    exact = sum(math.log(float(picks[i % 5])) for i in range(200))
    assert float(logsum[-1]) == pytest.approx(exact, rel=1e-4)
    short, _ = softmax.likelihood_chain(picks, 10)
    assert softmax.first_zero(short) is None


def test_mse_gradient_dies_when_saturated_bce_does_not():
    z = torch.linspace(-10, 10, 201)
    for y in (0.0, 1.0):
        g_mse, g_bce = softmax.sigmoid_loss_grads(z, y)
        p = torch.sigmoid(z)
        assert torch.allclose(g_mse, 2 * (p - y) * p * (1 - p), atol=1e-6)
        assert torch.allclose(g_bce, p - y, atol=1e-6)
    g_mse, g_bce = softmax.sigmoid_loss_grads(torch.tensor([-10.0]), 1.0)
    assert abs(float(g_mse)) < 1e-3  # confidently wrong, yet almost no gradient
    assert float(g_bce) == pytest.approx(-1.0, abs=1e-3)
