"""The Transformer family's one frozen config, and the facts it knows about itself.

Every part of the model is a choice here (attention kind and head counts, positions, norm
and its placement, FFN, ...). The facts a lab shows — parameter count, KV-cache bytes per
token, FLOPs per token — are computed from these fields alone, never by building weights,
so a 0.6B-parameter shape (the `qwen3-0.6b` preset) costs nothing to ask about. Tests hold
`param_count()` equal to `sum(p.numel())` of the built model and `kv_bytes_per_token()` equal
to a real cache's bytes after a real decode.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

import torch

from models.transformer.counting import ConfigCounting

AttentionKind = Literal["mha", "mla"]
Positional = Literal["none", "learned", "sinusoidal", "rope", "alibi"]
RopeLayout = Literal["rotate_half", "interleaved"]
NormKind = Literal["layernorm", "rmsnorm"]
NormPlacement = Literal["pre", "post", "sandwich", "olmo2"]
FFNKind = Literal["relu", "gelu", "swiglu", "moe"]
Mixer = Literal["softmax", "linear", "delta", "ssm"]
SparseKind = Literal["dense", "window", "strided", "block"]

_CHOICES = {
    "attention": ("mha", "mla"),
    "positional": ("none", "learned", "sinusoidal", "rope", "alibi"),
    "rope_layout": ("rotate_half", "interleaved"),
    "norm": ("layernorm", "rmsnorm"),
    "norm_placement": ("pre", "post", "sandwich", "olmo2"),
    "ffn": ("relu", "gelu", "swiglu", "moe"),
    "mixer": ("softmax", "linear", "delta", "ssm"),  # token mixers (linear_attention.py, ssm.py)
    "sparse": ("dense", "window", "strided", "block"),
}


@dataclass(frozen=True)
class TransformerConfig(ConfigCounting):
    # The defaults are today's gpt-lab model (the `gpt-nano` preset): 2 layers × 4 heads ×
    # d_model 64 (~100k parameters) learn the synthetic tasks in a few hundred CPU steps and
    # leave room for an induction circuit (it needs 2 layers).
    n_layers: int = 2
    d_model: int = 64
    n_heads: int = 4  # query heads
    n_kv_heads: int = 0  # 0 = n_heads (MHA); a divisor of n_heads below it = GQA; 1 = MQA
    d_head: int = 0  # 0 = d_model // n_heads; Qwen3 sets it apart (16 × 128 ≠ 1024)
    d_ff: int = 0  # FFN hidden width; 0 = 4 · d_model, the GPT-2 ratio (also for SwiGLU)
    n_ctx: int = 32  # longest sequence: rows of the position table and of RoPE's angles
    d_vocab: int = 16
    attention: AttentionKind = "mha"
    # MLA (DeepSeek-V2): K and V are rebuilt per head from a d_c latent, the only thing
    # cached besides one d_rope-wide key part per token that carries RoPE (decoupled RoPE).
    d_c: int = 0  # KV latent width (MLA only; required there)
    d_cq: int = 0  # query latent width; 0 = no query compression
    d_rope: int = 0  # decoupled RoPE key/query dims per head (MLA only)
    # RoPE applied inside the compressed path (to the keys rebuilt from the latent): then
    # W_uk can no longer be absorbed into the query, and `scores_absorbed` stops agreeing.
    mla_rope_in_latent: bool = False
    kv_share: int = 1  # CLA: each group of this many consecutive layers uses its first's K/V
    cross_attention: bool = False  # decoder blocks also attend over an encoder's memory
    causal: bool = True  # False removes the mask: training "cheats" by reading the answer
    qk_norm: bool = False  # normalise q and k per head before RoPE (Qwen3, OLMo-2)
    positional: Positional = "learned"  # GPT-2 adds learned position embeddings
    rope_theta: float = 10000.0  # RoPE base; larger = slower rotations, longer wavelengths
    rope_layout: RopeLayout = "rotate_half"  # pairs j, j+d/2 (Llama, Qwen); or (2i, 2i+1)
    norm: NormKind = "layernorm"
    norm_eps: float = 1e-5  # torch's LayerNorm default; Qwen3 uses 1e-6
    norm_placement: NormPlacement = "pre"  # GPT-2; "post" is the 2017 Transformer's
    ffn: FFNKind = "gelu"
    n_experts: int = 4  # MoE only: routed experts
    top_k: int = 2  # MoE only: experts each token is sent to
    shared_expert: bool = False  # MoE only: one more expert every token passes through
    expert_ffn: int = 0  # MoE only: each expert's SwiGLU width; 0 = d_ff
    balance_coef: float = 0.01  # MoE only: weight of the load-balancing loss (Switch: 0.01)
    dense_layers: int = 0  # MoE only: the first layers keep a dense SwiGLU of d_ff (DeepSeek-V3: 3)
    # The token mixer: softmax attention (attention.py, mla.py), or one with a fixed-size
    # recurrent state instead of a growing cache: linear attention (φ = elu + 1), the delta
    # rule (it overwrites what a key holds), a diagonal SSM (d_state numbers per channel).
    mixer: Mixer = "softmax"
    d_state: int = 8  # SSM only: state numbers per channel (S4D / Mamba: 16)
    # Sparse softmax attention: which earlier keys a query may see, on top of the causal mask.
    # window: the last `window` keys, itself included; strided: those and every key a
    # multiple of `stride` back (Sparse Transformer); block: keys in blocks of `block_size`,
    # each query sees its own block and the `top_blocks` earlier blocks its scores rate best.
    # `sinks` first tokens stay visible to every query (StreamingLLM), with any kind.
    sparse: SparseKind = "dense"
    window: int = 0
    stride: int = 0
    block_size: int = 0
    top_blocks: int = 0
    sinks: int = 0
    bias: bool = True  # biases on linear layers and LayerNorm (GPT-2 yes; Llama/Qwen no)
    tied_embeddings: bool = False  # unembedding = embedding matrix (GPT-2, Qwen3-0.6B: yes)
    dropout: float = 0.0  # synthetic tasks draw fresh samples every step: nothing to overfit
    # BERT's embedding: word + position + token type ("segment A/B"), then a LayerNorm.
    n_token_types: int = 0  # rows of the token-type table; 0 = none (BERT: 2)
    embed_norm: bool = False  # a norm on the summed embeddings before the first block (BERT)

    def __post_init__(self) -> None:
        for name, choices in _CHOICES.items():
            if getattr(self, name) not in choices:
                raise ValueError(f"unknown {name} {getattr(self, name)!r}: one of {choices}")
        for name in ("n_layers", "d_model", "n_heads", "n_ctx", "d_vocab", "kv_share"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        derived = ("n_kv_heads", "d_head", "d_ff", "d_c", "d_cq", "d_rope", "expert_ffn")
        sparse_sizes = ("window", "stride", "block_size", "top_blocks", "sinks")
        for name in (*derived, "n_token_types", "dense_layers", *sparse_sizes):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0 (0 = derived), got {getattr(self, name)}")
        if self.d_head == 0:
            if self.d_model % self.n_heads:
                raise ValueError(f"d_model {self.d_model} not divisible by n_heads {self.n_heads}")
            object.__setattr__(self, "d_head", self.d_model // self.n_heads)
        if self.d_ff == 0:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        if self.n_kv_heads == 0:
            object.__setattr__(self, "n_kv_heads", self.n_heads)
        if self.expert_ffn == 0:
            object.__setattr__(self, "expert_ffn", self.d_ff)
        if self.n_heads % self.n_kv_heads or self.n_kv_heads > self.n_heads:
            raise ValueError(
                f"n_kv_heads {self.n_kv_heads} must divide n_heads {self.n_heads}: "
                "each key/value head serves a whole group of query heads"
            )
        self._check_attention()
        self._check_mixer()
        if self.positional == "sinusoidal" and self.d_model % 2:
            raise ValueError("sinusoidal positions need an even d_model")
        if self.ffn == "moe" and not 1 <= self.top_k <= self.n_experts:
            raise ValueError(f"top_k {self.top_k} must be in 1..n_experts ({self.n_experts})")
        if self.dense_layers and (self.ffn != "moe" or self.dense_layers > self.n_layers):
            raise ValueError("dense_layers is MoE's: at most n_layers first layers kept dense")
        self._check_sparse()
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.norm_eps <= 0 or self.rope_theta <= 0:
            raise ValueError("norm_eps and rope_theta must be positive")

    def _check_attention(self) -> None:
        rope = self.positional == "rope"
        if self.attention == "mha":
            if self.d_c or self.d_cq or self.d_rope or self.mla_rope_in_latent:
                raise ValueError(
                    "d_c, d_cq, d_rope and mla_rope_in_latent are MLA's: set attention='mla'"
                )
            if rope and self.d_head % 2:
                raise ValueError("RoPE rotates pairs of features: d_head must be even")
            return
        if self.d_c < 1:
            raise ValueError("MLA needs a KV latent width d_c >= 1")
        if self.n_kv_heads != self.n_heads:
            raise ValueError(
                "MLA rebuilds every query head's own K and V from the latent: leave n_kv_heads 0"
            )
        if self.qk_norm:
            raise ValueError("MLA normalises its latents instead: qk_norm is for attention='mha'")
        if self.mla_rope_in_latent and not rope:
            raise ValueError("mla_rope_in_latent needs positional='rope'")
        if rope and self.d_rope % 2:
            raise ValueError("RoPE rotates pairs of features: d_rope must be even")
        if rope and not self.mla_rope_in_latent and self.d_rope == 0:
            raise ValueError("MLA with RoPE needs d_rope > 0 (or mla_rope_in_latent=True)")
        if self.mla_rope_in_latent and self.d_head % 2:
            raise ValueError("RoPE inside the latent path rotates d_head: it must be even")

    def _check_mixer(self) -> None:
        """A recurrent mixer keeps only a state: nothing that needs every key (or its
        position) at hand, and nothing of softmax attention's own variants."""
        if self.mixer == "softmax":
            return
        refused = {
            "attention='mla'": self.attention != "mha",
            "RoPE or ALiBi positions": self.positional in ("rope", "alibi"),
            "CLA (kv_share > 1)": self.kv_share != 1,
            "cross-attention": self.cross_attention,
            "GQA/MQA (n_kv_heads)": self.n_kv_heads != self.n_heads,
            "qk_norm": self.qk_norm,
            "causal=False": not self.causal,
        }
        bad = [name for name, on in refused.items() if on]
        if bad:
            raise ValueError(f"mixer={self.mixer!r} cannot combine with {', '.join(bad)}")
        if self.d_state < 1:
            raise ValueError(f"d_state must be at least 1, got {self.d_state}")

    def _check_sparse(self) -> None:
        need = {
            "window": ("window",),
            "strided": ("window", "stride"),
            "block": ("block_size", "top_blocks"),
        }
        if self.sparse == "dense":
            if self.window or self.stride or self.block_size or self.top_blocks or self.sinks:
                raise ValueError(
                    "window, stride, block_size, top_blocks and sinks need a sparse kind"
                )
            return
        if self.mixer != "softmax" or not self.causal or self.cross_attention:
            raise ValueError("sparse masks are for causal softmax self-attention")
        for name in need[self.sparse]:
            if getattr(self, name) < 1:
                raise ValueError(f"sparse={self.sparse!r} needs {name} >= 1")
        unused = {"window", "stride", "block_size", "top_blocks"} - set(need[self.sparse])
        for name in sorted(unused):
            if getattr(self, name):
                raise ValueError(f"{name} is not used by sparse={self.sparse!r}: leave it 0")

    def is_dense_ffn(self, layer: int) -> bool:
        """Whether this layer's FFN is dense: every non-MoE model, MoE's first dense_layers."""
        return self.ffn != "moe" or layer < self.dense_layers

    def replace(self, **changes) -> TransformerConfig:
        """A copy with changes, re-deriving the filled-in defaults unless they are given.

        (`dataclasses.replace` would keep the old filled-in values: d_model 64 -> 128 would
        keep d_head 16 and d_ff 256.) A value equal to what 0 would derive counts as derived:
        d_head (d_model // n_heads), d_ff (4·d_model), n_kv_heads (n_heads: MHA stays MHA),
        expert_ffn (d_ff). Values set apart (Qwen3's d_head 128) are kept.
        """
        if self.d_model % self.n_heads == 0 and self.d_head == self.d_model // self.n_heads:
            changes.setdefault("d_head", 0)
        if self.d_ff == 4 * self.d_model:
            changes.setdefault("d_ff", 0)
        if self.n_kv_heads == self.n_heads:
            changes.setdefault("n_kv_heads", 0)
        if self.expert_ffn == self.d_ff:
            changes.setdefault("expert_ffn", 0)
        return dataclasses.replace(self, **changes)

    # -- layout ----------------------------------------------------------------------------
    def kv_owner(self, layer: int) -> int:
        """The layer whose K/V this layer attends with (itself unless CLA shares them)."""
        return layer - layer % self.kv_share

    def owns_kv(self, layer: int) -> bool:
        return layer % self.kv_share == 0

    @property
    def n_kv_layers(self) -> int:
        """Layers that compute and cache their own K/V."""
        return math.ceil(self.n_layers / self.kv_share)

    @property
    def d_inner(self) -> int:
        """SSM channels (expansion 1: one per model feature)."""
        return self.d_model

    @property
    def has_final_norm(self) -> bool:
        """Post-norm blocks end normalised already: no final norm (BERT, 2017)."""
        return self.norm_placement != "post"

    # -- facts -----------------------------------------------------------------------------
    def param_count(self) -> int:
        """Exact number of parameters of `Transformer(self)`, from the config alone."""
        d, V = self.d_model, self.d_vocab
        n = V * d + (self.n_ctx * d if self.positional == "learned" else 0)
        n += self.n_token_types * d + (self._norm_params(d) if self.embed_norm else 0)
        for layer in range(self.n_layers):
            n += self._attn_params(self.owns_kv(layer))
            n += self._ffn_params(layer)
            n += self._norms_per_block() * self._norm_params(d)
            if self.cross_attention:
                n += self._linear(d, self.n_heads * self.d_head)  # cross q
                n += self._linear(d, 2 * self.n_kv_heads * self.d_head)  # cross k, v
                n += self._linear(self.n_heads * self.d_head, d)  # cross out
                n += self._qk_norm_params()
        n += self._norm_params(d) if self.has_final_norm else 0
        return n + (0 if self.tied_embeddings else V * d)  # unembedding: never a bias

    def active_param_count(self) -> int:
        """Parameters one token's forward pass uses: an MoE layer counts only its top_k
        routed experts (plus the shared one and the router), the rest as `param_count`."""
        if self.ffn != "moe":
            return self.param_count()
        unused = (self.n_experts - self.top_k) * self._swiglu(self.expert_ffn)
        return self.param_count() - (self.n_layers - self.dense_layers) * unused

    def kv_cache_numbers_per_token_per_layer(self) -> int:
        """Numbers one layer that owns a cache keeps per token: 2·n_kv_heads·d_head for
        MHA/GQA/MQA (K and V), d_c + d_rope for MLA (the latent and the shared RoPE key);
        0 for a recurrent mixer (its state does not grow: `state_bytes_per_sequence`)."""
        if self.mixer != "softmax":
            return 0
        if self.attention == "mla":
            return self.d_c + self.d_rope
        return 2 * self.n_kv_heads * self.d_head

    def kv_bytes_per_token(self, dtype: torch.dtype | int = torch.float32) -> int:
        """Bytes the KV cache holds per token over all layers (CLA: only layers owning K/V).

        dtype is a torch dtype or bytes per number. Cross-attention K/V grow with the
        encoder's memory, not with generated tokens: not counted.
        """
        size = dtype if isinstance(dtype, int) else dtype.itemsize
        return self.n_kv_layers * self.kv_cache_numbers_per_token_per_layer() * size

    def state_numbers_per_layer(self) -> int:
        """Numbers a recurrent mixer keeps per sequence and layer, whatever the length:
        linear attention S [d_head, d_head] and z [d_head] per head; the delta rule S per
        head; the SSM d_state per channel. Softmax attention keeps none (its cache grows)."""
        H, dh = self.n_heads, self.d_head
        return {
            "softmax": 0,
            "linear": H * dh * (dh + 1),
            "delta": H * dh * dh,
            "ssm": self.d_inner * self.d_state,
        }[self.mixer]

    def state_bytes_per_sequence(self, dtype: torch.dtype | int = torch.float32) -> int:
        """Bytes of a recurrent mixer's state over all layers, for one sequence of any length
        (tests hold it equal to a real decode's `StateCache.nbytes`)."""
        size = dtype if isinstance(dtype, int) else dtype.itemsize
        return self.n_layers * self.state_numbers_per_layer() * size

    def kv_cache_bytes(
        self, tokens: int, batch: int = 1, dtype: torch.dtype | int = torch.float32
    ) -> int:
        """Bytes of a whole KV cache: `batch` sequences of `tokens` tokens each."""
        return self.kv_bytes_per_token(dtype) * tokens * batch

    def flops_per_token(self, context: int, memory: int = 0) -> int:
        """Forward FLOPs (multiply-adds × 2) for one token attending to `context` keys
        (itself included) and, with cross-attention, to `memory` encoder positions.

        Counts the matmuls: every weight the token passes through (projections, FFN —
        MoE: the active experts and the router —, unembedding even when tied) plus q·k and
        pattern·v. Norms, softmax, RoPE and embedding lookups are negligible. MLA's K/V
        reconstruction from cached latents is not counted (the absorbed form avoids it).
        """
        d, H, dh = self.d_model, self.n_heads, self.d_head
        weights = 0
        for layer in range(self.n_layers):
            weights += self._attn_matmul_weights(self.owns_kv(layer))
            weights += self._ffn_matmul_weights(layer)
            if self.cross_attention:
                weights += 2 * d * H * dh  # q and out; K/V are computed once per memory row
        weights += d * self.d_vocab
        q_k = dh + (self.d_rope if self.attention == "mla" else 0)
        attn = 2 * H * (q_k + dh) * context if self.mixer == "softmax" else self._state_flops()
        cross = 2 * H * 2 * dh * memory if self.cross_attention else 0
        return 2 * weights + self.n_layers * (attn + cross)
