"""Logistic regression (ch. 2 `logistic`): BCE, the metrics at a threshold, circles, imbalance."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression as SkLogistic
from sklearn.metrics import confusion_matrix, precision_score, recall_score

from models import logistic
from models.data import points2d


def train(x, y, features="linear", lr=0.5, steps=2000):
    model = logistic.LogisticRegression(logistic.LogisticConfig(features))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = logistic.bce(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


def test_zero_theta_gives_half_and_ln2():
    x, y = points2d.make(points2d.PointsConfig(), seed=0)
    model = logistic.LogisticRegression(logistic.LogisticConfig())
    assert torch.all(model.prob(x) == 0.5)
    assert float(logistic.bce(model(x), y).detach()) == pytest.approx(math.log(2), abs=1e-6)


def test_quadratic_features():
    x = torch.tensor([[2.0, 3.0]])
    assert logistic.expand(x, "quadratic").tolist() == [[2.0, 3.0, 4.0, 9.0, 6.0]]
    model = logistic.LogisticRegression(logistic.LogisticConfig("quadratic"))
    theta, names = model.theta()
    assert names[0] == "θ0" and len(names) == 6 and theta.shape == (6,)


def test_gradient_descent_reaches_the_bce_optimum():
    x, y = points2d.make(points2d.PointsConfig(), seed=0)
    model = train(x, y, lr=1.0)
    sk = SkLogistic(C=np.inf, tol=1e-10, max_iter=10_000).fit(x.numpy(), y.numpy())
    theta, _ = model.theta()
    assert theta[0] == pytest.approx(sk.intercept_[0], abs=1e-3)
    assert theta[1:].tolist() == pytest.approx(sk.coef_[0].tolist(), abs=1e-3)


@pytest.mark.parametrize("threshold", [0.2, 0.5, 0.8])
def test_metrics_match_sklearn(threshold):
    x, y = points2d.make(points2d.PointsConfig(pos_frac=0.3), seed=1)
    p = train(x, y, steps=300).prob(x).detach()
    m = logistic.metrics(p, y, threshold)
    pred = (p >= threshold).int().numpy()
    truth = y.int().numpy()
    assert m.matrix().int().tolist() == confusion_matrix(truth, pred).tolist()
    assert m.precision == pytest.approx(precision_score(truth, pred, zero_division=0))
    assert m.recall == pytest.approx(recall_score(truth, pred))
    assert m.n == len(y)


def test_threshold_trades_precision_for_recall():
    x, y = points2d.make(points2d.PointsConfig(), seed=0)
    p = train(x, y, steps=500).prob(x).detach()
    low, high = logistic.metrics(p, y, 0.1), logistic.metrics(p, y, 0.9)
    assert low.recall > high.recall
    assert low.precision < high.precision


def test_circles_need_squared_features():
    x, y = points2d.make(points2d.PointsConfig(kind="circles"), seed=0)
    line = logistic.metrics(train(x, y, "linear").prob(x).detach(), y, 0.5)
    conic = logistic.metrics(train(x, y, "quadratic").prob(x).detach(), y, 0.5)
    assert line.accuracy < 0.7  # a straight line cannot cut a disc out of a ring
    assert conic.accuracy == 1.0


def test_imbalance_makes_accuracy_lie():
    x, y = points2d.make(points2d.PointsConfig(kind="circles", pos_frac=0.1), seed=0)
    base = logistic.always_no(y)
    assert base.accuracy == pytest.approx(0.9) and base.recall == 0.0
    m = logistic.metrics(train(x, y, "linear").prob(x).detach(), y, 0.5)
    assert m.accuracy >= 0.89  # looks good ...
    assert m.recall == 0.0  # ... and finds no positive at all


def test_points_seeded_and_bounded():
    cfg = points2d.PointsConfig(kind="blobs", n=50, pos_frac=0.2)
    x, y = points2d.make(cfg, seed=3)
    x2, y2 = points2d.make(cfg, seed=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    assert x.shape == (50, 2) and int(y.sum()) == 10
    assert float(x.abs().max()) <= points2d.EXTENT
    xa, ya = points2d.with_points(x, y, [(9.0, -1.0, 1)])
    assert xa.shape == (51, 2) and xa[-1].tolist() == [points2d.EXTENT, -1.0] and ya[-1] == 1
    axis, grid = points2d.grid(5)
    assert grid.shape == (25, 2) and grid[1].tolist() == [axis[1].item(), axis[0].item()]
