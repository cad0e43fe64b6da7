"""The `gpt` lab's parameters: the task or text, the model's shape, positions, the mask,
the optimizer and the run's length, each bounded and labelled in zh and en."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ValidationInfo, field_validator

from backend.labs.base import LabParams, adamw_lr_param, param, refuse
from models.data.texts import MAX_PASTED_BYTES, check_pasted, check_pasted_size

TASKS = ("reverse", "copy", "sort", "induction", "modadd")
TEXTS = {"text-en": "en", "text-zh": "zh"}
MIN_PASTED_CHARS = 100

SHOW_TASK = {"data": list(TASKS)}
SHOW_TEXT = {"data": ["text-en", "text-zh", "text-pasted"]}

Data = Literal[
    "reverse", "copy", "sort", "induction", "modadd", "text-en", "text-zh", "text-pasted"
]


class Params(LabParams):
    data: Data = param(
        "reverse",
        zh="任务或文本",
        en="Task or text",
        choices={
            "reverse": ("倒序（reverse）", "Reverse"),
            "copy": ("复制（copy）", "Copy"),
            "sort": ("排序（sort）", "Sort"),
            "induction": ("归纳头：重复一个串", "Induction: repeat a string"),
            "modadd": ("模加法 a+b mod 11", "Modular addition a+b mod 11"),
            "text-en": ("文本：英文小故事", "Text: the English story"),
            "text-zh": ("文本：中文小故事", "Text: the Chinese story"),
            "text-pasted": ("文本：我粘贴的文字", "Text: my pasted text"),
        },
    )
    seq_len: int = param(
        6, zh="任务长度（符号数）", en="Task length (symbols)", ge=2, le=16, show_if=SHOW_TASK
    )
    pasted: str = param(
        "",
        zh=f"你的文字（粘贴至少 {MIN_PASTED_CHARS} 字、最多 200 KB，就会用它训练）",
        en=f"Your text (paste at least {MIN_PASTED_CHARS} characters, at most 200 KB, to train on it)",
        max_length=MAX_PASTED_BYTES,
        validate_default=True,
        show_if=SHOW_TEXT,  # pasting while on a bundled text switches to it (the view does)  # "my pasted text" with nothing pasted is refused too
    )
    tokenizer: Literal["char", "bpe"] = param(
        "char",
        zh="分词器（文本）",
        en="Tokenizer (text)",
        choices={"char": ("按字符", "Characters"), "bpe": ("BPE (sentencepiece)", "BPE")},
        show_if=SHOW_TEXT,
    )
    vocab_size: int = param(
        256,
        zh="BPE 词表大小",
        en="BPE vocabulary size",
        ge=32,
        le=1024,
        show_if={"tokenizer": "bpe", **SHOW_TEXT},
    )
    n_layers: int = param(2, zh="层数", en="Layers", ge=1, le=6)
    n_heads: int = param(4, zh="每层注意力头数", en="Heads per layer", ge=1, le=8)
    d_model: int = param(
        64, zh="模型宽度 d_model", en="Width d_model", ge=16, le=384, step=8, validate_default=True
    )
    n_ctx: int = param(
        64, zh="上下文长度（文本）", en="Context length (text)", ge=8, le=256, show_if=SHOW_TEXT
    )
    positional: Literal["learned", "sinusoidal", "rope", "none"] = param(
        "learned",
        zh="位置编码",
        en="Positions",
        choices={
            "learned": ("可学习（GPT-2）", "Learned (GPT-2)"),
            "sinusoidal": ("正弦（原始 Transformer）", "Sinusoidal"),
            "rope": ("RoPE 旋转", "RoPE"),
            "none": ("无（NoPE）", "None (NoPE)"),
        },
        validate_default=True,
    )
    causal: bool = param(True, zh="因果掩码（只看过去）", en="Causal mask (see only the past)")
    lr: float = adamw_lr_param()
    batch: int = param(64, zh="批大小", en="Batch size", ge=1, le=256, live=True)
    warmup: int = param(50, zh="预热步数", en="Warm-up steps", ge=0, le=1000)
    steps: int = param(
        0,
        zh="训练步数（0 = 按任务默认）",
        en="Steps (0 = the task's default)",
        ge=0,
        le=20000,
        live=True,
    )

    @field_validator("pasted", mode="before")
    @classmethod
    def _pasted_fits(cls, text: Any, info: ValidationInfo) -> Any:
        if not isinstance(text, str):
            return text
        check_pasted_size(text)
        if info.data.get("data") == "text-pasted":
            if len(text) < MIN_PASTED_CHARS:
                raise refuse(
                    "err.p_pasted_short",
                    "pasted text has {n} characters; paste at least {min}",
                    n=len(text),
                    min=MIN_PASTED_CHARS,
                )
            check_pasted(text)
        return text

    @field_validator("d_model")
    @classmethod
    def _heads_divide_width(cls, d_model: int, info: ValidationInfo) -> int:
        heads = info.data.get("n_heads")
        if heads and d_model % heads:
            raise refuse(
                "err.p_heads_split",
                "d_model {d_model} does not split into {heads} heads; use a multiple",
                d_model=d_model,
                heads=heads,
            )
        return d_model

    @field_validator("positional")
    @classmethod
    def _positions_fit(cls, kind: str, info: ValidationInfo) -> str:
        d, heads = info.data.get("d_model"), info.data.get("n_heads")
        if kind == "rope" and d and heads and (d // heads) % 2:
            raise refuse(
                "err.p_heads_even",
                "d_model {d_model} must split into {heads} heads of an even size "
                "(RoPE rotates pairs)",
                d_model=d,
                heads=heads,
            )
        if kind == "sinusoidal" and d and d % 2:
            raise refuse("err.p_even_d", "sinusoidal positions need an even d_model")
        return kind
