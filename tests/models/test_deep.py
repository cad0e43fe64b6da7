"""models/deep.py and models/batchnorm_steps.py: chapter 4's numbers on the real model.

Vanishing gradients at depth 30 (sigmoid, N(0, 0.01)) and none with Kaiming + ReLU +
residual; zero init keeps every weight at exactly 0 (only the output bias learns); a
constant init keeps every row identical until noise breaks it; the init scales of
512 → 256; the hand BatchNorm's biased running variance against torch's unbiased one."""

from __future__ import annotations

import math

import pytest
import torch
from torch.nn import functional as F

from models.batchnorm_steps import compare, hand_batchnorm
from models.deep import DeepConfig, DeepStack, init_facts, inverted_dropout
from models.hooks import capture
from models.stages import grad_stages, stage_grad_norms
from tests.trained import across_runs


def data(n: int = 64, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 2, generator=g)
    return x, (x.norm(dim=1) > 1.2).long()


def build(seed: int = 0, **kw) -> DeepStack:
    torch.manual_seed(seed)
    return DeepStack(DeepConfig(**kw))


def stage_norms(model: DeepStack) -> dict[str, float]:
    x, y = data()
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    stages = grad_stages(model)
    return dict(zip([s for s, _ in stages], stage_grad_norms(stages), strict=True))


def train(model: DeepStack, steps: int, lr: float = 0.1) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for s in range(steps):
        x, y = data(seed=s)
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()


def test_stages_and_hooks_are_named_from_the_module_tree():
    m = build(depth=4, width=8)
    assert [s for s, _ in grad_stages(m)] == ["layers.0", "layers.1", "layers.2", "layers.3", "out"]
    names = [f"layers.{i}.hook_post" for i in range(4)]
    with capture(m, names) as store:
        m(data()[0])
    assert [tuple(store[n].shape) for n in names] == [(64, 8)] * 4


def test_depth_30_sigmoid_small_normal_vanishes_and_residual_kaiming_relu_does_not():
    plain = stage_norms(build(depth=30, activation="sigmoid", init="normal", sigma=0.01))
    assert plain["out"] > 0.1
    assert plain["layers.29"] > 1e-4
    assert plain["layers.0"] < 1e-30 * plain["layers.29"]  # gone: float32 reads 0 here
    assert plain["layers.10"] < 1e-20 * plain["layers.29"]
    fixed = stage_norms(build(depth=30, activation="relu", init="kaiming_in", residual=True))
    ratio = fixed["layers.0"] / fixed["layers.29"]
    assert 0.05 < ratio < 20, fixed  # the first layer learns as much as the last
    assert all(v > 1e-2 for v in fixed.values())
    # the identity path alone carries the gradient down: residual sigmoid N(0, 0.01) too
    res = stage_norms(build(depth=30, activation="sigmoid", init="normal", residual=True))
    assert res["layers.0"] > 0.05 * res["layers.29"], res


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_zero_init_only_the_output_bias_learns(activation):
    m = build(depth=2, width=16, activation=activation, init="zeros")
    bias0 = m.out.bias.detach().clone()
    train(m, 20)
    for name, p in m.named_parameters():
        if name == "out.bias":
            assert not torch.equal(p, bias0)  # it learns the class balance
        else:
            assert torch.count_nonzero(p) == 0, name  # W1, W2, hidden biases: exactly 0


def test_constant_init_keeps_rows_identical_until_noise_breaks_them():
    m = build(depth=3, width=8, activation="tanh", init="constant", constant=0.5)
    train(m, 30, lr=0.05)
    for layer in m.layers:  # hidden layers (the output's rows have different targets)
        w = layer.linear.weight.detach()
        # every row the same (to float rounding: a kernel may sum one row's gradient in
        # another order); noise below breaks them by over 100 times more
        torch.testing.assert_close(w, w[:1].expand_as(w), rtol=0, atol=1e-6)
    assert not torch.equal(m.layers[1].linear.weight, torch.full((8, 8), 0.5))  # it did move
    noisy = build(depth=3, width=8, activation="tanh", init="constant", noise=1e-3)
    train(noisy, 30, lr=0.05)
    w = noisy.layers[1].linear.weight.detach()
    assert (w - w[:1]).abs().max() > 1e-4


def test_init_facts_for_512_to_256():
    f = init_facts(512, 256)
    assert (f["fan_in"], f["fan_out"]) == (512, 256)
    assert round(f["xavier_normal"], 4) == 0.0510
    assert round(f["kaiming_fan_in"], 4) == 0.0625
    assert round(f["kaiming_fan_out"], 4) == 0.0884
    assert round(f["linear_default_bound"], 4) == 0.0442
    for k in ("xavier_normal", "kaiming_fan_in", "kaiming_fan_out"):
        assert math.isclose(f[f"drawn_{k}"], f[k], rel_tol=0.01)  # what init really draws
    assert f["drawn_linear_default_bound"] <= f["linear_default_bound"]
    assert f["drawn_linear_default_bound"] > 0.999 * f["linear_default_bound"]
    torch.manual_seed(0)
    lin = torch.nn.Linear(512, 256)  # PyTorch's default: its weights lie inside the bound
    assert lin.weight.abs().max() <= f["linear_default_bound"]


