"""Named configs, minGPT style: a table from a name to a `TransformerConfig`.

`gpt-nano` is today's gpt-lab model. The others are *shapes* of real models: their facts
(`param_count()`, `kv_bytes_per_token()`) are asked of the config, and nothing here builds
their weights (a 0.6B model would take 2.4 GB of float32 to no purpose). Checkpoint key maps
for loading real weights sit beside their loaders in `models/real/` (SmolLM2's GGUF loads
into this `llama-smollm2` shape).
"""

from __future__ import annotations

from models.transformer.config import TransformerConfig

_QWEN3_0_6B = TransformerConfig(
    # Qwen3-0.6B's config.json: 28 layers, hidden 1024, 16 query / 8 KV heads of 128
    # (q_proj is [2048, 1024]: heads × d_head ≠ hidden), SwiGLU 3072, QK-norm before RoPE.
    n_layers=28,
    d_model=1024,
    n_heads=16,
    n_kv_heads=8,
    d_head=128,
    d_ff=3072,
    n_ctx=40_960,  # max_position_embeddings
    d_vocab=151_936,
    qk_norm=True,
    positional="rope",
    rope_theta=1_000_000.0,
    rope_layout="rotate_half",
    norm="rmsnorm",
    norm_eps=1e-6,
    ffn="swiglu",
    bias=False,
    tied_embeddings=True,
)

# DeepSeek-V3's shape (its config.json): 61 layers of d_model 7168, MLA with 128 heads
# (nope d_head 128, decoupled RoPE 64, KV latent 512, query latent 1536), the first 3 layers
# a dense SwiGLU of 18432, then MoE: 256 routed experts of 2048 top-8 plus 1 shared.
# Its param_count() is ~671B, active_param_count() ~37B (tests/models/test_ffn_moe.py);
# left out: the multi-token-prediction module (~14B more: 685B as published), the router's
# correction bias (256 numbers a layer), sigmoid scoring and group-limited routing (no
# weights). Shape only: never built.
_DEEPSEEK_V3 = TransformerConfig(
    n_layers=61,
    d_model=7168,
    n_heads=128,
    d_head=128,
    n_ctx=163_840,  # max_position_embeddings
    d_vocab=129_280,
    attention="mla",
    d_c=512,
    d_cq=1536,
    d_rope=64,
    positional="rope",
    norm="rmsnorm",
    norm_eps=1e-6,
    ffn="moe",
    d_ff=18_432,
    n_experts=256,
    top_k=8,
    shared_expert=True,
    expert_ffn=2048,
    dense_layers=3,
    bias=False,
    tied_embeddings=False,
)

PRESETS: dict[str, TransformerConfig] = {
    "gpt-nano": TransformerConfig(),
    "qwen3-0.6b": _QWEN3_0_6B,
    # The same shape with DeepSeek's MLA sizes (d_c 512, decoupled RoPE 64): 576 cached
    # numbers per token and layer. Not a real model: the kv-cache lab's comparison row.
    "qwen3-0.6b-mla": _QWEN3_0_6B.replace(
        attention="mla", n_kv_heads=0, d_c=512, d_rope=64, qk_norm=False
    ),
    # SmolLM2-135M: the Llama shape of the real-llm lab (GQA 9/3, RoPE θ 1e5, tied head).
    "llama-smollm2": TransformerConfig(
        n_layers=30,
        d_model=576,
        n_heads=9,
        n_kv_heads=3,
        d_ff=1536,
        n_ctx=8192,
        d_vocab=49_152,
        positional="rope",
        rope_theta=100_000.0,
        norm="rmsnorm",
        norm_eps=1e-5,
        ffn="swiglu",
        bias=False,
        tied_embeddings=True,
    ),
    "deepseek-v3": _DEEPSEEK_V3,
}


def preset(name: str, **changes) -> TransformerConfig:
    """The named config, with changes applied through `TransformerConfig.replace`."""
    try:
        cfg = PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}: one of {sorted(PRESETS)}") from None
    return cfg.replace(**changes) if changes else cfg
