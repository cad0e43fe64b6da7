"""Every websocket message as a pydantic model (protocol version 1, see docs/protocol.md)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    TypeAdapter,
    model_validator,
)

from backend.protocol_polls import VOTER_ID, Poll, PollClose, PollNumeric, PollState, Vote  # noqa: F401

PROTOCOL_VERSION = 1
# A session id in the websocket URL (`/ws?session=ID`): url-safe base64, at least 22
# characters (128 bits, as a page makes it: 16 random bytes) and at most 64. A fork's id
# adds `.` and its own 96 random bits to its source's: the proxy routes on the part before
# the dot (deploy/nginx.conf), so a fork lives on its source's replica.
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{22,64}(\.[A-Za-z0-9_-]{16})?")


def valid_session_id(sid: str) -> bool:
    return SESSION_ID.fullmatch(sid) is not None


ErrorCode = Literal[
    "bad_message",
    "invalid_params",
    "forbidden",
    "not_found",
    "conflict",
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
    # A resume's proof that this page drove the saved session (its class code comes back).
    token: str | None = Field(default=None, max_length=128)

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
    action: Literal["play", "pause", "step", "reset", "keep", "unkeep"]
    count: int = Field(default=1, ge=1, le=1_000_000)
    # Target steps per second while playing (capped by Settings.max_steps_per_s).
    speed: float | None = Field(default=None, gt=0, le=1e6)
    label: str | None = Field(default=None, max_length=64)  # keep: the kept run's label
    id: str | None = Field(default=None, max_length=32)  # unkeep: which (none: all of them)


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
    """What this connection is sent (docs/protocol.md "Subscriptions"): the named tensors,
    one layer's and/or one head's maps (checked against the session's lab and params by
    backend/subscriptions.py), `low`: u8 maps at half resolution and at most 5 frames/s,
    `position`: of the lab's per-position outputs, only that token's row; `scalars: "row"`:
    the client keeps the `scalars` rows, so a cut frame may leave its header's out;
    `"either"`: that, and a live frame's header scalars are also its step's row, so a step
    with a frame is sent once, in the frame (one message a frame, not a text and a frame)."""

    type: Literal["subscribe"]
    tensors: list[Annotated[str, Field(max_length=128)]] | Literal["*"] = "*"
    max_fps: float | None = Field(default=None, gt=0, le=120)
    layer: StrictInt | None = Field(default=None, ge=0)
    head: StrictInt | None = Field(default=None, ge=0)
    quality: Literal["full", "low"] = "full"
    position: StrictInt | None = Field(default=None, ge=0, le=4096)  # only this token's rows
    scalars: Literal["frame", "row", "either"] = "frame"


class Share(_Msg):
    """The driver asks for a class join code."""

    type: Literal["share"]


ViewValue = StrictBool | StrictInt | float | Annotated[str, Field(max_length=64)] | None


class View(_Msg):
    """The driver's view state; viewers follow it (the server sends it back as is). Its
    keys are the lab's (`view_keys` in the catalog), checked by backend/view_keys.py
    against the session's lab and params; None clears a key (sent on as null)."""

    type: Literal["view"] = "view"
    state: dict[Annotated[str, Field(max_length=32)], ViewValue] = Field(max_length=32)


class Fork(_Msg):
    """Start an own session from this one's params, seed, step and weights."""

    type: Literal["fork"]


class Save(_Msg):
    type: Literal["save"]
    name: str = Field(default="", max_length=120)


# The class poll's messages live in their own module (re-exported here).
Polls = Poll | PollClose | Vote  # the client's poll messages, in ClientMessage


ClientMessage = Annotated[
    Open | Join | Control | Set | Seek | Infer | Subscribe | Share | View | Fork | Save | Polls,
    Field(discriminator="type"),
]
client_message = TypeAdapter(ClientMessage)


# -- server -> client ------------------------------------------------------------------------
# Every JSON message the server sends is one of these models, serialized by `dump` (fields
# in declaration order, absent optional fields left out): the bytes are what docs/protocol.md
# shows. Hot paths (scalars, history, status) build them with `model_construct` (no
# validation); tests/backend/test_protocol_models.py validates every message a session sends.

NonFinite = Literal["NaN", "Infinity", "-Infinity"]
Number = float | NonFinite  # JSON has no NaN/inf: they travel as these strings
SessionState = Literal["paused", "playing", "done", "diverged", "error", "shutting_down"]


