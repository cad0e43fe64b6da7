"""A training lab's whole state (`TrainingLab.state_dict` / `load_state_dict`): what a save,
a fork and a rewind keep."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backend.trainer import TrainingLab


def state_of(lab: TrainingLab) -> dict[str, Any]:
    """Every arm's model, optimizer, generator and last numbers, the data's generator and
    the lab's own state: a fork continues on the same batches."""
    return {
        "t": lab.t,
        "data_gen": lab.data_gen.get_state(),
        "arms": [
            {
                "model": a.model.state_dict(),
                "opt": a.optimizer.state_dict(),
                "gen": a.generator.get_state(),
                "diverged": a.diverged,
                "scalars": dict(a.scalars),
                "grad_norms": list(a.grad_norms),
                "evaluated": dict(a.evaluated),
            }
            for a in lab.arm_list
        ],
        "lab": lab.lab_state(),
    }


def load(lab: TrainingLab, state: dict[str, Any]) -> None:
    """The state `state_of` wrote (or a run saved before the trainer: one model)."""
    if "arms" not in state:  # a run saved before the trainer: one model, one optimizer
        state = {
            "t": state.get("t", 0),
            "data_gen": state.get("gen", lab.data_gen.get_state()),
            "arms": [{"model": state["model"], "opt": state["opt"]}],
            "lab": state,
        }
    lab.t = state["t"]
    lab.data_gen.set_state(state["data_gen"])
    for arm, s in zip(lab.arm_list, state["arms"], strict=True):
        arm.model.load_state_dict(s["model"])
        arm.optimizer.load_state_dict(s["opt"])
        if "gen" in s:
            arm.generator.set_state(s["gen"])
        arm.diverged = s.get("diverged", False)
        arm.evaluating = None  # one in parts stays with the run it was asked in
        arm.evaluated = dict(s.get("evaluated", {}))  # (finish_parts before a fork or a move)
        arm.scalars = dict(s.get("scalars", {}))
        arm.grad_norms = list(s.get("grad_norms", []))
    lab.load_lab_state(state.get("lab", {}))
