"""Lab `embeddings`: from ids to vectors, and a model's own character embeddings.

Static part (recomputed when the learner edits the table or picks a word): ids invent an
order (苹果 1 + 香蕉 2 = 梨 3), one-hot rows are all orthogonal (Gram matrix = I), the
(sweet, tech) table with its cosine matrix, and one-hot × E picking a row of E.

Live part: play trains the gpt lab's Transformer (preset gpt-nano, narrower) as a character
model on a bundled text or pasted text, and every sent frame carries its token-embedding
rows of the frequent characters projected to 2-D by PCA (signs kept from frame to frame),
the nearest neighbours by cosine of the character the learner picked, and the group checks
(sentence marks, vowels) the page's sentences rest on. All of it from models/embeddings.py.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import torch
import torch.nn.functional as F
from pydantic import Field, ValidationInfo, field_validator, model_validator
from torch import Tensor

from backend.labs import register
from backend.labs._gpt_params import MIN_PASTED_CHARS  # the gpt lab's floor for a pasted text
from backend.labs.base import LabParams, TensorOut, adamw_lr_param, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models import embeddings as emb
from models.data.texts import MAX_PASTED_BYTES, check_pasted, check_pasted_size, lm_batch, load_text
from models.data.tokenizers import CharTokenizer
from models.transformer import Transformer, preset

N_CTX = 32  # window of the character model
Entry = Annotated[float, Field(ge=-1.0, le=1.0)]
Row = Annotated[list[Entry], Field(min_length=2, max_length=2)]
DEFAULT_TABLE = [list(r) for r in emb.DEFAULT.table]


class Params(LabParams):
    text: Literal["zh", "en", "pasted"] = param(
        "zh",
        zh="训练文本",
        en="Text to train on",
        choices={
            "zh": ("中文小故事", "The Chinese story"),
            "en": ("英文小故事", "The English story"),
            "pasted": ("我粘贴的文字", "My pasted text"),
        },
    )
    pasted: str = param(
        "",
        zh=f"你的文字（至少 {MIN_PASTED_CHARS} 字、最多 200 KB）",
        en=f"Your text (at least {MIN_PASTED_CHARS} characters, at most 200 KB)",
        max_length=MAX_PASTED_BYTES,
        show_if={"text": ["pasted"]},
    )
    d_model: int = param(16, zh="向量维度 d_model", en="Vector size d_model", ge=8, le=64, step=4)
    lr: float = adamw_lr_param(3e-3)
    batch: int = param(32, zh="批大小", en="Batch size", ge=1, le=128, live=True)
    steps: int = param(1500, zh="训练步数", en="Steps to train", ge=1, le=20000, live=True)
    min_count: int = param(
        5,
        zh="只画至少出现这么多次的字符",
        en="Draw characters seen at least this often",
        ge=1,
        le=50,
        live=True,
    )
    probe: str = param(
        "", zh="看谁的近邻", en="Neighbours of", widget="hidden", max_length=2, live=True
    )
    word: int = param(0, zh="查哪一行", en="Row to look up", widget="hidden", ge=0, le=3, live=True)
    table: list[Row] = param(
        DEFAULT_TABLE,
        zh="二维词表（甜, 科技）",
        en="2-D table (sweet, tech)",
        widget="hidden",
        min_length=4,
        max_length=4,
        live=True,
    )

    @field_validator("pasted", mode="before")
    @classmethod
    def _fits(cls, text: Any, info: ValidationInfo) -> Any:
        return check_pasted_size(text) if isinstance(text, str) else text

    @model_validator(mode="after")
    def _pasted_enough(self) -> Params:
        if self.text == "pasted":
            if len(self.pasted) < MIN_PASTED_CHARS:
                raise refuse(
                    "err.p_pasted_short",
                    "pasted text has {n} characters; paste at least {min}",
                    n=len(self.pasted),
                    min=MIN_PASTED_CHARS,
                )
            check_pasted(self.pasted)
        return self


def visible(c: str) -> str:
    """A character as a point's label: space and newline get a glyph."""
    return {" ": "␣", "\n": "↵", "\t": "⇥"}.get(c, c)


