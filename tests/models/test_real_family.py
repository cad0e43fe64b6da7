"""What the Transformer family gained for real checkpoints, on tiny random models (fast).

BERT's token types and embedding norm (counted exactly by param_count), a padding mask
through every attention path (fused == explicit == the unpadded sequence alone), RoPE
tables shared by layers, llama.cpp's Q/K permutation (inverse; permuted weights under
interleaved RoPE equal the original under rotate-half), and the once-per-process cache.
"""

from __future__ import annotations

import threading

import pytest
import torch

from models.hooks import capture
from models.real._build import build
from models.real._once import model_lock, once_per_process
from models.real.smollm2 import permute_qk, unpermute_qk
from models.transformer import Transformer, TransformerConfig

BERTISH = TransformerConfig(
    n_layers=2,
    d_model=32,
    n_heads=4,
    n_ctx=16,
    d_vocab=20,
    causal=False,
    norm_placement="post",
    norm_eps=1e-12,
    tied_embeddings=True,
    n_token_types=2,
    embed_norm=True,
)
LLAMAISH = TransformerConfig(
    n_layers=2,
    d_model=48,
    n_heads=6,
    n_kv_heads=2,
    n_ctx=16,
    d_vocab=20,
    positional="rope",
    norm="rmsnorm",
    ffn="swiglu",
    bias=False,
    tied_embeddings=True,
)


@pytest.mark.parametrize(
    "cfg",
    [
        BERTISH,
        BERTISH.replace(tied_embeddings=False, bias=False),
        BERTISH.replace(norm="rmsnorm", embed_norm=True, n_token_types=3),
        LLAMAISH.replace(n_token_types=2),
    ],
)
def test_param_count_with_token_types_and_embed_norm(cfg):
    model = Transformer(cfg)
    assert sum(p.numel() for p in model.parameters()) == cfg.param_count()
    assert model.num_params(non_embedding=True) < cfg.param_count()


def test_default_model_has_no_new_modules():
    names = dict(Transformer(TransformerConfig()).named_parameters())
    assert not any(n.startswith(("embed_types", "embed_ln")) for n in names)


def test_token_types_and_embed_norm_change_the_embedding():
    torch.manual_seed(0)
    model = Transformer(BERTISH).eval()
    idx = torch.randint(0, 20, (2, 6))
    with capture(model, "blocks.0.hook_resid_pre") as store:
        model.hidden(idx)
        zero = store["blocks.0.hook_resid_pre"]
        model.hidden(idx, token_types=torch.ones_like(idx))
        one = store["blocks.0.hook_resid_pre"]
    assert (zero - one).abs().max() > 1e-3
    mean, var = zero.mean(-1), zero.var(-1, unbiased=False)  # LayerNorm (weight 1, bias 0)
    assert mean.abs().max() < 1e-5 and (var - 1).abs().max() < 1e-4


