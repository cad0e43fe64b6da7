"""Why raw live-stream inputs explode (CURRICULUM.md ch. 1, `live-stream`).

The training numbers themselves (loss 2.5e8, inf by epoch 12, MSE ≈ 19,565, …) are in
tests/models/test_linear.py; these tests pin down the reason the lab shows.
"""

from __future__ import annotations

import pytest
import torch

from models import linear
from models.data import live_stream


def hessian(x: torch.Tensor) -> torch.Tensor:
    """Hessian of torch's MSE in (weights, bias): 2·AᵀA/n, float64."""
    a = linear.design(x.double())
    return 2 * a.T @ a / a.shape[0]


def zscored() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = live_stream.load()
    mu, sd = live_stream.zscore_stats(x)
    return (x - mu) / sd, y


def first_gradient(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    torch.manual_seed(0)
    model = linear.LinearRegression(linear.LinearConfig(4, "mse", init_std=0.01))
    linear.loss_fn(model(x), y, "mse").backward()
    return torch.cat([model.weight.grad, model.bias.grad[None]]).abs()


def test_growth_per_epoch_is_one_minus_lr_lambda_max_squared():
    x, y = live_stream.load()
    lam = torch.linalg.eigvalsh(hessian(x))[-1].item()
    assert 2 / lam == pytest.approx(9.3e-11, rel=0.01)  # the stability limit
    predicted = (1 - 1e-9 * lam) ** 2
    assert predicted == pytest.approx(418, rel=0.01)
    torch.manual_seed(0)
    model = linear.LinearRegression(linear.LinearConfig(4, "mse", init_std=0.01))
    opt = torch.optim.SGD(model.parameters(), lr=1e-9)
    losses = []
    for _ in range(8):
        loss = linear.loss_fn(model(x), y, "mse")
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert losses[7] / losses[6] == pytest.approx(predicted, rel=0.01)


def test_raw_gradients_and_curvatures_span_orders_of_magnitude():
    x, y = live_stream.load()
    g = first_gradient(x, y)
    assert g[0] / g[4] > 1e5  # users' gradient dwarfs the bias's
    curv = torch.diagonal(hessian(x))
    # Alone, w_users would tolerate lr up to 2/curvature ≈ 9.4e-11: it sets the limit.
    assert 2 / curv[0].item() == pytest.approx(9.36e-11, rel=0.01)
    assert 2 / curv[4].item() == 1.0  # the bias alone would tolerate lr = 1
    eig = torch.linalg.eigvalsh(hessian(x))
    assert eig[-1] / eig[0] > 1e12  # condition number: no single lr suits every direction


def test_zscored_gradients_and_curvatures_are_alike():
    x, y = zscored()
    g = first_gradient(x, y)
    assert g.max() / g.min() < 2
    curv = torch.diagonal(hessian(x))
    assert torch.allclose(curv[:4], torch.full((4,), 1.8, dtype=torch.float64))  # 2·(n−1)/n
    eig = torch.linalg.eigvalsh(hessian(x))
    assert eig[-1] / eig[0] < 300
    assert 2 / eig[-1].item() == pytest.approx(0.342, abs=1e-3)  # lr 1e-2 is far inside


def test_closed_form_prediction_for_the_new_stream():
    x, y = zscored()
    w, b = linear.closed_form(x, y)
    xr, _ = live_stream.load()
    mu, sd = live_stream.zscore_stats(xr)
    new = (torch.tensor(live_stream.NEW_STREAM, dtype=torch.float64) - mu) / sd
    assert (new @ w + b).item() == pytest.approx(30_159, abs=5)  # GD reaches ≈ 30,162
