import pytest
import torch

from models import linear
from models.data import live_stream


def one_step(convention):
    x = torch.tensor([[1.0], [2.0]])
    y = torch.tensor([2.0, 3.0])
    model = linear.LinearRegression(linear.LinearConfig(1, convention))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    linear.loss_fn(model(x), y, convention).backward()
    opt.step()
    return model.weight.item(), model.bias.item()


def test_two_points_one_step_half_mse():
    w, b = one_step("half_mse")
    assert w == pytest.approx(0.4) and b == pytest.approx(0.25)


def test_two_points_one_step_mse():
    w, b = one_step("mse")
    assert w == pytest.approx(0.8) and b == pytest.approx(0.5)


def test_two_points_exact_fit_and_critical_lr():
    x = torch.tensor([[1.0], [2.0]])
    y = torch.tensor([2.0, 3.0])
    w, b = linear.closed_form(x, y)
    assert w.item() == pytest.approx(1.0) and b.item() == pytest.approx(1.0)
    assert linear.critical_lr(x, "half_mse") == pytest.approx(0.584, abs=1e-3)
    assert linear.critical_lr(x, "mse") == pytest.approx(0.292, abs=1e-3)


def train_live_stream(lr, epochs, zscore):
    torch.manual_seed(0)
    x, y = live_stream.load()
    if zscore:
        mu, sd = live_stream.zscore_stats(x)
        x = (x - mu) / sd
    model = linear.LinearRegression(linear.LinearConfig(4, "mse", init_std=0.01))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        loss = linear.loss_fn(model(x), y, "mse")
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, x, y, losses


def test_live_stream_raw_inputs_diverge_at_1e_9():
    _, _, _, losses = train_live_stream(1e-9, 16, zscore=False)
    assert losses[0] == pytest.approx(2.5e8, rel=0.15)
    assert 300 < losses[3] / losses[2] < 500  # ~418x per epoch
    assert all(torch.isfinite(torch.tensor(losses[:12])))
    assert not torch.isfinite(torch.tensor(losses[12]))  # inf by epoch 12
    x, _ = live_stream.load()
    assert linear.critical_lr(x, "mse") == pytest.approx(9.3e-11, rel=0.01)


def test_live_stream_zscored_reaches_the_book_mse():
    model, x, y, losses = train_live_stream(1e-2, 20_000, zscore=True)
    assert losses[-1] == pytest.approx(19_565, rel=0.01)
    with torch.no_grad():
        assert (model(x) - y).abs().max().item() == pytest.approx(279, rel=0.02)
        xr, _ = live_stream.load()
        mu, sd = live_stream.zscore_stats(xr)
        new = (torch.tensor(live_stream.NEW_STREAM, dtype=torch.float32) - mu) / sd
        assert model(new[None]).item() == pytest.approx(30_162, rel=0.01)
    w, b = linear.closed_form(x, y)
    optimum = ((x.double() @ w + b - y) ** 2).mean().item()
    assert optimum <= losses[-1]  # gradient descent approaches, never beats, least squares


def test_loss_surface_matches_direct_evaluation():
    x, y = live_stream.load()
    p = torch.tensor([0.1, 0.5, 20.0, 1000.0, 3.0])
    xs = torch.linspace(-1, 1, 5)
    ys = torch.linspace(-3, 3, 4)
    surf = linear.loss_surface(x, y, p, 0, 4, xs, ys, "mse")
    q = p.clone().double()
    q[0], q[4] = xs[2], ys[1]
    direct = linear.loss_fn(linear.design(x.double()) @ q, y.double(), "mse")
    assert surf.shape == (4, 5)
    assert surf[1, 2].item() == pytest.approx(direct.item())
