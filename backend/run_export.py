"""A run as one JSON file ("shaomai-run", version 1): export, and a strict re-import.

Frames keep their binary wire encoding (base64), so a re-imported run replays exactly what
was sent; weights are torch.save bytes (base64) read back with weights_only=True. Scalars
are columnar, non-finite values as "NaN", "Infinity", "-Infinity" like the wire protocol.
A file from outside is untrusted: every field is checked, and a bad one is named in the
ValueError (``frames.3.data: ...``) before anything reaches the store or torch.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import struct
import time
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictInt,
    ValidationError,
    model_validator,
)

from backend import wire
from backend.protocol import KEPT_MAX_ROWS, KEPT_MAX_RUNS
from backend.saved_run import (
    LAB_ID,
    MAX_NAME_CHARS,
    MAX_RUN_BYTES,
    RunTooLarge,
    SavedRun,
    check_run,
    scalars_from_columns,
    scalars_to_columns,
    unpack_weights,
)

FORMAT = "shaomai-run"
VERSION = 1
MAX_SCALAR_STEPS = 1_000_000  # a session lives at most SHAOMAI_MAX_STEPS steps
MAX_SCALAR_NAMES = 256
MAX_FRAMES = 100_000
MAX_PARAMS = 256
_ITEMSIZE = {"f32": 4, "f16": 2, "u8": 1}

NonFinite = Literal["NaN", "Infinity", "-Infinity"]
ScalarValue = float | NonFinite | None  # None: that step lacks this scalar


class _Strict(BaseModel):
    # No coercion ("3" is not 3, true is not 1), no NaN numbers, no unknown fields.
    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="forbid")


class ScalarColumns(_Strict):
    steps: list[Annotated[int, Field(ge=0)]] = Field(max_length=MAX_SCALAR_STEPS)
    values: dict[Annotated[str, Field(min_length=1, max_length=64)], list[ScalarValue]] = Field(
        max_length=MAX_SCALAR_NAMES
    )

    @model_validator(mode="after")
    def _aligned(self) -> ScalarColumns:
        if any(b <= a for a, b in zip(self.steps, self.steps[1:], strict=False)):
            raise ValueError("steps must increase")
        for name, column in self.values.items():
            if len(column) != len(self.steps):
                raise ValueError(f"{name}: {len(column)} values for {len(self.steps)} steps")
        return self


class FrameEntry(_Strict):
    step: int = Field(ge=0)
    data: str = Field(description="the frame's binary wire encoding, base64")


class KeptEntry(_Strict):
    """A run kept beside this one (protocol.KeptRun): rows are [step, {name: value}]."""

    id: str = Field(min_length=1, max_length=32)
    label: str = Field(max_length=64)
    params: dict[str, Any] = Field(max_length=MAX_PARAMS)
    seed: int = Field(ge=0, le=2**63 - 1)
    rows: list[
        Annotated[
            tuple[
                Annotated[StrictInt, Field(ge=0)],
                dict[Annotated[str, Field(min_length=1, max_length=64)], float | NonFinite],
            ],
            Strict(False),  # a JSON array, read as a pair
        ]
    ] = Field(max_length=KEPT_MAX_ROWS)


class RunFile(_Strict):
    """One exported run. `frames` is the run's recorded (thinned) timeline."""

    format: Literal["shaomai-run"]
    version: Literal[1]
    lab: str = Field(max_length=64, pattern=LAB_ID.pattern)
    name: str = Field("", max_length=MAX_NAME_CHARS)
    params: dict[str, Any] = Field(max_length=MAX_PARAMS)
    seed: int = Field(ge=0, le=2**63 - 1)
    step: int = Field(ge=0, le=2**63 - 1)
    created: float | None = Field(None, ge=0, description="unix time the run was saved")
    scalars: ScalarColumns
    frames: list[FrameEntry] = Field(max_length=MAX_FRAMES)
    weights: str = Field("", description="torch.save of the lab's state dict, base64")
    kept: list[KeptEntry] = Field(default_factory=list, max_length=KEPT_MAX_RUNS)