@register
class EmbeddingsLab(TrainingLab):
    id = "embeddings"
    chapter = 5
    order = 4
    title = {"zh": "词向量：从编号到向量", "en": "Embeddings: from ids to vectors"}
    description = {
        "zh": "编号会凭空造出顺序（苹果 1 + 香蕉 2 = 梨 3），独热编码让每两个词都正交，二维表（甜, 科技）"
        "让相似可以量出来，独热 × E 就是查表取一行。按“播放”训练一个小字符模型，看它学到的字向量"
        "（PCA 投到二维）一边训练一边移动，哪些字靠在一起。",
        "en": "Ids invent an order (苹果 1 + 香蕉 2 = 梨 3), one-hot makes every pair orthogonal, a "
        "2-D (sweet, tech) table makes similarity measurable, and one-hot × E is a row lookup. "
        "Press play to train a small character model and watch its learned character vectors "
        "(PCA to 2-D) move as it trains, and which characters end up together.",
    }
    Params = Params
    tensors = (
        "ids", "onehot", "onehot_gram", "onehot_cos", "table", "table_cos",
        "lookup_onehot", "lookup_row", "points", "neighbours",
    )  # fmt: skip
    stream_grad_norms = False  # not this lab's subject

    # -- training ---------------------------------------------------------------------------
    def setup(self) -> None:
        p = self.params
        self.text = p.pasted if p.text == "pasted" else load_text(p.text)
        self.tok = CharTokenizer(self.text)
        self.vocab = [self.tok.id_to_piece(i) for i in range(self.tok.vocab_size)]
        self.ids = torch.tensor(self.tok.encode(self.text), dtype=torch.long)
        self.n_ctx = min(N_CTX, len(self.ids) - 1)
        self.cfg = preset(
            "gpt-nano", d_model=p.d_model, n_ctx=self.n_ctx, d_vocab=self.tok.vocab_size
        )
        self.ref: Tensor | None = None  # the last sent frame's PCA components
        self._shown()
        self._static()

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("adamw", lr=self.params.lr, betas=(0.9, 0.99))
        return [ArmSpec("char-gpt", lambda: Transformer(self.cfg), optim, self.seed)]

    def built(self) -> None:
        # The random start, to say what training changed (not a state: a fork rebuilds it
        # from the same seed before loading).
        self.w0 = self.model.embed.weight.detach().clone()

    def batch(self, gen: torch.Generator) -> tuple[Tensor, Tensor]:
        return lm_batch(self.ids, self.params.batch, self.n_ctx, gen)

    def loss(self, arm: Arm, batch) -> Tensor:
        x, y = batch
        return F.cross_entropy(arm.model(x).flatten(0, 1), y.flatten())

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        return self._group_scalars(arm.model)

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        if self.t and arm.scalars:
            return {**arm.scalars, **self._group_scalars(arm.model)}
        x, y = lm_batch(self.ids, 64, self.n_ctx, torch.Generator().manual_seed(self.seed))
        with torch.no_grad():
            loss = F.cross_entropy(arm.model(x).flatten(0, 1), y.flatten())
        return {"loss": float(loss), **self._group_scalars(arm.model)}

    def max_steps(self) -> int:
        return self.params.steps

    # -- the learned picture -------------------------------------------------------------------
    def _shown(self) -> None:
        """The characters drawn: seen at least min_count times (at least three of them)."""
        keep = emb.frequent(self.text, self.vocab, self.params.min_count)
        if len(keep) < 3:
            keep = emb.frequent(self.text, self.vocab, 1)
        self.keep = torch.tensor(keep)
        self.chars = [self.vocab[i] for i in keep]
        self.ref = None  # other rows, other components

    def _cosines(self, model: Transformer) -> Tensor:
        return emb.cosine_matrix(model.embed.weight.detach()[self.keep])  # [n, n]

    def _group_scalars(self, model: Transformer) -> dict[str, float]:
        cos = self._cosines(model)
        out: dict[str, float] = {}
        for name in emb.DEFAULT.groups:
            check = emb.group_check(cos, self.chars, name, emb.DEFAULT.margin)
            if check:
                out[f"{name}_within"] = check["within"]
                out[f"{name}_across"] = check["across"]
        return out

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        w = arm.model.embed.weight.detach()[self.keep]  # [n, d_model]
        points, comps, ratio = emb.pca_2d(w, self.ref)
        self.ref = comps
        cos = emb.cosine_matrix(w)
        probe = self.params.probe if self.params.probe in self.chars else self._default_probe()
        at = self.chars.index(probe)
        idx, vals = emb.nearest(cos, at, emb.DEFAULT.neighbours)
        start = emb.cosine_matrix(self.w0[self.keep])
        checks = []
        for g in emb.DEFAULT.groups:
            now = emb.group_check(cos, self.chars, g, emb.DEFAULT.margin)
            if now:  # beside the random start's numbers: what training changed
                then = emb.group_check(start, self.chars, g, emb.DEFAULT.margin)
                checks.append({**now, "start": {k: then[k] for k in ("within", "across", "holds")}})
        labels = [visible(c) for c in self.chars]
        tensors = [
            *self.static_tensors,
            TensorOut("points", points, "f32", labels),
            TensorOut("neighbours", vals, "f32", [labels[i] for i in idx]),
        ]
        meta = {
            **self.static_meta,
            "learned": {
                "chars": self.chars,
                "probe": probe,
                "neighbours": [self.chars[i] for i in idx],
                "explained": ratio.tolist(),
                "checks": checks,
                "margin": emb.DEFAULT.margin,
                "steps": self.t,
                "min_count": self.params.min_count,
                "vocab": self.tok.vocab_size - 1,  # the <unk> id is never seen
                "d_model": self.cfg.d_model,
                "params": self.cfg.param_count(),
                "text": self.params.text,
            },
        }
        return tensors, meta

    def _default_probe(self) -> str:
        """The first sentence mark shown, else the most frequent character."""
        marks = [c for c in self.chars if c in emb.MARKS]
        if marks:
            return max(marks, key=self.text.count)
        return max(self.chars, key=self.text.count)

    # -- the static picture --------------------------------------------------------------------
    def _static(self) -> None:
        p = self.params
        cfg = emb.DEFAULT
        ids = emb.id_arithmetic(cfg)
        hot = emb.one_hot(len(cfg.id_words))  # [3, 3]
        table = emb.table_tensor(p.table)  # [4, 2]
        vec, row, err = emb.lookup(table, p.word)
        self.static_tensors = [
            TensorOut("ids", torch.tensor(ids["ids"], dtype=torch.float32), "f32"),
            TensorOut("onehot", hot, "f32"),
            TensorOut("onehot_gram", hot @ hot.T, "f32"),
            TensorOut("onehot_cos", emb.cosine_matrix(hot), "f32"),
            TensorOut("table", table, "f32"),
            TensorOut("table_cos", emb.cosine_matrix(table), "f32"),
            TensorOut("lookup_onehot", vec, "f32"),
            TensorOut("lookup_row", row, "f32"),
        ]
        self.static_meta = {
            "id_words": ids["words"],
            "id_sum": ids["sum"],
            "id_sum_word": ids["sum_word"],
            "id_distance": ids["distance"],
            "onehot_distance": float(torch.cdist(hot, hot)[0, 1]),
            "table_words": list(cfg.table_words),
            "table_dims": list(cfg.table_dims),
            "word": p.word,
            "lookup_error": err,
        }

    def update_live(self, params: Params) -> None:
        old = self.params
        super().update_live(params)
        if params.min_count != old.min_count:
            self._shown()
        if params.table != old.table or params.word != old.word:
            self._static()

    # -- state -----------------------------------------------------------------------------------
    def lab_state(self) -> dict[str, Any]:
        return {"ref": None if self.ref is None else self.ref.tolist()}

    def load_lab_state(self, state: dict[str, Any]) -> None:
        ref = state.get("ref")
        self.ref = None if ref is None else torch.tensor(ref)

    @classmethod
    def estimate_mb(cls, params: Params) -> tuple[float, str | None]:
        return 30.0, None
