"""Linear SVM (ch. 2 `svm`): the hinge objective's optimum, support vectors, C and the margin."""

from __future__ import annotations

import math

import pytest
import torch
from sklearn.svm import SVC

from models import svm
from models.data import points2d


def data(seed=0):
    x, y01 = points2d.make(points2d.PointsConfig(n=40, centre=1.2, std=0.7), seed)
    return x, y01 * 2 - 1


def train(x, y, c, loss="hinge", steps=3000, lr=0.1):
    model = svm.LinearSVM(svm.SVMConfig())
    opt = torch.optim.SGD(model.parameters(), lr=svm.step_size(lr, c, len(y)), momentum=0.9)
    for _ in range(steps):
        j = svm.objective(model, x, y, c, loss)
        opt.zero_grad()
        j.backward()
        opt.step()
    return model


def test_subgradient_descent_finds_sklearns_max_margin_line():
    x, y = data()
    model = train(x, y, 1.0)
    sk = SVC(kernel="linear", C=1.0).fit(x.numpy(), y.numpy())
    assert model.w.detach().tolist() == pytest.approx(sk.coef_[0].tolist(), abs=0.02)
    assert float(model.b.detach()) == pytest.approx(sk.intercept_[0], abs=0.02)
    w_sk, b_sk = torch.tensor(sk.coef_[0], dtype=torch.float32), float(sk.intercept_[0])
    j_sk = 0.5 * float(w_sk @ w_sk) + float(torch.clamp(1 - y * (x @ w_sk + b_sk), min=0).sum())
    j = float(svm.objective(model, x, y, 1.0, "hinge").detach())
    assert j == pytest.approx(j_sk, rel=2e-3)
    with torch.no_grad():
        sv = svm.support_mask(y * model(x), model.cfg.sv_tol)
    assert set(torch.nonzero(sv)[:, 0].tolist()) == set(sk.support_.tolist())


def test_larger_c_narrower_margin():
    x, y = data()
    widths = [train(x, y, c).margin_width() for c in (0.01, 0.1, 1.0, 10.0)]
    assert all(a > b for a, b in zip(widths, widths[1:], strict=False)), widths


def test_margin_width_is_two_over_norm_w():
    model = svm.LinearSVM(svm.SVMConfig())
    assert model.margin_width() == math.inf
    with torch.no_grad():
        model.w.copy_(torch.tensor([3.0, 4.0]))
    assert model.margin_width() == pytest.approx(0.4)


def test_loss_curves():
    m = torch.tensor([-1.0, 0.0, 1.0, 2.0])
    curves, names = svm.loss_curves(m)
    assert names == ["hinge", "logistic", "squared", "zero_one"]
    hinge, logi, sq, zo = curves.tolist()
    assert hinge == [2.0, 1.0, 0.0, 0.0]
    assert logi == pytest.approx(
        [math.log(1 + math.e), math.log(2), math.log(1 + math.exp(-1)), math.log(1 + math.exp(-2))]
    )
    assert sq == [4.0, 1.0, 0.0, 1.0]  # squared loss punishes a point that is "too right"
    assert zo == [1.0, 1.0, 0.0, 0.0]


def test_other_losses_train_too():
    x, y = data()
    for loss in ("logistic", "squared"):
        model = train(x, y, 1.0, loss, steps=1500)
        with torch.no_grad():
            acc = float(((model(x) > 0).float() * 2 - 1 == y).float().mean())
        assert acc >= 0.9, (loss, acc)
