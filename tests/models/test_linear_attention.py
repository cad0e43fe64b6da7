"""Chapter 7, `linear-attention`: one output three ways (parallel, recurrent, chunked), the
delta rule's three forms, an SSM as recurrence, convolution and scan, the fixed-size state
measured from real decodes against a growing KV cache, and the delta rule's overwrite."""

import pytest
import torch
import torch.nn.functional as F

from models.data.linear_attention_recall import RebindRecall, overwrite_demo, recall_accuracy
from models.data.tasks import masked_loss
from models.transformer import Transformer, TransformerConfig
from models.transformer.linear_attention import (
    delta_chunked,
    delta_parallel,
    delta_recurrent,
    feature_map,
    linear_chunked,
    linear_parallel,
    linear_recurrent,
    linear_weights,
)
from models.transformer.ssm import discretize, ssm_convolution, ssm_recurrence, ssm_scan

SIX_DECIMALS = 1e-6


def qkv(T=13, B=2, H=3, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, T, d, generator=g) for _ in range(3)]


def gap(a, b):
    return float((a - b).abs().max())


@pytest.mark.parametrize("chunk", [1, 4, 5, 13])
def test_linear_attention_parallel_recurrent_and_chunked_agree_to_six_decimals(chunk):
    q, k, v = qkv()
    q, k = feature_map(q), feature_map(k)
    par, (S, z) = linear_parallel(q, k, v)
    rec, (S_r, z_r) = linear_recurrent(q, k, v)
    chk, (S_c, z_c) = linear_chunked(q, k, v, chunk)
    assert gap(par, rec) < SIX_DECIMALS and gap(par, chk) < SIX_DECIMALS
    assert gap(S, S_r) < 1e-5 and gap(S, S_c) < 1e-5 and gap(z, z_c) < 1e-5
    assert gap(par, linear_weights(q, k) @ v) < SIX_DECIMALS  # the implicit pattern is it
    assert torch.allclose(linear_weights(q, k).sum(-1), torch.ones(2, 3, 13))
    # and they are not trivially equal: the future is masked (the last query sees more)
    assert gap(par[:, :, 0], v[:, :, 0]) < SIX_DECIMALS and gap(par[:, :, 1], v[:, :, 1]) > 0.01


@pytest.mark.parametrize("chunk", [1, 4, 13])
def test_delta_rule_parallel_recurrent_and_chunked_agree(chunk):
    q, k, v = qkv(seed=1)
    q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    beta = torch.rand(2, 3, 13, generator=torch.Generator().manual_seed(2))
    par, (S,) = delta_parallel(q, k, v, beta)
    rec, (S_r,) = delta_recurrent(q, k, v, beta)
    chk, (S_c,) = delta_chunked(q, k, v, beta, chunk)
    assert gap(par, rec) < SIX_DECIMALS and gap(par, chk) < SIX_DECIMALS
    assert gap(S, S_r) < SIX_DECIMALS and gap(S, S_c) < SIX_DECIMALS


def test_ssm_recurrence_convolution_and_scan_agree_and_the_scan_continues_a_state():
    g = torch.Generator().manual_seed(3)
    D, N, T = 6, 4, 13
    u = torch.randn(2, T, D, generator=g)
    a, b = discretize(
        0.3 * torch.randn(D, N, generator=g),
        torch.randn(D, generator=g) - 1,
        torch.randn(D, N, generator=g),
    )
    C, Dskip = torch.randn(D, N, generator=g), torch.randn(D, generator=g)
    assert bool(((a > 0) & (a < 1)).all())  # a stable decay per channel and state
    rec, h = ssm_recurrence(u, a, b, C, Dskip)
    conv = ssm_convolution(u, a, b, C, Dskip)
    scan, h_s = ssm_scan(u, a, b, C, Dskip)
    assert gap(rec, conv) < SIX_DECIMALS and gap(rec, scan) < SIX_DECIMALS
    assert gap(h, h_s) < SIX_DECIMALS
    _, h5 = ssm_recurrence(u[:, :5], a, b, C, Dskip)
    rest, _ = ssm_scan(u[:, 5:], a, b, C, Dskip, h5)  # a decode continues from the state
    assert gap(rest, rec[:, 5:]) < SIX_DECIMALS


