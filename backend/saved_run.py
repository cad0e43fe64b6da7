"""A saved run and what the store checks and packs about it, apart from the database.

`SavedRun` is one run as the store holds it; the helpers hash a driver token, pack a lab's
weights (torch's zip format, read back with weights_only=True so a crafted file cannot run
code), turn scalar rows into JSON-safe columns and refuse a run the store must not hold.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import torch

from backend.wire import json_number

MAX_RUN_BYTES = 256 * 2**20  # one saved run: frames + weights + scalars + params
MAX_NAME_CHARS = 200
LAB_ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")  # kebab-case, as the registry uses
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class RunTooLarge(ValueError):
    """A run over the store's size cap (HTTP 413, protocol `too_large`)."""


@dataclass(frozen=True)
class SavedRun:
    """One saved run. `frames` hold the binary wire encoding, so a replay sends them as is."""

    id: str  # assigned by RunStore.save; ignored on the way in
    lab: str
    name: str
    params: dict[str, Any]
    seed: int
    step: int
    created: float  # unix time
    # Every step's scalars in step order; the timeline's frames as (step, encoded frame).
    scalars: list[tuple[int, dict[str, float]]] = field(repr=False)
    frames: list[tuple[int, bytes]] = field(repr=False)
    weights: bytes = field(repr=False)  # pack_weights(lab.state_dict())
    token_hash: str = field(repr=False)  # hash_token(driver token); "": nobody may delete it
    # Runs kept beside it, as the wire has them: {id, label, params, seed, rows: [[step, {}]]}
    kept: list[dict[str, Any]] = field(default_factory=list, repr=False)
    # hash_token(the id of the live session saved) ("" for an import), and whether this is
    # that session's autosave (one slot a session: a new autosave replaces the last).
    session_hash: str = field(default="", repr=False)
    autosave: bool = False
    class_code: str = field(default="", repr=False)  # the share code its session had


# -- helpers ---------------------------------------------------------------------------------
def hash_token(token: str) -> str:
    # Tokens are 192-bit random strings, so an unsalted hash is as good as a slow one.
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token_hash: str, token: str | None) -> bool:
    """`token` is the driver token whose hash was stored ("" stored: nobody's)."""
    return bool(token_hash and token) and hmac.compare_digest(token_hash, hash_token(token))


def pack_weights(state_dict: dict[str, Any]) -> bytes:
    """A lab's state_dict -> bytes (torch's zip format; tensors, numbers, lists and dicts)."""
    buf = io.BytesIO()
    torch.save(state_dict, buf)
    return buf.getvalue()


def unpack_weights(data: bytes) -> dict[str, Any]:
    """Bytes -> state_dict on the CPU. weights_only=True refuses anything but plain data."""
    if not data:
        return {}
    state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    if not isinstance(state, dict):
        raise ValueError(f"weights: expected a state dict, got {type(state).__name__}")
    return state


def scalars_to_columns(scalars: list[tuple[int, dict[str, float]]]) -> dict[str, Any]:
    """Rows -> {"steps": [...], "values": {name: [number | "NaN" | ... | None]}} (JSON-safe)."""
    steps = [int(s) for s, _ in scalars]
    names: dict[str, None] = {}
    for _, values in scalars:
        names.update(dict.fromkeys(values))
    columns = {
        name: [json_number(v[name]) if name in v else None for _, v in scalars] for name in names
    }
    return {"steps": steps, "values": columns}


def scalars_from_columns(cols: dict[str, Any]) -> list[tuple[int, dict[str, float]]]:
    steps: list[int] = cols["steps"]
    rows: list[tuple[int, dict[str, float]]] = [(int(s), {}) for s in steps]
    for name, column in cols["values"].items():
        if len(column) != len(steps):
            raise ValueError(f"scalars.values.{name}: {len(column)} values for {len(steps)} steps")
        for (_, values), v in zip(rows, column, strict=True):
            if v is not None:
                values[name] = _NON_FINITE[v] if isinstance(v, str) else float(v)
    return rows


def run_bytes(run: SavedRun) -> int:
    """The size a run takes in the store, near enough for a cap."""
    frames = sum(len(data) for _, data in run.frames)
    kept = sum(16 * len(k["rows"]) for k in run.kept)
    return frames + len(run.weights) + 16 * len(run.scalars) + len(json.dumps(run.params)) + kept


def check_name(name: str) -> None:
    """A run's name: at most MAX_NAME_CHARS, and no NUL (PostgreSQL text cannot hold one)."""
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"name: longer than {MAX_NAME_CHARS} characters")
    if "\0" in name:
        raise ValueError("name: a name cannot hold a NUL character")


def check_run(run: SavedRun, max_bytes: int = MAX_RUN_BYTES) -> None:
    """Refuse a run the store must not hold: ValueError naming the field, or RunTooLarge."""
    if not LAB_ID.match(run.lab) or len(run.lab) > 64:
        raise ValueError(f"lab: {run.lab!r} is not a lab id")
    check_name(run.name)
    if run.seed < 0 or run.step < 0:
        raise ValueError("seed and step must be ≥ 0")
    size = run_bytes(run)
    if size > max_bytes:
        raise RunTooLarge(
            f"this run is {size / 2**20:.0f} MB, over the {max_bytes / 2**20:.0f} MB cap "
            "for a saved run; save it earlier or with a smaller model"
        )
