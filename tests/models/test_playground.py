"""TensorFlow Playground's data sets, and the mlp-playground lab separating xor and circle."""

import pytest
import torch
from torch.nn import functional as F

from backend.labs.mlp_playground import MLPPlaygroundLab, Params
from models.data import playground as pg
from models.mlp import layer_grad_norms

CPU = torch.device("cpu")


@pytest.fixture
def one_thread():
    # Tiny models: a second torch thread only adds contention (as in the sessions' workers).
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def everything(kind, **kw):
    s = pg.make(pg.PlaygroundConfig(kind, **kw), seed=0)
    return torch.cat([s.x_train, s.x_test]), torch.cat([s.y_train, s.y_test]), s


def test_circle_is_a_disc_of_radius_2_5_inside_a_ring_3_5_to_5():
    x, y, s = everything("circle")
    r = x.norm(dim=1)
    assert len(s.y_train) == 250 and len(s.y_test) == 250  # 500 points, half for training
    assert (y[r < 2.5] == 1).all() and (y[r > 3.5] == 0).all()
    assert ((r <= 2.5 + 1e-5) | ((r >= 3.5 - 1e-5) & (r <= 5 + 1e-5))).all()
    assert int((y == 1).sum()) == 250


def test_xor_labels_the_quadrants_by_the_sign_of_x1_x2():
    x, y, _ = everything("xor")
    assert (y == (x[:, 0] * x[:, 1] >= 0).long()).all()
    assert (x.abs() >= 0.3 - 1e-6).all() and (x.abs() <= 5.3 + 1e-6).all()


def test_gauss_blobs_sit_at_plus_minus_2_2():
    x, y, _ = everything("gauss")
    assert x[y == 1].mean(0).tolist() == pytest.approx([2, 2], abs=0.2)
    assert x[y == 0].mean(0).tolist() == pytest.approx([-2, -2], abs=0.2)


def test_spiral_arms_wind_out_to_radius_5_and_more_classes_add_arms():
    x, y, _ = everything("spiral")
    assert x.norm(dim=1).max() <= 5 and set(y.tolist()) == {0, 1}
    x3, y3, _ = everything("spiral", classes=3)
    assert len(x3) == 498 and [int((y3 == k).sum()) for k in range(3)] == [166, 166, 166]


def test_noise_flips_some_labels_and_the_seed_decides_everything():
    _, y0, _ = everything("circle")
    x, y, _ = everything("circle", noise=0.5)
    r = x.norm(dim=1)
    assert (y[r < 2.5] == 0).any()  # a noisy label
    a = pg.make(pg.PlaygroundConfig("spiral", noise=0.3), seed=7)
    b = pg.make(pg.PlaygroundConfig("spiral", noise=0.3), seed=7)
    c = pg.make(pg.PlaygroundConfig("spiral", noise=0.3), seed=8)
    assert torch.equal(a.x_train, b.x_train) and not torch.equal(a.x_train, c.x_train)


def test_features_and_grid():
    xy = torch.tensor([[1.0, -2.0]])
    f = pg.featurize(xy, pg.FEATURES)
    expect = [1, -2, 1, 4, -2, torch.sin(torch.tensor(1.0)), torch.sin(torch.tensor(-2.0))]
    assert f[0].tolist() == pytest.approx([float(v) for v in expect])
    assert pg.featurize(xy, ["x2sq", "x1"])[0].tolist() == [1, 4]  # always in FEATURES order
    axis, pts = pg.grid(5)
    assert pts.shape == (25, 2) and pts[7].tolist() == [axis[2], axis[1]]  # row 1, column 2


def train(params: dict, steps: int, seed: int = 0):
    lab = MLPPlaygroundLab(Params(**params), seed, CPU)
    for i in range(1, steps + 1):
        frame = lab.step(capture=False)
        if frame.scalars["test_acc"] >= 0.95:
            return i, frame.scalars
    return None, frame.scalars


@pytest.mark.parametrize("dataset", ["xor", "circle"])
def test_two_hidden_layers_separate_from_x1_x2_alone(one_thread, dataset):
    steps, s = train({"dataset": dataset, "lr": 0.1}, 1500)  # tanh, 4 and 2 units
    assert steps is not None, s
    assert s["train_acc"] >= 0.9


def test_the_right_feature_separates_with_no_hidden_layer(one_thread):
    xor_steps, _ = train({"dataset": "xor", "x1x2": True, "hidden": []}, 200)
    assert xor_steps is not None and xor_steps < 200  # x1·x2 alone is the answer
    circ = {"dataset": "circle", "x1": False, "x2": False, "x1sq": True, "x2sq": True}
    circ_steps, _ = train({**circ, "hidden": []}, 800)
    assert circ_steps is not None


def test_losses_are_true_cross_entropy():
    lab = MLPPlaygroundLab(Params(dataset="spiral", classes=3), 0, CPU)
    s = lab.snapshot().scalars
    with torch.no_grad():
        ce = F.cross_entropy(lab.model(lab.f_train), lab.t_train)
    assert s["loss"] == pytest.approx(float(ce), rel=1e-6)
    lab2 = MLPPlaygroundLab(Params(dataset="xor"), 0, CPU)
    with torch.no_grad():
        logit = lab2.model(lab2.f_test)[:, 0]
        bce = F.binary_cross_entropy(torch.sigmoid(logit), lab2.t_test.float())
    assert lab2.snapshot().scalars["test_loss"] == pytest.approx(float(bce), rel=1e-5)


def test_grad_norms_are_the_models_own_per_layer_norms():
    lab = MLPPlaygroundLab(Params(hidden=[3, 2]), 0, CPU)
    frame = lab.step(capture=True)
    g = next(t for t in frame.tensors if t.name == "grad_norm")
    norms, labels = layer_grad_norms(lab.model)
    assert g.labels == labels == ["layers.0", "layers.1", "out"]
    assert torch.equal(g.data, norms)  # bitwise: the same function on the same gradients
    assert lab.step(capture=False).tensors == []  # no pictures when no frame is sent