@pytest.mark.parametrize(
    "cfg",
    [
        BERTISH,
        LLAMAISH,
        LLAMAISH.replace(positional="alibi"),
        LLAMAISH.replace(attention="mla", n_kv_heads=0, d_c=12, d_rope=4),
    ],
    ids=["bidirectional", "causal-gqa-rope", "alibi", "mla"],
)
def test_padding_mask_fused_explicit_and_unpadded_agree(cfg):
    torch.manual_seed(1)
    model = Transformer(cfg).eval()
    idx = torch.randint(0, 20, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[0, 4:] = False  # sentence 0 has 4 real tokens, then padding
    with torch.no_grad():
        fused = model(idx, key_mask=mask)
        with capture(model, "blocks.*.attn.hook_pattern") as store:
            explicit = model(idx, key_mask=mask)
        alone = model(idx[:1, :4])
    assert (fused - explicit)[mask].abs().max() < 1e-5
    assert (fused[0, :4] - alone[0]).abs().max() < 1e-5
    assert (fused[1] - model(idx[1:])[0]).abs().max() < 1e-5
    pattern = store["blocks.1.attn.hook_pattern"]  # [B, H, T, S]
    assert pattern[0, :, :, 4:].abs().max() == 0.0
    assert torch.allclose(pattern.sum(-1), torch.ones(()), atol=1e-6)


def test_rope_tables_are_shared_by_layers():
    model = Transformer(LLAMAISH.replace(n_layers=3))
    tables = {b.attn.rotary.cos.data_ptr() for b in model.blocks}
    assert len(tables) == 1


@pytest.mark.parametrize("heads", [1, 3, 9])
def test_unpermute_inverts_llama_cpp_permutation(heads):
    w = torch.randn(heads * 8, 5)
    assert torch.equal(unpermute_qk(permute_qk(w, heads), heads), w)
    assert not torch.equal(permute_qk(w, heads), w)
    # inside each head, llama.cpp's row 2i is Hugging Face's row i, and 2i+1 is i + d/2
    p = permute_qk(w, heads).view(heads, 8, 5)
    h = w.view(heads, 8, 5)
    assert torch.equal(p[:, 0::2], h[:, :4]) and torch.equal(p[:, 1::2], h[:, 4:])


def _permuted(model: Transformer, cfg: TransformerConfig) -> dict[str, torch.Tensor]:
    """The model's state with q, k rows in llama.cpp's order (as a GGUF stores them)."""
    state = dict(model.state_dict())
    H, Hkv, dh = cfg.n_heads, cfg.n_kv_heads, cfg.d_head
    for i in range(cfg.n_layers):
        q, k, v = state[f"blocks.{i}.attn.qkv.weight"].split([H * dh, Hkv * dh, Hkv * dh])
        state[f"blocks.{i}.attn.qkv.weight"] = torch.cat([permute_qk(q, H), permute_qk(k, Hkv), v])
    return state


def test_llama_cpp_layout_is_right_only_with_its_own_rope():
    torch.manual_seed(2)
    right = Transformer(LLAMAISH).eval()
    with torch.no_grad():  # sharper attention than the init's near-uniform one
        for block in right.blocks:
            block.attn.qkv.weight.mul_(20)
    state = _permuted(right, LLAMAISH)
    mismatch = build(Transformer, LLAMAISH, dict(state)).eval()
    llama_cpp = build(Transformer, LLAMAISH.replace(rope_layout="interleaved"), dict(state))
    idx = torch.randint(0, 20, (1, 12))
    with torch.no_grad():
        want = right(idx)
        assert (llama_cpp.eval()(idx) - want).abs().max() < 1e-5
        assert (mismatch(idx) - want).abs().max() > 0.1


def test_build_assigns_without_copy_and_ties():
    model = Transformer(LLAMAISH)
    state = dict(model.state_dict())
    built = build(Transformer, LLAMAISH, state)
    assert built.unembed.weight is built.embed.weight
    assert (
        built.blocks[0].mlp.gate.weight.data_ptr() == state["blocks.0.mlp.gate.weight"].data_ptr()
    )
    assert sum(p.numel() for p in built.parameters()) == LLAMAISH.param_count()
    with pytest.raises(RuntimeError):
        build(Transformer, LLAMAISH, {k: v for k, v in state.items() if "ln_final" not in k})


def test_once_per_process_loads_once_across_threads():
    calls = []

    @once_per_process
    def load(name):
        calls.append(name)
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(load("x"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["x"] and all(g is got[0] for g in got)
    assert load("y") is not got[0]
    assert load(name="x") is got[0]  # one key however the arguments are spelled
    load.cache_clear()
    assert load("x") is not got[0] and calls == ["x", "y", "x"]


def test_model_lock_keeps_concurrent_captures_apart():
    torch.manual_seed(3)
    model = Transformer(LLAMAISH).eval()
    inputs = [torch.randint(0, 20, (1, 5 + i)) for i in range(4)]
    with torch.no_grad():
        want = [model(x) for x in inputs]
    results: dict[int, tuple] = {}

    def session(i: int) -> None:
        for _ in range(5):
            with model_lock(model), capture(model, "blocks.*.attn.hook_pattern") as store:
                out = model(inputs[i])
            results[i] = (out, store["blocks.1.attn.hook_pattern"].shape)

    threads = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, (out, shape) in results.items():
        assert torch.allclose(out, want[i], atol=1e-6)
        assert shape == (1, 6, 5 + i, 5 + i)
    assert model_lock(model) is model_lock(model)
    assert model_lock(model) is not model_lock(Transformer(LLAMAISH))
