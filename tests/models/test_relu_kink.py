"""relu-kink: 2x−10 then 3y+7 is 6x−23; a ReLU between them gives z = 7 for x ≤ 5."""

import pytest
import torch
from torch.nn import functional as F

from models import relu_kink as rk

DEFAULT = rk.KinkConfig()  # A: y = 2x − 10, B: z = 3y + 7


def run_program(source: str, x: float) -> float:
    scope = {"x": x}
    exec(source, {}, scope)  # the generated program is plain Python
    return scope["z"]


def test_two_lines_compose_to_6x_minus_23():
    x = torch.tensor([-3.0, 0.0, 5.0, 6.0, 10.0])
    z = rk.compose_curves(rk.KinkConfig(relu=False), x)["hook_logits"]
    assert z.tolist() == pytest.approx((6 * x - 23).tolist())
    assert rk.pieces(DEFAULT)[:2] == (6.0, -23.0)
    assert rk.program(rk.KinkConfig(relu=False)) == "z = 6*x - 23"


def test_relu_between_them_is_flat_7_up_to_5_then_6x_minus_23():
    x = torch.tensor([-10.0, 0.0, 4.9, 5.0, 5.5, 6.0, 10.0])
    c = rk.compose_curves(DEFAULT, x)
    assert c["layers.0.hook_pre"].tolist() == pytest.approx((2 * x - 10).tolist())
    assert c["layers.0.hook_post"].tolist() == pytest.approx((2 * x - 10).clamp_min(0).tolist())
    assert c["hook_logits"].tolist() == pytest.approx([7, 7, 7, 7, 10, 13, 37])
    assert rk.kink(DEFAULT) == 5.0


def test_the_printed_program_at_the_default_numbers():
    assert rk.program(DEFAULT) == "if x > 5:\n    z = 6*x - 23\nelse:\n    z = 7"


@pytest.mark.parametrize(
    "cfg",
    [
        DEFAULT,
        rk.KinkConfig(a_w=-2, a_b=3.5, b_w=0.5, b_b=-1),  # A falls: active left of the kink
        rk.KinkConfig(a_w=1, a_b=0, b_w=-3, b_b=0),
        rk.KinkConfig(a_w=0, a_b=4, b_w=2, b_b=1),  # flat A: no kink
        rk.KinkConfig(a_w=0.5, a_b=-1.5, b_w=1, b_b=2.5, relu=False),
    ],
)
def test_the_program_computes_what_the_network_computes(cfg):
    x = torch.linspace(-10, 20, 301)
    z = rk.compose_curves(cfg, x)["hook_logits"]
    source = rk.program(cfg)
    assert [run_program(source, v) for v in x.tolist()] == pytest.approx(z.tolist(), abs=1e-4)


def test_numbers_print_as_a_person_writes_them():
    assert rk.line(6, -23) == "6*x - 23"
    assert rk.line(1, 0) == "x" and rk.line(-1, 1) == "-x + 1" and rk.line(0, 7) == "7"
    assert rk.line(0.30000000000000004, 0.5, "y") == "0.3*y + 0.5"
    assert rk.num(-0.0) == "0" and rk.num(10 / 3) == "3.333"


def test_the_polyline_is_the_sum_of_its_units():
    cfg = rk.FitConfig(units=5)
    x, _ = rk.fit_data(cfg)
    model = rk.fit_model(cfg, torch.Generator().manual_seed(0))
    out, parts = rk.unit_parts(model, x)
    assert parts.shape == (5, 201)
    assert out.tolist() == pytest.approx((parts.sum(0) + model.out.bias).tolist(), abs=1e-6)
    kinks = rk.kinks(model)
    assert ((kinks > -1) & (kinks < 1)).all()  # every kink starts inside the interval
    assert x[100] == 0  # the grid holds x = 0 exactly


@pytest.fixture
def one_thread():
    # Tiny models: a second torch thread only adds contention (as in the sessions' workers).
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def fit(target: str, units: int, steps: int) -> float:
    cfg = rk.FitConfig(units=units, target=target)
    x, y = rk.fit_data(cfg)
    torch.manual_seed(0)
    model = rk.fit_model(cfg, torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(steps):
        loss = F.mse_loss(model(x[:, None])[:, 0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.detach())


def test_more_units_cut_the_curve_closer(one_thread):
    losses = [fit("sin", k, 600) for k in (2, 8, 64)]
    assert losses[0] > losses[1] > losses[2]
    assert losses[2] < 1e-3


def test_two_units_make_abs_x_exactly(one_thread):
    assert fit("abs", 2, 1500) < 1e-4  # |x| = relu(x) + relu(−x)
