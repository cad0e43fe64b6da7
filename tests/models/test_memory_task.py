"""models/recall.py: the delayed-recall sequences and the net that reads them."""

import torch

from models.recall import RecallConfig, RecallNet, kept_fraction, sample, token_strings


def test_a_sequence_is_the_flagged_symbol_distractors_then_the_cue():
    x, y, tokens = sample(4, 5, 64, torch.Generator().manual_seed(0))
    assert x.shape == (64, 7, 6) and tokens.shape == (64, 7) and y.shape == (64,)
    assert torch.equal(tokens[:, 0], y)  # the answer is the first symbol
    assert (tokens[:, 1:-1] < 4).all()  # distractors are the same symbols
    assert (tokens[:, -1] == 4).all() and (x[:, -1, 4] == 1).all()  # the cue
    assert (x[:, 0, 5] == 1).all() and (x[:, 1:, 5] == 0).all()  # the flag at t = 0 only
    assert torch.equal(x[..., :4].argmax(-1)[:, :-1], tokens[:, :-1])
    assert token_strings(tokens[0])[-1] == "?" and len(set(tokens[:, 1:-1].flatten().tolist())) == 4


def test_param_count_and_output():
    for kind in ("rnn", "gru", "lstm"):
        cfg = RecallConfig(kind)
        net = RecallNet(cfg)
        assert cfg.param_count() == sum(p.numel() for p in net.parameters())
        assert net(sample(4, 3, 2, torch.Generator().manual_seed(1))[0]).shape == (2, 4)


def test_kept_fraction_is_the_product_after_the_write():
    f = torch.tensor([[0.1, 1.0], [0.5, 0.9], [0.5, 0.8]])  # [T, H]
    torch.testing.assert_close(kept_fraction(f), torch.tensor([0.25, 0.72]))
