"""Sparse attention in the Transformer family: masks, both paths, cached decode, reachability."""

import pytest
import torch

from models.hooks import capture
from models.transformer import Transformer, TransformerConfig
from models.transformer import attention as attention_module
from models.transformer.sparse import (
    block_mask,
    block_scores,
    config_mask,
    farthest_back,
    reachability,
    static_mask,
)

KINDS = {
    "window": dict(sparse="window", window=4),
    "sinks+window": dict(sparse="window", window=4, sinks=2),
    "strided": dict(sparse="strided", window=3, stride=4),
    "block": dict(sparse="block", block_size=4, top_blocks=1),
    "block+sinks": dict(sparse="block", block_size=3, top_blocks=2, sinks=1),
}
SHAPES = {
    "mha-rope": dict(positional="rope"),
    "gqa-alibi": dict(positional="alibi", n_kv_heads=2),
    "mqa-none": dict(positional="none", n_kv_heads=1),
    "mla-rope": dict(positional="rope", attention="mla", d_c=16, d_rope=8),
    "learned": dict(positional="learned"),
}


def model(**kw) -> Transformer:
    torch.manual_seed(0)
    return Transformer(TransformerConfig(n_ctx=24, **kw)).eval()


def tokens(b=2, t=24, seed=1):
    return torch.randint(0, 16, (b, t), generator=torch.Generator().manual_seed(seed))


def loop_mask(kind, T, window=0, stride=0, sinks=0):
    """The definitions, one (i, j) at a time."""
    m = torch.zeros(T, T, dtype=torch.bool)
    for i in range(T):
        for j in range(i + 1):
            near = i - j < window
            strided = stride > 0 and (i - j) % stride == 0
            seen = {"dense": True, "window": near, "strided": near or strided}
            m[i, j] = seen[kind] or j < sinks
    return m


@pytest.mark.parametrize(
    "kind,kw",
    [
        ("dense", {}),
        ("window", dict(window=1)),
        ("window", dict(window=5)),
        ("window", dict(window=3, sinks=2)),
        ("strided", dict(window=2, stride=3)),
        ("strided", dict(window=4, stride=4, sinks=1)),
    ],
)
def test_fixed_masks_match_their_definitions(kind, kw):
    assert torch.equal(static_mask(kind, 17, **kw), loop_mask(kind, 17, **kw))
    # a decode's rows are the same rows of the whole sequence's mask
    assert torch.equal(static_mask(kind, 5, 12, **kw), loop_mask(kind, 17, **kw)[12:])


