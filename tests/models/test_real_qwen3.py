"""Qwen3 loader: a tiny random checkpoint in the real format, checked against transformers.

No Qwen3 weights ship in a package, so each test writes a small random Qwen3 with
transformers' own Qwen3ForCausalLM.save_pretrained (config.json, model.safetensors) plus a
tiny tokenizer.json made with `tokenizers`, then compares our logits with transformers' on
that folder. The shape keeps what matters: GQA (4 query / 2 KV heads), d_head 24 ≠ d_model 64
/ 4, QK-norm, RoPE θ 1e6, RMSNorm ε 1e-6, tied or separate head. Every norm weight is
randomised too (they start at 1, which would hide a missing or misplaced norm).
"""

from __future__ import annotations

import json
import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402

from models.real.qwen3 import find_qwen3_folders, load_qwen3, qwen3_config  # noqa: E402

WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "ran",
    "fast",
    "slow",
    "big",
    "small",
    "red",
    "blue",
    "green",
    "one",
    "two",
    "three",
]
VOCAB = 64


def write_checkpoint(folder, tied: bool, seed: int = 0):
    torch.manual_seed(seed)
    cfg = transformers.Qwen3Config(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=24,
        max_position_embeddings=128,
        rms_norm_eps=1e-6,
        rope_theta=1_000_000.0,
        tie_word_embeddings=tied,
    )
    ref = transformers.Qwen3ForCausalLM(cfg).eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn_like(p) * 0.3 + (1.0 if p.dim() == 1 else 0.0))
    ref.save_pretrained(folder)
    vocab = {"[UNK]": 0, **{w: i + 1 for i, w in enumerate(WORDS)}}
    vocab.update({f"w{i}": i for i in range(len(vocab), VOCAB)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    return ref


@pytest.fixture(scope="module", params=[True, False], ids=["tied", "untied"])
def pair(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tied" if request.param else "untied")
    ref = write_checkpoint(folder, tied=request.param)
    model, tok = load_qwen3(folder)
    return ref, model, tok, folder, request.param


def test_the_folder_is_in_the_real_format(pair):
    _, _, _, folder, tied = pair
    names = {p.name for p in folder.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= names
    from safetensors import safe_open

    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        keys = set(f.keys())
    assert ("lm_head.weight" in keys) is not tied
    assert "model.layers.0.self_attn.q_norm.weight" in keys


def test_config_and_parameter_count(pair):
    ref, model, _, folder, tied = pair
    cfg = qwen3_config(json.loads((folder / "config.json").read_text()))
    assert cfg == model.cfg
    assert (cfg.d_head, cfg.n_kv_heads, cfg.rope_theta, cfg.norm_eps) == (24, 2, 1e6, 1e-6)
    assert cfg.tied_embeddings is tied
    assert (model.unembed.weight is model.embed.weight) is tied
    n = sum(p.numel() for p in model.parameters())
    assert n == cfg.param_count() == sum(p.numel() for p in ref.parameters())


def test_logits_equal_transformers(pair):
    ref, model, tok, _, _ = pair
    ids = torch.tensor([tok.encode("the cat sat on the mat and ran fast").ids, list(range(9))])
    with torch.no_grad():
        want = ref(input_ids=ids).logits
    got = model(ids)
    assert got.shape == want.shape == (2, 9, VOCAB)
    assert (got - want).abs().max().item() < 1e-4


def test_cache_decode_equals_transformers(pair):
    ref, model, _, _, _ = pair
    ids = torch.randint(0, VOCAB, (1, 12), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = ref(input_ids=ids).logits
        cache = model.new_cache()
        steps = [model(ids[:, :8], cache)] + [model(ids[:, t : t + 1], cache) for t in range(8, 12)]
    got = torch.cat(steps, dim=1)
    assert (got - want).abs().max().item() < 1e-4
    assert cache.nbytes == 12 * model.cfg.kv_bytes_per_token(torch.float32)


def test_loaded_once_shared_and_frozen(pair):
    _, model, tok, folder, _ = pair
    again, tok2 = load_qwen3(str(folder))
    assert again is model and tok2 is tok
    assert not model.training
    assert not any(p.requires_grad for p in model.parameters())


def test_find_folders(pair, monkeypatch):
    folder = pair[3]
    monkeypatch.setenv("SHAOMAI_MODELS_DIR", str(folder.parent))
    assert folder in find_qwen3_folders()
    monkeypatch.delenv("SHAOMAI_MODELS_DIR")
    assert find_qwen3_folders() == []


# Qwen3-0.6B's config.json as published (transformers 4.51 format), no weights needed.
QWEN3_0_6B = {
    "architectures": ["Qwen3ForCausalLM"],
    "attention_bias": False,
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 1024,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "max_position_embeddings": 40960,
    "max_window_layers": 28,
    "model_type": "qwen3",
    "num_attention_heads": 16,
    "num_hidden_layers": 28,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06,
    "rope_scaling": None,
    "rope_theta": 1000000,
    "sliding_window": None,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 151936,
}


def test_the_real_qwen3_config_is_the_preset():
    from models.transformer import preset

    cfg = qwen3_config(QWEN3_0_6B)
    assert cfg == preset("qwen3-0.6b")
    assert cfg.param_count() == 596_049_920
    assert cfg.kv_bytes_per_token(torch.bfloat16) == 112 * 1024
    v5 = {k: v for k, v in QWEN3_0_6B.items() if k not in ("rope_theta", "rope_scaling")}
    v5["rope_parameters"] = {"rope_type": "default", "rope_theta": 1_000_000.0}
    assert qwen3_config(v5) == cfg  # transformers 5 writes θ under rope_parameters


@pytest.mark.parametrize(
    "change",
    [
        {"model_type": "llama"},
        {"attention_bias": True},
        {"use_sliding_window": True},
        {"rope_scaling": {"rope_type": "yarn", "factor": 4.0}},
    ],
)
def test_unsupported_checkpoints_are_refused(change):
    with pytest.raises(ValueError):
        qwen3_config({**QWEN3_0_6B, **change})
