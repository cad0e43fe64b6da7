"""What a lab is: bounded Params, a build, a step, optional inference; frames out.

A lab module subclasses `Lab` (or, if it trains, `backend.trainer.TrainingLab`), declares
`Params` (a `LabParams` whose every field comes from `param()`, so it has a range, a default
and a zh/en label), optionally `Input` / `Actions` (LabInput models for `infer`), and
registers itself with `@register`. The session calls its methods on the session's worker
thread, one at a time, so a lab needs no locks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, ClassVar

import torch
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError

from backend.protocol import Refusal
from backend.wire import Frame, TensorOut
from backend.worker import picture_pool

__all__ = ["Frame", "Lab", "LabError", "LabInput", "LabParams", "TensorOut", "param"]


class LabError(Refusal):
    """A user-facing failure of a lab action (bad infer input, unsupported action): the
    message first, then the fields of a Refusal (`code` defaults to bad_message)."""

    def __init__(
        self,
        message: str,
        code: str = "bad_message",
        field: str | None = None,
        key: str | None = None,
        values: dict | None = None,
    ):
        super().__init__(code, message, field, key, values)


class LabParams(BaseModel):
    """Base of every lab's Params: unknown fields and NaN/inf are refused."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


class LabInput(BaseModel):
    """Base of a lab's declared `Input` and `Actions` models: unknown fields and NaN/inf
    are refused. Validators see the lab as `info.context["lab"]` (bounds that depend on
    the model built); a PydanticCustomError whose type is a message key (`<lab>.err_*`,
    `err.*`) is refused with that key, its context as the values and its message as is."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


def refuse(key: str, message: str, **values: Any) -> PydanticCustomError:
    """A validator's refusal, raised: `key` (`err.p_*`, `<lab>.err_*`) names the page's own
    sentence, filled with `values`, so a zh page says the reason in Chinese; `message` is the
    English template ({name} fields filled from values), the error's text for logs and API.
    Whole numbers read with thousands separators there (210,000 bytes); `values` stay numbers
    for the page, which formats them in its own language."""
    text = message.format(
        **{
            k: f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else v
            for k, v in values.items()
        }
    )
    return PydanticCustomError(key, text.replace("{", "{{").replace("}", "}}"), values)


@lru_cache(maxsize=64)
def _adapter(tp: Any) -> TypeAdapter:
    return TypeAdapter(tp)


def validate_input(tp: Any, data: Any, lab: Lab | None = None) -> Any:
    """`data` as the declared model `tp` (a model or a union of models tagged by `action`),
    or a LabError naming the offending field (`input.layer`)."""
    try:
        return _adapter(tp).validate_python(data, context={"lab": lab})
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = list(err["loc"])
        kind = err["type"]
        if kind in ("union_tag_invalid", "union_tag_not_found"):
            loc = [str(err.get("ctx", {}).get("discriminator", "action")).strip("'")]
        elif loc and isinstance(data, dict) and loc[0] == data.get("action"):
            loc = loc[1:]  # a tagged union's errors start with the tag: drop it
        path = ".".join(str(p) for p in loc)
        field = f"input.{path}" if path else "input"
        if "." in kind:  # a message key (`<lab>.err_*`, `err.*`: a PydanticCustomError)
            values = dict(err.get("ctx") or {}) or None
            raise LabError(err["msg"], field=field, key=kind, values=values) from None
        raise LabError(f"{path}: {err['msg']}" if path else err["msg"], field=field) from None


def param(
    default: Any,
    *,
    zh: str,
    en: str,
    ge: float | None = None,
    le: float | None = None,
    scale: str | None = None,
    step: float | None = None,
    live: bool = False,
    widget: str | None = None,
    choices: dict[str, tuple[str, str]] | None = None,
    show_if: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """A Params field with its zh/en label and UI hints in the JSON Schema.

    scale="log" draws a log slider; live=True means changing it needs no reset (e.g. lr);
    widget="hidden" keeps it out of the generated form (the view sets it, e.g. points);
    choices labels the values of a Literal field; show_if={"mode": "fit"} (or a list of
    values) shows the field in the form only when another param has that value.
    """
    extra: dict[str, Any] = {"label": {"zh": zh, "en": en}}
    if scale:
        extra["scale"] = scale
    if step is not None:
        extra["step"] = step
    if live:
        extra["live"] = True
    if widget:
        extra["widget"] = widget
    if choices:
        extra["choices"] = {k: {"zh": z, "en": e} for k, (z, e) in choices.items()}
    if show_if:
        extra["show_if"] = show_if
    return Field(default, ge=ge, le=le, json_schema_extra=extra, **kwargs)


# Params several labs declare alike: one declaration, so their labels and bounds agree.
ACTIVATION_LABELS = {
    "relu": ("ReLU", "ReLU"),
    "tanh": ("tanh", "tanh"),
    "sigmoid": ("sigmoid", "sigmoid"),
    "gelu": ("GELU", "GELU"),
    "silu": ("SiLU", "SiLU"),
}


def activation_param(default: str, names: tuple[str, ...]) -> Any:
    """The Activation choice among `names` (keys of ACTIVATION_LABELS)."""
    choices = {n: ACTIVATION_LABELS[n] for n in names}
    return param(default, zh="激活函数", en="Activation", choices=choices)


DATASET_LABELS = {  # models/data/playground.py's 2-D datasets
    "circle": ("圆环", "Circle"),
    "xor": ("异或（XOR）", "Exclusive or (XOR)"),
    "gauss": ("高斯团", "Gaussian blobs"),
    "spiral": ("螺旋", "Spiral"),
}


def dataset_param(extra: dict[str, tuple[str, str]] | None = None, **kw: Any) -> Any:
    """The playground's Data choice (circle by default), with a lab's `extra` choices after."""
    return param(
        "circle", zh="数据集", en="Data", choices={**DATASET_LABELS, **(extra or {})}, **kw
    )


def adamw_lr_param(default: float = 3e-3) -> Any:
    """AdamW's learning rate for the small Transformers (log slider, live)."""
    return param(
        default,
        zh="学习率（AdamW）",
        en="Learning rate (AdamW)",
        ge=1e-5,
        le=0.1,
        scale="log",
        live=True,
    )


