"""Lab `kv-cache`: what a decoder's KV cache costs, on the Qwen3-0.6B shape, computed and measured.

Bytes per token = 2 (K and V) × layers × KV heads × d_head × bytes per number; MLA caches
one latent of d_c numbers plus a shared RoPE key of d_rope numbers a layer instead. Every
figure comes from the config's own methods (`TransformerConfig.kv_bytes_per_token`,
`kv_cache_numbers_per_token_per_layer`, `param_count`): the lab multiplies by tokens and
batch, the view formats. Beside them, the lab decodes live, one token a step, with four
miniatures (MHA, GQA, MQA, MLA) whose caches have exactly the chosen shape's width (layers,
KV heads, d_head, d_c, d_rope) on a tiny residual stream, so `cache.nbytes / tokens` after a
real decode is the same number the config computed. Their weights are random: the tokens
they write are noise, the bytes their caches hold are not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch
from pydantic import ValidationInfo, field_validator

from backend.labs import register
from backend.labs.base import Frame, Lab, LabParams, TensorOut, param, refuse
from models.transformer import Transformer, TransformerConfig, preset

PRESET = "qwen3-0.6b"
BASE: TransformerConfig = preset(PRESET)
DTYPES: dict[str, torch.dtype] = {
    "bf16": torch.bfloat16,
    "f16": torch.float16,
    "f32": torch.float32,
}
ARMS = ("mha", "gqa", "mqa", "mla")
# The miniatures: the cache's width is the chosen shape's; everything the cache does not
# depend on is tiny (residual width, FFN, vocabulary), so 28 layers of 2,048-wide K/V decode
# in a few ms a token. MLA's cache holds d_c + d_rope numbers whatever d_head is: its
# miniature's heads are MINI_MLA_HEAD wide (its up-projections would be 4 M numbers a layer).
MINI_D, MINI_FF, MINI_VOCAB, MINI_MLA_HEAD = 16, 32, 32, 8
PROMPT, NEW_TOKENS = 4, 60  # the live decode: a random prompt, then one token a step
ARTICLE = (50, 1000)
PICTURE_COLS = 256  # the widest arm's cache picture: columns of pooled numbers  # the article's batch: 50 sequences of 1,000 tokens


class Params(LabParams):
    n_layers: int = param(BASE.n_layers, zh="层数", en="Layers", ge=1, le=64)
    n_heads: int = param(BASE.n_heads, zh="查询头数", en="Query heads", ge=1, le=64)
    n_kv_heads: int = param(
        BASE.n_kv_heads,
        zh="KV 头数（GQA）",
        en="KV heads (GQA)",
        ge=1,
        le=64,
        validate_default=True,
    )
    d_head: int = param(
        BASE.d_head, zh="每头维度 d_head", en="Head size d_head", ge=16, le=256, step=16
    )
    d_c: int = param(512, zh="MLA 潜向量维度 d_c", en="MLA latent d_c", ge=32, le=1024, step=32)
    d_rope: int = param(
        64, zh="MLA 的 RoPE 维度 d_rope", en="MLA RoPE part d_rope", ge=16, le=128, step=16
    )
    dtype: Literal["bf16", "f16", "f32"] = param(
        "bf16",
        zh="数值类型",
        en="Number type",
        choices={
            "bf16": ("bf16（2 字节）", "bf16 (2 bytes)"),
            "f16": ("fp16（2 字节）", "fp16 (2 bytes)"),
            "f32": ("fp32（4 字节）", "fp32 (4 bytes)"),
        },
    )
    length: int = param(
        1000,
        zh="每条序列的 token 数",
        en="Tokens per sequence",
        ge=1,
        le=1_048_576,
        scale="log",
        live=True,
    )
    batch: int = param(
        50,
        zh="批大小（同时解码的序列）",
        en="Batch (sequences at once)",
        ge=1,
        le=1024,
        scale="log",
        live=True,
    )
    decode_batch: int = param(
        1, zh="现场解码的序列数", en="Sequences in the live decode", ge=1, le=8
    )

    @field_validator("n_kv_heads")
    @classmethod
    def _kv_heads_divide_heads(cls, kv: int, info: ValidationInfo) -> int:
        heads = info.data.get("n_heads")
        if heads and heads % kv:
            raise refuse(
                "err.p_kv_groups",
                "{heads} query heads do not split into groups of {kv} KV heads",
                heads=heads,
                kv=kv,
            )
        return kv


SHAPE_FIELDS = {
    k: f
    for k, f in Params.model_fields.items()
    if k in ("n_layers", "n_heads", "n_kv_heads", "d_head")
}


def shapes(p: Params) -> dict[str, TransformerConfig]:
    """The four attention layouts of the chosen shape (the rest is Qwen3-0.6B's)."""
    base = BASE.replace(n_layers=p.n_layers, n_heads=p.n_heads, d_head=p.d_head)
    return {
        "mha": base.replace(n_kv_heads=p.n_heads),
        "gqa": base.replace(n_kv_heads=p.n_kv_heads),
        "mqa": base.replace(n_kv_heads=1),
        "mla": base.replace(
            attention="mla", n_kv_heads=p.n_heads, d_c=p.d_c, d_rope=p.d_rope, qk_norm=False
        ),
    }


def miniature(cfg: TransformerConfig) -> TransformerConfig:
    """The same cache width on a tiny model (see MINI_* above)."""
    small = {
        "d_model": MINI_D,
        "d_ff": MINI_FF,
        "d_vocab": MINI_VOCAB,
        "n_ctx": PROMPT + NEW_TOKENS,
    }
    if cfg.attention == "mla":
        small["d_head"] = MINI_MLA_HEAD
    return cfg.replace(**small)


@dataclass
class _Live:
    """One miniature decoding: its model, its cache, the tokens so far."""

    model: Transformer
    cache: Any
    last: torch.Tensor  # [B, 1] the newest token of every sequence

    def measured(self) -> dict[str, float]:
        rows, batch = self.cache.rows, self.last.shape[0]
        nbytes = self.cache.nbytes
        return {
            "rows": rows,
            "nbytes": nbytes,
            "per_token": nbytes / (rows * batch) if rows else 0.0,
        }


@register
class KVCacheLab(Lab):
    id = "kv-cache"
    chapter = 7
    order = 1
    title = {"zh": "KV 缓存：每个 token 占多少字节", "en": "The KV cache: bytes per token"}
    description = {
        "zh": "在 Qwen3-0.6B 的形状上算 KV 缓存：MHA 每个 token 224 KiB，真实的 GQA-8 是 112 KiB"
        "（40,960 个 token 4.375 GiB），MQA 14 KiB，MLA 31.5 KiB。拖动层数、头数、长度、批大小、"
        "数值类型，再按播放：四个小模型逐 token 解码，缓存真实占用的字节和算出来的一样。",
        "en": "The KV cache on the Qwen3-0.6B shape: MHA 224 KiB a token, the real GQA-8 112 KiB "
        "(4.375 GiB at 40,960 tokens), MQA 14 KiB, MLA 31.5 KiB. Drag layers, heads, length, "
        "batch and number type, then press play: four small models decode token by token and "
        "their caches hold exactly the bytes computed.",
    }
    Params = Params
    trains = False
    tensors = ("cache.*",)

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.shapes = shapes(params)
        self.dtype = DTYPES[params.dtype]
        self.gen = torch.Generator().manual_seed(seed)
        self.t = 0
        widest = max(c.kv_cache_numbers_per_token_per_layer() for c in self.shapes.values())
        self.pool = -(-widest // PICTURE_COLS)  # numbers a picture column stands for
        self.live: dict[str, _Live] = {}
        prompt = torch.randint(0, MINI_VOCAB, (params.decode_batch, PROMPT), generator=self.gen)
        for arm, cfg in self.shapes.items():
            torch.manual_seed(seed)
            # CPU: a few million numbers, a token at a time; the session's device adds nothing.
            model = Transformer(miniature(cfg)).to(self.dtype).eval()
            cache = model.new_cache()
            with torch.inference_mode():
                logits = model(prompt, cache)  # prefill: PROMPT rows
            self.live[arm] = _Live(model, cache, logits[:, -1:].argmax(-1))

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """The four miniatures' weights (built in f32, then cast) and their full caches."""
        total = 0
        for cfg in shapes(p).values():
            mini = miniature(cfg)
            total += mini.param_count() * 4
            total += mini.kv_cache_bytes(mini.n_ctx, p.decode_batch, 4)
        return total / 2**20 + 1.0, "n_layers"

    def max_steps(self) -> int:
        return NEW_TOKENS

    @torch.inference_mode()
    def step(self, capture: bool) -> Frame:
        for live in self.live.values():
            logits = live.model(live.last, live.cache)  # [B, 1, V]: one new row a layer
            live.last = logits[:, -1:].argmax(-1)  # greedy: the weights are random anyway
        self.t += 1
        return self._frame(capture)

    def snapshot(self) -> Frame:
        return self._frame(True)

    def _figures(self) -> dict[str, dict[str, Any]]:
        """Every number the page prints, from each layout's config."""
        p, out = self.params, {}
        gqa = self.shapes["gqa"].kv_bytes_per_token(self.dtype)
        for arm, cfg in self.shapes.items():
            per_token = cfg.kv_bytes_per_token(self.dtype)
            out[arm] = {
                "n_kv_heads": cfg.n_kv_heads if cfg.attention != "mla" else None,
                "numbers_per_layer": cfg.kv_cache_numbers_per_token_per_layer(),
                "bytes_per_token": per_token,
                "per_sequence": cfg.kv_cache_bytes(p.length, 1, self.dtype),
                "batch_total": cfg.kv_cache_bytes(p.length, p.batch, self.dtype),
                "full_context": cfg.kv_cache_bytes(cfg.n_ctx, 1, self.dtype),
                "article": cfg.kv_cache_bytes(ARTICLE[1], ARTICLE[0], self.dtype),
                "vs_gqa": per_token / gqa,
            }
        return out

    def _frame(self, capture: bool) -> Frame:
        measured = {arm: live.measured() for arm, live in self.live.items()}
        scalars: dict[str, float] = {"rows": measured["gqa"]["rows"]}
        for arm, m in measured.items():
            scalars[f"cache_bytes.{arm}"] = m["nbytes"]
            scalars[f"bytes_per_token.{arm}"] = m["per_token"]
        frame = Frame(scalars=scalars)
        if not capture:
            return frame
        p, gqa = self.params, self.shapes["gqa"]
        minis = {arm: live.model.cfg for arm, live in self.live.items()}
        frame.meta = {
            "preset": PRESET,
            "changed": any(getattr(p, k) != f.default for k, f in SHAPE_FIELDS.items()),
            "dtype": p.dtype,
            "bytes_per_number": torch.empty((), dtype=self.dtype).element_size(),
            "n_layers": gqa.n_layers,
            "n_heads": gqa.n_heads,
            "n_kv_heads": gqa.n_kv_heads,
            "d_head": gqa.d_head,
            "d_c": p.d_c,
            "d_rope": p.d_rope,
            "length": p.length,
            "batch": p.batch,
            "n_ctx": gqa.n_ctx,
            "article": {"batch": ARTICLE[0], "length": ARTICLE[1]},
            "param_count": gqa.param_count(),
            "figures": self._figures(),
            "live": {
                arm: {
                    **measured[arm],
                    "batch": p.decode_batch,
                    "config_per_token": minis[arm].kv_bytes_per_token(self.dtype),
                    "d_model": minis[arm].d_model,
                    "d_head": minis[arm].d_head,
                    "param_count": minis[arm].param_count(),
                }
                for arm in ARMS
            },
            "max_rows": PROMPT + NEW_TOKENS,
            "prompt": PROMPT,
        }
        frame.tensors = self._cache_pictures()
        frame.meta["picture_pool"] = self.pool
        return frame

    def _cache_pictures(self) -> list[TensorOut]:
        """Layer 0's cache of the first sequence, as it is: one row a cached token, its
        numbers (K then V; MLA: the latent then the RoPE key) pooled in groups of
        `self.pool` by mean |value|, so every arm's picture has the same scale: its width is
        its numbers per token. Each part is scaled to its own largest value (V's numbers are
        far smaller than QK-normed keys). Each `cache.<arm>` is u8 [rows, numbers / pool]."""
        out = []
        for arm, live in self.live.items():
            entry = live.cache.entries[0]
            if arm == "mla":  # (latent [B, T, d_c], RoPE key [B, T, d_rope])
                parts = [t[0] for t in entry]
            else:  # (k, v), each [B, H_kv, T, d_head]
                parts = [t[0].transpose(0, 1).flatten(1) for t in entry]  # [T, H_kv·d_head]
            pooled = []
            for part in parts:
                rows, n = part.shape
                part = torch.nn.functional.pad(part.float().abs(), (0, -n % self.pool))
                part = part.view(rows, -1, self.pool).mean(-1)  # [T, ceil(n / pool)]
                pooled.append(part / part.max().clamp_min(1e-12))
            out.append(TensorOut(f"cache.{arm}", torch.cat(pooled, dim=-1), "u8"))
        return out

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t}  # the weights and the prompt come from the seed

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Replay the decode up to the saved step (greedy: the same tokens, the same rows)."""
        while self.t < state["t"]:
            self.step(False)