def test_the_inits_draw_what_they_say():
    for init, std in (("xavier", math.sqrt(2 / 64)), ("kaiming_in", math.sqrt(2 / 32))):
        m = build(depth=3, width=32, init=init)
        assert math.isclose(m.layers[1].linear.weight.std().item(), std, rel_tol=0.1), init
    m = build(depth=3, width=32, init="normal", sigma=0.01)
    assert math.isclose(m.layers[1].linear.weight.std().item(), 0.01, rel_tol=0.1)


def test_hand_batchnorm_running_var_is_biased_torch_is_unbiased():
    x = torch.randn(16, 5, generator=torch.Generator().manual_seed(1)) * 3 + 1
    c = compare(x, momentum=0.1)
    assert c.max_out_diff < 1e-5  # the normalised batch is the same (both biased)
    assert torch.allclose(c.hand_running_var, 0.9 + 0.1 * c.var_biased)
    assert torch.allclose(c.torch_running_var, 0.9 + 0.1 * c.var_unbiased)
    assert torch.allclose(c.var_unbiased, c.var_biased * 16 / 15)
    assert not torch.allclose(c.hand_running_var, c.torch_running_var, rtol=1e-3)
    y, m, v = hand_batchnorm(x, torch.zeros(5), torch.ones(5))
    assert torch.allclose(y.mean(0), torch.zeros(5), atol=1e-6)


def test_batchnorm_eval_uses_running_stats_train_uses_the_batch():
    m = build(depth=3, width=8, activation="relu", init="kaiming_in", norm="batchnorm")
    train(m, 10)
    x, _ = data(32, seed=99)
    m.train()
    with torch.no_grad():
        alone = m(torch.cat([x[:1], x[1:8]]))[0]
        other = m(torch.cat([x[:1], x[8:16] * 3]))[0]
    m.eval()
    with torch.no_grad():
        e1, e2 = m(x[:4])[0], m(torch.cat([x[:1], x[8:16] * 3]))[0]
    assert not torch.allclose(alone, other)  # train mode: the batch changes the example
    # eval mode: it does not. Equal to float rounding, not bitwise: batches of 4 and 9 take
    # matrix kernels that round differently (another CPU, another thread count).
    torch.testing.assert_close(e1, e2, rtol=1e-5, atol=1e-6)


def test_inverted_dropout_scales_kept_units_like_torch_and_only_in_training():
    x = torch.rand(2000, 16) + 0.5
    y = inverted_dropout(x, 0.5, torch.Generator().manual_seed(0))
    kept = y != 0
    assert torch.allclose(y[kept], x[kept] * 2)  # 1 / (1 − p)
    assert 0.45 < kept.float().mean() < 0.55
    torch.manual_seed(0)
    ref = F.dropout(x, 0.5, training=True)  # torch's: the same rule
    assert torch.allclose(ref[ref != 0], x[ref != 0] * 2)
    m = build(depth=2, width=16, dropout=0.5, activation="relu", init="kaiming_in")
    g = torch.Generator().manual_seed(1)
    xb = data()[0]
    assert not torch.equal(m(xb, g), m(xb, g))  # training: a fresh mask each call
    m.eval()
    # eval: no dropout, no scaling: the very same computation twice, so bitwise
    assert torch.equal(m(xb, g), m(xb, g))


def test_at_depth_30_the_plain_sigmoid_input_layer_never_moves_and_the_reference_learns():
    from models.data import playground as pg

    split = pg.make(pg.PlaygroundConfig(kind="circle", n=800, noise=0.1), 0)
    x, y, xt, yt = split.x_train / 2.5, split.y_train, split.x_test / 2.5, split.y_test

    def run(model: DeepStack, steps: int, seed: int = 0) -> float:
        opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)  # the lab's
        g = torch.Generator().manual_seed(seed)
        for _ in range(steps):
            i = torch.randint(len(x), (64,), generator=g)
            opt.zero_grad()
            F.cross_entropy(model(x[i]), y[i]).backward()
            opt.step()
        with torch.no_grad():
            return (model(xt).argmax(1) == yt).float().mean().item()

    plain = build(depth=30, activation="sigmoid", init="normal", sigma=0.01)
    w0 = plain.layers[0].linear.weight.detach().clone()
    run(plain, 20)
    # its gradient is exactly 0: it underflows (~0.25^30 · 0.01^30), not a rounding accident
    assert torch.equal(plain.layers[0].linear.weight, w0)
    # with α = 1 (no 1/√(L−1) on the branches) it stays near chance; a trained outcome, so
    # on every seed and thread count (tests/trained.py)
    acc = across_runs(
        lambda seed: run(
            build(seed, depth=30, activation="relu", init="kaiming_in", residual=True), 150, seed
        )
    )
    assert all(a > 0.9 for a in acc.values()), acc
