"""Lab `positional-encoding`: how a Transformer knows where a token is.

Static part (recomputed when a live slider moves): the sinusoidal table, PE·PEᵀ (a function
of the offset only), R(k) with PE(p+k) = R(k)·PE(p), RoPE scores that depend only on m − n,
the norms that make embeddings ×√d_model necessary, and "猫追狗" vs "狗追猫" through a small
bidirectional Transformer without positions (same outputs, permuted) and with them. Every
check is a max error computed by torch and shown as a number.

Live part: `step` trains this lab's own small GPT (models/gpt.py, learned positions) on a
synthetic task, so the learner watches its position embeddings and their similarity form.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import field_validator
from torch import Tensor

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, param, refuse
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models import positional as pos
from models.data.tasks import default_recipe, make_task, masked_loss, score
from models.gpt import GPT, GPTConfig
from models.hooks import capture

SENTENCES = (("猫", "追", "狗"), ("狗", "追", "猫"))
PERM = (2, 1, 0)  # sentence b's token i is sentence a's token PERM[i]
N_EMBED = 256  # token embeddings sampled for the norm comparison


class Params(LabParams):
    n_ctx: int = param(64, zh="位置数 n_ctx", en="Positions n_ctx", ge=4, le=128, live=True)
    d_model: int = param(
        64,
        zh="维度 d_model（偶数）",
        en="Dimensions d_model (even)",
        ge=4,
        le=128,
        step=2,
        live=True,
    )
    offset: int = param(4, zh="偏移 k", en="Offset k", ge=1, le=64, live=True)
    base: float = param(
        10000.0, zh="频率底数", en="Frequency base", ge=10.0, le=1e6, scale="log", live=True
    )
    task: Literal["sort", "reverse", "copy"] = param(
        "sort",
        zh="小 GPT 的任务",
        en="Task of the small GPT",
        choices={
            "sort": ("排序", "Sort"),
            "reverse": ("倒序", "Reverse"),
            "copy": ("复制", "Copy"),
        },
    )
    seq_len: int = param(8, zh="序列长度", en="Sequence length", ge=4, le=12)
    steps: int = param(600, zh="训练步数", en="Steps to train", ge=1, le=5000, live=True)

    @field_validator("d_model")
    @classmethod
    def _even(cls, d: int) -> int:
        if d % 2:
            raise refuse("err.p_even_d", "d_model must be even: the encoding pairs sin and cos")
        return d


# -- the checks (pure torch on models.positional) ---------------------------------------------


def offset_error(gram: Tensor) -> float:
    """max over p, k of |PE(p)·PE(p+k) − PE(0)·PE(k)|: zero when the dot product depends on k only."""
    n = gram.shape[0]
    return max(float((gram.diagonal(k) - gram[0, k]).abs().max()) for k in range(n))


def rotation_error(pe: Tensor, r: Tensor, k: int) -> float:
    """max |R(k)·PE(p) − PE(p+k)| over every p with p + k inside the table."""
    if k >= pe.shape[0]:
        return 0.0
    return float((pe[:-k] @ r.T - pe[k:]).abs().max())


def rope_scores(q: Tensor, k: Tensor, n_ctx: int, theta: float) -> tuple[Tensor, Tensor, Tensor]:
    """q rotated at every position m, k at every n, and their scores [n_ctx, n_ctx]."""
    positions = torch.arange(n_ctx)
    rq = pos.rope_rotate(q.expand(n_ctx, -1), positions, theta)  # [n_ctx, d]
    rk = pos.rope_rotate(k.expand(n_ctx, -1), positions, theta)  # [n_ctx, d]
    return rq, rk, rq @ rk.T  # scores[m, n] = (R_m q)·(R_n k)


def as_pairs_half(x: Tensor) -> Tensor:
    """[..., d] in rotate_half layout -> [..., d/2, 2]: pair i is (x_i, x_{i+d/2})."""
    a, b = x.chunk(2, dim=-1)
    return torch.stack([a, b], dim=-1)


def nopos_outputs(seed: int, positional: str) -> tuple[Tensor, Tensor]:
    """Final residual stream of a small bidirectional GPT for 猫追狗 and 狗追猫: [3, d] each.

    Without positions and without a causal mask, attention is a function of the set of
    tokens, so swapping tokens only swaps output rows. The "with positions" model has the
    same weights plus learned position embeddings.
    """
    cfg = GPTConfig(
        n_layers=1, n_heads=2, d_model=8, n_ctx=3, d_vocab=3, positional="learned", causal=False
    )
    torch.manual_seed(seed)
    model = GPT(cfg).eval()
    with torch.no_grad():  # unit-scale tokens and positions: a stream of size ~1 to compare
        model.embed.weight.normal_(0.0, 1.0)
        model.pos_embed.weight.normal_(0.0, 1.0)
    if positional == "none":
        bare = GPT(cfg.replace(positional="none")).eval()
        bare.load_state_dict(model.state_dict(), strict=False)  # all but pos_embed
        model = bare
    vocab = {"猫": 0, "追": 1, "狗": 2}
    ids = torch.tensor([[vocab[w] for w in s] for s in SENTENCES])  # [2, 3]
    name = f"blocks.{cfg.n_layers - 1}.hook_resid_post"
    with torch.no_grad(), capture(model, name) as store:
        model(ids)
    x = store[name]  # [2, 3, d_model]
    return x[0], x[1]


# -- the lab ---------------------------------------------------------------------------------


@register
class PositionalEncodingLab(TrainingLab):
    id = "positional-encoding"
    chapter = 6
    order = 1
    title = {"zh": "位置编码：词在哪里", "en": "Positional encoding: where a word is"}
    description = {
        "zh": "正弦位置编码的热图与时钟指针，PE·PEᵀ 只取决于距离，PE(p+k) = R(k)·PE(p)，RoPE 让分数只取决于 m−n，"
        "没有位置时“猫追狗”和“狗追猫”得到同样的输出（只是换了顺序）。按“播放”训练本实验自己的小 GPT，"
        "看它学到的位置向量。",
        "en": "The sinusoidal table as a heatmap and as clock hands, PE·PEᵀ depending only on the "
        "offset, PE(p+k) = R(k)·PE(p), RoPE scores depending only on m − n, and without "
        "positions “猫追狗” and “狗追猫” giving the same outputs, permuted. Press play to train "
        "this lab's own small GPT and watch its learned position embeddings form.",
    }
    Params = Params
    tensors = (
        "pe", "pe_sim", "pe_profile", "rotation", "rope_q", "rope_k", "rope_scores",
        "norms", "nopos_a", "nopos_b", "withpos_a", "withpos_b", "hook_pos_embed", "pos_sim",
    )  # fmt: skip

    stream_grad_norms = False  # not this lab's subject

    # -- training: the trainer (backend/trainer.py) runs the loop ---------------------------
    def setup(self) -> None:
        self.task = make_task(self.params.task, seq_len=self.params.seq_len)
        self.recipe = default_recipe(self.task)

    def arms(self) -> list[ArmSpec]:
        r = self.recipe
        optim = OptimConfig("adamw", lr=r.lr, betas=r.betas, weight_decay=r.weight_decay)
        return [ArmSpec("gpt", lambda: GPT(r.config), optim, self.seed)]  # learned positions

    def built(self) -> None:
        self._static()

    def schedule(self, t: int) -> float:
        """The recipe's warm-up (Recipe.lr_at = lr · this)."""
        w = self.recipe.warmup
        return min(1.0, (t + 1) / w) if w else 1.0

    def batch(self, gen: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
        return self.task.sample(self.recipe.batch, gen)

    def loss(self, arm: Arm, batch) -> tuple[Tensor, Tensor]:
        x, y, mask = batch
        arm.model.train()
        logits = arm.model(x)
        return masked_loss(logits, y, mask), logits

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        # Every batch is freshly drawn, so accuracy on it before the update is held-out.
        _, y, mask = batch
        acc, seq_acc = score(out.detach(), y, mask)
        return {"accuracy": acc, "seq_accuracy": seq_acc}

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        x, y, mask = self.task.sample(self.recipe.batch, torch.Generator().manual_seed(self.seed))
        arm.model.eval()
        with torch.no_grad():
            logits = arm.model(x)
        acc, seq_acc = score(logits, y, mask)
        return {
            "loss": masked_loss(logits, y, mask).item(),
            "accuracy": acc,
            "seq_accuracy": seq_acc,
        }

    # The static picture: everything that depends only on the live sliders.
    def _static(self) -> None:
        p = self.params
        n, d = p.n_ctx, p.d_model
        pe = pos.sinusoidal_table(n, d, p.base)  # [n, d] float32, as a model would use it
        gram = pe @ pe.T  # [n, n]
        k = min(p.offset, n - 1)
        rot = pos.sinusoidal_rotation(k, d, p.base)  # [d, d]
        g = torch.Generator().manual_seed(self.seed)
        q, kk = torch.randn(2, d, generator=g)
        rq, rk, rs = rope_scores(q, kk, n, p.base)
        rope_err = max(
            float((rs.diagonal(o) - rs.diagonal(o)[0]).abs().max()) for o in range(-n + 1, n)
        )
        emb = torch.randn(N_EMBED, d, generator=g) * d**-0.5  # the init GPT uses beside a table
        scale = pos.scaled_embedding(d)
        norms = torch.stack(
            [emb.norm(dim=1).mean(), (emb * scale).norm(dim=1).mean(), pe.norm(dim=1).mean()]
        )
        outs = {name: nopos_outputs(self.seed, name) for name in ("none", "learned")}
        a, b = outs["none"]
        wa, wb = outs["learned"]
        perm = list(PERM)
        self.static_tensors = [
            TensorOut("pe", pe, "f16"),
            TensorOut("pe_sim", gram, "u8"),
            TensorOut("pe_profile", gram[0], "f32"),
            TensorOut("rotation", rot, "u8"),
            TensorOut("rope_q", as_pairs_half(rq), "f16"),  # [n, d/2, 2]
            TensorOut("rope_k", as_pairs_half(rk), "f16"),
            TensorOut("rope_scores", rs, "u8"),
            TensorOut("norms", norms, "f32", ["|e|", "|e·√d|", "|PE(p)|"]),
            TensorOut("nopos_a", a), TensorOut("nopos_b", b),
            TensorOut("withpos_a", wa), TensorOut("withpos_b", wb),
        ]  # fmt: skip
        self.static_meta = {
            "n_ctx": n,
            "d_model": d,
            "offset": k,
            "base": p.base,
            "frequencies": pos.frequencies(d, p.base).tolist(),
            "sqrt_d": scale,
            "checks": {
                "offset_error": offset_error(gram),
                "rotation_error": rotation_error(pe, rot, k),
                "rotation_orthogonal": float((rot @ rot.T - torch.eye(d)).abs().max()),
                "rope_error": rope_err,
                "rope_norm_error": float((rq.norm(dim=1) - q.norm()).abs().max()),
                "perm_error": float((b - a[perm]).abs().max()),
                "perm_scale": float(a.abs().max()),
                "withpos_diff": float((wb - wa[perm]).abs().max()),
            },
            "sentences": ["".join(s) for s in SENTENCES],
            "tokens": [list(s) for s in SENTENCES],
        }

    def update_live(self, params: Params) -> None:
        old, self.params = self.params, params
        if any(
            getattr(old, f) != getattr(params, f) for f in ("n_ctx", "d_model", "offset", "base")
        ):
            self._static()

    def max_steps(self) -> int:
        return self.params.steps

    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict]:
        model = arm.model
        w = model.pos_embed.weight.detach()  # [T, d_model]
        unit = w / w.norm(dim=1, keepdim=True).clamp_min(1e-12)
        tensors = [
            *self.static_tensors,
            TensorOut("hook_pos_embed", w, "u8"),
            TensorOut("pos_sim", unit @ unit.T, "u8"),  # cosine similarity [T, T]
        ]
        ex = self.task.example()
        meta = {
            **self.static_meta,
            "gpt": {
                "task": self.task.name,
                "n_ctx": self.recipe.config.n_ctx,
                "d_model": self.recipe.config.d_model,
                "params": model.num_params(),
                "answer_start": self.task.answer_start,
                "example": ex.x_tokens,
                "steps": self.t,
            },
        }
        return tensors, meta

    @classmethod
    def estimate_mb(cls, params: Params) -> tuple[float, str | None]:
        return 20.0, None

    def load_lab_state(self, state: dict) -> None:
        if "n" in state:  # a run saved before the trainer: its step count
            self.t = int(state["n"])
