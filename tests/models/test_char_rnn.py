"""The `rnn` lab's model: the curriculum's numbers (the norm example, the derivative bounds,
the recipe's memorisation threshold), seeded sampling, the memorisation meter and BPTT."""

from __future__ import annotations

import math

import pytest
import torch

from models.char_rnn import (
    MEMORISATION_NATS,
    RECIPE,
    CharRNN,
    CharRNNConfig,
    bptt,
    generate,
    longest_verbatim,
)
from models.data.texts import lm_batch
from models.data.tokenizers import CharTokenizer
from models.norm_examples import A, derivative_curves, norm_example
from tests.trained import across_runs


def test_the_norm_example_and_which_norm_clipping_uses():
    e = norm_example()
    assert e["matrix"] == [list(r) for r in A] == [[1, -2, 0], [3, 1, -1], [0, 2, -4]]
    assert e["l1_entrywise"] == 14
    assert e["frobenius"] == 6
    assert e["matrix_1"] == 5  # torch.linalg.matrix_norm(A, 1): the max column sum
    assert e["spectral"] == pytest.approx(4.852, abs=5e-4)
    # clip_grad_norm_ measured the Frobenius norm (6), not 14, 5 or 4.852, and scaled by 5/6.
    assert e["clip_total"] == 6
    assert e["clip_coef"] == pytest.approx(0.8333, abs=5e-5)
    clipped = torch.tensor(e["clipped"])
    assert torch.allclose(clipped, torch.tensor(A) * 5 / 6, atol=1e-5)
    assert float(torch.linalg.matrix_norm(clipped, "fro")) == pytest.approx(5.0, abs=1e-5)


def test_derivative_bounds_by_autograd():
    d = derivative_curves()
    assert d["max"]["sigmoid"] == 0.25  # at x = 0, a grid point
    assert d["max"]["tanh"] == 1.0
    x = torch.tensor(d["x"])
    sig, tanh, relu = (torch.tensor(d["curves"][k]) for k in ("sigmoid", "tanh", "relu"))
    assert bool((sig <= 0.25).all()) and bool((tanh <= 1.0).all())
    assert torch.allclose(tanh, 1 - torch.tanh(x) ** 2, atol=1e-6)
    # ReLU's derivative is 0 left of 0 and 1 right of it, not "always 1".
    assert bool((relu[x < 0] == 0).all()) and bool((relu[x > 0] == 1).all())


def test_recipe_and_threshold_are_the_texts():
    assert MEMORISATION_NATS == 0.12
    assert RECIPE == {"optimizer": "adam", "lr": 1e-3, "batch": 64, "window": 32, "clip": 5.0}


def test_param_count_is_the_models():
    cfg = CharRNNConfig(vocab_size=40, d_embed=16, d_hidden=24)
    model = CharRNN(cfg)
    assert cfg.param_count() == sum(p.numel() for p in model.parameters())
    assert cfg.param_count() == 40 * 16 + (16 * 24 + 24 * 24 + 24) + 24 * 40 + 40


def test_longest_verbatim_on_a_hand_example():
    text = "the cat sat on the mat"
    assert longest_verbatim("a cat sat in", text) == (9, 1, 3)  # " cat sat " at 1, in text at 3
    assert longest_verbatim("xyz", text) == (0, 0, -1)
    assert longest_verbatim("mat", text) == (3, 0, 19)
    assert longest_verbatim("", text) == (0, 0, -1)
    assert longest_verbatim("zthe mat.", text)[:2] == (7, 1)


def _model(vocab: int = 20, seed: int = 0, **kw) -> CharRNN:
    torch.manual_seed(seed)
    return CharRNN(CharRNNConfig(vocab_size=vocab, **kw))


def test_sampling_is_deterministic_under_a_seed_and_greedy_needs_none():
    model = _model()

    def run(temperature: float, seed: int) -> list[int]:
        steps = generate(model, [1, 2, 3], 40, temperature, torch.Generator().manual_seed(seed))
        return [s.char for s in steps]

    assert run(1.0, 7) == run(1.0, 7)
    assert run(1.0, 7) != run(1.0, 8)
    assert run(0.0, 7) == run(0.0, 8)  # greedy: the argmax every time
    steps = generate(model, [1], 5, 0.0, torch.Generator())
    for s in steps:
        assert s.char == s.top[0][0] and s.prob == 1.0
        assert s.char != 0  # the unknown-character id is never produced
    # A low temperature sharpens: the top candidate's probability rises.
    cool = generate(model, [1], 1, 0.3, torch.Generator().manual_seed(0))[0].top[0][1]
    warm = generate(model, [1], 1, 2.0, torch.Generator().manual_seed(0))[0].top[0][1]
    assert cool > warm


def test_bptt_gradients_are_autograds_and_stay_under_their_bound():
    torch.manual_seed(1)
    x = torch.randint(1, 20, (6, 24))
    y = torch.randint(1, 20, (6, 24))
    for activation in ("tanh", "sigmoid", "relu"):
        model = _model(activation=activation, whh_scale=1.5)
        out = bptt(model, x, y)
        assert all(p.grad is None for p in model.parameters())  # only dL/dh_t was asked for
        assert bool((out["grad_norm"] <= out["bound"] * (1 + 1e-4)).all()), activation
        # The same dL_T/dh_t by retain_grad on the graph's own states.
        logits, _ = model(x, keep_steps=True)
        for h in model.rnn.steps:
            h.retain_grad()
        torch.nn.functional.cross_entropy(logits[:, -1], y[:, -1]).backward()
        ref = torch.stack([h.grad.norm(dim=-1).mean() for h in model.rnn.steps])
        assert torch.allclose(out["grad_norm"], ref, rtol=1e-4, atol=1e-12), activation
        whh = float(torch.linalg.matrix_norm(model.rnn.W_hh.detach(), 2))
        assert out["whh_spectral"] == pytest.approx(whh)
    # sigmoid′ ≤ 0.25 with ‖W_hh‖₂ < 4: the gradient to the first step all but vanishes.
    out = bptt(_model(activation="sigmoid"), x, y)
    assert out["rate"] < 1
    assert float(out["grad_norm"][0]) < 1e-6 * float(out["grad_norm"][-1])


def test_below_the_threshold_greedy_generation_recites_the_text():
    text = "Little Shaomai steams by the window and guesses the next word."
    tok = CharTokenizer(text)
    ids = torch.tensor(tok.encode(text))

    def memorise(seed: int) -> tuple[float, int, str]:
        model = _model(vocab=tok.vocab_size, seed=seed, d_hidden=64)
        opt = torch.optim.Adam(model.parameters(), 1e-2)
        gen = torch.Generator().manual_seed(seed)
        for _ in range(400):
            loss = model.loss(*lm_batch(ids, 32, 16, gen))
            opt.zero_grad()
            loss.backward()
            opt.step()
            if loss.item() < MEMORISATION_NATS / 2:
                break
        steps = generate(model, tok.encode(text[:8]), len(text) - 8, 0.0, torch.Generator())
        out = tok.decode([s.char for s in steps])
        return loss.item(), longest_verbatim(out, text)[0], out

    # a trained outcome: on every seed and thread count (tests/trained.py)
    for run, (loss, length, out) in across_runs(memorise).items():
        assert loss < MEMORISATION_NATS, (run, loss)
        assert math.exp(-loss) > 0.88, (run, loss)  # ~0.9 of each next character is certain
        assert length >= 40, (run, out)  # memorised: long spans come back verbatim
