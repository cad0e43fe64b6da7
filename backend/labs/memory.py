"""Lab `memory`: recall a token after a delay, with a plain RNN, a GRU and an LSTM side by side.

The task (models/recall.py): a flagged symbol at t = 0, `delay` distractors drawn from the
same symbols, then the cue; the answer is the flagged symbol (chance 1 / n_symbols). Three
arms of the trainer, same data, seed, optimizer and width, differ only in the cell.

Mode "train": every arm learns the learner's delay. Each step streams the arms' loss and
batch accuracy, every EVAL_EVERY steps the held-out accuracy (N_EVAL fixed sequences at
that delay). A sent frame carries, per arm, on one fixed example: the gates over time
(LSTM input/forget/output, GRU update z/reset r) as [gate, unit, t] maps, the states (hidden;
LSTM also its cell) as [map, unit, t], and the answer's probabilities. A gated arm's meta
names the unit that holds the most across the delay: Π_t of its keeping gate (f, or z) over
the steps after the write, and that gate's smallest value along the delay.

Mode "sweep": accuracy vs delay. For each delay of SWEEP_DELAYS in turn, the three arms start
again from their first weights (a fresh optimizer too), train `sweep_steps` steps at that
delay, and are scored on held-out sequences at it: the scalars `sweep_acc`/`sweep_delay`
and the frames' `sweep` meta fill in one delay at a time. The session is done after the last.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

import torch

from backend.labs import register
from backend.labs.base import LabParams, TensorOut, param
from backend.optim import OptimConfig
from backend.trainer import Arm, ArmSpec, TrainingLab
from models.hooks import capture
from models.recall import (
    RecallConfig,
    RecallNet,
    kept_fraction,
    loss_and_acc,
    sample,
    token_strings,
)

EVAL_EVERY = 25
N_EVAL = 512  # held-out sequences a delay, drawn once from their own generator
SWEEP_DELAYS = (2, 5, 10, 15, 20, 30, 40)
KINDS = ("rnn", "gru", "lstm")
LABELS = {"rnn": "RNN", "gru": "GRU", "lstm": "LSTM"}
TITLES = {
    "rnn": {"zh": "普通 RNN：没有门", "en": "Plain RNN: no gates"},
    "gru": {"zh": "GRU：更新门与重置门", "en": "GRU: update and reset gates"},
    "lstm": {"zh": "LSTM：输入门、遗忘门、输出门", "en": "LSTM: input, forget and output gates"},
}
GATES = {  # the hook points a frame shows, in order
    "rnn": (),
    "gru": ("update_gate", "reset_gate"),
    "lstm": ("input_gate", "forget_gate", "output_gate"),
}
STATES = {"rnn": ("hidden",), "gru": ("hidden",), "lstm": ("cell", "hidden")}
KEEP_GATE = {"gru": "update_gate", "lstm": "forget_gate"}  # ≈ 1 keeps the state


class Params(LabParams):
    mode: Literal["train", "sweep"] = param(
        "train",
        zh="模式",
        en="Mode",
        choices={
            "train": ("在一个延迟上训练", "Train at one delay"),
            "sweep": ("扫描：准确率随延迟变化", "Sweep: accuracy vs delay"),
        },
    )
    delay: int = param(
        30,
        zh="延迟 N（干扰步数）",
        en="Delay N (distractor steps)",
        ge=1,
        le=60,
        show_if={"mode": "train"},
    )
    sweep_steps: int = param(
        300, zh="每个延迟训练步数", en="Steps per delay", ge=50, le=2000, show_if={"mode": "sweep"}
    )
    n_symbols: int = param(4, zh="符号个数", en="Symbols", ge=2, le=8)
    d_hidden: int = param(16, zh="隐藏状态维度", en="Hidden units", ge=4, le=64)
    keep_bias: float = param(
        3.0,
        zh="遗忘门/更新门的初始偏置",
        en="Initial bias of the keeping gate (f, z)",
        ge=0.0,
        le=6.0,
    )
    lr: float = param(
        3e-3, zh="学习率", en="Learning rate", ge=1e-5, le=0.1, scale="log", live=True
    )
    batch: int = param(64, zh="批大小", en="Batch size", ge=8, le=256, live=True)


@register
class MemoryLab(TrainingLab):
    id = "memory"
    chapter = 5
    order = 2
    title = {"zh": "记住一个符号：RNN、GRU、LSTM", "en": "Remember a token: RNN, GRU, LSTM"}
    description = {
        "zh": "开头给一个要记住的符号，接着 N 个干扰符号，最后提问。普通 RNN、GRU 和 LSTM 在同样的数据、"
        "同样的种子上并排训练：看门随时间的取值，以及扫描延迟时各自的准确率。",
        "en": "A symbol to remember, then N distractors, then the question. A plain RNN, a GRU "
        "and an LSTM train side by side on the same data and seed: watch their gates over "
        "time, and sweep the delay to see each one's accuracy.",
    }
    Params = Params
    eval_every = EVAL_EVERY
    clip_norm = 5.0
    tensors = ("arm.*.gates", "arm.*.states", "arm.*.probs")

    # -- declared -------------------------------------------------------------------------
    def setup(self) -> None:
        self.held: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self.examples: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        self.sweep: dict[int, dict[int, float]] = {}  # arm -> delay -> held-out accuracy

    def cfg(self, kind: str) -> RecallConfig:
        p = self.params
        return RecallConfig(kind, p.n_symbols, p.d_hidden, keep_bias=p.keep_bias)

    def arms(self) -> list[ArmSpec]:
        optim = OptimConfig("adam", lr=self.params.lr)
        cfgs = {k: self.cfg(k) for k in KINDS}
        return [
            ArmSpec(LABELS[k], lambda c=cfgs[k]: RecallNet(c), optim, self.seed, TITLES[k])
            for k in KINDS
        ]

    def built(self) -> None:
        self.first = [copy.deepcopy(a.model.state_dict()) for a in self.arm_list]

    @classmethod
    def estimate_mb(cls, p: Params) -> tuple[float, str | None]:
        """Activations kept for backprop: ~12 H-wide numbers a step, sequence and arm."""
        T = (max(SWEEP_DELAYS) if p.mode == "sweep" else p.delay) + 2
        acts = 3 * 12 * p.batch * T * p.d_hidden * 4
        return acts / 2**20 + 16.0, "batch"

    def max_steps(self) -> int | None:
        p = self.params
        return len(SWEEP_DELAYS) * p.sweep_steps if p.mode == "sweep" else None

    def current_delay(self, t: int | None = None) -> int:
        """The delay update t + 1 trains at (t: updates taken before it)."""
        p = self.params
        if p.mode == "train":
            return p.delay
        t = self.t if t is None else t
        return SWEEP_DELAYS[min(t // p.sweep_steps, len(SWEEP_DELAYS) - 1)]

    def batch(self, gen: torch.Generator):
        p = self.params
        if p.mode == "sweep" and self.t and self.t % p.sweep_steps == 0:
            self._restart_arms()  # a new delay: every arm from its first weights
        x, y, _ = sample(p.n_symbols, self.current_delay(), p.batch, gen)
        return x.to(self.device), y.to(self.device)

    def _restart_arms(self) -> None:
        for arm, first in zip(self.arm_list, self.first, strict=True):
            arm.model.load_state_dict(first)
            arm.optimizer.state.clear()  # Adam's moments and step count start again too

    def loss(self, arm: Arm, batch):
        x, y = batch
        loss, logits, _ = loss_and_acc(arm.model, x, y)
        return loss, logits

    def arm_scalars(self, arm: Arm, batch, out) -> dict[str, float]:
        if out is None:
            return {}
        return {"acc": float((out.detach().argmax(-1) == batch[1]).float().mean())}

    def eval_due(self, arm: Arm, scalars: dict[str, float]) -> bool:
        p = self.params
        if p.mode == "sweep":
            return self.t % p.sweep_steps == 0
        return self.t % EVAL_EVERY == 0

    @torch.no_grad()
    def held_out_acc(self, arm: Arm, delay: int) -> float:
        if delay not in self.held:
            g = torch.Generator().manual_seed(
                self.seed + 1_000_003 + delay
            )  # not the training stream
            x, y, _ = sample(self.params.n_symbols, delay, N_EVAL, g)
            self.held[delay] = (x.to(self.device), y.to(self.device))
        x, y = self.held[delay]
        return loss_and_acc(arm.model, x, y)[2]

    def evaluate(self, arm: Arm) -> dict[str, float]:
        if self.params.mode == "train":
            return {"held_acc": self.held_out_acc(arm, self.params.delay)}
        delay = self.current_delay(self.t - 1)  # the delay this phase trained at
        acc = self.held_out_acc(arm, delay)
        self.sweep.setdefault(arm.index, {})[delay] = acc
        return {"sweep_acc": acc, "sweep_delay": float(delay)}

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        if self.params.mode == "train" and self.t == 0:
            return {"held_acc": self.held_out_acc(arm, self.params.delay)}
        return {}

    # -- the picture ------------------------------------------------------------------------
    def example(self, delay: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if delay not in self.examples:
            g = torch.Generator().manual_seed(self.seed + 7 + delay)
            x, y, tokens = sample(self.params.n_symbols, delay, 1, g)
            self.examples[delay] = (x.to(self.device), y, tokens[0])
        return self.examples[delay]

    @torch.inference_mode()
    def picture(self, arm: Arm) -> tuple[list[TensorOut], dict[str, Any]]:
        model = arm.model
        kind = model.cfg.kind
        x, y, _ = self.example(self.current_delay(max(0, self.t - 1)))
        names = [f"rnn.hook_{n}" for n in GATES[kind] + STATES[kind]]
        with capture(model, names) as store:
            probs = torch.softmax(model(x)[0], -1)
        grab = {n: store[f"rnn.hook_{n}"][0] for n in GATES[kind] + STATES[kind]}  # each [T, H]
        tensors = [
            TensorOut(
                "states", torch.stack([grab[n].T for n in STATES[kind]]), labels=list(STATES[kind])
            ),
            TensorOut("probs", probs),
        ]
        if GATES[kind]:  # [gate, H, T]: a row a unit, a column a time step
            tensors.append(
                TensorOut(
                    "gates", torch.stack([grab[n].T for n in GATES[kind]]), labels=list(GATES[kind])
                )
            )
        meta: dict[str, Any] = {
            "kind": kind,
            "answer": int(probs.argmax()),
            "right": int(probs.argmax()) == int(y[0]),
            "param_count": model.cfg.param_count(),
        }
        if kind in KEEP_GATE:
            keep = grab[KEEP_GATE[kind]]  # [T, H]
            kept = kept_fraction(keep)  # [H]
            unit = int(kept.argmax())
            meta["hold"] = {
                "gate": KEEP_GATE[kind],
                "unit": unit,
                "kept": float(kept[unit]),
                "min_along_delay": float(keep[1:-1, unit].min()),
                "mean_along_delay": float(keep[1:-1].mean()),
            }
        return tensors, meta

    def frame_meta(self) -> dict[str, Any]:
        p = self.params
        delay = self.current_delay(max(0, self.t - 1))
        _, y, tokens = self.example(delay)
        meta: dict[str, Any] = {
            "mode": p.mode,
            "delay": delay,
            "tokens": token_strings(tokens),
            "target": int(y[0]),
            "symbols": token_strings(torch.arange(p.n_symbols + 1))[:-1],
            "chance": 1.0 / p.n_symbols,
        }
        if p.mode == "sweep":
            meta["sweep"] = {
                "delays": list(SWEEP_DELAYS),
                "steps": p.sweep_steps,
                "acc": [
                    [self.sweep.get(i, {}).get(d) for d in SWEEP_DELAYS] for i in range(len(KINDS))
                ],
            }
        return meta

    def lab_state(self) -> dict[str, Any]:
        return {"sweep": {str(i): {str(d): a for d, a in v.items()} for i, v in self.sweep.items()}}

    def load_lab_state(self, s: dict[str, Any]) -> None:
        self.sweep = {
            int(i): {int(d): a for d, a in v.items()} for i, v in s.get("sweep", {}).items()
        }
