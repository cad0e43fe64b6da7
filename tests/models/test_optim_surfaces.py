"""The optimizers lab's surfaces: their values, autograd's gradients, the contour grid, and
gradient noise that is exactly ∇f + ξ."""

import pytest
import torch

from models.optim_surfaces import (
    EXTENT,
    MINIMUM,
    START,
    Surface,
    SurfaceConfig,
    gradient_noise,
    grid,
    value,
)


def grad_at(cfg: SurfaceConfig, x: float, y: float, xi=None) -> list[float]:
    s = Surface(SurfaceConfig(cfg.kind, cfg.a, cfg.b, start=(x, y)))
    s.noisy_loss(xi).backward()
    return s.point.grad.tolist()


def test_valley_is_elongated_with_condition_number_100():
    cfg = SurfaceConfig("valley")
    assert float(value(cfg, torch.tensor(2.0), torch.tensor(1.0))) == pytest.approx(10.4)
    # Curvatures 2a = 0.2 and 2b = 20: a Hessian with condition number 100.
    assert grad_at(cfg, 1.0, 1.0) == pytest.approx([0.2, 20.0])
    assert (2 * cfg.b) / (2 * cfg.a) == pytest.approx(100)
    assert Surface(cfg)().item() == pytest.approx(0.1 * 64 + 10 * 2.25)  # at START (-8, 1.5)


def test_rosenbrock_minimum_and_gradient():
    cfg = SurfaceConfig("rosenbrock")
    assert float(value(cfg, torch.tensor(1.0), torch.tensor(1.0))) == 0.0
    assert grad_at(cfg, 1.0, 1.0) == [0.0, 0.0]
    # At (-1.2, 1): df/dx = -2(1-x) - 400x(y-x²) = -215.6, df/dy = 200(y-x²) = -88.
    assert grad_at(cfg, -1.2, 1.0) == pytest.approx([-215.6, -88.0], rel=1e-5)
    assert value(cfg, torch.tensor(-1.2), torch.tensor(1.0)).item() == pytest.approx(24.2)
    assert MINIMUM["rosenbrock"] == (1.0, 1.0)


@pytest.mark.parametrize("kind", ["valley", "rosenbrock"])
def test_the_grid_is_the_function_on_its_extent_row_by_y(kind):
    cfg = SurfaceConfig(kind)
    xs, ys, z = grid(cfg, 33)
    assert xs.shape == ys.shape == (33,) and z.shape == (33, 33)
    (x0, x1), (y0, y1) = EXTENT[kind]
    assert (xs[0], xs[-1], ys[0], ys[-1]) == (x0, x1, y0, y1)
    i, j = 5, 27
    assert z[i, j] == value(cfg, xs[j], ys[i])  # row i is y = ys[i]
    sx, sy = START[kind]
    assert x0 < sx < x1 and y0 < sy < y1  # the race starts inside the picture
    mx, my = MINIMUM[kind]
    assert x0 < mx < x1 and y0 < my < y1


def test_noise_adds_exactly_xi_to_the_gradient():
    cfg = SurfaceConfig("rosenbrock")
    xi = torch.tensor([0.5, -2.0])
    clean, noisy = grad_at(cfg, 0.3, 0.2), grad_at(cfg, 0.3, 0.2, xi)
    assert noisy == pytest.approx([clean[0] + 0.5, clean[1] - 2.0])
    assert grad_at(cfg, 0.3, 0.2, None) == clean


def test_gradient_noise_is_seeded_and_scaled():
    a = gradient_noise(2.0, torch.Generator().manual_seed(3))
    b = gradient_noise(2.0, torch.Generator().manual_seed(3))
    assert torch.equal(a, b) and a.shape == (2,)
    assert torch.equal(gradient_noise(0.0, torch.Generator().manual_seed(3)), torch.zeros(2))
    gen = torch.Generator().manual_seed(0)
    draws = torch.stack([gradient_noise(2.0, gen) for _ in range(4000)])
    assert draws.std().item() == pytest.approx(2.0, rel=0.05)
    assert draws.mean(0).abs().max().item() < 0.15


def test_torch_optimizers_move_the_point_parameter():
    s = Surface(SurfaceConfig("valley"))
    opt = torch.optim.SGD(s.parameters(), lr=0.05)
    opt.zero_grad()
    s().backward()
    opt.step()
    # p ← p − lr·∇f: x = -8 − 0.05·(0.2·-8), y = 1.5 − 0.05·(20·1.5)
    assert s.point.tolist() == pytest.approx([-7.92, 0.0], abs=1e-6)  # float32