class Lab:
    """One experiment. Subclasses set the class attributes and implement `step`."""

    id: ClassVar[str]
    chapter: ClassVar[int]
    order: ClassVar[int] = 0  # position inside the chapter
    title: ClassVar[dict[str, str]]  # {"zh": ..., "en": ...}
    description: ClassVar[dict[str, str]]
    Params: ClassVar[type[LabParams]]
    # Declared `infer` input and lab actions (LabInput models; Actions may be a union of
    # models tagged by their `action` field). The engine validates them before the lab's
    # `answer(inp)` / `act(action)` sees them; a message with an `action` is an action.
    Input: ClassVar[Any] = None
    Actions: ClassVar[Any] = None
    # Tensor names this lab's frames carry (for the catalog, subscribe and docs).
    tensors: ClassVar[tuple[str, ...]] = ()
    # View-state keys the class follows (`view` messages), beside the generic ones every lab
    # has (present, blank, scrub, hover): name -> {"type": "int"|"float"|"bool"|"enum",
    # "min"?, "max"?, "below"? (a param: value < params[below]), "values"? (enum)}.
    # See backend/view_keys.py; the catalog entry carries them.
    view_keys: ClassVar[dict[str, dict]] = {}
    # What is one row per token position ("tensors": rank ≥ 1, "meta": list-valued keys;
    # "columns": tensors whose last axis is the position): a subscription with `position: p`
    # is sent row (column) p of each (backend/frame_cut.py).
    per_position: ClassVar[dict[str, tuple[str, ...]]] = {}
    # False for labs whose step only recomputes a picture (no training, no divergence check).
    trains: ClassVar[bool] = True
    # Whether play and step do anything the learner sees: True (they train, or walk stages
    # or tokens), False (a step only redraws the picture every change already redraws), or a
    # condition on the params, {"mode": "fit"}: only when every named param has that value.
    # The catalog carries it; the page shows play/step by this one rule.
    plays: ClassVar[bool | dict[str, Any]] = True
    # The page's default play speed, steps a second (the server still caps it at
    # Settings.max_steps_per_s): a cheap lab whose one step is a small part of learning
    # (mlp-playground: one mini-batch) asks for more, so play shows learning at once.
    play_speed: ClassVar[int] = 100
    # The page on a phone subscribes to one slice (a layer, a head: frontend/js/core/
    # subscription.js `follow`). The catalog says so, and such a page joins with
    # `/ws?...&wait=subscribe`: no frame comes before its subscription (docs/streams.md).
    phone_slice: ClassVar[bool] = False
    # True: the engine may draw this lab's pictures while the next step's backward pass
    # runs (see docs/architecture.md, "Pictures beside"). A TrainingLab only sets it
    # (backend/trainer.py does the rest); the engine then asks `step(capture, later=True)`
    # and gets the frame with `frame.finish` left to draw the picture.
    pictures_later: ClassVar[bool] = False
    _pending: Callable[[], None] | None = None  # a deferred picture job (engine's)
    picture_s: float = 0.0  # seconds spent drawing pictures (a TrainingLab counts them)
    # The engine's say: False while the session's connections need the spare core for their
    # sends (a class watching), so a lab's arms do not spread onto it (parallel_arms).
    may_spread: bool = True

    def __init__(self, params: LabParams, seed: int, device: torch.device):
        self.params = params
        self.seed = seed
        self.device = device

    # -- pictures drawn beside the backward pass (engine side: Session._run) --------------
    def defer(self, job: Callable[[], None]) -> None:
        """Engine: run `job` (finish a frame, encode and send it) during the next backward
        pass, or at `settle()`, whichever comes first."""
        self.settle()
        self._pending = job

    def settle(self) -> None:
        """Engine: run a deferred job now (the run pauses, a command waits)."""
        job, self._pending = self._pending, None
        if job is not None:
            job()

    @contextmanager
    def beside_backward(self) -> Iterator[None]:
        """Trainer: wrap the backward pass. It runs mostly without the GIL, so a
        deferred picture is drawn on a helper thread meanwhile, and is done before the block
        is left: it sees the weights of the step it belongs to. (Small work, such as scoring
        a batch, costs more handed to a thread than done in line: measured.)"""
        job, self._pending = self._pending, None
        if job is None:
            yield
            return
        done = picture_pool().submit(job)
        try:
            yield
        finally:
            done.result()

    # -- limits ---------------------------------------------------------------------------
    @classmethod
    def estimate_mb(cls, params: LabParams) -> tuple[float, str | None]:
        """Estimated memory of a session with these params, and the field to lower if too big."""
        return 1.0, None

    def max_steps(self) -> int | None:
        """Steps after which the session is `done` (None: train until paused)."""
        return None

    # -- the work -------------------------------------------------------------------------
    def step(self, capture: bool) -> Frame:
        """Advance one step. Scalars always; tensors only when `capture` (the frame is sent)."""
        raise NotImplementedError

    def snapshot(self) -> Frame:
        """The picture of the current state without stepping (step 0, or after `set`)."""
        return Frame()

    def infer(self, data: dict[str, Any]) -> Iterator[Frame]:
        """Run inference on user input or a lab action; yields frames (e.g. one per
        generated token). Validates `data` against the declared `Actions` or `Input` and
        hands the model to `act` or `answer`; a lab without either may override this."""
        acts = self.Actions is not None and (
            self.Input is None or (isinstance(data, dict) and "action" in data)
        )
        if acts:
            return self.act(validate_input(self.Actions, data, self))
        if self.Input is not None:
            return self.answer(validate_input(self.Input, data, self))
        raise LabError(f"lab {self.id!r} has no inference", code="bad_message", field="input")

    def answer(self, inp: Any) -> Iterator[Frame]:
        """Inference on a validated `Input`."""
        raise NotImplementedError

    def act(self, action: Any) -> Iterator[Frame]:
        """A validated lab action (`Actions`): a button, an edited weight."""
        raise NotImplementedError

    def update_live(self, params: LabParams) -> None:
        """Apply params whose fields are all `live` without rebuilding."""
        self.params = params

    # -- persistence (fork, save) ---------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {}

    def finish_parts(self) -> None:
        """Finish work in parts under way now (a TrainingLab's; before a fork or a move)."""
        return None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        return None

    @classmethod
    def live_fields(cls) -> frozenset[str]:
        return frozenset(
            name
            for name, f in cls.Params.model_fields.items()
            if isinstance(f.json_schema_extra, dict) and f.json_schema_extra.get("live")
        )
