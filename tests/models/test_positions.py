"""The `positions` lab's claims, on the model alone: the lag task; RoPE's two layouts are one
network up to a q/k permutation (~1e-7) and mixing them breaks it; NoPE without a causal
mask is permutation-equivariant (it cannot find "lag places back"); trained at L and tested
at 4L, learned and sinusoidal positions fall to chance past L while RoPE and ALiBi hold;
NoPE with the causal mask learns part of it (it counts), without it no better than guessing
the most frequent symbol; RoPE at θ = 10⁴ breaks before 8L
and at θ = 100 does not."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from models.data.positions_task import LagTask
from models.positions_lab import (
    SCHEMES,
    PositionsConfig,
    accuracy_by_position,
    bag_accuracy,
    breaks_at,
    convert_rope_layout,
    mixed_rope_layout,
    rope_wavelengths,
    span_mean,
)
from models.transformer import Transformer

TASK = LagTask()


def train(scheme: str, steps: int, seed: int = 0, batch: int = 32, lr: float = 3e-3, **kw):
    """The lab's recipe: AdamW (0.9, 0.99), 30-step warm-up, fresh lag batches at train_len."""
    p = PositionsConfig(**kw)
    torch.manual_seed(seed)
    model = Transformer(p.arm(scheme))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=0.0)
    g = torch.Generator().manual_seed(seed)
    for s in range(steps):
        x, y, mask = TASK.sample(batch, p.train_len, g)
        for group in opt.param_groups:
            group["lr"] = lr * min(1.0, (s + 1) / 30)
        loss = F.cross_entropy(model(x)[mask], y[mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def arm(scheme: str, **kw):
    return PositionsConfig(**kw).arm(scheme)


@torch.no_grad()
def curve(model: Transformer, length: int) -> torch.Tensor:
    x, y, mask = TASK.sample(128, length, torch.Generator().manual_seed(1))
    return accuracy_by_position(model(x), y, mask)


def test_the_label_sits_lag_places_back():
    x, y, mask = LagTask(lag=3).sample(4, 10, torch.Generator().manual_seed(0))
    assert (x[:, 0] == 10).all()  # <s>
    assert torch.equal(y[:, 3:], x[:, :-3])
    assert mask[:, 4:].all() and not mask[:, :4].any()  # graded: labels that are symbols
    assert (y[mask] < 10).all()


def test_breaks_at_and_span_mean():
    acc = torch.tensor([math.nan, 1, 1, 1, 1, 0.8, 0.2, 0.1, 0.1])
    assert span_mean(acc, 0, 3) == 1.0
    assert breaks_at(acc, 3, 0.1, window=2) == 5  # (0.8 + 0.2) / 2 < 0.55: halfway from chance
    assert breaks_at(torch.ones(9), 3, 0.1, window=2) is None


def test_rope_layouts_are_one_network_up_to_a_permutation_and_mixing_breaks_it():
    model = train("rope", 100, train_len=16, test_len=32, d_model=32)  # rotate_half
    x, y, mask = TASK.sample(64, 16, torch.Generator().manual_seed(2))
    inter = convert_rope_layout(model, "interleaved")
    back = convert_rope_layout(inter, "rotate_half")
    assert inter.cfg.rope_layout == "interleaved" and back.cfg.rope_layout == "rotate_half"
    with torch.no_grad():
        logits = model(x)
        scale = float(logits.abs().max())
        for same in (inter(x), back(x)):
            diff = float((logits - same).abs().max())
            assert diff / scale < 1e-6, diff  # rounding: ~1e-7 of the logits
        loss = F.cross_entropy(logits[mask], y[mask])
        right = (logits.argmax(-1) == y)[mask].float().mean()
        assert loss < 0.1 and right > 0.95  # trained
        for mixed in (mixed_rope_layout(model), mixed_rope_layout(inter)):
            out = mixed(x)  # the same weights, features paired the other way
            assert F.cross_entropy(out[mask], y[mask]) > 10 * loss + 0.5
            assert (out.argmax(-1) == y)[mask].float().mean() < 0.7


def test_nope_without_the_causal_mask_is_blind_to_order():
    """Without positions or mask every token sees the same set: shuffle the sequence and the
    outputs are shuffled with it, so no rule can say which token sat `lag` places back."""
    torch.manual_seed(0)
    model = Transformer(arm("none", causal=False)).eval()
    x, _, _ = TASK.sample(2, 32, torch.Generator().manual_seed(0))
    perm = torch.cat([torch.zeros(1, dtype=torch.long), 1 + torch.randperm(31)])
    with torch.no_grad():
        assert torch.allclose(model(x)[:, perm], model(x[:, perm]), atol=1e-5)
        causal = Transformer(arm("none")).eval()
        causal.load_state_dict(model.state_dict())
        assert not torch.allclose(causal(x)[:, perm], causal(x[:, perm]), atol=1e-3)


def test_order_blind_guessing_scores_the_most_frequent_symbol():
    x = torch.tensor([[10, 1, 1, 2, 1, 3]])
    y = torch.tensor([[0, 0, 10, 1, 1, 2]])
    mask = torch.tensor([[False, False, False, True, True, True]])
    assert bag_accuracy(x, y, mask, 10) == pytest.approx(2 / 3)  # 1 is the mode: right twice


def test_rope_wavelengths():
    w = rope_wavelengths(16, 10000.0)
    assert w[0] == pytest.approx(2 * math.pi)  # the fastest pair turns once every 6.28 tokens
    assert w[-1] == pytest.approx(2 * math.pi * 10000 ** (14 / 16))
    assert int((w > 32).sum()) == 6  # at θ = 10⁴, 6 of 8 pairs never turn a circle within 32
    assert int((rope_wavelengths(16, 100.0) > 32).sum()) == 5


@pytest.fixture(scope="module")
def trained():
    return {s: train(s, 250) for s in SCHEMES}


@pytest.mark.slow  # five arms × 250 steps, then a RoPE θ pair at 8L and NoPE without mask
@pytest.mark.timeout(900)  # minutes on a loaded 2-core machine
def test_trained_at_l_tested_at_4l(trained):
    L, chance = 32, TASK.chance
    acc = {s: curve(m, 128) for s, m in trained.items()}
    inside = {s: span_mean(a, 0, L) for s, a in acc.items()}
    past = {s: span_mean(a, L, 2 * L) for s, a in acc.items()}
    far = {s: span_mean(a, 2 * L, 4 * L) for s, a in acc.items()}
    for s in ("sinusoidal", "learned", "rope", "alibi"):
        assert inside[s] > 0.9, (s, inside)
    for s in ("sinusoidal", "learned"):  # absolute positions: nothing learned past L
        assert past[s] < 3 * chance, (s, past)
        assert breaks_at(acc[s], L, chance) == L
    for s in ("rope", "alibi"):  # relative: the rule holds past L
        assert past[s] > 0.9, (s, past)
    assert far["alibi"] > 0.85
    # NoPE counts with the causal mask (part of the way); without it, trained as long, it
    # scores what guessing the sequence's most frequent symbol scores (~0.2), no more.
    bag = bag_accuracy(*TASK.sample(128, L, torch.Generator().manual_seed(1)), TASK.n_symbols)
    assert 1.5 * chance < bag < 2.5 * chance
    assert bag + 0.2 < inside["none"] < 0.9
    blind = train("none", 250, causal=False)
    assert abs(span_mean(curve(blind, L), 0, L) - bag) < 0.04

    # RoPE is not free past its training length: θ = 10⁴ breaks before 8L, θ = 100 holds.
    long = {th: curve(train("rope", 250, test_len=256, rope_theta=th), 256)
            for th in (1e4, 100.0)}  # fmt: skip
    assert breaks_at(long[1e4], L, chance) is not None and breaks_at(long[1e4], L, chance) < 256
    assert span_mean(long[1e4], 4 * L, 8 * L) < 0.5
    assert span_mean(long[100.0], 4 * L, 8 * L) > 0.9
