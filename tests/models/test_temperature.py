"""The two-day temperature rule and its generated series (CURRICULUM.md ch. 1, `temperature`)."""

from __future__ import annotations

import pytest
import torch

from models import temperature as tm
from models.data import temperature as data


def fit(mode: str, seed: int = 0, steps: int = 1000, lr: float = 0.005):
    """Full-batch SGD on the training split from A = B = 1, C = 2; losses on every split."""
    series = data.generate(seed=seed)
    x, y = data.windows(series)
    idx = data.split(y.shape[0], mode, seed=seed)
    idx["future"] = data.future(y.shape[0])
    model = tm.TwoDay()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    tr = idx["train"]
    for _ in range(steps):
        opt.zero_grad()
        tm.mse(model(x[tr]), y[tr]).backward()
        opt.step()
    with torch.no_grad():
        losses = {k: tm.mse(model(x[i]), y[i]).item() for k, i in idx.items()}
    return model, x[tr], y[tr], losses


def test_series_is_seeded_seasonal_and_gets_stormier():
    s = data.generate(seed=0)
    assert s.shape == (3 * 365,) and s.dtype == torch.float32
    assert torch.equal(s, data.generate(seed=0))
    assert not torch.equal(s, data.generate(seed=1))
    january, july = s[0:31].mean(), s[181:212].mean()
    assert july - january > 12  # a yearly cycle of ±10 °C around 12 °C
    swing = (s[1:] - s[:-1]).abs()
    assert swing[800:].mean() > 1.8 * swing[:300].mean()  # the weather turns stormier


def test_windows_and_splits():
    s = data.generate(seed=0)
    x, y = data.windows(s)
    assert x.shape == (1093, 2) and y.shape == (1093,)
    assert x[5].tolist() == [s[5].item(), s[6].item()] and y[5] == s[7]
    timed = data.split(1093, "time")
    assert [len(timed[k]) for k in data.SPLITS] == [765, 164, 164]
    assert timed["test"].min() > timed["val"].max() > timed["train"].max()  # test is the future
    shuffled = data.split(1093, "shuffled", seed=0)
    assert sorted(torch.cat([shuffled[k] for k in data.SPLITS]).tolist()) == list(range(1093))
    assert shuffled["val"].min() < 200 and shuffled["train"].max() > 1000  # days dealt out
    assert torch.equal(data.future(1093), timed["test"])


def test_starts_as_the_averaging_rule():
    x = torch.tensor([[10.0, 14.0], [3.0, 5.0]])
    assert tm.TwoDay()(x).tolist() == [12.0, 4.0]


def test_only_the_ratios_are_identifiable():
    s = data.generate(seed=0)
    x, y = data.windows(s)
    abc = torch.tensor([1.0, 1.0, 2.0])
    for k in (0.5, 2.0, 10.0):
        assert tm.loss_at(x, y, k * abc).item() == pytest.approx(tm.loss_at(x, y, abc).item())
    # At the optimum the Hessian has a zero eigenvalue, its eigenvector along (A, B, C).
    a, b = tm.closed_form_ratios(x, y).tolist()
    opt = torch.tensor([a, b, 1.0], dtype=torch.float64) * 1.7
    eig, vec = torch.linalg.eigh(tm.hessian(x, y, opt))
    assert abs(eig[0].item()) < 1e-6 * eig[-1].item()
    ray = opt / opt.norm()
    assert abs(torch.dot(vec[:, 0], ray).item()) == pytest.approx(1.0, abs=1e-6)


def test_surfaces_match_the_rule():
    s = data.generate(seed=0)
    x, y = data.windows(s)
    g = torch.linspace(-0.5, 1.5, 9, dtype=torch.float64)
    ratio = tm.ratio_surface(x, y, g, g)
    direct = tm.loss_at(x.double(), y.double(), torch.tensor([g[3], g[6], 1.0]))
    assert ratio.shape == (9, 9) and ratio[6, 3].item() == pytest.approx(direct.item())
    # Over (C, A) with B = b·C the loss only depends on A/C: equal along a ray.
    cs = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    valley = tm.valley_surface(x, y, cs, 0.3 * cs, 0.7)  # rows A = 0.3·C for each C
    along = torch.diagonal(valley)
    assert torch.allclose(along, along[0].expand(3))
    slope = tm.best_a_given_b(x, y, 0.7)
    floor = tm.valley_surface(x, y, cs, slope * cs, 0.7).diagonal()
    assert (floor < along).all()  # the floor A = a_opt(b)·C is the valley's lowest ray


def test_gradient_descent_finds_the_least_squares_ratios():
    model, x_tr, y_tr, _ = fit("time")
    a, b, c = (v.item() for v in model.vector())
    opt_a, opt_b = tm.closed_form_ratios(x_tr, y_tr).tolist()
    assert a / c == pytest.approx(opt_a, abs=2e-3) and b / c == pytest.approx(opt_b, abs=2e-3)
    assert c != pytest.approx(2.0, abs=0.05)  # C moved too, yet only a, b are pinned down
    assert 0.05 < opt_a < 0.3 and 0.7 < opt_b < 0.95  # mostly yesterday, a bit of the day before


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shuffled_validation_looks_too_good(seed):
    _, _, _, timed = fit("time", seed)
    _, _, _, shuffled = fit("shuffled", seed)
    assert shuffled["val"] < 0.8 * shuffled["future"]  # shuffled: the future is much worse
    optimism_shuffled = shuffled["future"] / shuffled["val"]
    optimism_timed = timed["future"] / timed["val"]
    assert optimism_shuffled > optimism_timed + 0.3
    assert timed["val"] > 1.8 * timed["train"]  # time order sees the stormier later days
