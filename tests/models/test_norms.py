"""models.norm_stats: the norms lab's arms, its attention statistics and QK-norm's cap.

Chapter 7's `norms` entry has no number of its own to reproduce (the 222.2 logit is the
text's model, a cited fact: tests/backend/test_lab_norms.py); these hold what the lab's
page says each measurement is.
"""

from __future__ import annotations

import math

import pytest
import torch

from models.data.tasks import make_task, masked_loss
from models.hooks import capture
from models.norm_stats import (
    NormArmsConfig,
    arm_configs,
    attention_stats,
    layer_grad_norms,
    qk_caps,
    uniform_entropy,
)
from models.transformer import Transformer, TransformerConfig

TASK = make_task("copy", seq_len=6)
BASE = TransformerConfig(
    n_layers=4, d_model=32, n_heads=4, n_ctx=TASK.x_len, d_vocab=TASK.vocab_size
)


def _model(**changes) -> Transformer:
    torch.manual_seed(0)
    return Transformer(BASE.replace(**changes))


def _x(n: int = 16) -> torch.Tensor:
    return TASK.sample(n, torch.Generator().manual_seed(3))[0]


def test_arms_differ_in_the_compared_choice_only():
    placed = arm_configs(NormArmsConfig("placement"), BASE)
    assert list(placed) == ["pre", "post", "olmo2", "sandwich"]
    assert [c.norm_placement for c in placed.values()] == list(placed)
    norms = arm_configs(NormArmsConfig("norm"), BASE.replace(norm_placement="post"))
    assert {k: (c.norm, c.norm_placement) for k, c in norms.items()} == {
        "layernorm": ("layernorm", "post"),
        "rmsnorm": ("rmsnorm", "post"),
    }
    qk = arm_configs(NormArmsConfig("qk_norm"), BASE)
    assert [c.qk_norm for c in qk.values()] == [False, True]
    for cfgs in (placed, norms, qk):  # nothing else moves
        fields = [
            c.replace(norm_placement="pre", norm="layernorm", qk_norm=False) for c in cfgs.values()
        ]
        assert all(f == fields[0] for f in fields)


def test_uniform_entropy_is_the_mean_log_of_keys_seen():
    # query t (0-based) sees t + 1 keys under the causal mask: mean of log 1 .. log T
    T = 13
    assert math.isclose(uniform_entropy(T), sum(math.log(k) for k in range(1, T + 1)) / T)
    # a fresh model attends nearly uniformly: its entropy sits just under the ceiling
    stats = attention_stats(_model(), _x())
    for h in stats.entropy:
        assert 0.98 * stats.uniform_entropy < h <= stats.uniform_entropy + 1e-6


def test_max_logit_and_entropy_are_the_hooked_scores_and_pattern():
    model = _model(norm_placement="sandwich")
    with torch.no_grad():  # sharpen attention so the numbers are not all ~0
        for b in model.blocks:
            b.attn.qkv.weight.mul_(30)
    x = _x()
    stats = attention_stats(model, x)
    names = ["blocks.2.attn.hook_attn_scores", "blocks.2.attn.hook_pattern"]
    with capture(model, names) as store, torch.no_grad():
        model.eval()
        model(x)
    scores, pattern = store[names[0]], store[names[1]]
    T = x.shape[1]
    visible = [scores[..., q, : q + 1].max() for q in range(T)]  # causal: keys 0..q
    assert math.isclose(stats.max_logit[2], float(torch.stack(visible).max()), rel_tol=1e-6)
    p = pattern.double()
    h = -(p * p.clamp_min(1e-300).log()).sum(-1).mean()
    assert math.isclose(stats.entropy[2], float(h), rel_tol=1e-5)
    assert stats.entropy[2] < 0.9 * stats.uniform_entropy  # sharper than uniform now
    assert len(stats.head_entropy[2]) == 4


def test_max_logit_counts_only_the_keys_a_query_sees():
    """Early queries large, late keys large: the largest score overall is query 0 against
    the last key, which the causal mask hides; the largest visible one is far smaller."""
    model = _model(norm_placement="post")  # block 0's attention reads the raw embedding
    T = TASK.x_len
    with torch.no_grad():
        model.embed.weight.zero_()
        model.pos_embed.weight.zero_()
        t = torch.arange(T, dtype=torch.float32)
        model.pos_embed.weight[:, 0] = t  # feature 0: the position
        model.pos_embed.weight[:, 1] = T - 1 - t  # feature 1: the distance to the end
        model.blocks[0].attn.qkv.weight.zero_()
        model.blocks[0].attn.qkv.weight[0, 1] = 1.0  # head 0's q[0] = T - 1 - t
        model.blocks[0].attn.qkv.weight[BASE.d_model, 0] = 1.0  # head 0's k[0] = t
    got = attention_stats(model, _x(2)).max_logit[0]
    d = BASE.d_model // BASE.n_heads
    visible = max((T - 1 - q) * k for q in range(T) for k in range(q + 1)) / math.sqrt(d)
    assert math.isclose(got, visible, rel_tol=1e-6)
    assert got < 0.5 * (T - 1) ** 2 / math.sqrt(d)  # the hidden maximum


def test_qk_norm_caps_the_logit_by_its_gains_and_without_it_the_logit_grows():
    x = _x()
    for qk in (False, True):
        model = _model(qk_norm=qk)
        before = attention_stats(model, x).max_logit
        with torch.no_grad():  # q and k 100 times larger
            for b in model.blocks:
                b.attn.qkv.weight.mul_(100)
        after = attention_stats(model, x).max_logit
        caps = qk_caps(model)
        if not qk:
            assert caps == [None] * 4
            assert max(after) > 1000 * max(before)  # logits scale with |q|·|k|: 100²
            continue
        d = BASE.d_model // BASE.n_heads
        assert caps == pytest.approx([math.sqrt(d)] * 4)  # gains 1, biases 0 at init: √d·√d/√d
        assert all(a <= c + 1e-5 for a, c in zip(after, caps, strict=True))
        with torch.no_grad():  # the cap is the gains': grow them and the logit may grow
            for b in model.blocks:
                b.attn.q_norm.weight.mul_(3)
                b.attn.k_norm.weight.mul_(3)
        grown = attention_stats(model, x).max_logit
        assert qk_caps(model) == pytest.approx([9 * math.sqrt(d)] * 4)
        assert max(grown) > max(after) * 8  # 3 × 3 on every logit
        assert all(a <= c + 1e-4 for a, c in zip(grown, qk_caps(model), strict=True))


def test_post_norm_at_init_starves_the_blocks_above_the_first():
    """What the waterfall's first column shows: at init pre-norm's blocks get gradients of
    one size; post-norm's blocks above the first get a small fraction of pre-norm's (each
    block's output passes every later norm), and its first block, reading the tiny
    embedding through a norm, the largest."""
    x, y, mask = TASK.sample(64, torch.Generator().manual_seed(5))
    grads = {}
    for placement in ("pre", "post"):
        model = _model(norm_placement=placement, n_layers=6)
        masked_loss(model(x), y, mask).backward()
        grads[placement] = layer_grad_norms(model)
    pre, post = grads["pre"], grads["post"]
    assert max(pre) < 1.2 * min(pre)  # even across depth
    assert all(p < 0.1 * q for p, q in zip(post[1:], pre[1:], strict=True))
    assert post[0] > 10 * max(post[1:])
