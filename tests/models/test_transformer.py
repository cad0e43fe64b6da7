"""The GPT tests, run for every attention variant of the family (MHA, GQA, MQA, CLA, MLA)."""

import pytest
import torch

from models.generate import generate, generate_steps
from models.hooks import capture
from models.transformer import Transformer, TransformerConfig
from models.transformer.attention import causal_mask

POSITIONALS = ["none", "learned", "sinusoidal", "rope", "alibi"]
VARIANTS = {
    "mha": {},
    "gqa": dict(n_kv_heads=2),
    "mqa": dict(n_kv_heads=1),
    "cla": dict(n_layers=3, kv_share=2),
    "mla": dict(attention="mla", d_c=12, d_rope=4),
    "mla-q": dict(attention="mla", d_c=12, d_rope=4, d_cq=10, mla_rope_in_latent=True),
    # Qwen3's recipe in small: GQA, QK-norm, RMSNorm, SwiGLU, no biases, tied embeddings
    "qwen": dict(
        n_kv_heads=2, qk_norm=True, norm="rmsnorm", ffn="swiglu", bias=False, tied_embeddings=True
    ),
}


def tiny(variant: str = "mha", seed: int = 0, **kw) -> Transformer:
    torch.manual_seed(seed)
    cfg = dict(n_layers=2, n_heads=4, d_model=32, n_ctx=16, d_vocab=11) | VARIANTS[variant] | kw
    if cfg.get("mla_rope_in_latent") and cfg.get("positional", "learned") != "rope":
        cfg["mla_rope_in_latent"] = False
    return Transformer(TransformerConfig(**cfg)).eval()