KEPT_MAX_ROWS = 5000  # points of one kept run's curves
KEPT_MAX_RUNS = 2  # a third keep drops the oldest


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class KeptRun(_Out):
    """A run kept beside the next ones ("Keep this run"): every step's scalars (thinned to
    at most KEPT_MAX_ROWS, the last always kept), its params, seed and label."""

    id: str = Field(max_length=32)
    label: str = Field(max_length=64)
    params: dict[str, Any]
    seed: int = Field(ge=0)
    rows: list[tuple[Annotated[int, Field(ge=0)], dict[str, Number]]] = Field(
        max_length=KEPT_MAX_ROWS
    )


class Ready(_Out):
    type: Literal["ready"] = "ready"
    protocol: Literal[1] = PROTOCOL_VERSION
    session: str
    role: Literal["driver", "viewer"]
    lab: str
    params: dict[str, Any]
    schema_: dict[str, Any] = Field(alias="schema")  # JSON Schema of the params
    seed: int
    step: int
    state: SessionState
    run: int
    read_only: bool = False
    token: str | None = None  # the driver's only: never sent to a viewer
    kept: list[KeptRun] = Field(default_factory=list)  # the session's kept runs


class Status(_Out):
    type: Literal["status"] = "status"
    run: int
    state: SessionState
    step: int
    connections: int
    message: str | None = None


class Scalars(_Out):
    """One step's scalars."""

    type: Literal["scalars"] = "scalars"
    run: int
    step: int
    values: dict[str, Number]


class History(_Out):
    """Many steps' scalars, columnar: `values[name][i]` is step `steps[i]`'s (None: absent)."""

    type: Literal["history"] = "history"
    run: int
    steps: list[int]
    values: dict[str, list[Number | None]]


class ParamsChanged(_Out):
    type: Literal["params"] = "params"
    params: dict[str, Any]
    reset: bool


class Error(_Out):
    type: Literal["error"] = "error"
    code: ErrorCode
    message: str
    field: str | None = None
    key: str | None = None  # the page shows its own string for this key, filled with values
    values: dict[str, Any] | None = None


class Shared(_Out):
    type: Literal["shared"] = "shared"
    code: str
    url: str


class ClassStats(_Out):
    """To the driver every ~2 s while it has viewers: bytes/s sent (the class, each viewer)."""

    type: Literal["class_stats"] = "class_stats"
    viewers: int
    bytes_per_s: float  # to all viewers together
    per_viewer: float  # mean over the viewers
    max_viewer: float  # the viewer sent the most


class Saved(_Out):
    type: Literal["saved"] = "saved"
    run: str


class Kept(_Out):
    """The session's kept runs, to every connection whenever they change."""

    type: Literal["kept"] = "kept"
    runs: list[KeptRun]


class TensorHeader(_Out):
    name: str
    dtype: Literal["f32", "f16", "u8"]
    shape: list[int]
    offset: int
    length: int
    min: float | None = None
    max: float | None = None
    labels: list[str] | None = None


class FrameHeader(_Out):
    """The JSON header of a binary frame (backend/wire.py writes it; not a text message)."""

    model_config = ConfigDict(extra="allow")  # a lab's header extras (e.g. `t`)
    type: Literal["frame"] = "frame"
    step: int
    run: int | None = None
    scalars: dict[str, Number]
    tensors: list[TensorHeader]
    meta: dict[str, Any] | None = None
    replay: bool | None = None
    infer: bool | None = None


ServerMessage = Annotated[
    Ready
    | Status
    | Scalars
    | History
    | ParamsChanged
    | Error
    | View
    | Shared
    | Saved
    | Kept
    | PollState
    | ClassStats,
    Field(discriminator="type"),
]
server_message = TypeAdapter(ServerMessage)


def dump(msg: BaseModel) -> dict[str, Any]:
    """A server message as the dict that goes on the wire (json.dumps of it)."""
    return msg.model_dump(by_alias=True, exclude_none=True, warnings=False)


def dump_plain(msg: BaseModel) -> dict[str, Any]:
    """`dump` without a serialization pass, for a `model_construct`ed message of plain JSON
    values with no optional or aliased field (scalars, history: once per connection, ~30
    times a second each): its fields, in the model's order."""
    return msg.__dict__


def error(
    code: ErrorCode,
    message: str,
    field: str | None = None,
    key: str | None = None,
    values: dict[str, Any] | None = None,
) -> Error:
    values = (values or {}) if key is not None else None  # with a key, always its values
    return Error(code=code, message=message, field=field, key=key, values=values)


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

    def as_error(self) -> Error:
        return error(self.code, str(self), self.field, self.key, self.values)
