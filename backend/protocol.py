"""Every websocket message as a pydantic model (protocol version 1, see docs/protocol.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

PROTOCOL_VERSION = 1

ErrorCode = Literal[
    "bad_message",
    "invalid_params",
    "forbidden",
    "not_found",
    "busy",
    "too_large",
    "diverged",
    "error",
]


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Open(_Msg):
    """A new session of `lab`, or of a saved `run` (replayed read-only, or resumed)."""

    type: Literal["open"]
    lab: str | None = Field(default=None, max_length=64)
    params: dict[str, Any] = Field(default_factory=dict)
    seed: int = Field(default=0, ge=0, le=2**31 - 1)
    run: str | None = Field(default=None, max_length=64)
    mode: Literal["replay", "resume"] = "replay"

    @model_validator(mode="after")
    def _lab_or_run(self) -> Open:
        if (self.lab is None) == (self.run is None):
            raise ValueError("give exactly one of `lab` and `run`")
        return self


class Join(_Msg):
    """Join by session id (a rejoin; as driver with the token) or by a class join code."""

    type: Literal["join"]
    session: str | None = Field(default=None, max_length=64)
    code: str | None = Field(default=None, max_length=16)
    token: str | None = Field(default=None, max_length=128)

    @model_validator(mode="after")
    def _one_target(self) -> Join:
        if (self.session is None) == (self.code is None):
            raise ValueError("give exactly one of `session` and `code`")
        return self


class Control(_Msg):
    type: Literal["control"]
    action: Literal["play", "pause", "step", "reset"]
    count: int = Field(default=1, ge=1, le=1_000_000)
    # Target steps per second while playing (capped by Settings.max_steps_per_s).
    speed: float | None = Field(default=None, gt=0, le=1e6)


class Set(_Msg):
    type: Literal["set"]
    params: dict[str, Any]


class Seek(_Msg):
    type: Literal["seek"]
    step: int = Field(ge=0)


class Infer(_Msg):
    type: Literal["infer"]
    input: dict[str, Any] = Field(default_factory=dict)


class Subscribe(_Msg):
    type: Literal["subscribe"]
    tensors: list[Annotated[str, Field(max_length=128)]] | Literal["*"] = "*"
    max_fps: float | None = Field(default=None, gt=0, le=120)


class Share(_Msg):
    """The driver asks for a class join code."""

    type: Literal["share"]


class ViewState(_Msg):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    layer: int | None = Field(default=None, ge=0, le=64)
    head: int | None = Field(default=None, ge=0, le=64)
    hover: int | None = Field(default=None, ge=-1, le=4096)  # hovered token (-1: none)
    scrub: int | None = Field(default=None, ge=-1)  # the step the driver looks at (-1: live)
    present: bool | None = None
    blank: bool | None = None


class View(_Msg):
    """The driver's view state; viewers follow it."""

    type: Literal["view"]
    state: ViewState


class Fork(_Msg):
    """Start an own session from this one's params, seed, step and weights."""

    type: Literal["fork"]


class Save(_Msg):
    type: Literal["save"]
    name: str = Field(default="", max_length=120)


ClientMessage = Annotated[
    Open | Join | Control | Set | Seek | Infer | Subscribe | Share | View | Fork | Save,
    Field(discriminator="type"),
]
client_message = TypeAdapter(ClientMessage)


def error(
    code: ErrorCode,
    message: str,
    field: str | None = None,
    key: str | None = None,
    values: dict[str, Any] | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if field is not None:
        out["field"] = field
    if key is not None:  # the page shows its own string for this key, filled with values
        out["key"] = key
        out["values"] = values or {}
    return out


class Refusal(Exception):
    """A refused request, answered with a protocol `error`: `code`, the English `message`,
    the offending `field`; `key` and `values` name the message in the page's strings, so a
    learner reads it in their language. SessionError and LabError are its two kinds."""

    def __init__(
        self,
        code: str,
        message: str,
        field: str | None = None,
        key: str | None = None,
        values: dict | None = None,
    ):
        super().__init__(message)
        self.code = code
        self.field = field
        self.key = key
        self.values = values

    def as_error(self) -> dict[str, Any]:
        return error(self.code, str(self), self.field, self.key, self.values)


def ready(
    *,
    session: str,
    role: str,
    lab: str,
    params: dict,
    schema: dict,
    step: int,
    state: str,
    seed: int,
    run: int,
    read_only: bool = False,
    token: str | None = None,
) -> dict[str, Any]:
    out = {
        "type": "ready",
        "protocol": PROTOCOL_VERSION,
        "session": session,
        "role": role,
        "lab": lab,
        "params": params,
        "schema": schema,
        "seed": seed,
        "step": step,
        "state": state,
        "run": run,
        "read_only": read_only,
    }
    if token is not None:
        out["token"] = token
    return out
