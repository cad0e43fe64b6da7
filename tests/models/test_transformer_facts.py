"""The config's facts, from the config alone: the curriculum's numbers (chapters 7 and 8)."""

import pytest
import torch

from models.transformer import PRESETS, TransformerConfig, preset

KiB, GiB = 2**10, 2**30


def test_qwen3_shape_has_its_published_parameter_count():
    qwen = PRESETS["qwen3-0.6b"]
    assert (qwen.n_heads * qwen.d_head, qwen.d_model) == (2048, 1024)  # q_proj [2048, 1024]
    assert qwen.param_count() == 596_049_920
    assert qwen.active_param_count() == qwen.param_count()
    assert qwen.d_ff / qwen.d_model == 3


def test_qwen3_kv_cache_bytes_per_token_as_gqa_mha_mqa_and_mla():
    qwen = PRESETS["qwen3-0.6b"]
    assert qwen.kv_bytes_per_token(torch.bfloat16) == 112 * KiB  # GQA-8, the real model
    assert qwen.kv_bytes_per_token(2) == 112 * KiB  # a byte count works too
    assert qwen.replace(n_kv_heads=16).kv_bytes_per_token(torch.bfloat16) == 224 * KiB
    assert qwen.replace(n_kv_heads=1).kv_bytes_per_token(torch.bfloat16) == 14 * KiB
    mla = PRESETS["qwen3-0.6b-mla"]
    assert (mla.d_c, mla.d_rope, mla.n_layers) == (512, 64, 28)
    assert mla.kv_bytes_per_token(torch.bfloat16) == 31.5 * KiB
    assert mla.kv_cache_numbers_per_token_per_layer() == 576  # DeepSeek-V3's 512 + 64


def test_qwen3_cache_sizes_at_length_and_batch():
    qwen = PRESETS["qwen3-0.6b"]
    bf16 = torch.bfloat16
    assert qwen.kv_cache_bytes(40_960, 1, bf16) / GiB == 4.375
    article = qwen.kv_cache_bytes(1000, 50, bf16)  # the article's batch: 50 × 1,000 tokens
    assert round(article / GiB, 2) == 5.34
    mha = qwen.replace(n_kv_heads=16)
    assert mha.kv_cache_bytes(1000, 50, bf16) == 2 * article  # double with MHA


def test_smollm2_shape():
    smol = PRESETS["llama-smollm2"]
    assert (smol.n_heads, smol.n_kv_heads, smol.d_head) == (9, 3, 64)
    assert smol.kv_bytes_per_token(torch.float32) == 46_080  # 3 × 64 × 30 × 2 × 4
    assert smol.param_count() == 134_515_008  # SmolLM2-135M's published count


def test_gpt_nano_is_the_default_config():
    assert PRESETS["gpt-nano"] == TransformerConfig()
    assert TransformerConfig().param_count() == 104_192  # today's gpt lab model
    assert preset("gpt-nano", n_layers=3).n_layers == 3
    with pytest.raises(ValueError, match="unknown preset"):
        preset("gpt-5")


def test_facts_never_build_weights(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a fact allocated a parameter")

    monkeypatch.setattr(torch.nn.Parameter, "__new__", refuse)
    for cfg in PRESETS.values():
        cfg.param_count(), cfg.kv_bytes_per_token(torch.bfloat16), cfg.flops_per_token(100)


def test_config_fills_derived_defaults_and_replace_rederives_them():
    cfg = TransformerConfig(d_model=64, n_heads=4)
    assert (cfg.d_head, cfg.d_ff, cfg.n_kv_heads, cfg.expert_ffn) == (16, 256, 4, 256)
    wider = cfg.replace(d_model=128, n_heads=8)
    assert (wider.d_head, wider.d_ff, wider.n_kv_heads) == (16, 512, 8)  # MHA stays MHA
    assert cfg.replace(d_model=128, d_head=8).d_head == 8
    qwen = PRESETS["qwen3-0.6b"]
    assert qwen.replace(n_kv_heads=16).d_head == 128  # a d_head set apart is kept
    gqa = cfg.replace(n_kv_heads=2).replace(d_model=128)
    assert gqa.n_kv_heads == 2


@pytest.mark.parametrize(
    "changes, match",
    [
        (dict(d_model=30), "divisible"),
        (dict(n_kv_heads=3), "divide"),
        (dict(positional="rotary"), "unknown positional"),
        (dict(norm_placement="middle"), "unknown norm_placement"),
        (dict(mixer="mamba"), "unknown mixer"),
        (dict(attention="mla"), "d_c"),
        (dict(attention="mla", d_c=8, n_kv_heads=2), "n_kv_heads"),
        (dict(attention="mla", d_c=8, positional="rope"), "d_rope"),
        (dict(mla_rope_in_latent=True), "MLA"),
        (dict(ffn="moe", top_k=5), "top_k"),
        (dict(n_layers=0), "n_layers"),
        (dict(positional="rope", d_head=7), "even"),
        (dict(dropout=1.0), "dropout"),
        (dict(dense_layers=1), "MoE"),
        (dict(ffn="moe", dense_layers=3), "n_layers"),
        (dict(window=4), "sparse kind"),
        (dict(sparse="window"), "window"),
        (dict(sparse="strided", window=4), "stride"),
        (dict(sparse="block", block_size=4), "top_blocks"),
        (dict(sparse="window", window=4, stride=2), "stride is not used"),
        (dict(sparse="window", window=4, causal=False), "causal"),
    ],
)
def test_config_refuses_bad_values_with_a_reason(changes, match):
    with pytest.raises(ValueError, match=match):
        TransformerConfig(**changes)


def test_cla_counts_only_layers_that_own_a_cache():
    cfg = TransformerConfig(n_layers=5, kv_share=2)
    assert [cfg.kv_owner(i) for i in range(5)] == [0, 0, 2, 2, 4]
    assert cfg.n_kv_layers == 3
    assert cfg.kv_bytes_per_token(4) == 3 * 2 * 4 * 16 * 4


def test_moe_active_parameters_count_top_k_experts():
    cfg = TransformerConfig(ffn="moe", n_experts=8, top_k=2, expert_ffn=32, shared_expert=True)
    expert = 3 * 64 * 32 + 2 * 32 + 64  # SwiGLU gate, up, down with biases
    assert cfg.param_count() - cfg.active_param_count() == 2 * 6 * expert
    first_dense = cfg.replace(dense_layers=1)  # one MoE layer left: one layer's unused experts
    assert first_dense.param_count() - first_dense.active_param_count() == 6 * expert


def test_flops_per_token_counts_weights_and_attention_at_the_context():
    cfg = TransformerConfig()
    weights = 2 * (4 * 64 * 64 + 2 * 64 * 256) + 64 * 16  # per layer × 2, plus unembed
    assert cfg.flops_per_token(1) == 2 * weights + 2 * (4 * 64 * 1)
    assert cfg.flops_per_token(11) - cfg.flops_per_token(1) == 2 * 4 * 64 * 10
    gqa = cfg.replace(n_kv_heads=1)
    assert cfg.flops_per_token(5) - gqa.flops_per_token(5) == 2 * 2 * 2 * 64 * 48
