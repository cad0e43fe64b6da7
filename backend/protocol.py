"""Every websocket message as a pydantic model (protocol version 1, see docs/protocol.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

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
    type: Literal["open"]
    lab: str = Field(max_length=64)
    params: dict[str, Any] = Field(default_factory=dict)
    seed: int = Field(default=0, ge=0, le=2**31 - 1)


class Join(_Msg):
    type: Literal["join"]
    session: str = Field(max_length=64)
    token: str | None = Field(default=None, max_length=128)


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


ClientMessage = Annotated[
    Open | Join | Control | Set | Seek | Infer | Subscribe, Field(discriminator="type")
]
client_message = TypeAdapter(ClientMessage)


def error(code: ErrorCode, message: str, field: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if field is not None:
        out["field"] = field
    return out


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
    }
    if token is not None:
        out["token"] = token
    return out
