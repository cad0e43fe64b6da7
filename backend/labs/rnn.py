"""Lab `rnn`: a character RNN trained live on a bundled story or pasted text.

One arm of the trainer (models/char_rnn.py: embedding -> plain RNN -> linear to vocab),
trained with Adam on random windows of the text's first 90%, the last 10% held out.
Clipping (on by default, max_norm 5.0) is the engine's: its coefficient streams as
`clip_coef`; `grad_total` (every step) is the gradient's own norm before clipping, so the
clip-off run shows what the coefficient would have been.

Every step: `loss` (nats/char), `grad_total`, `clip_coef` (clip on), the stage norms. Every
EVAL_EVERY steps: `val_loss` and a sample of SAMPLE_LEN characters (sampled at T = 1 from
a generator seeded by the step), scalar `memorised` = its longest span found verbatim in
the training text. A sent frame carries `hidden` [H, T] (h_t over the text's first
characters, u8), `next` (the most likely characters after them), `h_norm`, `bptt` and
`bptt_bound` [window] (models/char_rnn.bptt on fixed windows), `derivs` [3, N] (sigmoid′,
tanh′, ReLU′ by autograd), and in meta the norm example (models/norm_examples.py), the
sample, ‖W_hh‖₂ and the recipe's memorisation threshold.

`infer` (Generate): a prompt, greedy or sampled at a temperature, from the learner's seed:
the generated text, every step's hidden state and top characters, and the meter's span.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

import torch
from pydantic import Field, ValidationInfo, field_validator

from backend.labs import register
from backend.labs.base import (
    Frame,
    LabError,
    LabInput,
    LabParams,
    TensorOut,
    activation_param,
    param,
)
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.char_rnn import (
    MEMORISATION_NATS,
    RECIPE,
    CharRNN,
    CharRNNConfig,
    bptt,
    generate,
    longest_verbatim,
)
from models.data.texts import (
    MAX_PASTED_BYTES,
    check_pasted,
    check_pasted_size,
    lm_batch,
    load_text,
    split,
)
from models.data.tokenizers import CharTokenizer
from models.norm_examples import derivative_curves, norm_example

MIN_PASTED_CHARS = 200  # a window of 32 and a held-out tail of 10% need some text
EVAL_EVERY = 25
SAMPLE_LEN = 160
HEAT_T = 48  # characters the hidden-state heatmap spans
TOP_K = 8
N_PROBE = 16  # fixed windows the BPTT picture averages over
MAX_GEN = 300
TEXTS = {"en": ("英文小故事", "The English story"), "zh": ("中文小故事", "The Chinese story")}


class Params(LabParams):
    text: Literal["en", "zh", "pasted"] = param(
        "en",
        zh="训练文本",
        en="Training text",
        choices={**TEXTS, "pasted": ("我粘贴的文字", "My pasted text")},
    )
    pasted: str = param(
        "",
        zh=f"你的文字（至少 {MIN_PASTED_CHARS} 字、最多 200 KB）",
        en=f"Your text (at least {MIN_PASTED_CHARS} characters, at most 200 KB)",
        max_length=MAX_PASTED_BYTES,
        show_if={"text": "pasted"},
    )
    d_hidden: int = param(64, zh="隐藏状态维度", en="Hidden size", ge=8, le=256, step=8)
    activation: Literal["tanh", "relu", "sigmoid"] = activation_param(
        "tanh", ("tanh", "relu", "sigmoid")
    )
    whh_scale: float = param(
        1.0, zh="W_hh 初始化倍数", en="W_hh init scale", ge=0.1, le=3.0, step=0.05
    )
    window: int = param(32, zh="窗口长度（BPTT 步数）", en="Window (BPTT steps)", ge=8, le=128)
    batch: int = param(32, zh="批大小", en="Batch size", ge=4, le=256, live=True)
    lr: float = param(
        3e-3,
        zh="学习率（Adam）",
        en="Learning rate (Adam)",
        ge=1e-5,
        le=0.1,
        scale="log",
        live=True,
    )
    clip: bool = param(True, zh="梯度裁剪", en="Gradient clipping", live=True)
    max_norm: float = param(
        5.0, zh="裁剪阈值 max_norm", en="Clip max_norm", ge=0.1, le=100.0, scale="log",
        live=True, show_if={"clip": True},
    )  # fmt: skip

    @field_validator("pasted", mode="before")
    @classmethod
    def _pasted_fits(cls, text: Any, info: ValidationInfo) -> Any:
        return check_pasted_size(text) if isinstance(text, str) else text


class Generate(LabInput):
    prompt: str = Field("The ", max_length=64)
    mode: Literal["greedy", "sample"] = "sample"
    temperature: float = Field(0.8, ge=0.05, le=3.0)
    length: int = Field(120, ge=1, le=MAX_GEN)
    seed: int = Field(0, ge=0, le=2**31 - 1)


@lru_cache(maxsize=4)
def _tokenizer(text: str) -> CharTokenizer:
    return CharTokenizer(text)


@lru_cache(maxsize=1)
def _static() -> tuple[dict, dict]:
    return norm_example(), derivative_curves()


@register
class RNNLab(TrainingLab):
    id = "rnn"
    chapter = 5
    order = 1
    title = {"zh": "字符级 RNN", "en": "A character RNN"}
    description = {
        "zh": "h = tanh(x·Wxh + h·Whh + b) 逐字学一段文字：隐藏状态、下一个字的候选、贪心与采样、"
        "背诵检测；W_hh 的尺度与激活函数如何让 ‖h_t‖ 和沿时间反传的梯度爆炸或消失；梯度裁剪用的是哪种范数。",
        "en": "h = tanh(x·Wxh + h·Whh + b) learns a text one character at a time: its hidden "
        "state, the next-character candidates, greedy vs sampling, a memorisation meter; how "
        "W_hh's scale and the activation make ‖h_t‖ and the gradient through time explode or "
        "vanish; which norm gradient clipping uses.",
    }
    Params = Params
    Input = Generate
    tensors = ("hidden", "next", "h_norm", "bptt", "bptt_bound", "derivs", "grad_norm")
    eval_every = EVAL_EVERY

    @property
    def clip_norm(self) -> float | None:
        return self.params.max_norm if self.params.clip else None

    # -- data -------------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        if p.text == "pasted":
            text = p.pasted
            if len(text.strip()) < MIN_PASTED_CHARS:
                raise LabError(
                    f"paste at least {MIN_PASTED_CHARS} characters to train on",
                    field="pasted",
                    key="rnn.err_too_short",
                    values={"n": len(text.strip()), "min": MIN_PASTED_CHARS},
                )
            try:
                check_pasted(text)
            except ValueError as exc:
                raise LabError(str(exc), field="pasted", key="rnn.err_distinct") from None
        else:
            text = load_text(p.text)
        self.tok = _tokenizer(text)
        ids = torch.tensor(self.tok.encode(text), dtype=torch.long)
        self.train_ids, self.val_ids = split(ids)
        self.train_text = text[: len(self.train_ids)]  # one character, one id
        if len(self.train_ids) < p.window + 1:
            raise LabError(
                f"the text is shorter than a window of {p.window + 1} characters",
                field="window",
                key="rnn.err_window",
                values={"n": len(self.train_ids), "window": p.window},
            )
        # Fixed windows, evenly spaced: the BPTT picture compares like with like over time.
        starts = torch.linspace(0, len(self.train_ids) - p.window - 1, N_PROBE).long()
        win = self.train_ids[starts[:, None] + torch.arange(p.window + 1)]  # [N, window + 1]
        self.probe_x, self.probe_y = win[:, :-1], win[:, 1:]
        self.heat_ids = self.train_ids[: min(HEAT_T, len(self.train_ids))]
        # Held-out windows over the tail (as long as it allows), for val_loss.
        n_val = min(p.window, len(self.val_ids) - 1)
        self.val = None
        if n_val >= 4:
            vs = torch.arange(0, len(self.val_ids) - n_val, max(1, n_val // 2))[:64]
            w = self.val_ids[vs[:, None] + torch.arange(n_val + 1)]  # [N, n_val + 1]
            self.val = (w[:, :-1], w[:, 1:])
        self.sample: dict[str, Any] | None = None

    def cfg(self) -> CharRNNConfig:
        p = self.params
        return CharRNNConfig(
            self.tok.vocab_size, d_hidden=p.d_hidden, activation=p.activation, whh_scale=p.whh_scale
        )

    def arms(self) -> list[ArmSpec]:
        cfg = self.cfg()
        return [
            ArmSpec("rnn", lambda: CharRNN(cfg), OptimConfig("adam", lr=self.params.lr), self.seed)
        ]

    def batch(self, gen: torch.Generator):
        return lm_batch(self.train_ids, self.params.batch, self.params.window, gen)

    def loss(self, arm: Arm, batch):
        return arm.model.loss(*batch)

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        if batch is None or not arm.grad_norms:
            return {}
        # The stage norms are the gradient's own, before clipping: their 2-norm is the total.
        return {"grad_total": float(torch.tensor(arm.grad_norms).norm())}

    def evaluate(self, arm: Arm) -> dict[str, float]:
        out: dict[str, float] = {}
        model = arm.model
        if self.val is not None:
            with torch.no_grad():
                out["val_loss"] = float(model.loss(*self.val))
        self.sample = self._sample(model)
        out["memorised"] = float(self.sample["span"][0])
        return out

    def _sample(self, model: CharRNN) -> dict[str, Any]:
        gen = torch.Generator().manual_seed(self.seed * 7919 + self.t)
        prompt = self.tok.encode(self.train_text[0])
        steps = generate(model, prompt, SAMPLE_LEN, 1.0, gen)
        text = self.tok.decode([s.char for s in steps])
        return {"step": self.t, "text": text, "span": list(longest_verbatim(text, self.train_text))}

    # -- the picture ------------------------------------------------------------------------
    def frame_meta(self) -> dict[str, Any]:
        if self.sample is None:  # a fork or a fresh run: the sample of the weights as they are
            self.sample = self._sample(self.model)
        norms, derivs = _static()
        return {
            "n_params": self.model.cfg.param_count(),
            "vocab_size": self.tok.vocab_size,
            "n_train": len(self.train_ids),
            "threshold": MEMORISATION_NATS,
            "recipe": RECIPE,
            "sample": self.sample,
            "norms": norms,
            "derivs_x": [derivs["x"][0], derivs["x"][-1]],
            "derivs_max": derivs["max"],
            "heat_chars": list(self.train_text[: len(self.heat_ids)]),
            "activation": self.params.activation,
        }

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        model = arm.model
        hs, probs = model.hidden_states(self.heat_ids)  # [T, H], [V]
        top_p, top_i = probs.topk(min(TOP_K, len(probs)))
        through = bptt(model, self.probe_x, self.probe_y)
        _, derivs = _static()
        curves = torch.tensor([derivs["curves"][k] for k in ("sigmoid", "tanh", "relu")])
        tensors = [
            TensorOut("hidden", hs.T.contiguous(), "u8"),  # [H, T]: units down, time across
            TensorOut("next", top_p, "f32", [self.tok.id_to_piece(i) for i in top_i.tolist()]),
            TensorOut("h_norm", through["h_norm"], "f32"),
            TensorOut("bptt", through["grad_norm"], "f32"),
            TensorOut("bptt_bound", through["bound"], "f32"),
            TensorOut("derivs", curves, "f32", ["sigmoid", "tanh", "relu"]),
        ]
        if arm.grad_norms:
            tensors.append(arm.grad_norm_tensor())
        return tensors, {"whh_spectral": through["whh_spectral"], "rate": through["rate"]}

    # -- generation -------------------------------------------------------------------------
    def answer(self, inp: Generate):
        if not inp.prompt:
            raise LabError("the prompt is empty", field="input.prompt", key="rnn.err_empty")
        unknown = [c for c in inp.prompt if self.tok.encode(c) == [0]]
        if unknown:
            raise LabError(
                f"{unknown[0]!r} is not in the training text",
                field="input.prompt",
                key="rnn.err_unknown",
                values={"char": unknown[0]},
            )
        temperature = 0.0 if inp.mode == "greedy" else inp.temperature
        gen = torch.Generator().manual_seed(inp.seed)
        steps = generate(
            self.model, self.tok.encode(inp.prompt), inp.length, temperature, gen, TOP_K
        )
        text = self.tok.decode([s.char for s in steps])
        with torch.no_grad():
            prompt_h, _ = self.model.hidden_states(torch.tensor(self.tok.encode(inp.prompt)))
            # The state after each character read: the prompt's, then each generated one's
            # but the last (steps[0].hidden is the prompt's last state again).
            hidden = torch.cat([prompt_h, *[s.hidden[None] for s in steps[1:]]])
        hidden = hidden[: HEAT_T * 2]  # [T, H]: the prompt and the generation's start
        length, start, where = longest_verbatim(text, self.train_text)
        yield Frame(
            step=self.t,
            tensors=[
                TensorOut("gen_hidden", hidden.T.contiguous(), "u8"),  # [H, T]
                TensorOut("gen_top", torch.tensor([[p for _, p in s.top] for s in steps]), "f32"),
            ],
            meta={
                "prompt": inp.prompt,
                "text": text,
                "mode": inp.mode,
                "temperature": temperature,
                "top_chars": [[self.tok.id_to_piece(i) for i, _ in s.top] for s in steps],
                "chosen_prob": [s.prob for s in steps],
                "hidden_chars": list((inp.prompt + text)[: hidden.shape[0]]),
                "span": {"length": length, "start": start, "where": where},
                "n_train": len(self.train_text),
            },
        )

    def load_lab_state(self, state: dict[str, Any]) -> None:
        self.sample = None