def parse_json(body: bytes) -> Any:
    """Strict JSON: NaN and Infinity literals (which json.loads accepts) are refused."""
    try:
        return json.loads(body, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"body: not a JSON document ({exc})") from None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def export_json(run: SavedRun) -> dict[str, Any]:
    """A saved run -> a JSON-safe dict (json.dumps(..., allow_nan=False) accepts it)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "lab": run.lab,
        "name": run.name,
        "params": run.params,
        "seed": run.seed,
        "step": run.step,
        "created": run.created,
        "scalars": scalars_to_columns(run.scalars),
        "frames": [{"step": step, "data": _b64(data)} for step, data in run.frames],
        "weights": _b64(run.weights),
        "kept": run.kept,
    }


def import_json(data: Any, max_bytes: int = MAX_RUN_BYTES) -> SavedRun:
    """A parsed JSON file -> SavedRun (id and token_hash empty: the caller assigns them).

    Raises ValueError("<field path>: <what is wrong>") for anything invalid, RunTooLarge (a
    ValueError) for a run over `max_bytes`.
    """
    if not isinstance(data, dict):
        raise ValueError("body: a run file is a JSON object")
    try:
        f = RunFile.model_validate(data)
    except ValidationError as exc:
        raise ValueError(_first_error(data, exc)) from None
    # Refuse an oversized file from the length of its base64 before decoding any of it.
    encoded = len(f.weights) + sum(len(fr.data) for fr in f.frames)
    if encoded * 3 // 4 > max_bytes:
        raise RunTooLarge(
            f"frames: the run is about {encoded * 3 / 4 / 2**20:.0f} MB, over the "
            f"{max_bytes / 2**20:.0f} MB cap for a saved run"
        )
    frames: list[tuple[int, bytes]] = []
    last = -1
    for i, fr in enumerate(f.frames):
        if fr.step < last:
            raise ValueError(f"frames.{i}.step: frames must be in step order")
        last = fr.step
        buf = _unb64(fr.data, f"frames.{i}.data")
        try:
            _check_frame(buf, fr.step)
        except Exception as exc:
            raise ValueError(f"frames.{i}.data: not a valid frame ({exc})") from None
        frames.append((fr.step, buf))
    weights = _unb64(f.weights, "weights")
    try:
        unpack_weights(weights)
    except Exception as exc:
        # weights_only=True refuses pickled objects (code) as well as plain garbage.
        raise ValueError(f"weights: not a plain state dict ({type(exc).__name__})") from None
    run = SavedRun(
        id="",
        lab=f.lab,
        name=f.name,
        params=f.params,
        seed=f.seed,
        step=f.step,
        created=time.time() if f.created is None else f.created,
        scalars=scalars_from_columns(f.scalars.model_dump()),
        frames=frames,
        weights=weights,
        token_hash="",
        kept=[k.model_dump() for k in f.kept],
    )
    check_run(run, max_bytes)
    return run


def _unb64(text: str, field: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{field}: not valid base64") from None


def _check_frame(buf: bytes, step: int) -> None:
    """Parse with the reference decoder, and check every tensor lies inside the payload."""
    (n,) = struct.unpack_from("<I", buf, 0)
    header = json.loads(buf[4 : 4 + n], parse_constant=_refuse_constant)  # as the wire makes it
    wire.decode(buf)
    if header.get("type") != "frame":
        raise ValueError("its header is not a frame's")
    if header.get("step") != step:
        raise ValueError(f"its header says step {header.get('step')}, not {step}")
    payload = len(buf) - 4 - n
    for t in header["tensors"]:
        offset, length, shape = t["offset"], t["length"], t["shape"]
        if not all(type(v) is int and v >= 0 for v in (offset, length, *shape)):
            raise ValueError(f"tensor {t['name']!r}: offset, length and shape must be counts")
        if offset + length > payload:
            raise ValueError(f"tensor {t['name']!r} lies outside the payload")
        if math.prod(shape) * _ITEMSIZE[t["dtype"]] != length:
            raise ValueError(f"tensor {t['name']!r}: shape and length disagree")


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _first_error(data: Any, exc: ValidationError) -> str:
    """'frames.3.data: <message>' for the first error, path as found in the input."""
    errors = exc.errors(include_url=False)
    path = _input_path(data, errors[0]["loc"])
    # A union (a scalar value) reports one error per member; say them together.
    msgs = [
        e["msg"].removeprefix("Value error, ")
        for e in errors
        if _input_path(data, e["loc"]) == path
    ]
    return f"{'.'.join(path) or 'body'}: {' or '.join(dict.fromkeys(msgs))}"


def _input_path(data: Any, loc: tuple) -> list[str]:
    # Keep the parts of `loc` that name places in the input; drop pydantic's union tags
    # ("float", "literal[...]") and validator names, which follow a non-container value.
    path, node = [], data
    for key in loc:
        if isinstance(node, dict):
            path.append(str(key))
            node = node.get(key)
        elif isinstance(node, list) and isinstance(key, int):
            path.append(str(key))
            node = node[key] if 0 <= key < len(node) else None
        else:
            break
    return path
