"""A Qwen3-family checkpoint folder the user has, in our Transformer family.

No Qwen3 weights ship in a package: the learner points `SHAOMAI_MODELS_DIR` at a folder of
Hugging Face checkpoints (each a folder with config.json, model.safetensors — or shards
with model.safetensors.index.json — and tokenizer.json). Qwen3's recipe in our config:
RMSNorm (ε from the config, 1e-6), QK-norm (RMSNorm over d_head on q and k) before RoPE,
RoPE θ from the config (1e6) in rotate-half layout, GQA (KV head j serves query heads
j·g … j·g+g−1: repeat_interleave), SwiGLU, no biases, d_head apart from d_model / n_heads
(0.6B: 16 × 128 = 2048 ≠ 1024), tied or separate lm_head.

    model, tok = load_qwen3(folder)        # once per process per folder; eval, no grad
    logits = model(torch.tensor([tok.encode("Hello").ids]))
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer
from torch import Tensor

from models.real._build import build, freeze
from models.real._once import once_per_process
from models.transformer import Transformer, TransformerConfig

log = logging.getLogger(__name__)

MODELS_DIR_ENV = "SHAOMAI_MODELS_DIR"


def _rope_theta(hf: dict) -> float:
    """θ from config.json: `rope_theta` (transformers 4) or `rope_parameters` (5)."""
    params = hf.get("rope_parameters") or {}
    scaling = hf.get("rope_scaling") or params
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind not in (None, "default"):
        raise ValueError(f"rope scaling {kind!r} is not supported")
    return float(hf.get("rope_theta") or params.get("rope_theta") or 10000.0)


def qwen3_config(hf: dict, n_ctx: int | None = None) -> TransformerConfig:
    """Our config for a Qwen3 config.json. n_ctx: longest sequence (default
    max_position_embeddings; less keeps RoPE's tables small)."""
    if hf.get("model_type", "qwen3") != "qwen3":
        raise ValueError(f"model_type {hf.get('model_type')!r}: not a Qwen3 checkpoint")
    if hf.get("attention_bias"):
        raise ValueError("attention_bias=True is not supported (Qwen3 has none)")
    if hf.get("use_sliding_window"):
        raise ValueError("sliding-window attention is not supported")
    if hf.get("hidden_act", "silu") != "silu":
        raise ValueError(f"hidden_act {hf['hidden_act']!r}: SwiGLU needs silu")
    d_model, n_heads = hf["hidden_size"], hf["num_attention_heads"]
    return TransformerConfig(
        n_layers=hf["num_hidden_layers"],
        d_model=d_model,
        n_heads=n_heads,
        n_kv_heads=hf.get("num_key_value_heads") or n_heads,
        d_head=hf.get("head_dim") or d_model // n_heads,
        d_ff=hf["intermediate_size"],
        n_ctx=n_ctx or hf.get("max_position_embeddings", 40_960),
        d_vocab=hf["vocab_size"],
        qk_norm=True,
        positional="rope",
        rope_theta=_rope_theta(hf),
        rope_layout="rotate_half",
        norm="rmsnorm",
        norm_eps=hf.get("rms_norm_eps", 1e-6),
        ffn="swiglu",
        bias=False,
        tied_embeddings=bool(hf.get("tie_word_embeddings", False)),
    )


def read_safetensors(folder: Path) -> dict[str, Tensor]:
    """model.safetensors, or every shard model.safetensors.index.json lists."""
    index = folder / "model.safetensors.index.json"
    if index.exists():
        shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        tensors: dict[str, Tensor] = {}
        for shard in shards:
            tensors.update(load_file(folder / shard))
        return tensors
    return load_file(folder / "model.safetensors")


def qwen3_state_dict(
    tensors: dict[str, Tensor], cfg: TransformerConfig, dtype: torch.dtype = torch.float32
) -> dict[str, Tensor]:
    """Hugging Face Qwen3 keys -> ours (q_proj, k_proj, v_proj rows fused into qkv)."""

    def t(key: str) -> Tensor:
        return tensors[key].to(dtype)

    embed = t("model.embed_tokens.weight")
    head = embed if cfg.tied_embeddings or "lm_head.weight" not in tensors else None
    out = {
        "embed.weight": embed,
        "unembed.weight": head if head is not None else t("lm_head.weight"),
        "ln_final.weight": t("model.norm.weight"),
    }
    for i in range(cfg.n_layers):
        src, dst = f"model.layers.{i}.", f"blocks.{i}."
        qkv = [t(f"{src}self_attn.{n}_proj.weight") for n in ("q", "k", "v")]
        out[dst + "attn.qkv.weight"] = torch.cat(qkv, dim=0)
        out[dst + "attn.out.weight"] = t(src + "self_attn.o_proj.weight")
        out[dst + "attn.q_norm.weight"] = t(src + "self_attn.q_norm.weight")
        out[dst + "attn.k_norm.weight"] = t(src + "self_attn.k_norm.weight")
        out[dst + "ln1.weight"] = t(src + "input_layernorm.weight")
        out[dst + "ln2.weight"] = t(src + "post_attention_layernorm.weight")
        out[dst + "mlp.gate.weight"] = t(src + "mlp.gate_proj.weight")
        out[dst + "mlp.fc.weight"] = t(src + "mlp.up_proj.weight")
        out[dst + "mlp.proj.weight"] = t(src + "mlp.down_proj.weight")
    return out


def _load_qwen3(
    folder: Path, n_ctx: int | None, dtype: torch.dtype
) -> tuple[Transformer, Tokenizer]:
    start = time.perf_counter()
    cfg = qwen3_config(json.loads((folder / "config.json").read_text()), n_ctx)
    state = qwen3_state_dict(read_safetensors(folder), cfg, dtype)
    model = freeze(build(Transformer, cfg, state))
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    log.info("Qwen3 %s loaded in %.1f s", folder.name, time.perf_counter() - start)
    return model, tok  # type: ignore[return-value]


_cached = once_per_process(_load_qwen3)


def load_qwen3(
    folder: Path | str, n_ctx: int | None = None, dtype: torch.dtype = torch.float32
) -> tuple[Transformer, Tokenizer]:
    """(model, tokenizer) from a Qwen3 checkpoint folder, once per process per (folder,
    n_ctx, dtype); shared read-only (eval, requires_grad False)."""
    return _cached(Path(folder).resolve(), n_ctx, dtype)


load_qwen3.cache_clear = _cached.cache_clear  # type: ignore[attr-defined]


def models_dir() -> Path | None:
    """The folder named by SHAOMAI_MODELS_DIR, if set."""
    value = os.environ.get(MODELS_DIR_ENV)
    return Path(value).expanduser() if value else None


def find_qwen3_folders(root: Path | None = None) -> list[Path]:
    """Checkpoint folders under root (default: models_dir()) whose config.json says qwen3:
    root itself, or its direct subfolders."""
    root = root if root is not None else models_dir()
    if root is None or not root.is_dir():
        return []
    found = []
    for folder in [root, *sorted(p for p in root.iterdir() if p.is_dir())]:
        cfg = folder / "config.json"
        if not cfg.is_file() or not (folder / "tokenizer.json").is_file():
            continue
        try:
            if json.loads(cfg.read_text()).get("model_type") == "qwen3":
                found.append(folder)
        except (OSError, ValueError):
            continue
    return found