def tokens(b: int, t: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, 11, (b, t), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("positional", POSITIONALS)
@pytest.mark.parametrize("causal", [True, False])
def test_explicit_attention_equals_fused_kernel(variant, positional, causal):
    model = tiny(variant, positional=positional, causal=causal).double()
    x = tokens(3, 16)
    fused = model(x)
    with capture(model, "blocks.*.attn.hook_pattern") as store:
        explicit = model(x)
    assert len(store) == model.cfg.n_layers  # the explicit path really ran
    assert (fused - explicit).abs().max() < 1e-12  # in float64 they agree to rounding


@pytest.mark.parametrize("variant", VARIANTS)
def test_explicit_attention_equals_fused_kernel_in_float32(variant):
    model = tiny(variant, positional="rope")
    x = tokens(4, 16)
    with capture(model, "blocks.0.attn.hook_attn_scores"):
        explicit = model(x)
    assert torch.allclose(model(x), explicit, atol=1e-6, rtol=0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_causal_patterns_are_lower_triangular_rows_summing_to_one(variant):
    model = tiny(variant, positional="alibi")
    with capture(model, "blocks.*.attn.hook_pattern") as store:
        model(tokens(3, 9))
    for pattern in store.values():
        assert pattern.shape == (3, 4, 9, 9)  # [B, H, T, T]: query heads, even for GQA
        assert torch.all(pattern.triu(diagonal=1) == 0)
        assert torch.allclose(pattern.sum(-1), torch.ones(3, 4, 9), atol=1e-6)


@pytest.mark.parametrize("variant", VARIANTS)
def test_causal_mask_hides_the_future(variant):
    model = tiny(variant, positional="rope")
    x = tokens(1, 10)
    y = x.clone()
    y[0, 6] = (y[0, 6] + 1) % 11
    a, b = model(x), model(y)
    assert torch.allclose(a[0, :6], b[0, :6], atol=1e-6)
    assert not torch.allclose(a[0, 6:], b[0, 6:], atol=1e-4)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("positional", POSITIONALS)
def test_prefill_then_decode_through_cache_equals_one_full_pass(variant, positional):
    model = tiny(variant, positional=positional)
    x = tokens(2, 12)
    full = model(x)
    cache = model.new_cache()
    parts = [model(x[:, :5], cache)] + [model(x[:, t : t + 1], cache) for t in range(5, 9)]
    parts.append(model(x[:, 9:], cache))  # a multi-token chunk after a non-empty cache
    assert cache.rows == 12
    assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-5, rtol=0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_cached_generation_equals_full_recomputation(variant):
    model = tiny(variant, positional="rope")
    kw = dict(temperature=0.0)
    cached = list(generate_steps(model, [1, 2, 3], 16, use_cache=True, **kw))
    recomputed = list(generate_steps(model, [1, 2, 3], 16, use_cache=False, **kw))
    assert [s.token for s in cached] == [s.token for s in recomputed]
    for a, b in zip(cached, recomputed, strict=True):
        assert torch.allclose(a.logits, b.logits, atol=1e-5, rtol=0)
        for pa, pb in zip(a.attention, b.attention, strict=True):
            assert torch.allclose(pa, pb, atol=1e-5)
    assert cached[-1].positions == cached[-1].positions_no_cache == 16  # the window slid


@pytest.mark.parametrize("variant", VARIANTS)
def test_sampling_is_reproducible_with_a_generator(variant):
    model = tiny(variant)

    def run(seed):
        return generate(
            model, [1, 2], 10, temperature=1.5, generator=torch.Generator().manual_seed(seed)
        )

    assert run(0) == run(0)
    assert run(0) != run(1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("variant", VARIANTS)
def test_kv_bytes_per_token_is_what_a_real_decode_holds(variant, dtype):
    model = tiny(variant, positional="rope").to(dtype)
    steps = list(generate_steps(model, [1, 2, 3], 6, temperature=0.0))
    per_token = model.cfg.kv_bytes_per_token(dtype)
    for s in steps:
        assert s.cache_bytes == s.cache_rows * per_token  # batch 1
        assert s.bytes_per_token == per_token
    cache = model.new_cache()
    model(tokens(3, 7), cache)  # batch 3
    assert cache.nbytes == 3 * 7 * per_token


def test_cache_sizes_order_as_the_variants_promise():
    per = {v: tiny(v, positional="rope").cfg.kv_bytes_per_token(4) for v in VARIANTS}
    assert per["qwen"] == per["gqa"]
    assert per["mha"] == 2 * 2 * 4 * 8 * 4 and per["gqa"] == per["mha"] / 2
    assert per["mqa"] == per["mha"] / 4
    assert per["cla"] == 2 * 2 * 4 * 8 * 4  # 3 layers, 2 of them own K/V
    assert per["mla"] == 2 * (12 + 4) * 4


def test_scores_are_scaled_and_pattern_is_their_masked_softmax_with_alibi():
    model = tiny("gqa", positional="alibi").double()
    with capture(model, "blocks.1.attn.*") as s:
        model(tokens(2, 6))
    q, k = s["blocks.1.attn.hook_q"], s["blocks.1.attn.hook_k"]  # [B, 4, T, 8], [B, 2, T, 8]
    assert k.shape[1] == 2  # GQA stores and shows its 2 KV heads
    k = k.repeat_interleave(2, dim=1)
    slopes = torch.tensor([2**-2, 2**-4, 2**-6, 2**-8], dtype=torch.float64)
    dist = (torch.arange(6)[:, None] - torch.arange(6)[None, :]).abs()
    scores = q @ k.transpose(-2, -1) / 8**0.5 - slopes[:, None, None] * dist
    assert torch.allclose(s["blocks.1.attn.hook_attn_scores"], scores)
    masked = scores.masked_fill(~causal_mask(6, 0), float("-inf"))
    assert torch.allclose(s["blocks.1.attn.hook_pattern"], masked.softmax(-1))


def test_without_positions_and_mask_the_model_is_permutation_equivariant():
    model = tiny("gqa", positional="none", causal=False).double()
    x = torch.tensor([[3, 7, 5]])
    perm = torch.tensor([2, 1, 0])
    assert torch.allclose(model(x)[:, perm], model(x[:, perm]), atol=1e-12)


def test_cla_layers_without_their_own_kv_reuse_the_owners():
    model = tiny("cla")
    assert hasattr(model.blocks[0].attn, "qkv") and not hasattr(model.blocks[1].attn, "qkv")
    assert hasattr(model.blocks[2].attn, "qkv")
    cache = model.new_cache()
    model(tokens(1, 5), cache)
    assert [e is not None for e in cache.entries] == [True, False, True]
    with capture(model, "blocks.*.attn.hook_k") as store:
        model(tokens(1, 5))
    assert sorted(store) == ["blocks.0.attn.hook_k", "blocks.2.attn.hook_k"]


def test_cross_attention_reads_the_encoder_memory():
    torch.manual_seed(0)
    enc = Transformer(TransformerConfig(d_model=32, n_ctx=16, d_vocab=11, causal=False))
    dec = Transformer(TransformerConfig(d_model=32, n_ctx=16, d_vocab=11, cross_attention=True))
    src, tgt = tokens(2, 7), tokens(2, 5, seed=2)
    memory = enc.hidden(src)  # [B, S, d_model]
    with capture(dec, "blocks.*.cross_attn.hook_pattern") as store:
        logits = dec(tgt, memory=memory)
    assert logits.shape == (2, 5, 11)
    assert store["blocks.0.cross_attn.hook_pattern"].shape == (2, 4, 5, 7)  # [B, H, T, S]
    assert torch.allclose(dec(tgt, memory=memory), logits, atol=1e-6)  # fused == explicit
    other = enc.hidden(tokens(2, 7, seed=3))
    assert not torch.allclose(dec(tgt, memory=other), logits, atol=1e-4)
    cache = dec.new_cache()  # decoding with a cache: the memory is given at every step
    parts = [dec(tgt[:, :3], cache, memory)] + [
        dec(tgt[:, t : t + 1], cache, memory) for t in (3, 4)
    ]
    assert torch.allclose(torch.cat(parts, 1), logits, atol=1e-5)
    with pytest.raises(ValueError, match="memory"):
        dec(tgt)