MIXERS = ("linear", "delta", "ssm")


@pytest.mark.parametrize("mixer", MIXERS)
def test_a_recurrent_decode_keeps_a_constant_state_the_config_predicts(mixer):
    cfg = TransformerConfig(mixer=mixer, n_ctx=24)
    model = Transformer(cfg).eval()
    x = torch.randint(0, 16, (2, 24), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        full = model(x)
        cache = model.new_cache()
        outs, sizes = [model(x[:, :6], cache)], [cache.nbytes]
        for t in range(6, 24):
            outs.append(model(x[:, t : t + 1], cache))
            sizes.append(cache.nbytes)
    assert gap(torch.cat(outs, 1), full) < 1e-5  # the decode is the same model
    assert cache.rows == 24
    assert set(sizes) == {2 * cfg.state_bytes_per_sequence(torch.float32)}  # never grows
    assert cfg.kv_bytes_per_token() == 0


def test_softmax_cache_grows_per_token_while_a_state_does_not():
    soft = TransformerConfig(n_ctx=24)
    model = Transformer(soft).eval()
    cache = model.new_cache()
    with torch.no_grad():
        model(torch.zeros(1, 5, dtype=torch.long), cache)
        at5 = cache.nbytes
        model(torch.zeros(1, 19, dtype=torch.long), cache)
    assert at5 == 5 * soft.kv_bytes_per_token() and cache.nbytes == 24 * soft.kv_bytes_per_token()
    assert soft.state_bytes_per_sequence() == 0
    # gpt-nano's shape as each mixer: 2 layers × 4 heads × 16 × (16 + 1) × 4 B for linear
    assert soft.replace(mixer="linear").state_bytes_per_sequence() == 2 * 4 * 16 * 17 * 4
    assert soft.replace(mixer="delta").state_bytes_per_sequence() == 2 * 4 * 16 * 16 * 4
    assert soft.replace(mixer="ssm").state_bytes_per_sequence() == 2 * 64 * 8 * 4
    # a softmax cache passes the linear state after 8704 / 1024 = 8.5 tokens
    assert 8 * soft.kv_bytes_per_token() < 2 * 4 * 16 * 17 * 4 < 9 * soft.kv_bytes_per_token()


def test_flops_of_a_recurrent_mixer_do_not_grow_with_context():
    for mixer in MIXERS:
        cfg = TransformerConfig(mixer=mixer)
        assert cfg.flops_per_token(1) == cfg.flops_per_token(32)
    soft = TransformerConfig()
    assert soft.flops_per_token(32) > soft.flops_per_token(1)


def test_the_delta_rule_overwrites_where_plain_accumulation_keeps_the_stale_value():
    for seed in range(3):  # the lab's defaults: 8 random unit keys in 64 dims, 4 rewritten
        demo = overwrite_demo(n_keys=8, d_key=64, n_rewrites=4, n_values=8, seed=seed)
        rw, idx = demo["rewritten"], torch.arange(8)
        stale_plain = demo["plain"][idx, demo["first"]][rw]
        new_plain = demo["plain"][idx, demo["latest"]][rw]
        stale_delta = demo["delta"][idx, demo["first"]][rw]
        new_delta = demo["delta"][idx, demo["latest"]][rw]
        # plain: the old value reads about as strongly as the new one (both ~1)
        assert stale_plain.mean() > 0.8 and new_plain.mean() > 0.8
        # delta: the new value ~1, the old one mostly gone (what is left is crosstalk)
        assert new_delta.mean() > 0.85 and stale_delta.abs().mean() < 0.25
        assert recall_accuracy(demo, "delta") == (1.0, 1.0)
        again, kept = recall_accuracy(demo, "plain")
        assert again <= 0.75 and kept == 1.0  # only the rewritten keys go wrong


def test_rebind_recall_answers_the_last_value_and_knows_the_stale_one():
    task = RebindRecall()
    x, y, mask, rebound = task.sample(512, torch.Generator().manual_seed(0))
    assert x.shape == (512, task.x_len) and mask[:, -1].all() and mask.sum() == 512
    assert 0.4 < rebound.float().mean() < 0.6
    stale = task.stale(x)
    assert ((stale >= 0) == rebound).all()
    assert (stale[rebound] != y[rebound, -1]).all()  # the second write changed the value
    vocab = task.vocab
    row = int(rebound.nonzero()[0])
    key = vocab[int(x[row, -1])][0]
    writes = [vocab[int(t)] for t in x[row, :-1] if vocab[int(t)][0] == key]
    assert len(writes) == 2 and writes[-1].endswith("=" + vocab[int(y[row, -1])])


def test_without_positions_one_linear_layer_cannot_tell_which_write_came_last():
    """Order-blind: swapping the two writes of a key leaves plain linear attention's (and
    position-free softmax's) answer unchanged; the delta rule's answer changes."""
    task = RebindRecall()
    x, _, _, rebound = task.sample(64, torch.Generator().manual_seed(5))
    x = x[rebound]
    swapped = x.clone()
    for r in range(len(x)):
        q = int(x[r, -1]) - task.n_keys * task.n_values
        pos = [i for i in range(task.n_pairs) if int(x[r, i]) // task.n_values == q]
        swapped[r, pos[0]], swapped[r, pos[1]] = x[r, pos[1]], x[r, pos[0]]
    for mixer, blind in (("softmax", True), ("linear", True), ("delta", False)):
        cfg = TransformerConfig(
            n_layers=1, mixer=mixer, positional="none", n_ctx=task.x_len, d_vocab=task.vocab_size
        )
        torch.manual_seed(0)
        model = Transformer(cfg).eval()
        with torch.no_grad():
            d = gap(model(x)[:, -1], model(swapped)[:, -1])
        assert (d < 1e-5) == blind, (mixer, d)


@pytest.mark.slow
def test_trained_delta_arm_recalls_rebound_keys_the_linear_arm_answers_stale():
    """The lab's defaults (1 layer, no positions, AdamW 2e-3, batch 64): after 300 steps the
    delta arm answers rebound keys right, the plain linear arm about half the time, and
    most of its misses there are the stale value."""
    task = RebindRecall()
    g = torch.Generator().manual_seed(0)
    ex, ey, _, erb = task.sample(512, torch.Generator().manual_seed(99))
    stale = task.stale(ex)
    models = {}
    for mixer in ("linear", "delta"):
        cfg = TransformerConfig(
            n_layers=1, mixer=mixer, positional="none", n_ctx=task.x_len, d_vocab=task.vocab_size
        )
        torch.manual_seed(0)
        models[mixer] = Transformer(cfg)
    opts = {
        m: torch.optim.AdamW(models[m].parameters(), lr=2e-3, betas=(0.9, 0.99), weight_decay=0.0)
        for m in models
    }
    for _ in range(300):
        x, y, mask, _ = task.sample(64, g)
        for m, model in models.items():
            loss = masked_loss(model(x), y, mask)
            opts[m].zero_grad()
            loss.backward()
            opts[m].step()
    acc = {}
    with torch.no_grad():
        for m, model in models.items():
            pred = model(ex)[:, -1].argmax(-1)
            acc[m] = (
                float((pred == ey[:, -1])[erb].float().mean()),
                float((pred == ey[:, -1])[~erb].float().mean()),
                float((pred == stale)[erb].float().mean()),
            )
    assert acc["delta"][0] > 0.9 and acc["delta"][1] > 0.9, acc
    assert acc["linear"][1] > 0.9 and acc["linear"][0] < 0.65 and acc["linear"][2] > 0.3, acc