def test_block_selection_picks_the_earlier_blocks_with_the_best_mean_key():
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(1, 2, 14, 8, generator=g), torch.randn(1, 2, 14, 8, generator=g)
    bs, top = 4, 2
    m = block_mask(q, k, 0, bs, top, sinks=1)  # [1, 2, 14, 14]
    for h in range(2):
        for i in range(14):
            own = i // bs
            scores = {
                b: float(q[0, h, i] @ k[0, h, b * bs : (b + 1) * bs].mean(0)) for b in range(own)
            }
            best = sorted(scores, key=scores.get, reverse=True)[:top]
            want = {j for j in range(i + 1) if j // bs == own or j // bs in best or j < 1}
            assert set(torch.nonzero(m[0, h, i]).flatten().tolist()) == want, (h, i)
    # the scores it ranks by are q·mean(k)/√d
    s = block_scores(q, k, bs)
    assert torch.allclose(s[0, 1, 9, 1], q[0, 1, 9] @ k[0, 1, 4:8].mean(0) / 8**0.5)


def test_dense_config_runs_no_sparse_code(monkeypatch):
    """Dense is today's code path: the sparse builder is never reached, no hook_mask exists."""

    def boom(*a, **k):
        raise AssertionError("dense attention built a sparse mask")

    monkeypatch.setattr(attention_module, "sparse_mask", boom)
    for kw in SHAPES.values():
        m = model(**kw)
        x = tokens()
        with torch.no_grad(), capture(m, ["blocks.0.attn.hook_pattern"]):
            m(x)
        cache = m.new_cache()
        with torch.no_grad():
            m(x[:, :10], cache), m(x[:, 10:11], cache)
        assert not any(n.endswith("hook_mask") for n, _ in m.named_modules())


@pytest.mark.parametrize("shape", SHAPES)
def test_a_window_as_long_as_the_context_is_dense(shape):
    x = tokens()
    dense = model(**SHAPES[shape])
    wide = model(**SHAPES[shape], sparse="window", window=24)
    with torch.no_grad():
        assert torch.allclose(dense(x), wide(x), atol=1e-5)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_explicit_path_equals_fused_path(kind, shape):
    m, x = model(**SHAPES[shape], **KINDS[kind]), tokens()
    with torch.no_grad():
        fused = m(x)
        with capture(m, ["blocks.1.attn.hook_pattern"]):
            explicit = m(x)
    assert torch.allclose(fused, explicit, atol=1e-5)
    assert not torch.allclose(fused, model(**SHAPES[shape])(x), atol=1e-3)  # the mask acts


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_cached_decode_equals_recomputation(kind, shape):
    m, x = model(**SHAPES[shape], **KINDS[kind]), tokens()
    with torch.no_grad():
        full = m(x)
        cache = m.new_cache()
        parts = [m(x[:, :9], cache)]  # prefill 9, one chunk of 3, then one token at a time
        parts.append(m(x[:, 9:12], cache))
        parts += [m(x[:, t : t + 1], cache) for t in range(12, 24)]
    assert torch.allclose(torch.cat(parts, 1), full, atol=1e-5)


@pytest.mark.parametrize("shape", ["mha-rope", "gqa-alibi", "mla-rope"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_query_never_attends_outside_its_mask(kind, shape):
    cfg = KINDS[kind]
    m, x = model(**SHAPES[shape], **cfg), tokens()
    names = [f"blocks.{i}.attn.{h}" for i in range(2) for h in ("hook_pattern", "hook_mask")]
    with torch.no_grad(), capture(m, names) as store:
        m(x)
    for i in range(2):
        pattern, mask = store[f"blocks.{i}.attn.hook_pattern"], store[f"blocks.{i}.attn.hook_mask"]
        mask = mask.expand_as(pattern)  # [B, H, T, T]
        assert (pattern[~mask] == 0).all()
        assert torch.allclose(pattern.sum(-1), torch.ones(()))
        assert (pattern[mask] > 0).all()  # and it can see everything the mask allows
        if cfg["sparse"] != "block":  # the fixed kinds: exactly their definition
            T = x.shape[1]
            want = loop_mask(
                cfg["sparse"], T, cfg["window"], cfg.get("stride", 0), cfg.get("sinks", 0)
            )
            assert torch.equal(store[f"blocks.{i}.attn.hook_mask"], want)
        else:  # own block and sinks always; at most top_blocks earlier blocks besides
            assert (mask & config_mask(m.cfg, x.shape[1])).eq(config_mask(m.cfg, x.shape[1])).all()
            bs = cfg["block_size"]
            blocks = mask[..., : (x.shape[1] // bs) * bs].unflatten(-1, (-1, bs)).any(-1)
            own = torch.arange(x.shape[1]) // bs
            earlier = blocks & (torch.arange(blocks.shape[-1])[None, :] < own[:, None])
            sink_blocks = -(-cfg.get("sinks", 0) // bs)
            assert (earlier[..., sink_blocks:].sum(-1) <= cfg["top_blocks"]).all()


@pytest.mark.parametrize("w,layers", [(2, 1), (4, 2), (3, 3), (5, 4)])
def test_a_window_reaches_layers_times_w_minus_one_back(w, layers):
    T = 40
    reach = reachability([static_mask("window", T, 0, w)] * layers)
    back = farthest_back(reach)
    assert torch.equal(back, torch.arange(T).clamp(max=layers * (w - 1)))
    # and nothing is skipped in between
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    assert torch.equal(reach, (j <= i) & (i - j <= layers * (w - 1)))


def test_strided_reaches_everything_in_two_layers_and_sinks_in_one():
    T, s = 36, 6
    strided = static_mask("strided", T, 0, window=s, stride=s)
    assert not reachability([strided]).tril().all()
    assert reachability([strided] * 2).tril().equal(torch.ones(T, T, dtype=torch.bool).tril())
    sinks = static_mask("window", T, 0, window=3, sinks=2)
    assert reachability([sinks])[:, :2].tril().equal(torch.ones(T, 2, dtype=torch.bool).tril())


def test_reachability_is_what_the_model_lets_through():
    """Change one token: positions out of reach keep their logits bit for bit, the rest move."""
    w, L, T = 3, 2, 24
    m = model(n_layers=L, positional="rope", sparse="window", window=w)
    x = tokens(1, T)
    reach = reachability([static_mask("window", T, 0, w)] * L)  # [T, T]
    with torch.no_grad():
        base = m(x)
        for j in (0, 5, 11):
            y = x.clone()
            y[0, j] = (y[0, j] + 1) % 16
            # Bit for bit is promised here: the same kernels on the same shapes, and a key
            # out of reach enters every sum with weight exactly 0.
            moved = (m(y) - base).abs().amax(-1)[0] > 0  # [T]
            assert torch.equal(moved, reach[:, j]), j
